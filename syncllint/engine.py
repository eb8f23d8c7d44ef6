"""Lint one file: parse once, run the shared analyses and every rule in one pass, build diagnostics."""

from __future__ import annotations

import ast
import fnmatch
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import libcst as cst

from syncllint.analysis.conventions import (
    commented_host_fields,
    is_test_module,
    kept_on_host,
    mirrored_names,
    registered_on_device,
)
from syncllint.analysis.devices import DeviceInference
from syncllint.analysis.host_context import host_context
from syncllint.analysis.host_usage import host_shown
from syncllint.analysis.imports import ImportMap
from syncllint.analysis.module_index import ModuleIndex
from syncllint.analysis.noqa import parse_noqa
from syncllint.analysis.positions import node_ranges
from syncllint.analysis.values import DeviceLiteral, Place
from syncllint.checks import select_rules
from syncllint.checks.base import Rule, RuleContext
from syncllint.config import Settings
from syncllint.diagnostics import Diagnostic, Location, Severity
from syncllint.fixes import build_fix
from syncllint.guards import bracket_depth_problem, run_with_deep_stack
from syncllint.prefilter import Prefilter, build_prefilter, parses_cleanly
from syncllint.project.facts import (
    NO_LINKED_FACTS,
    LinkedFacts,
    ModuleFacts,
    combine,
    module_name,
)
from syncllint.project.index import summary_options
from syncllint.project.places import DEVICE, HOST
from syncllint.project.records import FLAG_FALSE, FLAG_TRUE, GIVEN, NONE, PYTHON_NUMBER
from syncllint.project.summary import summarize
from syncllint.results import FileResult, parse_error
from syncllint.traversal import TRIVIA_TYPES, walk
from syncllint.walker import BatchedWalker, RawFinding

_COMPOUND_WITH_BODY = (cst.If, cst.For, cst.While, cst.With, cst.Try, cst.TryStar, cst.FunctionDef, cst.ClassDef, cst.Match)


@dataclass(frozen=True)
class RuleSet:
    rules: tuple[Rule, ...]
    dispatch: dict[str, list[Callable[[cst.CSTNode, RuleContext], None]]]

    def prefilter(self, settings: Settings) -> Prefilter:
        triggers = tuple(type(rule).triggers for rule in self.rules)
        return build_prefilter(triggers, settings.device_suffixes, settings.host_suffixes)


@lru_cache(maxsize=8)
def rule_set_for(select: tuple[str, ...] | None, extend_select: tuple[str, ...], ignore: tuple[str, ...]) -> RuleSet:
    rules = tuple(cls() for cls in select_rules(select, extend_select, ignore))
    dispatch: dict[str, list[Callable[[cst.CSTNode, RuleContext], None]]] = {}
    for rule in rules:
        for kind, visit in rule.visitors().items():
            dispatch.setdefault(kind, []).append(visit)
    return RuleSet(rules, dispatch)


def _ignored_for_file(filename: str, settings: Settings) -> tuple[str, ...]:
    if not settings.per_file_ignores:
        return ()
    path = Path(filename)
    try:
        relative = path.resolve().relative_to(settings.project_root).as_posix()
    except (ValueError, OSError):
        relative = path.as_posix()
    ignored: list[str] = []
    for pattern, codes in settings.per_file_ignores:
        if fnmatch.fnmatch(relative, pattern) or fnmatch.fnmatch(path.name, pattern) or fnmatch.fnmatch(path.as_posix(), pattern):
            ignored.extend(codes)
    return tuple(ignored)


def lint_source(
    source: str, filename: str, settings: Settings, *, use_prefilter: bool = True, linked: LinkedFacts = NO_LINKED_FACTS
) -> FileResult:
    """All diagnostics for one file's text. Never raises on bad input.

    ``use_prefilter=False`` parses every file; findings are the same either way. ``linked``: what
    the rest of the project says about this module (the runner's project index).
    """
    too_deep = bracket_depth_problem(source)
    if too_deep is not None:
        return FileResult(filename, (parse_error(filename, too_deep.message, too_deep.row, too_deep.column),))
    ignore = settings.ignore + _ignored_for_file(filename, settings)
    rule_set = rule_set_for(settings.select, settings.extend_select, ignore)
    if use_prefilter and not rule_set.prefilter(settings).may_report(source) and parses_cleanly(source, filename):
        return FileResult(filename, ())
    try:
        module = cst.parse_module(source)
    except cst.ParserSyntaxError as err:
        return FileResult(filename, (syntax_error(filename, source, err),))
    except RecursionError:
        return _lint_deep(lambda: _parse_and_analyse(source, filename, settings, linked), filename)
    except (MemoryError, ValueError) as err:
        return FileResult(filename, (parse_error(filename, f"{type(err).__name__}: {err}"),))
    try:
        return _analyse(module, source, filename, settings, linked)
    except RecursionError:
        return _lint_deep(lambda: _analyse(module, source, filename, settings, linked), filename)


def syntax_error(filename: str, source: str, err: cst.ParserSyntaxError) -> Diagnostic:
    """SYNC001 with CPython's message and position when CPython also rejects the file: they are
    more precise than libcst's (which often points past the error). Only runs on broken files."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # SyntaxWarnings about the user's code are not ours to print
            ast.parse(source, filename)
    except SyntaxError as cpython:
        if cpython.lineno is not None:
            return parse_error(filename, cpython.msg, cpython.lineno, cpython.offset or 1)
    except (RecursionError, MemoryError, ValueError):
        pass
    return parse_error(filename, err.message, err.raw_line, err.raw_column + 1)


def _parse_and_analyse(source: str, filename: str, settings: Settings, linked: LinkedFacts) -> FileResult:
    try:
        module = cst.parse_module(source)
    except cst.ParserSyntaxError as err:
        return FileResult(filename, (syntax_error(filename, source, err),))
    return _analyse(module, source, filename, settings, linked)


def _lint_deep(work: Callable[[], FileResult], filename: str) -> FileResult:
    """Deeply nested but legal code: try again with room to recurse, else report it unanalysed."""
    try:
        return run_with_deep_stack(work)
    except (RecursionError, MemoryError) as err:
        message = f"too deeply nested to analyse ({type(err).__name__})"
        return FileResult(filename, (parse_error(filename, message),))


def _analyse(module: cst.Module, source: str, filename: str, settings: Settings, linked: LinkedFacts) -> FileResult:
    ignore = settings.ignore + _ignored_for_file(filename, settings)
    rule_set = rule_set_for(settings.select, settings.extend_select, ignore)
    if not rule_set.rules:
        return FileResult(filename, ())
    walker = _walk(module, rule_set, settings, Path(filename).as_posix(), source, linked)
    findings = [f for f in walker.findings if f.confidence >= settings.min_confidence]
    if not findings:
        return FileResult(filename, ())
    return FileResult(filename, _to_diagnostics(module, source, filename, findings, settings))


def _record_top_level_imports(body: Sequence[cst.CSTNode], imports: ImportMap) -> None:
    for statement in body:
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                if isinstance(small, (cst.Import, cst.ImportFrom)):
                    imports.record(small)
        elif isinstance(statement, (cst.If, cst.Try)):
            blocks: list[cst.BaseSuite] = [statement.body]
            if isinstance(statement, cst.Try):
                blocks.extend(handler.body for handler in statement.handlers)
            for block in blocks:
                if isinstance(block, cst.IndentedBlock):
                    _record_top_level_imports(block.body, imports)


def _walk(
    module: cst.Module,
    rule_set: RuleSet,
    settings: Settings,
    path: str,
    source_text: str = "",
    linked: LinkedFacts = NO_LINKED_FACTS,
) -> BatchedWalker:
    imports = ImportMap()
    # A cheap read of the top-level imports first (also under ``if``/``try``, as in
    # ``if is_torch_available(): import torch``), so names used before a late import resolve.
    _record_top_level_imports(module.body, imports)
    # What the module's functions share (call graph, call sites, allowed regions): one extra walk.
    allowed = settings.allowed_contexts if _names_an_allowed_context(source_text, settings) else ()
    index = ModuleIndex.build(module, imports, allowed, device_evidence=is_test_module(path))
    facts = _module_facts(source_text, path, settings, linked)
    mirrored, device_mirrored = mirrored_names(source_text) if "_cpu" in settings.host_suffixes else (frozenset(), frozenset())
    kept = kept_on_host(source_text)
    inference = DeviceInference(
        imports,
        settings.host_suffixes,
        settings.device_suffixes,
        mirrored,
        device_mirrored,
        {key: _PLACES[place] for key, place in facts.returns},
        kept | commented_host_fields(source_text)
        | (frozenset(settings.host_keys) - registered_on_device(source_text, kept)) | frozenset(settings.host_names)
        | frozenset(name for framework, names in settings.framework_host_names if imports.imports_module(framework) for name in names),
        {key: {name: _FILLED[place] for name, place in params} for key, params in facts.filled},
        frozenset(linked.host_attributes),
        dict(facts.follows),
        {key: tuple(_PLACES.get(place) if place else None for place in places) for key, places in facts.elements},
    )
    if linked.accelerator_default:
        # ``torch.set_default_device("cuda")`` at import elsewhere in the project (DeepXDE's backend).
        inference.set_default_device(DeviceLiteral.ACCELERATOR)
    walker = BatchedWalker(
        rule_set.dispatch,
        imports,
        inference,
        settings.allowed_contexts,
        settings.hot_path_functions,
        # ``import torch`` inside functions counts too: the module works with torch.
        module_imports_torch=imports.imports_module("torch") or "import torch" in source_text or "from torch" in source_text,
        module_imports_numpy=imports.imports_module("numpy"),
        host=host_context(
            index, path, source_text, settings.host_modules, settings.output_functions, settings.host_functions
        ),
    )
    walker.h2d_helper = settings.h2d_helper
    walker.builds_models_on_device = any(fnmatch.fnmatch(path, p) for p in settings.model_init_modules)
    walker.init_only_methods = index.only_called_from_init() if walker.builds_models_on_device else frozenset()
    walker.model_init_functions = walker.init_only_methods - index.plain_init_calls
    # vLLM accepts syncs by calling a helper inside ``with gpu_sync_allowed():``; a module function
    # called only there runs only there.
    # The project index finds the same across modules (``self.model.select_items(...)`` in the runner).
    walker.allowed_callees = (index.only_called_when_allowed() if allowed else frozenset()) | frozenset(
        linked.allowed_callees
    )
    walker.kernel_bodies = frozenset(index.kernel_bodies)
    walker.host_shown = host_shown(index.keyed_defs, source_text)
    walk(module, walker, keep=[kind for kind in TRIVIA_TYPES if kind.__name__ in rule_set.dispatch])
    # A private helper only host code calls (a CPU reference path) reads host tensors; its calls
    # come after it in the walk, so its findings are lowered now.
    helpers = walker.helper_calls.helpers(index.keyed_defs, source_text)
    if helpers:
        walker.findings = [f.in_host_code() if f.function in helpers else f for f in walker.findings]
    return walker


def _module_facts(source: str, path: str, settings: Settings, linked: LinkedFacts) -> ModuleFacts:
    """Where the results of the module's calls live, and what every call passes some parameters: the
    runner's project index worked them out (``linked.module``), else the module's own text does."""
    if linked.module is not None:
        return linked.module
    module, is_package = module_name(Path(path))
    own = summarize(source, module, is_package, summary_options(settings), path)
    return ModuleFacts() if own is None else combine(own, linked)


_PLACES = {HOST: Place.HOST_TENSOR, DEVICE: Place.DEVICE, NONE: Place.PYTHON, PYTHON_NUMBER: Place.PYTHON}
# What a parameter gets from every call: a place, or a flag's value (its default, never given).
_FILLED: dict[str, Place | bool] = {**_PLACES, GIVEN: Place.UNKNOWN, FLAG_TRUE: True, FLAG_FALSE: False}


def _names_an_allowed_context(source: str, settings: Settings) -> bool:
    return any(name.rsplit(".", 1)[-1] in source for name in settings.allowed_contexts)


def _to_diagnostics(
    module: cst.Module, source: str, filename: str, findings: list[RawFinding], settings: Settings
) -> tuple[Diagnostic, ...]:
    wanted: list[cst.CSTNode] = []
    for finding in findings:
        wanted.append(finding.node)
        if finding.statement is not None:
            wanted.append(finding.statement)
            body = getattr(finding.statement, "body", None)
            if isinstance(finding.statement, _COMPOUND_WITH_BODY) and isinstance(body, cst.IndentedBlock) and body.body:
                wanted.append(body.body[0])
        if finding.fix is not None:
            wanted.append(finding.fix.target)
    ranges = node_ranges(module, wanted)
    noqa = parse_noqa(source)
    seen: set[tuple[str, int, int]] = set()
    diagnostics: list[Diagnostic] = []
    for finding in findings:
        span = ranges[finding.node]
        first, last = _statement_rows(finding, ranges)
        last = max(last, span.end.line)
        if noqa.suppresses(finding.rule.code, first, last):
            continue
        key = (finding.rule.code, span.start.line, span.start.column)
        if key in seen:
            continue
        seen.add(key)
        severity = finding.rule.fixed_severity or (Severity.ERROR if finding.hot_path else Severity.WARNING)
        diagnostics.append(
            Diagnostic(
                code=finding.rule.code,
                name=finding.rule.name,
                message=finding.message,
                filename=filename,
                start=Location(span.start.line, span.start.column + 1),
                end=Location(span.end.line, span.end.column + 1),
                confidence=finding.confidence,
                severity=severity,
                fix=build_fix(module, finding.fix, ranges, settings, source) if finding.fix else None,
                hot_path=finding.hot_path,
                statement_rows=(first, last),
            )
        )
    return tuple(sorted(diagnostics, key=lambda d: d.sort_key))


def _statement_rows(finding: RawFinding, ranges: dict) -> tuple[int, int]:  # type: ignore[type-arg]
    statement = finding.statement
    if statement is None or statement not in ranges:
        span = ranges[finding.node]
        return span.start.line, span.end.line
    start = ranges[statement].start.line
    if isinstance(statement, _COMPOUND_WITH_BODY):
        body = getattr(statement, "body", None)
        if isinstance(body, cst.IndentedBlock) and body.body and body.body[0] in ranges:
            return start, max(start, ranges[body.body[0]].start.line - 1)
        return start, start
    return start, ranges[statement].end.line
