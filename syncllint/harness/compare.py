"""Does a fixed example compute what its flag example computed?"""

from __future__ import annotations

import types
from typing import Any


def _comparable(name: str, value: Any) -> bool:
    if name.startswith("__"):
        return False
    return not isinstance(value, (types.ModuleType, types.FunctionType, type, types.BuiltinFunctionType))


def _to_host(value: Any) -> Any:
    import numpy as np
    import torch

    if isinstance(value, torch.Tensor):
        return value.detach().cpu()
    if isinstance(value, np.ndarray) and value.dtype != object:
        return torch.from_numpy(value.copy())  # compared as a tensor: `==` of arrays has no truth value
    if isinstance(value, (list, tuple)):
        return type(value)(_to_host(v) for v in value)
    return value


def _exact(value: Any) -> bool:
    import torch

    return isinstance(value, torch.Tensor) and not (value.is_floating_point() or value.is_complex())


def same_results(before: dict[str, Any], after: dict[str, Any]) -> tuple[bool | None, str]:
    """Compare every variable both snippets define: (equal, detail). None when they share none."""
    import torch

    shared = sorted(n for n in before.keys() & after.keys() if _comparable(n, before[n]) and _comparable(n, after[n]))
    if not shared:
        return None, "no variable in common"
    for name in shared:
        expected, actual = _to_host(before[name]), _to_host(after[name])
        try:
            if isinstance(expected, torch.Tensor) or isinstance(actual, torch.Tensor):
                expected_t, actual_t = torch.as_tensor(expected), torch.as_tensor(actual)
                both_tensors = isinstance(expected, torch.Tensor) and isinstance(actual, torch.Tensor)
                exact = _exact(expected_t) or _exact(actual_t)
                torch.testing.assert_close(
                    actual_t,
                    expected_t,
                    check_dtype=both_tensors,
                    rtol=0 if exact else None,
                    atol=0 if exact else None,
                )
            elif bool(expected != actual):
                return False, f"{name}: {actual!r} != {expected!r}"
        except (AssertionError, TypeError, ValueError, RuntimeError) as err:
            return False, f"{name}: {str(err).splitlines()[0]}"
    return True, "equal: " + ", ".join(shared)
