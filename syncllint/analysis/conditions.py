"""Where Python asks a tensor for its truth value, and how sure we are that it is a device tensor.

``if t:``, ``while t:``, ``assert t``, ``not t``, ``t and x`` and ``x if t else y`` all call
``Tensor.__bool__``, which copies the value to the host (a sync, measured). Only expressions the
inference shows to be tensors count: an unknown name in a condition is far more often a Python
value, and a convention-only tensor (an unannotated ``forward`` parameter) is too.
"""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from syncllint.analysis.devices import DeviceInference
from syncllint.analysis.narrowing import Narrowing
from syncllint.analysis.values import Place, Value
from syncllint.diagnostics import Confidence

# Tensor methods whose result is a 0-d bool tensor: ``if mask.any():`` tests a tensor even when
# the inference does not know ``mask``.
_BOOL_REDUCTIONS = frozenset(("any", "all"))


def truth_tested(expr: cst.BaseExpression, narrowing: Narrowing | None = None) -> Iterator[cst.BaseExpression]:
    """The operands whose truth value Python computes when ``expr`` is used as a condition. With
    ``narrowing``, each right operand is yielded while what its left one decided holds:
    ``isinstance(self.bias, float) and self.bias == 0`` compares a Python number."""
    if isinstance(expr, cst.BooleanOperation):
        yield from truth_tested(expr.left, narrowing)
        if narrowing is None:
            yield from truth_tested(expr.right)
        else:
            with narrowing.assuming(expr.left, isinstance(expr.operator, cst.And)):
                yield from truth_tested(expr.right, narrowing)
    elif isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Not):
        yield from truth_tested(expr.expression, narrowing)
    elif isinstance(expr, cst.NamedExpr):
        yield from truth_tested(expr.value, narrowing)
    else:
        yield expr


def value_confidence(value: Value) -> Confidence | None:
    """A tensor that may be on a device, as a confidence; None for anything else."""
    if value.assumed:
        # A tensor by convention only (``n_gpu``, an unannotated ``forward`` argument): shown
        # only with ``--min-confidence low``.
        return Confidence.LOW if value.place in (Place.DEVICE, Place.TENSOR) else None
    if value.place is Place.DEVICE:
        return Confidence.HIGH
    if value.place is Place.TENSOR:
        return Confidence.MEDIUM
    return None


def truth_confidence(
    expr: cst.BaseExpression, inference: DeviceInference, *, imports_torch: bool, imports_numpy: bool
) -> Confidence | None:
    """How sure we are that taking ``bool(expr)`` reads a device tensor (None: it does not)."""
    value = inference.infer(expr)
    if value.assumed:
        return None
    found = value_confidence(value)
    if found is not None:
        return found
    if value.place is not Place.UNKNOWN or not imports_torch:
        return None
    # ``x.any()`` / ``x.all()`` of something unknown: a tensor test unless numpy is around too.
    if (
        isinstance(expr, cst.Call)
        and isinstance(expr.func, cst.Attribute)
        and expr.func.attr.value in _BOOL_REDUCTIONS
        and not _is_module_or_self(expr.func.value, inference)
    ):
        return Confidence.LOW if imports_numpy else Confidence.MEDIUM
    return None


def _is_module_or_self(receiver: cst.BaseExpression, inference: DeviceInference) -> bool:
    """``self.all()``, ``np.any(...)``-like module functions: not a tensor method."""
    head = receiver
    while isinstance(head, cst.Attribute):
        head = head.value
    if not isinstance(head, cst.Name):
        return False
    return head.value in ("self", "cls") or inference.imports.is_imported(head.value)
