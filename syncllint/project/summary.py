"""What one module tells the rest of the project: where its functions' results live, what its
calls pass, and which project functions it uses other than by calling them.

Read with the standard library's ``ast`` (a tenth of libcst's parse), so the whole project can be
summarised before any file is linted: ``load_dump()`` in ``dump_loader.py`` returning
``torch.load(path, map_location="cpu")`` makes ``load_dump(p).item()`` in ``comparator.py`` a
host read, and ``rebalance(load.cpu())`` in ``eplb_state.py`` makes ``load.cpu()`` inside
``policy.rebalance`` a no-op. Only what the code spells out is recorded; a summary never guesses.
"""

from __future__ import annotations

import ast
import fnmatch
import re
from collections.abc import Callable

from syncllint.analysis.conventions import factories_build_on_host
from syncllint.project.allowed_calls import allowed_body_nodes
from syncllint.project.bindings import (
    OBJECT,
    FunctionBindings,
    builds_an_object,
    called_name,
    declared_fields,
    function_bindings,
    source_order,
    top_level_statements,
    unassigned_parameters,
)
from syncllint.project.method_calls import BY_NAME, called_method, passed_on_methods
from syncllint.project.places import (
    UNKNOWN_PLACE,
    PlaceReader,
)
from syncllint.project.records import (
    HOST,
    STAR_IMPORT,
    CallSummary,
    FileSummary,
    FunctionSummary,
    SummaryOptions,
)
from syncllint.project.results import (
    agreed_locals,
    agreed_value,
    followed_parameter,
    function_summary,
    mentions,
)


def summarize(source: str | bytes, module: str, is_package: bool, options: SummaryOptions, path: str = "") -> FileSummary | None:
    """The module's summary, or None when it does not parse."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    text = source.decode("utf-8", "replace") if isinstance(source, bytes) else source
    builds_on_device = any(fnmatch.fnmatch(path, pattern) for pattern in options.model_init_modules)
    reader = _Reader(module, is_package, options.host_suffixes, factories_build_on_host(text) and not builds_on_device)
    # Only a module that names an allowed context can have a region; the rest call outside one.
    reader.allowed_contexts = tuple(name for name in options.allowed_contexts if name.rsplit(".", 1)[-1] in text)
    reader.read(tree)
    # ``fit(image, self.resolutions)`` of an attribute the module fills with host data only: host
    # data for the callee, in this module or another (once here, for every reader of the summary).
    shown_host = frozenset("self." + name for name, place in reader.attributes.items() if place == HOST)
    return FileSummary(
        module,
        tuple(sorted(reader.aliases.items())),
        tuple(reader.functions.items()),
        tuple(reader.bases.items()),
        tuple(call.with_host_attributes(shown_host) for call in reader.calls),
        frozenset(reader.escaped),
        tuple(sorted(reader.attributes.items())),
        tuple(sorted(reader.nested)),
        frozenset(reader.calls_allowed),
        frozenset(reader.calls_outside),
        "set_default" in text and _sets_accelerator_default(tree, reader.qualify),
    )


def _sets_accelerator_default(tree: ast.Module, qualify: Callable[[ast.expr], str | None]) -> bool:
    """Whether the module, when imported, makes the accelerator torch's default device:
    ``torch.set_default_device("cuda")`` or ``torch.set_default_tensor_type(torch.cuda.FloatTensor)``
    at module level, also under ``if torch.cuda.is_available():``; not in a function someone may
    call, nor under ``if __name__ == "__main__":`` (a script's own run)."""
    imported = [s for s in tree.body if not (isinstance(s, ast.If) and mentions(s.test, "__name__"))]
    for statement in top_level_statements(imported):
        if not (isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call) and statement.value.args):
            continue
        function = qualify(statement.value.func)
        argument = statement.value.args[0]
        named = argument.value if isinstance(argument, ast.Constant) and isinstance(argument.value, str) else qualify(argument)
        if function == "torch.set_default_device" and (named or "").startswith("cuda"):
            return True
        if function == "torch.set_default_tensor_type" and (named or "").startswith("torch.cuda."):
            return True
    return False


class _Reader:
    def __init__(self, module: str, is_package: bool, suffixes: tuple[str, ...], factories_on_host: bool) -> None:
        self.module = module
        self.package = module if is_package else module.rpartition(".")[0]
        self.places = PlaceReader(self.qualify, suffixes, factories_on_host)
        self.aliases: dict[str, str] = {}
        self.functions: dict[str, FunctionSummary] = {}
        self.bases: dict[str, tuple[str, ...]] = {}
        self.calls: list[CallSummary] = []
        self.escaped: set[str] = set()
        self.attributes: dict[str, str] = {}
        self._bindings: dict[int, FunctionBindings] = {}
        self._unknown_parameters: dict[int, frozenset[str]] = {}
        self._locals: dict[int, dict[str, ast.expr]] = {}
        # Module-level names bound once to a host factory (``_CODES = torch.tensor([...])``): what
        # the functions reading them see, unless they bind the name themselves.
        self._host_constants: dict[str, ast.expr] = {}
        # The module's functions by key (``fn`` / ``Class.fn``), summarised when first asked for: a
        # function's results may be another's (``return load_rows(x), names``), in any order.
        self._definitions: dict[str, tuple[ast.FunctionDef | ast.AsyncFunctionDef, bool]] = {}
        self._summarising: set[str] = set()
        self.places.own = self._own_function
        self.nested: set[str] = set()
        self._own: set[str] = set()
        # Module functions and methods by node id -> (their key as calls spell it, the node).
        self._callers: dict[int, tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]] = {}
        self.allowed_contexts: tuple[str, ...] = ()
        self._allowed_nodes: set[int] = set()
        self.calls_allowed: set[str] = set()
        self.calls_outside: set[str] = set()

    def read(self, tree: ast.Module) -> None:
        summarised: set[int] = set()
        for statement in top_level_statements(tree.body):
            if isinstance(statement, (ast.Import, ast.ImportFrom)):
                self._import(statement)
            elif isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self._own.add(statement.name)
                self._definitions[statement.name] = (statement, False)
                summarised.add(id(statement))
                self._callers[id(statement)] = (statement.name, statement)
            elif isinstance(statement, ast.ClassDef):
                self.bases[statement.name] = tuple(filter(None, (self.qualify(b) for b in statement.bases)))
                for member in statement.body:
                    if isinstance(member, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        self._definitions[f"{statement.name}.{member.name}"] = (member, True)
                        summarised.add(id(member))
                        self._callers[id(member)] = ("self." + member.name, member)
        # Once the imports are known: module names bound once, to a host factory.
        module = function_bindings(tree.body)
        self._host_constants = {
            name: value for name, value in module.once.items()
            if isinstance(value, ast.Call) and self.places.host_factory(value)
        }
        for key in self._definitions:
            self._summary(key)
        imported = {local for local, qualified in self.aliases.items() if self._in_project(qualified)}
        top_level = {id(statement) for statement in top_level_statements(tree.body)}
        called: set[int] = set()
        closures: set[str] = set()
        for node, locals_, owner in source_order(tree, self.locals_of):  # parents come before their children: a call before its callee
            if isinstance(node, _PASSING):
                self.escaped.update(passed_on_methods(node))
            if isinstance(node, ast.Call):
                called.add(id(node.func))
                self._call(node, locals_, self._callers.get(owner))
                if (name := called_name(node)) is not None:
                    (self.calls_allowed if id(node) in self._allowed_nodes else self.calls_outside).add(name)
            elif isinstance(node, (ast.With, ast.AsyncWith)) and self.allowed_contexts:
                self._allowed_nodes |= allowed_body_nodes(node, self.qualify, self.allowed_contexts)
            elif isinstance(node, (ast.Assign, ast.AnnAssign)):
                self._note_attribute(node, locals_)
            elif isinstance(node, ast.ClassDef):
                self._note_fields(node)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and id(node) not in summarised:
                self.nested.add(node.name)
                # ``def grid(count): return torch.linspace(...)`` inside a method: its results too,
                # unless a module function has the name; two closures of one name say nothing.
                if node.name not in self.functions:
                    self.functions[node.name] = function_summary(
                        node, False, self.places, self.bindings_of(node), self.locals_of(node)
                    )
                    closures.add(node.name)
                elif node.name in closures:
                    self.functions[node.name] = FunctionSummary((), (), (), None, False)
            elif isinstance(node, (ast.Import, ast.ImportFrom)) and id(node) not in top_level:
                self._import(node)  # ``from .api import plan`` inside the function that calls it
                imported.update(local for local, q in self.aliases.items() if self._in_project(q))
            elif id(node) in called or not isinstance(node, (ast.Name, ast.Attribute)):
                continue
            elif _head(node) in imported and isinstance(node.ctx, ast.Load):
                target = self.qualify(node)  # a project function passed on, not called
                if target is not None:
                    self.escaped.add(target)

    def _note_attribute(self, node: ast.Assign | ast.AnnAssign, locals_: dict[str, ast.expr]) -> None:
        """``self.num_tokens = np.zeros(n)``: what the object's attribute holds, as far as shown
        (``locals_``: the method's assignments, ``idxs = torch.arange(n)`` before ``self.order = idxs.T``)."""
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        if node.value is None or isinstance(node.value, ast.Constant) and node.value.value is None:
            return
        for target in targets:
            if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self":
                place = OBJECT if builds_an_object(node.value) else self.places.attribute_place(node.value, locals_)
                known = self.attributes.get(target.attr, place)
                self.attributes[target.attr] = place if known == place else UNKNOWN_PLACE

    def bindings_of(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> FunctionBindings:
        """A function's bindings, scanned once for its returns, its calls and what they pass on."""
        found = self._bindings.get(id(node))
        if found is None:
            found = self._bindings[id(node)] = function_bindings(node.body)
        return found

    def _parameters_of_unknown_place(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> frozenset[str]:
        """Parameters whose first value is the caller's, read once per function: all but those
        annotated as host data (``sigmas: Optional[List[float]]``), which hold host data on a path
        that leaves them alone too."""
        found = self._unknown_parameters.get(id(node))
        if found is None:
            every = (*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs)
            found = self._unknown_parameters[id(node)] = frozenset(
                a.arg for a in every if not _annotated_host(a.annotation)
            )
        return found

    def locals_of(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, ast.expr]:
        """A function's names with one value that shows their place (``results.agreed_locals``), and
        the module's host constants it does not bind itself."""
        found = self._locals.get(id(node))
        if found is None:
            bindings = self.bindings_of(node)
            arguments = node.args
            parameters = frozenset(a.arg for a in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs))
            self._locals[id(node)] = {}  # while it is worked out, a call back into it sees no locals
            found = agreed_locals(bindings, parameters, self.places)
            for name, value in self._host_constants.items():
                if name not in parameters and name not in bindings.bound:
                    found.setdefault(name, value)
            self._locals[id(node)] = found
        return found

    def _summary(self, key: str) -> FunctionSummary | None:
        """The summary of the module's function ``key``, worked out once; None while it is being
        worked out (a recursive helper says nothing of itself)."""
        if key in self.functions:
            return self.functions[key]
        if key in self._summarising or key not in self._definitions:
            return None
        node, method = self._definitions[key]
        self._summarising.add(key)
        summary = function_summary(node, method, self.places, self.bindings_of(node), self.locals_of(node))
        self._summarising.discard(key)
        self.functions[key] = summary
        return summary

    def _own_function(self, call: ast.Call) -> FunctionSummary | None:
        """The module function (``fn(...)``) or the method of one class (``self.fn(...)``) a call reaches."""
        func = call.func
        if isinstance(func, ast.Name) and func.id in self._own:
            return self._summary(func.id)
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self":
            keys = [key for key in self._definitions if key.endswith("." + func.attr)]
            return self._summary(keys[0]) if len(keys) == 1 else None
        return None

    def _note_fields(self, node: ast.ClassDef) -> None:
        for name, place in declared_fields(node, self.qualify):
            known = self.attributes.get(name, place)
            self.attributes[name] = place if known == place else UNKNOWN_PLACE

    def _import(self, node: ast.Import | ast.ImportFrom) -> None:
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    self.aliases[alias.asname] = alias.name
                else:
                    self.aliases[alias.name.split(".", 1)[0]] = alias.name.split(".", 1)[0]
            return
        base = node.module or ""
        if node.level:
            parts = self.package.split(".") if self.package else []
            parts = parts[: len(parts) - (node.level - 1)] if node.level > 1 else parts
            base = ".".join([*parts, *([base] if base else [])])
        for alias in node.names:
            if alias.name != "*":
                self.aliases[alias.asname or alias.name] = f"{base}.{alias.name}" if base else alias.name
            elif base:
                # ``from .common import *`` in a package's ``__init__``: its names are re-exported
                # (a key no identifier spells, read by ``ProjectIndex.resolve``).
                self.aliases[STAR_IMPORT + base] = base

    def qualify(self, node: ast.expr) -> str | None:
        """``pkg.mod.fn`` for an imported name or a chain through an imported module; own functions too."""
        parts: list[str] = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name):
            return None
        head = self.aliases.get(node.id)
        if head is None:
            head = f"{self.module}.{node.id}" if node.id in self._own and not parts else None
        return ".".join([head, *reversed(parts)]) if head is not None else None

    def _in_project(self, qualified: str) -> bool:
        """Under this module's top-level package: the calls and uses other modules may ask about."""
        return "." in qualified and qualified.split(".", 1)[0] == self.module.split(".", 1)[0]

    def _call(
        self,
        call: ast.Call,
        locals_: dict[str, ast.expr],
        caller: tuple[str, ast.FunctionDef | ast.AsyncFunctionDef] | None = None,
    ) -> None:
        func = call.func
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in ("self", "cls"):
            target: str | None = "self." + func.attr
        else:
            target = self.qualify(func)
        if target is None and (name := called_method(call)) is not None:
            target = BY_NAME + name  # ``self.policy.rebalance(...)``: some project class's method, by name
        if target is None or not (target.startswith(("self.", BY_NAME)) or self._in_project(target)):
            return
        # In ``x = self._prepare(x)`` the argument is ``x`` as it was before: not the call's own result.
        rebound = [name for name in _argument_names(call) if name in locals_ and any(n is call for n in ast.walk(locals_[name]))]
        if rebound:
            locals_ = {name: value for name, value in locals_.items() if name not in rebound}
        star = any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords)
        # Arguments after a ``*args`` land on positions nobody can tell: only those before count.
        before_star = call.args[: next((i for i, a in enumerate(call.args) if isinstance(a, ast.Starred)), len(call.args))]
        forwarded: list[tuple[str, str]] = []
        if caller is not None:
            locals_ = self._reaching_locals(caller[1], call, locals_)
            kept = unassigned_parameters(caller[1], self.bindings_of(caller[1]).bound)
            slots = [(str(i), a) for i, a in enumerate(before_star)]
            slots += [(k.arg, k.value) for k in call.keywords if k.arg is not None]
            forwarded = [(slot, name) for slot, a in slots if (name := followed_parameter(a, locals_, kept, self.places)) is not None]
            # ``self.sort_chunks(x, self.sorted_idxs)``: what the module's classes assign that
            # attribute is known once the whole module is read (``facts.combine``).
            forwarded += [(slot, "self." + a.attr) for slot, a in slots if isinstance(a, ast.Attribute) and _is_self(a.value)]
        self.calls.append(
            CallSummary(
                target,
                tuple(self.places.argument(a, locals_) for a in before_star),
                tuple((k.arg, self.places.argument(k.value, locals_)) for k in call.keywords if k.arg is not None),
                star,
                tuple(forwarded),
                caller[0] if forwarded and caller is not None else "",
            )
        )

    def _reaching_locals(
        self, caller: ast.FunctionDef | ast.AsyncFunctionDef, call: ast.Call, locals_: dict[str, ast.expr]
    ) -> dict[str, ast.expr]:
        """The caller's locals, with the names it assigns several times that hold host data wherever
        the call runs: ``sigmas = np.interp(...)`` on every path above ``self._to_karras(sigmas)``,
        though ``sigmas = torch.from_numpy(sigmas).to(device)`` comes after."""
        bindings = self.bindings_of(caller)
        # A parameter the caller replaces above the call, on every path to it, no longer holds what its own caller gave.
        unknown = {name for name in self._parameters_of_unknown_place(caller) if bindings.replacing(name, call) is None}
        names = _argument_names(call) - locals_.keys() - unknown
        # Host data only: a device on every path above is no surer a device than the names say.
        agreed = {
            name: value
            for name in names & bindings.repeated.keys()
            if (value := agreed_value(name, bindings.reaching(name, call), locals_, self.places, only=HOST)) is not None
        }
        return {**locals_, **agreed} if agreed else locals_


_PASSING = (ast.Call, ast.Assign, ast.AnnAssign, ast.Return, ast.List, ast.Tuple, ast.Set, ast.Dict)


_HOST_ANNOTATION = re.compile(r"\b(list|List|Sequence|tuple|Tuple|float|int|ndarray|NDArray)\b")


def _annotated_host(annotation: ast.expr | None) -> bool:
    """``list[float] | None``, ``np.ndarray``: host data; nothing that names a tensor or ``Any``."""
    if annotation is None:
        return False
    text = ast.unparse(annotation)
    return "Tensor" not in text and "Any" not in text and _HOST_ANNOTATION.search(text) is not None


def _is_self(expr: ast.expr) -> bool:
    return isinstance(expr, ast.Name) and expr.id == "self"


def _argument_names(call: ast.Call) -> set[str]:
    return {a.id for a in (*call.args, *(k.value for k in call.keywords)) if isinstance(a, ast.Name)}


def _head(node: ast.Name | ast.Attribute) -> str | None:
    """``mod`` of ``mod`` / ``mod.fn`` (one level: a deeper chain is met again at its inner node)."""
    if isinstance(node, ast.Name):
        return node.id
    return node.value.id if isinstance(node.value, ast.Name) else None
