"""Probe: implicit conversions, text formatting, builtins, numpy views and waits on a CUDA tensor.

Same method as shared/ground-truth/gpu_sync_probe.py: each snippet runs under
torch.cuda.set_sync_debug_mode("warn") (count of sync warnings) and behind a ~100 ms
``torch.cuda._sleep`` kernel (host ms: ~100 = the host waited). Statements are allowed
(``exec``). Writes conversions_truth.json to $OUT (or the current folder).
"""
import io
import json
import logging
import math
import os
import sys
import time
import warnings

import numpy as np
import torch

dev = torch.device("cuda")
_null = io.StringIO()
log_on = logging.getLogger("probe.on")
log_on.addHandler(logging.StreamHandler(_null))
log_on.setLevel(logging.INFO)
log_on.propagate = False
log_off = logging.getLogger("probe.off")
log_off.setLevel(logging.WARNING)
log_off.propagate = False


def setup():
    g = torch.Generator(device="cpu").manual_seed(0)
    x = torch.randn(1024, generator=g).to(dev)
    s = torch.tensor(7).to(dev)
    sf = torch.tensor(0.5).to(dev)
    pinned = torch.empty(1024, pin_memory=True)
    torch.cuda.synchronize()
    return dict(x=x, s=s, sf=sf, lst=list(range(64)), torch=torch, np=np, math=math,
                log_on=log_on, log_off=log_off, out=_null, pinned=pinned, dev=dev)


SNIPPETS = {
    "complex_of_device": "complex(sf)",
    "not_tensor": "y = not (s > 0)",
    "and_tensor": "y = (s > 0) and 1",
    "or_tensor_right_only": "y = 0 or (s > 0)",
    "while_tensor_false": "while s < 0:\n    pass",
    "assert_stmt_all": "assert (x < 100).all()",
    "if_compare_eq": "if s == 3:\n    pass",
    "compare_no_if": "y = s == 3",
    "ternary_tensor": "y = 1 if s > 0 else 0",
    "repr_tensor": "repr(x[:4])",
    "print_tensor": "print(x[:4], file=out)",
    "print_0d": "print(s, file=out)",
    "fstring_tensor": "f'{s}'",
    "fstring_format_spec": "f'{sf:.3f}'",
    "format_builtin": "format(s)",
    "str_format_method": "'{}'.format(s)",
    "percent_s": "'%s' % s",
    "percent_d": "'%d' % s",
    "logging_enabled_args": "log_on.info('%s', s)",
    "logging_enabled_fstring": "log_on.info(f'{s}')",
    "logging_disabled_args": "log_off.info('%s', s)",
    "list_times_0d": "[0] * s",
    "pylist_index_0d": "lst[s]",
    "pylist_slice_0d": "lst[:s]",
    "tensor_slice_0d": "x[:s]",
    "tensor_index_0d": "x[s]",
    "range_0d": "range(s)",
    "builtin_min": "min(x[:4])",
    "builtin_max": "max(x[:4])",
    "builtin_sorted": "sorted(x[:4])",
    "builtin_list": "list(x[:4])",
    "builtin_tuple": "tuple(x[:4])",
    "builtin_sum": "sum(x[:4])",
    "builtin_any": "any(x[:4] > 0)",
    "builtin_all": "all(x[:4] > 0)",
    "builtin_len": "len(x)",
    "builtin_round": "round(sf)",
    "builtin_abs": "abs(sf)",
    "builtin_enumerate_zip": "list(zip(x[:4], x[:4]))",
    "math_sqrt_0d": "math.sqrt(sf)",
    "np_float32_0d": "np.float32(sf)",
    "np_asarray_device": "np.asarray(x)",
    "np_array_device": "np.array(x)",
    "numpy_device": "x.numpy()",
    "numpy_force_device": "x.numpy(force=True)",
    "np_asarray_after_cpu": "np.asarray(x.cpu())",
    "np_asarray_list_of_0d": "np.array([s, s])",
    "int_of_sum": "int(x.sum())",
    "float_1elem": "float(x[:1])",
    "bool_any": "bool((x > 0).any())",
    "cuda_synchronize": "torch.cuda.synchronize()",
    "new_stream_synchronize": "torch.cuda.Stream().synchronize()",
    "event_synchronize": "e = torch.cuda.Event()\ne.record()\ne.synchronize()",
    "event_query": "e = torch.cuda.Event()\ne.record()\ne.query()",
    "stream_wait_event": "e = torch.cuda.Event()\ne.record()\ntorch.cuda.current_stream().wait_event(e)",
    "event_wait": "e = torch.cuda.Event()\ne.record()\ne.wait()",
    "d2h_nb_into_pinned_copy": "pinned.copy_(x, non_blocking=True)",
}


def _run(code, ns):
    exec(compile(code, "<probe>", "exec"), ns)


def run_one(name, code):
    ns = setup()
    try:
        _run(code, ns)
    except Exception as e:  # noqa: BLE001
        return dict(name=name, code=code, error=f"{type(e).__name__}: {e}"[:200])
    torch.cuda.synchronize()
    ns = setup()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch.cuda.set_sync_debug_mode("warn")
        try:
            _run(code, ns)
        finally:
            torch.cuda.set_sync_debug_mode("default")
    msgs = [str(w.message) for w in caught if "synchroniz" in str(w.message) and "prototype" not in str(w.message)]
    torch.cuda.synchronize()
    best = None
    for _ in range(2):
        torch.cuda._sleep(int(2e8))
        t0 = time.perf_counter()
        _run(code, ns)
        dt = (time.perf_counter() - t0) * 1e3
        torch.cuda.synchronize()
        best = dt if best is None else min(best, dt)
    return dict(name=name, code=code, syncs=len(msgs), blocked_ms=round(best, 3))


def run_all(snippets, setup_fn, filename):
    """Measure every snippet with ``setup_fn`` building its names; write ``filename`` to $OUT."""
    global setup
    setup = setup_fn  # run_one calls the module-level setup for each snippet
    out = os.environ.get("OUT", ".")
    setup()
    torch.cuda.set_sync_debug_mode("warn")
    torch.cuda.set_sync_debug_mode("default")
    rows = [run_one(k, v) for k, v in snippets.items()]
    info = dict(torch=torch.__version__, cuda=torch.version.cuda, gpu=torch.cuda.get_device_name(), rows=rows)
    with open(os.path.join(out, filename), "w") as f:
        json.dump(info, f, indent=1)
    for r in rows:
        if "error" in r:
            print(f"{r['name']:32s} ERROR {r['error']}")
        else:
            print(f"{r['name']:32s} syncs={r['syncs']:<3} blocked_ms={r['blocked_ms']}")
    print(info["torch"], info["cuda"], info["gpu"])


def main():
    run_all(SNIPPETS, setup, "conversions_truth.json")


if __name__ == "__main__":
    sys.exit(main())
