"""The ``else`` of an ``if`` that moves a tensor starts from the tensor as it was before the ``if``.

The inference is flow-ordered: an ``else`` arm sees what the ``if`` arm bound, which is usually
harmless and often helps (see the closing note of issue 3: making all arms independent lost more
true findings than it removed false ones). One pattern is plainly wrong under flow order, the
choice of a device for one tensor::

    cu_seqlens = torch.from_numpy(lens)
    if not on_npu:
        cu_seqlens = cu_seqlens.to(device, non_blocking=True)
    else:
        cu_seqlens = cu_seqlens.to("cpu")       # a host tensor here, not the device copy above

So for names the ``if`` arm moves or converts onto themselves (``x = x.to(...)`` / ``.cuda()`` /
``.cpu()`` / ``.tolist()`` / ``.numpy()``), and names an ``if x is None:`` arm fills with a default,
the ``else`` or ``elif`` arm reads the value from before the ``if`` (also where a nested block of the
``if`` arm does the move)::

    if chunk_counts is None:
        chunk_counts = [1] * n              # not what the elif below tests
    elif isinstance(chunk_counts, list):
        counts = [c.item() for c in chunk_counts]

After the statement, a name the other arm left alone holds the ``if`` arm's value again, as flow
order had it. Where the test splits the CUDA path from the host path and both arms bind a name,
one a device tensor and the other a host tensor, the code after the statement runs on both paths:
the name holds a tensor of unknown place, not the last arm's host tensor::

    if lengths.device.type == "cuda":
        starts = lengths.clamp_min(0)       # the CUDA path
    else:
        starts = _filter_on_host(lengths)   # the CPU path
    starts.to(out.device)                   # no host->device copy on either

An arm that leaves (``return``, ``raise``, ``continue``, ``break`` as its last statement) binds
nothing the code after the statement sees; names it rebound hold their values from before::

    if linear_reg:
        data = data.numpy()                 # in a nested block of the arm, as well
        return solve(data)
    statistics = torch.mean(data).item()    # the host tensor from above, not a numpy array

An ``except`` handler is the exceptional path, not the one after the ``try`` body: a name both bind
holds either value after the statement (their join), not the handler's alone::

    try:
        out = self.net(img)                 # the usual path: a device tensor
    except torch.cuda.OutOfMemoryError:
        out = self._upscale_tiled_to_cpu(img)
    out.cpu()                               # still a copy from the device, most of the time

A name only a handler binds holds, after the statement, the value from before the ``try`` (the
usual path) or the handler's: their join; a handler that leaves (``raise``, ``return``) binds
nothing the code after it sees::

    try:
        inverse = torch.linalg.cholesky(H)
    except torch.OutOfMemoryError:
        W = W.to("cpu")                     # an out-of-memory fallback, not the usual path
    losses = torch.zeros_like(W)            # on W's device, whichever it is
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from syncllint.analysis.gathered import copied_to_host_in
from syncllint.analysis.module_state import DEVICE_MOVES
from syncllint.analysis.values import TENSOR, Place, Value, join
from syncllint.traversal import bound_assignments, ends_flow, nested_name_assignments

if TYPE_CHECKING:
    from syncllint.analysis.devices import DeviceInference

_MOVES = frozenset(("to", "cuda", "cpu", "tolist", "numpy"))


class MovingArms:
    def __init__(self, inference: DeviceInference) -> None:
        self._inference = inference
        # id of an ``else`` body or an ``elif`` -> values before the ``if``
        self._before: dict[int, dict[str, Value]] = {}
        # same ids -> name -> (the ``if`` arm's value, the value the other arm started from)
        self._kept: dict[int, dict[str, tuple[Value, Value]]] = {}
        # id of a ``try`` body with handlers -> the names it binds, then their values after it
        self._try_names: dict[int, list[str]] = {}
        # id of a ``try`` -> names only its handlers bind, with their values before it, and the
        # names bound by a handler that does not leave (whose binding the code after it sees)
        self._before_try: dict[int, tuple[dict[str, Value | None], set[str]]] = {}
        self._after_body: dict[int, dict[str, Value]] = {}
        # id of the body of an ``if`` with an ``else`` -> names both arms bind, then their values at
        # the end of the body; the bodies of those whose test splits CUDA from host
        self._both_names: dict[int, list[str]] = {}
        self._both_body: dict[int, dict[str, Value]] = {}
        self._splits: set[int] = set()
        # id of an ``if`` without ``else`` -> device specs its body rebinds, as they were before it
        self._rebound_before: dict[int, dict[str, Value]] = {}
        # id of an ``else`` body -> modules built on the host that the ``if`` arm moves
        self._fresh_before: dict[int, set[str]] = {}
        # id of the body of an ``if`` arm that leaves (``return``, ``continue``...) -> names it binds,
        # as they were before it; then their values at its end
        self._left_before: dict[int, dict[str, Value]] = {}
        self._left_after: dict[int, dict[str, Value]] = {}

    def enter_if(self, node: cst.If) -> None:
        """Before the test of ``node`` is read: an ``elif`` starts from the values before its ``if``."""
        self._start_arm(id(node))
        if ends_flow(node.body):
            left = {name: v for name, _ in nested_name_assignments(node.body) if (v := self._inference.lookup(name)) is not None}
            if left:
                self._left_before[id(node.body)] = left
        other = node.orelse.body if isinstance(node.orelse, cst.Else) else node.orelse
        if other is None:
            # ``device = "cpu"`` above, ``device = "cuda"`` in the body: either device after the ``if``.
            held = {name: v for name, _ in bound_assignments(node.body) if (v := self._inference.lookup(name)) is not None}
            self._rebound_before[id(node)] = {name: v for name, v in held.items() if v.device_literal is not None}
            return
        if isinstance(node.orelse, cst.Else):
            moved = _modules_moved_in(node.body) & self._inference.fresh_modules
            if moved:
                self._fresh_before[id(other)] = moved
            body_names = {name for name, _ in bound_assignments(node.body)}
            both = [name for name, _ in bound_assignments(node.orelse.body) if name in body_names]
            if both:
                self._both_names[id(node.body)] = both
        before: dict[str, Value] = {}
        for name in _arm_only_names(node):
            value = self._inference.lookup(name)
            if value is not None:
                before[name] = value
        if before:
            self._before[id(other)] = before

    def split_on_devices(self, node: cst.If) -> None:
        """``node``'s test sends device tensors one way and host tensors the other: a name both
        arms bind holds either arm's value after it."""
        self._splits.add(id(node.body))

    def leave_if(self, node: cst.If) -> None:
        self._end_arm(id(node))
        # ``if linear: data = data.cuda(); return ...``: what that arm bound never reaches the code
        # after the statement; the name holds its value from before, unless another arm rebound it.
        left_after = self._left_after.pop(id(node.body), {})
        for name, value in self._left_before.pop(id(node.body), {}).items():
            if name in left_after and self._inference.lookup(name) is left_after[name]:
                self._inference.set_local(name, value)
        split = id(node.body) in self._splits
        self._splits.discard(id(node.body))
        arms = self._both_body.pop(id(node.body), {})
        before = self._rebound_before.pop(id(node), {})
        if not ends_flow(node.body):
            arms.update(before)
        for name, other in arms.items():
            now = self._inference.lookup(name)
            if now is not None and _holds_either(now, other, split):
                self._inference.bind(_target(name), join(other, now))

    def enter_suite(self, suite: cst.BaseSuite) -> None:
        self._start_arm(id(suite))

    def leave_suite(self, suite: cst.BaseSuite) -> None:
        self._end_arm(id(suite))
        both = self._both_names.pop(id(suite), None)
        if both is not None:
            self._both_body[id(suite)] = {n: v for n in both if (v := self._inference.lookup(n)) is not None}
        left = self._left_before.get(id(suite))
        if left is not None:
            self._left_after[id(suite)] = {n: v for n in left if (v := self._inference.lookup(n)) is not None}
        names = self._try_names.pop(id(suite), None)
        if names is not None:
            self._after_body[id(suite)] = {name: v for name in names if (v := self._inference.lookup(name)) is not None}

    def enter_try(self, node: cst.Try | cst.TryStar) -> None:
        if node.handlers:
            in_body = [name for name, _ in bound_assignments(node.body)]
            self._try_names[id(node.body)] = in_body
            bound: dict[str, bool] = {}  # name -> whether a handler that binds it goes on after
            for handler in node.handlers:
                for name, _ in bound_assignments(handler.body):
                    bound[name] = bound.get(name, False) or not ends_flow(handler.body)
            handler_only = bound.keys() - set(in_body)
            if handler_only:
                before = {name: self._inference.lookup(name) for name in handler_only}
                self._before_try[id(node)] = (before, {name for name in handler_only if bound[name]})

    def leave_try(self, node: cst.Try | cst.TryStar) -> None:
        """A name the handlers rebound holds the body's value or theirs."""
        for name, value in self._after_body.pop(id(node.body), {}).items():
            now = self._inference.lookup(name)
            if now is not None and now is not value:
                self._inference.bind(_target(name), _either(value, now))
        before_try, reaching = self._before_try.pop(id(node), ({}, set()))
        for name, before in before_try.items():
            now = self._inference.lookup(name)
            if before is None or now is None or now is before:
                continue
            self._inference.bind(_target(name), _either(before, now) if name in reaching else before)

    # Restoring sets a name's value as it was (``set_local``): ``bind`` would read an unknown value
    # given back over the arm's tensor as an opaque rebinding of that tensor, a tensor still.
    def _start_arm(self, key: int) -> None:
        fresh = self._fresh_before.get(key, set())
        # ``model.cuda(device)`` in the ``if`` arm; the ``else`` arm still holds the host-built model.
        self._inference.fresh_modules.update(fresh)
        self._inference.moved_modules.difference_update(fresh)
        before = self._before.pop(key, None)
        if before is None:
            return
        kept: dict[str, tuple[Value, Value]] = {}
        for name, value in before.items():
            first_arm = self._inference.lookup(name)
            self._inference.set_local(name, value)
            entered = self._inference.lookup(name)
            if first_arm is not None and entered is not None:
                kept[name] = (first_arm, entered)
        self._kept[key] = kept

    def _end_arm(self, key: int) -> None:
        for name in self._fresh_before.pop(key, set()) & self._inference.fresh_modules:
            # Left alone by the ``else`` arm: after the statement, moved as the ``if`` arm left it.
            self._inference.fresh_modules.discard(name)
            self._inference.moved_modules.add(name)
        for name, (first_arm, entered) in self._kept.pop(key, {}).items():
            if self._inference.lookup(name) is entered:  # the other arm left it alone
                self._inference.set_local(name, first_arm)


def _target(key: str) -> cst.BaseExpression:
    """The expression a key of ``bound_assignments`` binds: ``x`` or ``self.cfg.device`` (built, not parsed)."""
    head, *attributes = key.split(".")
    node: cst.BaseExpression = cst.Name(head)
    for attribute in attributes:
        node = cst.Attribute(node, cst.Name(attribute))
    return node


def _either(body: Value, handler: Value) -> Value:
    """The value after a ``try`` whose body and handler bound it: their join, where an opaque call
    in one and a tensor in the other (``self.net(x)`` / a CPU fallback) make a tensor of unknown place."""
    if {body.place, handler.place} & {Place.UNKNOWN} and (body.is_tensor or handler.is_tensor):
        return TENSOR
    return join(body, handler)


def _modules_moved_in(body: cst.BaseSuite) -> set[str]:
    """``model.cuda(device)`` / ``model.to(device)`` (``DEVICE_MOVES``) as statements of ``body`` (not nested)."""
    moved: set[str] = set()
    for statement in body.body:
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            call = small.value if isinstance(small, cst.Expr) else None
            if isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and call.func.attr.value in DEVICE_MOVES:
                if isinstance(call.func.value, cst.Name):
                    moved.add(call.func.value.value)
    return moved


def _arm_only_names(node: cst.If) -> list[str]:
    """Names whose rebinding in the ``if`` arm the other arm must not see: moves and conversions of
    themselves (``x = x.to(device)``), and defaults filled in under ``if x is None:``, also where a
    nested block of the arm does it (``if linear_reg: data = data.numpy()``)."""
    unset = _tested_for_none(node.test)
    moved = [name for name, value in nested_name_assignments(node.body) if name == unset or _moves(value, name)]
    # ``for k, v in pred.items(): pred[k] = v.cpu()`` moves ``pred`` as well (``gathered``).
    return list(dict.fromkeys([*moved, *copied_to_host_in(node.body)]))


def _tested_for_none(test: cst.BaseExpression) -> str | None:
    if (
        isinstance(test, cst.Comparison)
        and isinstance(test.left, cst.Name)
        and len(test.comparisons) == 1
        and isinstance(test.comparisons[0].operator, cst.Is)
        and isinstance(test.comparisons[0].comparator, cst.Name)
        and test.comparisons[0].comparator.value == "None"
    ):
        return test.left.value
    return None


def _moves(value: cst.BaseExpression, name: str) -> bool:
    return (
        isinstance(value, cst.Call)
        and isinstance(value.func, cst.Attribute)
        and value.func.attr.value in _MOVES
        and isinstance(value.func.value, cst.Name)
        and value.func.value.value == name
    )


def _holds_either(now: Value, other: Value, split: bool) -> bool:
    """Whether a name holds either arm's value after an ``if``: under a test that splits CUDA from
    host, a host tensor in one arm and a device one in the other; under any test, a tensor that
    may be on the device in one arm and a Python number in the other (``first = start_ids.max()`` / ``first = seq_len``:
    a bound read as an int syncs on the device path), or device specs naming two places
    (``device = "cuda"`` / ``device = "cpu"``). Otherwise flow order stands."""
    places = {now.place, other.place}
    if split and Place.HOST_TENSOR in places and places & {Place.DEVICE, Place.TENSOR}:
        return True
    if places in ({Place.DEVICE, Place.PYTHON}, {Place.TENSOR, Place.PYTHON}):
        return (now if now.place is Place.PYTHON else other).zero_dim
    return None not in (now.device_literal, other.device_literal) and now.device_literal is not other.device_literal
