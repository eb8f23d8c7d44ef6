"""What a function does with a tensor, and the branches it takes, as evidence of where it lives."""

from __future__ import annotations

from syncllint.diagnostics import Confidence
from tests.conftest import lint


def found(source: str, code: str) -> list[tuple[int, Confidence]]:
    return [(d.start.row, d.confidence) for d in lint(source) if d.code == code]


def test_numpy_straight_on_a_tensor_shows_it_is_on_the_host_here_and_in_the_module_callers() -> None:
    source = """\
    import torch

    def _percentiles(x: torch.Tensor):
        return x.detach().float().numpy().ravel()

    def stats(x: torch.Tensor):
        return x.max().item(), _percentiles(x)

    def diff(a: torch.Tensor, b: torch.Tensor):
        raw = (a - b).abs()
        return raw.max().item(), _percentiles(raw), a.max().item()

    def checked(x: torch.Tensor):
        if x.device.type == "cpu":
            y = x.numpy()
        return x.max().item()

    def rebound(x: torch.Tensor):
        arr = x.numpy()
        x = load()
        return x.max().item()
    """
    # ``.numpy()`` raises for a CUDA tensor: x in stats and raw in diff are host tensors. Not ``a``
    # (only its difference reaches the helper), not under a device check, not a rebound name.
    assert [row for row, _ in found(source, "SYNC101")] == [11, 16, 21]


def test_an_asynchronous_upload_shows_a_host_tensor_and_a_download_does_not() -> None:
    source = """\
    import torch

    def plan(self, qo_indptr: torch.Tensor, out: torch.Tensor, w: torch.Tensor, device):
        self.indptr = qo_indptr.to(device, non_blocking=True)
        self.host = out.to("cpu", non_blocking=True)
        self.half = w.to(torch.float16, non_blocking=True)
        return int(qo_indptr.max()), int(out.max()), int(w.max())
    """
    # Only the upload shows a host tensor: not the download, not a cast.
    assert [row for row, _ in found(source, "SYNC501")] == [7, 7]


def test_the_else_of_an_if_that_moves_a_tensor_starts_from_the_tensor_before_the_if() -> None:
    source = """\
    import torch

    def build(lens, device, on_npu: bool):
        cu = torch.from_numpy(lens)
        if not on_npu:
            cu = cu.to(device, non_blocking=True)
        else:
            cu = cu.to("cpu")
        return cu

    def after(device, flag: bool):
        t = torch.zeros(4, device="cuda")
        if flag:
            t = t.cpu()
        else:
            n = t.tolist()
        return t.tolist()
    """
    # ``cu.to("cpu")`` of the numpy-backed tensor is a no-op; the device tensor's ``.tolist()`` in the
    # else arm is read from the tensor before the move; after the ``if``, flow order as before.
    assert found(source, "SYNC103") == [(14, Confidence.HIGH)]
    assert [row for row, _ in found(source, "SYNC102")] == [16]


def test_a_branch_for_a_platform_without_cuda_reports_nothing_above_low() -> None:
    source = """\
    import torch

    def init(param: torch.Tensor):
        param = torch.empty(4, device="cuda")
        if current_platform.is_tpu():
            param.copy_(torch.rand(param.shape, device="cpu"))
        else:
            param.copy_(torch.rand(param.shape, device="cpu"))
    """
    # TPU tensors are lazy XLA ones: the copy there waits for no CUDA queue.
    assert found(source, "SYNC202") == [(6, Confidence.LOW), (8, Confidence.HIGH)]
