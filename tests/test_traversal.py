"""The engine's read-only walk meets the nodes libcst's own visit meets, in the same order."""

from __future__ import annotations

import ast
import dataclasses
import importlib.util
import inspect
import re
from pathlib import Path

import libcst as cst

from syncllint import walker as walker_module
from syncllint.catalogue import load_catalogue
from syncllint.traversal import ALL_NODE_TYPES, TRIVIA_TYPES, child_fields, walk

REPO = Path(__file__).resolve().parent.parent


class _Recorder(cst.CSTVisitor):
    def __init__(self) -> None:
        super().__init__()
        self.events: list[tuple[str, int]] = []

    def on_visit(self, node: cst.CSTNode) -> bool:
        self.events.append(("enter", id(node)))
        return True

    def on_leave(self, original_node: cst.CSTNode) -> None:
        self.events.append(("leave", id(original_node)))


def _sources() -> list[str]:
    texts = [ex.code for page in load_catalogue().values() for ex in page.examples]
    texts += [p.read_text(encoding="utf-8") for p in sorted((REPO / "syncllint").rglob("*.py"))]
    spec = importlib.util.find_spec("torch")
    if spec is not None and spec.submodule_search_locations:
        root = Path(next(iter(spec.submodule_search_locations)))
        texts += [p.read_text(encoding="utf-8") for p in sorted(root.rglob("*.py"))[::150]]
    texts.append(
        "match x:\n    case [1, *rest] if rest: pass\n    case {'k': v, **kw}: pass\n    case P(a, b=c) | None: pass\n"
        "type Alias[T] = list[T]\nasync def f[T](x: T, /, *a, k=1, **kw) -> T:\n    async with a as b, c:\n"
        "        async for i in y: yield i\n    return [z async for z in w if z] or {k: v for k, v in d}\n"
        "from . import (a as b, c)\nfrom m import *\nglobal g\nx = f'{a!r:>{w}}' 'b' r'c'\ndel a[1:2:3], b.c\n"
        "try:\n    pass\nexcept* E as e:\n    raise X from e\nelse:\n    pass\nfinally:\n    pass\n"
        "lambda a, *, b=2: (yield)\n@d\nclass C(B, metaclass=M): x: int = 1; y += 2; assert x, 'm'\n"
    )
    return texts


def _without_trivia(module: cst.Module, events: list[tuple[str, int]]) -> list[tuple[str, int]]:
    trivia: set[int] = set()

    class _Mark(cst.CSTVisitor):
        def on_visit(self, node: cst.CSTNode) -> bool:
            if type(node) in TRIVIA_TYPES:
                trivia.add(id(node))
            return True

    module.visit(_Mark())
    return [e for e in events if e[1] not in trivia]


def test_same_nodes_in_the_same_order_as_libcst() -> None:
    sources = _sources()
    assert len(sources) > 40
    for source in sources:
        module = cst.parse_module(source)
        theirs, ours = _Recorder(), _Recorder()
        module.visit(theirs)
        walk(module, ours)
        assert ours.events == _without_trivia(module, theirs.events)


def test_kept_trivia_kinds_are_visited() -> None:
    module = cst.parse_module("f(a, b)\n")
    seen: list[str] = []

    class _Commas(cst.CSTVisitor):
        def on_visit(self, node: cst.CSTNode) -> bool:
            seen.append(type(node).__name__)
            return True

    walk(module, _Commas(), keep=[k for k in TRIVIA_TYPES if k.__name__ == "Comma"])
    assert "Comma" in seen
    assert "SimpleWhitespace" not in seen


def test_every_node_class_has_a_known_child_order() -> None:
    concrete = [cst.Call, cst.ImportFrom, cst.Module, cst.FunctionDef, cst.MatchMapping, cst.Subscript]
    for kind in concrete:
        fields = child_fields(kind)
        assert fields, kind


def test_walker_fast_paths_cover_every_kind_it_tests() -> None:
    """A branch added to ``BatchedWalker._enter``/``_leave`` must have its node kinds in the
    ``_ENTER_KINDS``/``_LEAVE_KINDS`` sets, or it would never run."""
    for method, kinds in (("_enter", walker_module._ENTER_KINDS), ("_leave", walker_module._LEAVE_KINDS)):
        tree = ast.parse(inspect.getsource(getattr(walker_module.BatchedWalker, method)).strip().replace("\n    ", "\n"))
        for call in ast.walk(tree):
            if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == "isinstance"):
                continue
            target = call.args[1]
            names = target.elts if isinstance(target, ast.Tuple) else [target]
            for name in names:
                if isinstance(name, ast.Starred):
                    continue
                assert isinstance(name, ast.Attribute), ast.dump(name)
                assert getattr(cst, name.attr) in kinds, f"{method}: cst.{name.attr} missing from its kinds set"


def test_child_order_matches_the_source_of_libcst() -> None:
    """An independent reading of the order: the field names in the method's source text."""
    named = re.compile(r"visit_\w+\(\s*self,\s*\"(\w+)\"")
    checked = 0
    for kind in ALL_NODE_TYPES:
        if not dataclasses.is_dataclass(kind) or inspect.isabstract(kind):
            continue  # abstract bases are never in a tree
        try:
            source = inspect.getsource(kind._visit_and_replace_children)
        except (OSError, TypeError):
            continue
        assert child_fields(kind) == tuple(dict.fromkeys(named.findall(source))), kind
        checked += 1
    assert checked > 100
