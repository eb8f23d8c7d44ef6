"""Where an expression's data lives, read from its spelling with ``ast`` (the project index's rules).

Only what the code spells out counts: ``.cpu()`` / ``.numpy()`` results, ``*_cpu`` names, literals,
torch factories without ``device=`` where the module builds on the host, numpy calls,
``torch.load(..., map_location="cpu")`` and safetensors' loaders.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from syncllint.analysis import torch_api as api
from syncllint.analysis.conventions import names_no_device_data

# The place names, defined beside the summaries that carry them and re-exported here.
from syncllint.project.records import DEVICE as DEVICE
from syncllint.project.records import DEVICE_DATA as DEVICE_DATA
from syncllint.project.records import HOST as HOST
from syncllint.project.records import HOST_DATA as HOST_DATA
from syncllint.project.records import NO_VALUE as NO_VALUE
from syncllint.project.records import NOT_HOST as NOT_HOST
from syncllint.project.records import PYTHON_NUMBER, FunctionSummary
from syncllint.project.records import UNKNOWN_PLACE as UNKNOWN_PLACE

# Results in host memory: copies to the host, and sizes (``x.size(0)``, ``x.numel()``: Python ints).
_HOST_METHODS = frozenset(("cpu", "numpy", "tolist", "item", "size", "numel", "dim", "ndimension", "stride", "nelement"))
_SIZE_ATTRIBUTES = frozenset(("shape", "ndim"))  # ``attention_mask.shape[-1]``: a Python int
_PYTHON_NUMBERS = frozenset(("len", "int", "float", "bool"))
_DEVICE_SUFFIXES = ("_gpu", "_cuda")
_HOST_LOADERS = frozenset(("safetensors.torch.load_file", "safetensors.torch.load"))
# Reads of a container that keep its elements' place: ``state_dict.get(name)`` of a host state dict.
_CONTAINER_READS = frozenset(("get", "pop", "values"))
# Methods whose result is on the receiver's device: ``rows.new_zeros(n)``.
NEW_ON_RECEIVER = frozenset(("new_zeros", "new_ones", "new_empty", "new_full", "new_tensor"))
JOINS = frozenset("torch." + n for n in "cat concat concatenate stack hstack vstack".split())
# Modules whose functions compute on tensors where they are (``torch.topk``, ``torch.linalg.norm``).
_COMPUTING_MODULES = frozenset(("torch", "torch.nn.functional", "torch.linalg", "torch.fft", "torch.special"))
# Torch functions, not tensor methods, that start a chain (``torch.from_numpy(a).long()``).
_CHAIN_STARTS = api.TORCH_FACTORIES | api.HOST_TENSOR_FUNCTIONS
# Functions of those modules that do not compute on their inputs: factories, loaders, host queries.
_NOT_COMPUTING = api.TORCH_FACTORIES | api.TORCH_HOST_FUNCTIONS | api.TORCH_ANY_RESULT_FUNCTIONS


# Comparisons that compare tensors elementwise (``is`` / ``in`` give a Python bool).
_ELEMENTWISE_COMPARISONS = (ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE)


class PlaceReader:
    """The place rules, over a module's imports (``qualify``) and conventions."""

    def __init__(self, qualify: Callable[[ast.expr], str | None], suffixes: tuple[str, ...], factories_on_host: bool) -> None:
        self.qualify = qualify
        self.suffixes = suffixes
        self.factories_on_host = factories_on_host
        # The module's own function a call reaches (``load_rows(x)``, ``self._prepare(x)``), if any.
        self.own: Callable[[ast.Call], FunctionSummary | None] = lambda call: None

    def attribute_place(self, value: ast.expr, locals_: dict[str, ast.expr] | None = None) -> str:
        return self.place_of(value, locals_ or {}) or UNKNOWN_PLACE

    def argument(self, expr: ast.expr, locals_: dict[str, ast.expr] | None = None) -> int:
        """NO_VALUE for ``None`` (it says nothing of the data the parameter gets otherwise), else
        whether the expression shows host data (``locals_``: the calling function's assignments)."""
        if isinstance(expr, ast.Constant) and expr.value is None:
            return NO_VALUE
        locals_ = locals_ or {}
        # ``(torch.arange(n) * step).long()``: arithmetic with a host tensor, as ``place_of`` reads it.
        place = self.place_of(expr, locals_)
        if place == HOST and not self.shows_device(expr, locals_) or self.shows_host(expr, locals_):
            return HOST_DATA
        return DEVICE_DATA if place == DEVICE or self.shows_device(expr, locals_) else NOT_HOST

    def shows_device(self, expr: ast.expr, locals_: dict[str, ast.expr], depth: int = 0) -> bool:
        """Device data on its face: ``.cuda()``, ``.to("cuda")``, a factory with ``device="cuda"``,
        a ``*_gpu`` name, arithmetic with one of those, or a local assigned one
        (``q = torch.randn(..., device="cuda")`` before ``_check(q)``)."""
        if depth > 3:
            return False
        if isinstance(expr, ast.Name):
            if expr.id in locals_:  # what the caller assigned outranks the name's suffix
                return self.shows_device(locals_[expr.id], locals_, depth + 1)
            return expr.id.endswith(_DEVICE_SUFFIXES) and not names_no_device_data(expr.id)
        if isinstance(expr, ast.Attribute):
            return expr.attr.endswith(_DEVICE_SUFFIXES) and not names_no_device_data(expr.attr)
        if isinstance(expr, (ast.Call, ast.Subscript)) and (own := self.own_result(expr, locals_, depth)) is not None:
            return own == DEVICE
        if isinstance(expr, ast.Subscript):
            return self.shows_device(expr.value, locals_, depth)
        if isinstance(expr, ast.BinOp):  # broadcasting: a device operand puts the result there
            return self.shows_device(expr.left, locals_, depth) or self.shows_device(expr.right, locals_, depth)
        if not isinstance(expr, ast.Call):
            return False
        if isinstance(expr.func, ast.Attribute):
            method = expr.func.attr
            if method == "cuda":
                return True
            if method == "to":
                target = _keyword(expr, "device") or (expr.args[0] if expr.args else None)
                if isinstance(target, (ast.Name, ast.Attribute)):
                    # ``.to(device=self.device, non_blocking=True)``: the runner's device, by name
                    return (target.id if isinstance(target, ast.Name) else target.attr) == "device"
                return (_string(target) or "").startswith(api.ACCELERATOR_PREFIXES)
            if method in api.SAME_PLACE_METHODS or method in NEW_ON_RECEIVER:
                return self.shows_device(expr.func.value, locals_, depth)
        if (self.qualify(expr.func) or "") in api.TORCH_FACTORIES:
            return (_string(_keyword(expr, "device")) or "").startswith(api.ACCELERATOR_PREFIXES)
        return False

    def shows_host(self, expr: ast.expr, locals_: dict[str, ast.expr] | None = None, depth: int = 0) -> bool:
        """The expression is host data on its face: a literal, a ``*_cpu`` name, a ``.cpu()`` result,
        a torch factory without ``device=`` (where that builds on the host), a numpy call, or a local
        assigned one of those (``side_kv = kv_lens_cpu[lo:hi]``)."""
        if depth > 3:  # names followed through the caller's locals: no further
            return False
        locals_ = locals_ or {}
        if isinstance(expr, ast.Constant) and isinstance(expr.value, str):
            # ``"cuda"`` fills a device parameter: the data that parameter places is not on the host;
            # ``"meta"`` places no data at all.
            return not expr.value.lower().startswith((*api.ACCELERATOR_PREFIXES, "meta"))
        if isinstance(expr, ast.Constant) and expr.value is None:
            return False  # a local reset to ``None`` says nothing of what it holds elsewhere
        if isinstance(expr, (ast.Constant, ast.List, ast.Tuple, ast.Dict, ast.JoinedStr)):
            return True
        if isinstance(expr, ast.Attribute) and expr.attr in _SIZE_ATTRIBUTES:
            return True
        if isinstance(expr, (ast.Name, ast.Attribute)):
            leaf = expr.id if isinstance(expr, ast.Name) else expr.attr
            if leaf.endswith(self.suffixes) or "_cpu_" in leaf:
                return True
            return isinstance(expr, ast.Name) and expr.id in locals_ and self.shows_host(locals_[expr.id], locals_, depth + 1)
        if isinstance(expr, (ast.Call, ast.Subscript)) and (own := self.own_result(expr, locals_, depth)) is not None:
            return own == HOST
        if isinstance(expr, ast.Subscript):
            container = expr.value
            if isinstance(container, ast.Name) and container.id in locals_:
                container = locals_[container.id]
            if isinstance(container, (ast.List, ast.Tuple)):
                # An element of ``[kv0, torch.empty_like(kv0)]`` is what the elements are: a list is
                # host data, the tensors in it need not be.
                return bool(container.elts) and all(self.shows_host(e, locals_, depth + 1) for e in container.elts)
            return self.shows_host(expr.value, locals_, depth)
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, (ast.BitAnd, ast.BitOr, ast.BitXor)):
            return self._beside_host([expr.left, expr.right], locals_, depth)  # ``mask_cpu & (ids == k)``
        if isinstance(expr, ast.BinOp):  # ``side_kv_cpu - side_qo_cpu``: arithmetic stays where it is
            return self.shows_host(expr.left, locals_, depth) and self.shows_host(expr.right, locals_, depth)
        if isinstance(expr, ast.Compare) and len(expr.comparators) == 1:
            return self._beside_host([expr.left, expr.comparators[0]], locals_, depth)  # ``ids_cpu == token_id``
        if isinstance(expr, ast.UnaryOp):
            return self.shows_host(expr.operand, locals_, depth)
        if not isinstance(expr, ast.Call):
            return False
        if isinstance(expr.func, ast.Attribute):
            method = expr.func.attr
            if method in _HOST_METHODS:
                return True
            receiver = expr.func.value
            if isinstance(receiver, ast.Call) and api.is_host_array_api(self.qualify(receiver.func) or ""):
                return True  # ``np.flip(sigmas).copy()``: an array's methods give arrays and numbers
            if method == "to" and self._names_the_cpu(_keyword(expr, "device") or next(iter(expr.args), None), locals_):
                return True  # ``.to(device=work_device)`` after ``work_device = torch.device("cpu")``
            if method == "to" and expr.args:
                if (text := _string(expr.args[0])) is not None:
                    return text == "cpu"
                if not (self.qualify(expr.args[0]) or "").startswith("torch.") or _keyword(expr, "device") is not None:
                    return False  # ``.to(device)``: wherever ``device`` is
                return self.shows_host(expr.func.value, locals_, depth)  # ``.to(torch.int32)``
            if method in api.SAME_PLACE_METHODS or method in _CONTAINER_READS or self.keeps_place(expr):
                return self.shows_host(expr.func.value, locals_, depth)
        qualified = self.qualify(expr.func) or ""
        if qualified in _PYTHON_NUMBERS:
            return True
        if qualified == "torch.device":
            # ``device = torch.device("cpu")`` handed on like the string: the data it places is on the host.
            return self._names_the_cpu(expr, locals_)
        if qualified in _HOST_LOADERS:  # a checkpoint loader (``load_file(path)``): a dict of host tensors
            return _string(_keyword(expr, "device")) in (None, "cpu")
        if qualified in api.TORCH_FACTORIES:
            return self.factories_on_host and not any(k.arg == "device" for k in expr.keywords)
        return api.is_host_array_api(qualified)

    def _beside_host(self, operands: list[ast.expr], locals_: dict[str, ast.expr], depth: int) -> bool:
        """A comparison or a mask combination with a host tensor on one side and nothing shown on the
        device on the other: a host and a device tensor meet in one op only through a 0-d scalar, and
        masks and compared ids are not that."""
        # A literal (``logits > 0.5``) is no host tensor: it meets a tensor anywhere.
        host = [not isinstance(operand, ast.Constant) and self.shows_host(operand, locals_, depth) for operand in operands]
        return any(host) and not any(
            self.shows_device(operand, locals_) for operand, on_host in zip(operands, host) if not on_host
        )

    def _names_the_cpu(self, expr: ast.expr | None, locals_: dict[str, ast.expr]) -> bool:
        """``"cpu"``, ``torch.device("cpu")``, or a local assigned one of them."""
        if isinstance(expr, ast.Name) and expr.id in locals_:
            expr = locals_[expr.id]
        if isinstance(expr, ast.Call) and self.qualify(expr.func) == "torch.device" and len(expr.args) == 1:
            expr = expr.args[0]
        return _string(expr) == "cpu"

    def place_of(self, expr: ast.expr, locals_: dict[str, ast.expr], depth: int = 0) -> str | None:
        # ``top = torch.topk(scores, k)[0]`` of ``scores = torch.zeros(n)``: a local, a row, an op, a local.
        if depth > 5:
            return None
        if isinstance(expr, ast.Name) and expr.id in locals_:
            return self.place_of(locals_[expr.id], locals_, depth + 1)
        if isinstance(expr, (ast.Tuple, ast.List)) and expr.elts:
            places = {self.place_of(e, locals_, depth + 1) for e in expr.elts}
            return places.pop() if len(places) == 1 else None
        if isinstance(expr, (ast.Call, ast.Subscript)) and (own := self.own_result(expr, locals_, depth)) is not None:
            return own
        if isinstance(expr, ast.Subscript):  # a row of host data is host data
            return self.place_of(expr.value, locals_, depth + 1)
        if isinstance(expr, ast.Call) and self.host_factory(expr, locals_):
            return HOST
        if isinstance(expr, ast.Call) and api.is_host_array_api(self.qualify(expr.func) or ""):
            return HOST  # ``return pd.read_csv(path)``: a host table
        if isinstance(expr, ast.Attribute) and self.place_of(expr.value, locals_, depth + 1) == HOST:
            return HOST  # ``history.iloc``, ``rows.grad`` of host data: what host data holds is host data
        if isinstance(expr, ast.Call) and (operands := self._torch_operands(expr)):
            # ``torch.topk(scores, k)`` / ``F.softmax(x)``: on its tensors' device, as ``BinOp`` below.
            return _meeting({self.place_of(a, locals_, depth + 1) for a in operands})
        if isinstance(expr, ast.UnaryOp):  # ``~torch.eye(n, dtype=bool)``: where its operand is
            return self.place_of(expr.operand, locals_, depth + 1)
        if isinstance(expr, ast.BinOp):
            # ``shift * values`` of a host ``values``: as the engine combines operands, a shown
            # device wins, then a shown host; numbers and unshown names take the other's place.
            return _meeting({self.place_of(expr.left, locals_, depth + 1), self.place_of(expr.right, locals_, depth + 1)})
        if isinstance(expr, ast.Compare) and all(isinstance(op, _ELEMENTWISE_COMPARISONS) for op in expr.ops):
            # ``base < lens.unsqueeze(1)``: an elementwise comparison is where its tensors are.
            return _meeting({self.place_of(e, locals_, depth + 1) for e in (expr.left, *expr.comparators)})
        receiver = expr
        while True:
            if isinstance(receiver, ast.Attribute) and (
                receiver.attr in _VIEW_ATTRIBUTES
                or (receiver.attr in api.RESULT_FIELDS and isinstance(receiver.value, ast.Call))
            ):
                receiver = receiver.value  # ``idxs.T``, ``scores.max(dim=1).values``: where its tensor is
                continue
            if not (isinstance(receiver, ast.Call) and isinstance(receiver.func, ast.Attribute)):
                break
            if (self.qualify(receiver.func) or "") in _CHAIN_STARTS:
                # ``torch.tensor(rows).reshape(-1, 2)``, ``torch.from_numpy(a).long()``: a function, not a method
                break
            method = receiver.func.attr
            if method in api.HOST_RESULT_METHODS:
                return HOST
            if method == "cuda":
                return DEVICE
            if method == "to" and not self.keeps_place(receiver):
                target = _keyword(receiver, "device") or next(iter(receiver.args), None)
                if self._names_the_cpu(target, locals_):  # ``.to("cpu")``, ``.to(torch.device("cpu"))``
                    return HOST
                return DEVICE if (_string(target) or "").startswith("cuda") else None
            if method not in api.SAME_PLACE_METHODS and method not in NEW_ON_RECEIVER and method != "to":
                if method == "load" and "cpu" in (_string(_keyword(receiver, "map_location")) or ""):
                    return HOST  # torch.load(..., map_location="cpu")
                return None
            receiver = receiver.func.value
        # ``idxs.reshape(-1, n).T.ravel()``: where the local (or the factory) it starts from is.
        return self.place_of(receiver, locals_, depth + 1) if receiver is not expr else None

    def _torch_operands(self, call: ast.Call) -> list[ast.expr]:
        """The positional arguments of a torch op that computes on its inputs where they live
        (``torch.topk``, ``torch.linalg.norm``, ``F.pad``): not factories, loaders or host queries."""
        qualified = self.qualify(call.func) or ""
        module, _, name = qualified.rpartition(".")
        if module not in _COMPUTING_MODULES or not name or name[0].isupper():
            return []
        if qualified in _NOT_COMPUTING:
            return []
        # ``torch.cat([emission, extra])``: the tensors of a list argument meet on one device.
        return [e for a in call.args for e in (a.elts if isinstance(a, (ast.List, ast.Tuple)) else (a,))
                if not isinstance(e, ast.Starred)]

    def host_factory(self, call: ast.Call, locals_: dict[str, ast.expr] | None = None) -> bool:
        """``torch.randn(...)`` / ``torch.tensor([...])`` without ``device=``; safetensors' loaders.
        ``locals_``: the function's names whose values show a device argument's place (none at
        module level)."""
        locals_ = locals_ if locals_ is not None else {}
        qualified = self.qualify(call.func) or ""
        device = _keyword(call, "device")
        if qualified in _HOST_LOADERS:
            return device is None or _string(device) == "cpu"
        if qualified in api.HOST_TENSOR_FUNCTIONS:
            return True  # ``torch.from_numpy(a)``, ``torch.frombuffer(b)``, a generator's state
        if qualified in api.TORCH_FACTORIES and device is not None and self._names_the_cpu(device, locals_):
            return True  # ``torch.arange(n, device=torch.device("cpu"))``
        if not self.factories_on_host or qualified not in api.TORCH_FACTORIES or device is not None:
            return False
        if any(k.arg is None for k in call.keywords):
            return False  # ``torch.full((), 0, **like)``: the keywords it is given may name any device
        if qualified in api.HOST_DATA_CONSTRUCTORS:  # ``torch.as_tensor(t)`` keeps t's device: Python data and numpy only
            data = call.args[0] if call.args else None
            if isinstance(data, ast.Name) and data.id in locals_:
                data = locals_[data.id]  # ``ids = [lookup[n] for n in names]`` before ``torch.tensor(ids)``
            if isinstance(data, (ast.List, ast.Tuple, ast.Constant, ast.ListComp)) or (
                isinstance(data, ast.Call) and (self.qualify(data.func) or "").startswith("numpy.")
            ):
                return True
            # ``torch.tensor(possible_resolutions)`` of a parameter or a helper's result: a copy into
            # host memory unless the data is a tensor, which ``torch.tensor`` is not meant for (it
            # warns); ``as_tensor`` / ``asarray`` are, and keep a tensor's device.
            return qualified == "torch.tensor" and data is not None and not self.shows_device(data, locals_)
        return True

    def keeps_place(self, call: ast.Call) -> bool:
        """``x.to(torch.float32)`` / ``x.to(dtype=...)`` / ``x.to(y.dtype)``: a new dtype, the same device."""
        if not (isinstance(call.func, ast.Attribute) and call.func.attr == "to") or _keyword(call, "device") is not None:
            return False
        if not call.args:
            return _keyword(call, "dtype") is not None
        return all(
            isinstance(a, ast.Attribute) and (a.attr == "dtype" or (self.qualify(a) or "").startswith("torch."))
            for a in call.args
        )

    def own_result(self, expr: ast.Call | ast.Subscript, locals_: dict[str, ast.expr], depth: int) -> str | None:
        """Where the result of the module's own function lives: what its returns show, the element
        of the tuple it returns (``load_payload(x)[0]``), or where the argument it passes back is."""
        position = None
        if isinstance(expr, ast.Subscript):
            if not (isinstance(expr.slice, ast.Constant) and type(expr.slice.value) is int and isinstance(expr.value, ast.Call)):
                return None
            position, expr = expr.slice.value, expr.value
        if not isinstance(expr, ast.Call) or depth > 3 or (function := self.own(expr)) is None:
            return None
        if position is not None and 0 <= position < len(function.elements):
            return function.elements[position]
        if function.returns == PYTHON_NUMBER:
            return None  # a number is no tensor's place: the index tracks tensors only
        if function.returns is not None:
            return function.returns
        argument = bound_argument(expr, function, function.follows) if function.follows else None
        if argument is None:
            return None
        place = self.place_of(argument, locals_, depth + 1)
        if place is None and self.shows_host(argument, locals_, depth + 1):
            return HOST
        return place


def bound_argument(call: ast.Call, function: FunctionSummary, parameter: str) -> ast.expr | None:
    """The argument a call gives ``parameter``, by keyword or by position before any ``*args``."""
    for keyword in call.keywords:
        if keyword.arg == parameter:
            return keyword.value
    if parameter not in function.params:
        return None
    position = function.params.index(parameter)
    before_star = call.args[: next((i for i, a in enumerate(call.args) if isinstance(a, ast.Starred)), len(call.args))]
    return before_star[position] if position < len(before_star) else None


def _keyword(call: ast.Call, name: str) -> ast.expr | None:
    return next((k.value for k in call.keywords if k.arg == name), None)


# Attributes that are views of their tensor, on its device.
_VIEW_ATTRIBUTES = frozenset(("T", "mT", "H", "mH", "data", "real", "imag"))


def _meeting(places: set[str | None]) -> str | None:
    """Where tensors that meet in one op are: a shown device wins, then a shown host."""
    return DEVICE if DEVICE in places else HOST if HOST in places else None


def _string(expr: ast.expr | None) -> str | None:
    return expr.value.lower() if isinstance(expr, ast.Constant) and isinstance(expr.value, str) else None
