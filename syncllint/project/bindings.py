"""What a module's assignments and declarations say, read with ``ast`` for the project index.

Locals a function binds once (``side_kv = kv_lens_cpu[lo:hi]`` before ``plan(side_kv)``), class fields
declared numpy arrays or tensors, and attributes that hold objects rather than data.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from syncllint.analysis import torch_api as api

# Class-body annotations of an attribute (``num_scheduled_tokens: np.ndarray``): a declared type
# outweighs assignments whose place the code does not show, elsewhere in the project.
DECLARED_HOST, DECLARED_TENSOR = "declared-host", "declared-tensor"
OBJECT = "object"  # ``self.audio = AudioEncoder(...)``: an instance, whatever a dataclass elsewhere declares


def declared_fields(node: ast.ClassDef, qualify: Callable[[ast.expr], str | None]) -> Iterator[tuple[str, str]]:
    """``num_scheduled_tokens: np.ndarray`` in a class body (a dataclass field): host data by its
    annotation; a field annotated as a tensor may hold device data."""
    for statement in node.body:
        if not (isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name)):
            continue
        annotation = statement.annotation
        if isinstance(annotation, ast.Subscript):  # ``npt.NDArray[np.int32]``
            annotation = annotation.value
        if (qualify(annotation) or "") in api.NUMPY_ANNOTATIONS:
            yield statement.target.id, DECLARED_HOST
        elif "Tensor" in ast.unparse(statement.annotation):
            yield statement.target.id, DECLARED_TENSOR


@dataclass(frozen=True)
class FunctionBindings:
    """What a function body binds (nested blocks included, nested defs not), from one scan."""

    # ``name = expr`` for the names assigned exactly once; ``rows, names = load(x)`` counts as
    # ``rows = load(x)[0]``.
    once: dict[str, ast.expr]
    bound: frozenset[str]  # every name it binds, any way (``for a in``, ``a += 1``, ``with ... as a``)
    # Names bound only by such assignments, more than once: every value, in no particular order.
    repeated: dict[str, tuple[ast.expr, ...]] = field(default_factory=dict)
    # The rows of its ``for`` / ``while`` loops: an assignment below a call in the same loop reaches it.
    loops: tuple[tuple[int, int], ...] = ()
    # The rows of each ``if``'s two arms (first, last of the body; first, last of the ``else`` /
    # ``elif``): an assignment in one arm never reaches a call in the other.
    arms: tuple[tuple[int, int, int, int], ...] = ()
    # Names assigned under ``if <name> is None:``: a default filled in, the caller's value otherwise.
    defaulted: frozenset[str] = frozenset()
    # ``id`` of an assigned value -> the last row of the block its assignment is written in:
    # every row after the assignment, up to there, runs only after it.
    block_ends: dict[int, int] = field(default_factory=dict)

    def reaching(self, name: str, call: ast.Call) -> list[ast.expr]:
        """The values of a name assigned several times that may hold when ``call`` runs: those above
        it, and those anywhere in a loop around it (not ``x = f(x)``'s own result). An assignment
        written in a block the call is in, above it, replaces every value before it (and those
        below the call in a loop around both)."""
        row = call.lineno
        around = [(first, last) for first, last in self.loops if first <= row <= last]
        last = self.replacing(name, call)
        replaced_at = last.lineno if last is not None else 0
        # A loop around both the call and the replacing assignment runs that assignment again first.
        renewed = last is not None and any(first <= replaced_at <= end for first, end in around)
        found: list[ast.expr] = []
        for value in self.repeated.get(name, ()):
            # ``rows = load(x)[0]`` stands for an unpacking: the row of the call it reads.
            line = getattr(value, "lineno", None) or getattr(getattr(value, "value", None), "lineno", None)
            if any(node is call for node in ast.walk(value)):
                continue
            if last is not None and value is not last and (line is None or line < replaced_at or line > row and renewed):
                continue
            if line is not None and any(
                a <= line <= b and c <= row <= d or c <= line <= d and a <= row <= b for a, b, c, d in self.arms
            ):
                continue  # ``if karras: s = to_karras(s)`` / ``elif beta: to_beta(s)``
            if line is None or line < row or any(first <= line <= last for first, last in around):
                found.append(value)
        return found

    def replacing(self, name: str, call: ast.Call) -> ast.expr | None:
        """The last value of ``name`` assigned above ``call`` in a block the call is in (directly or
        nested): it runs on every path to the call, so earlier values (the caller's, for a
        parameter) never reach it. ``num_atoms = torch.from_numpy(...)`` before ``self.stats(num_atoms)``."""
        row = call.lineno
        found: ast.expr | None = None
        for value in self.repeated.get(name, ()):
            end = self.block_ends.get(id(value))
            if end is not None and (value.end_lineno or value.lineno) < row <= end:
                if found is None or value.lineno > found.lineno:
                    found = value
        return found


def function_bindings(body: list[ast.stmt]) -> FunctionBindings:
    assigned: dict[str, list[ast.expr]] = {}
    others: set[str] = set()
    augmented: set[str] = set()
    loops: list[tuple[int, int]] = []
    arms: list[tuple[int, int, int, int]] = []
    defaulted: set[str] = set()
    block_ends: dict[int, int] = {}
    pending = [(statement, _last_row(body)) for statement in body] if body else []
    while pending:
        statement, block_end = pending.pop()
        if isinstance(statement, (ast.For, ast.AsyncFor, ast.While)):
            loops.append((statement.lineno, statement.end_lineno or statement.lineno))
        if isinstance(statement, ast.If) and (tested := _tested_for_none(statement.test)) is not None:
            defaulted.update(tested for inner in statement.body if tested in _assigned_names(inner))
        if isinstance(statement, ast.If) and statement.orelse:
            arms.append((statement.body[0].lineno, _last_row(statement.body),
                         statement.orelse[0].lineno, _last_row(statement.orelse)))
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name):
            assigned.setdefault(statement.targets[0].id, []).append(statement.value)
            block_ends[id(statement.value)] = block_end
            continue
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1 and isinstance(statement.value, ast.Call):
            target = statement.targets[0]
            names = [e.id for e in target.elts if isinstance(e, ast.Name)] if isinstance(target, ast.Tuple) else []
            if names and len(names) == len(getattr(target, "elts", ())):
                # ``rows, names = load_payload(x)`` binds ``rows`` to ``load_payload(x)[0]``.
                for position, name in enumerate(names):
                    assigned.setdefault(name, []).append(ast.Subscript(statement.value, ast.Constant(position), ast.Load()))
                continue
        if isinstance(statement, ast.AugAssign) and isinstance(statement.target, ast.Name):
            augmented.add(statement.target.id)  # decided below, once every value is known
            continue
        # Names bound another way too (``a, b = f()``, ``for a in ...``, ``with ... as a``): not once.
        for target in _other_bindings(statement):
            others.update(_bound_names(target))
        if not isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            blocks = [getattr(statement, field_name, None) or [] for field_name in ("body", "orelse", "finalbody")]
            blocks += [handler.body for handler in getattr(statement, "handlers", None) or ()]
            for block in filter(None, blocks):
                end = _last_row(block)
                pending.extend((inner, end) for inner in block)
    # ``prediction += part`` works in place on the array or tensor it was assigned and keeps its place;
    # from a Python number (``total = 0.0``) it takes the operand's, so such a name is not simple.
    others.update(name for name in augmented if name not in assigned or any(_a_number(v) for v in assigned[name]))
    simple = {name: values for name, values in assigned.items() if name not in others}
    return FunctionBindings(
        once={name: values[0] for name, values in simple.items() if len(values) == 1},
        bound=frozenset(assigned) | others,
        repeated={name: tuple(values) for name, values in simple.items() if len(values) > 1},
        block_ends=block_ends,
        loops=tuple(loops),
        arms=tuple(arms),
        defaulted=frozenset(defaulted),
    )


def _tested_for_none(test: ast.expr) -> str | None:
    """``name`` of ``if name is None:``."""
    if (
        isinstance(test, ast.Compare) and isinstance(test.left, ast.Name) and len(test.ops) == 1
        and isinstance(test.ops[0], ast.Is) and isinstance(test.comparators[0], ast.Constant)
        and test.comparators[0].value is None
    ):
        return test.left.id
    return None


def _assigned_names(statement: ast.stmt) -> set[str]:
    if not isinstance(statement, ast.Assign):
        return set()
    return {name for target in statement.targets for name in _bound_names(target)}


def _a_number(value: ast.expr) -> bool:
    """``0``, ``-1.0``, ``""``: a constant that ``+=`` replaces rather than updates in place."""
    if isinstance(value, ast.UnaryOp):
        value = value.operand
    return isinstance(value, ast.Constant) and value.value is not None


def _last_row(statements: list[ast.stmt]) -> int:
    return statements[-1].end_lineno or statements[-1].lineno


def _bound_names(target: ast.expr) -> Iterator[str]:
    """The names a target binds: ``a``, ``a, (b, *c)``; not ``x`` of ``x[i] *= 2`` or ``x.n = 1``."""
    if isinstance(target, ast.Name):
        yield target.id
    elif isinstance(target, (ast.Tuple, ast.List)):
        for element in target.elts:
            yield from _bound_names(element)
    elif isinstance(target, ast.Starred):
        yield from _bound_names(target.value)


def _other_bindings(statement: ast.stmt) -> list[ast.expr]:
    """The targets a statement binds other than ``name = value``."""
    if isinstance(statement, ast.Assign):
        return list(statement.targets)
    if isinstance(statement, (ast.AugAssign, ast.AnnAssign, ast.For, ast.AsyncFor)):
        return [statement.target]
    if isinstance(statement, (ast.With, ast.AsyncWith)):
        return [item.optional_vars for item in statement.items if item.optional_vars is not None]
    return []


def called_name(call: ast.Call) -> str | None:
    """``name`` of ``x.y.name(...)`` or ``name(...)``."""
    func = call.func
    if isinstance(func, ast.Attribute):
        return func.attr
    return func.id if isinstance(func, ast.Name) else None


def builds_an_object(value: ast.expr) -> bool:
    """``AudioEncoder(...)`` / ``nn.Linear(...)``: a call of a CamelCase name (on either side of a ternary)."""
    if isinstance(value, ast.IfExp):
        return builds_an_object(value.body) or builds_an_object(value.orelse)
    if not isinstance(value, ast.Call):
        return False
    name = called_name(value) or ""
    return name[:1].isupper() and any(c.islower() for c in name)


def unassigned_parameters(node: ast.FunctionDef | ast.AsyncFunctionDef, bound: frozenset[str]) -> frozenset[str]:
    """The function's parameters its body never rebinds (``bound``: ``FunctionBindings.bound``);
    ``x = x.cuda()`` would change what a call passes on."""
    arguments = node.args
    return frozenset(a.arg for a in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs)) - bound


def source_order(
    tree: ast.AST, locals_of: Callable[[ast.FunctionDef | ast.AsyncFunctionDef], dict[str, ast.expr]]
) -> Iterator[tuple[ast.AST, dict[str, ast.expr], int]]:
    """Every node in source order, each before its children (cheaper than ``ast.walk``): a
    function's ``from x import f`` comes before its ``f(...)``. With each node, the simple
    assignments of the function it is in (``name = expr``, names assigned once) and that
    function's node id (0 outside functions)."""
    pending: list[tuple[ast.AST, dict[str, ast.expr], int]] = [(tree, {}, 0)]
    while pending:
        node, locals_, owner = pending.pop()
        yield node, locals_, owner
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            locals_ = locals_of(node)
            owner = id(node)
        children: list[ast.AST] = []
        for attribute in node._fields:
            value = getattr(node, attribute, None)
            if isinstance(value, list):
                children.extend(item for item in value if isinstance(item, ast.AST))
            elif isinstance(value, ast.AST):
                children.append(value)
        pending.extend((child, locals_, owner) for child in reversed(children))


def top_level_statements(body: list[ast.stmt]) -> list[ast.stmt]:
    """Module statements, including those under top-level ``if`` / ``try`` (guarded imports)."""
    found: list[ast.stmt] = []
    for statement in body:
        if isinstance(statement, (ast.If, ast.Try)):
            found.extend(top_level_statements(statement.body + statement.orelse))
            if isinstance(statement, ast.Try):
                for handler in statement.handlers:
                    found.extend(top_level_statements(handler.body))
        else:
            found.append(statement)
    return found
