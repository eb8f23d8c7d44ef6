"""Device inference the shape and checked-op rules rely on: values seen through the rules."""

from __future__ import annotations

import libcst as cst
import pytest

from syncllint.analysis.devices import DeviceInference
from syncllint.analysis.imports import ImportMap
from syncllint.analysis.values import DType, Place, Value


def infer_last(source: str) -> Value:
    """Bind every ``name = expr`` line of ``source`` in order, then infer the last line's expression."""
    module = cst.parse_module(source)
    imports = ImportMap()
    inference = DeviceInference(imports, ("_cpu", "_np", "_host"), ("_gpu", "_cuda", "_dev"))
    *body, last = module.body
    for statement in body:
        assert isinstance(statement, cst.SimpleStatementLine)
        small = statement.body[0]
        if isinstance(small, (cst.Import, cst.ImportFrom)):
            imports.record(small)
        elif isinstance(small, cst.Assign):
            inference.bind_assignment([t.target for t in small.targets], small.value)
    assert isinstance(last, cst.SimpleStatementLine) and isinstance(last.body[0], cst.Expr)
    return inference.infer(last.body[0].value)


HEADER = "import torch\ndev = torch.device('cuda')\n"


@pytest.mark.parametrize(
    ("source", "place", "zero_dim"),
    [
        ("s = torch.tensor(7).to(dev)\ns\n", Place.DEVICE, True),
        ("s = torch.tensor(7.0).cuda()\ns\n", Place.DEVICE, True),
        ("s = torch.tensor(7, device=dev)\ns\n", Place.DEVICE, True),
        ("s = torch.zeros((), device=dev)\ns\n", Place.DEVICE, True),
        ("s = torch.full((), 3, device=dev)\ns\n", Place.DEVICE, True),
        ("s = torch.zeros(4, device=dev)\ns\n", Place.DEVICE, False),
        ("s = torch.tensor([1, 2]).to(dev)\ns\n", Place.DEVICE, False),
        ("s = torch.tensor(7).to(dev).cpu()\ns\n", Place.HOST_TENSOR, True),
        ("lst = [1, 2]\ns = torch.tensor(lst)\ns\n", Place.HOST_TENSOR, False),
    ],
)
def test_rank_zero_survives_moves(source: str, place: Place, zero_dim: bool) -> None:
    value = infer_last(HEADER + source)
    assert (value.place, value.zero_dim) == (place, zero_dim)


@pytest.mark.parametrize(
    ("source", "dtype"),
    [
        ("torch.randint(0, 10, (4,), device=dev)\n", DType.INT),
        ("torch.randperm(8)\n", DType.INT),
        ("torch.arange(16, device=dev)\n", DType.INT),
        ("torch.arange(0.0, 1.0, 0.1)\n", DType.UNKNOWN),
        ("torch.tensor([1, 2, 3])\n", DType.INT),
        ("torch.tensor([1.0, 2])\n", DType.FLOAT),
        ("torch.tensor([True, False])\n", DType.BOOL),
        ("torch.randint(0, 10, (4,), dtype=torch.float32)\n", DType.FLOAT),
        ("torch.sort(torch.randn(4, device=dev)).indices\n", DType.INT),
        ("torch.randn(4, device=dev).nonzero()\n", DType.INT),
    ],
)
def test_factory_and_result_dtypes(source: str, dtype: DType) -> None:
    assert infer_last(HEADER + source).dtype is dtype


@pytest.mark.parametrize(
    ("source", "place"),
    [
        ("a = torch.randn(4, 4, device=dev)\ntorch.linalg.cholesky_ex(a).L\n", Place.DEVICE),
        ("a = torch.randn(4, 4, device=dev)\ntorch.linalg.inv_ex(a).inverse\n", Place.DEVICE),
        ("x = torch.randn(8, device=dev)\nx.max(dim=0).values\n", Place.DEVICE),
        ("x = torch.randn(8)\ntorch.sort(x).values\n", Place.HOST_TENSOR),
        ("cfg = {'values': 1}\ncfg.values\n", Place.UNKNOWN),
    ],
)
def test_named_tuple_fields_keep_the_device(source: str, place: Place) -> None:
    assert infer_last(HEADER + source).place is place


@pytest.mark.parametrize(
    ("source", "place"),
    [
        # A shape returned beside a tensor is a torch.Size or a tuple of ints ...
        ("x = torch.randn(8, device=dev)\nx, hw_shape = embed(x)\nhw_shape\n", Place.PYTHON),
        ("x = torch.randn(8, device=dev)\nx, hw_shape = embed(x)\nx\n", Place.TENSOR),
        # ... but the parts of a tensor unpacked are tensors whatever their names.
        ("meta = torch.zeros(3, device=dev)\nnum_shape, n = meta\nnum_shape\n", Place.DEVICE),
    ],
)
def test_a_shape_among_a_calls_results_is_a_python_value(source: str, place: Place) -> None:
    assert infer_last(HEADER + source).place is place


def test_host_suffix_refines_a_tensor_annotation() -> None:
    module = cst.parse_module("def f(lens_cpu: torch.Tensor, lens: torch.Tensor, ids_gpu: torch.Tensor): pass\n")
    function = module.body[0]
    assert isinstance(function, cst.FunctionDef)
    imports = ImportMap()
    imports.record(cst.Import(names=[cst.ImportAlias(name=cst.Name("torch"))]))
    inference = DeviceInference(imports, ("_cpu",), ("_gpu",))
    inference.enter_function()
    inference.bind_parameters(function.params, tensor_by_default=False)
    places = {name: getattr(inference.lookup(name), "place", None) for name in ("lens_cpu", "lens", "ids_gpu")}
    assert places == {"lens_cpu": Place.HOST_TENSOR, "lens": Place.TENSOR, "ids_gpu": Place.DEVICE}


@pytest.mark.parametrize(
    ("source", "rank"),
    [
        ("s = torch.zeros(8, device=dev)\ns\n", 1),
        ("s = torch.zeros(4, 4, device=dev)\ns\n", 2),
        ("s = torch.zeros((2, 3, 4), device=dev)\ns\n", 3),
        ("s = torch.zeros(shape, device=dev)\ns\n", None),
        ("s = torch.zeros(size=(2, 3), device=dev)\ns\n", None),
        ("s = torch.randint(0, 10, (4, 2), device=dev)\ns\n", 2),
        ("s = torch.randint(0, 10, size=(4,), device=dev)\ns\n", None),
        ("s = torch.randint(10, device=dev)\ns\n", None),
        ("s = torch.arange(8, device=dev).view(2, 4)[0]\ns\n", 1),
        ("s = torch.zeros(4, 4, device=dev)[:, 0]\ns\n", 1),
    ],
)
def test_rank_from_factories_views_and_indexing(source: str, rank: int | None) -> None:
    assert infer_last(HEADER + source).rank == rank
