"""The project's module summaries, and what they tell each linted file about the others.

Built once per run before any file is linted, from every ``.py`` file of the packages the linted
files belong to. With a cache folder each file's summary is remembered by (mtime, size), so a warm
run only stats. The facts a file gets (``LinkedFacts``) are part of its cache key: when a helper in
another module changes what it returns, the files that call it are linted again, and no others.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import replace
from pathlib import Path

from syncllint.analysis.conventions import is_test_module
from syncllint.config import Settings
from syncllint.project.allowed_calls import only_called_when_allowed
from syncllint.project.bindings import DECLARED_HOST
from syncllint.project.facts import (
    LinkedFacts,
    combine,
    module_name,
    note_elements,
    note_place,
    package_root,
)
from syncllint.project.method_calls import BY_NAME
from syncllint.project.places import HOST, UNKNOWN_PLACE
from syncllint.project.records import (
    STAR_IMPORT,
    CallSummary,
    FileSummary,
    FunctionSummary,
    SummaryOptions,
)
from syncllint.project.store import (
    file_stamps,
    load_facts,
    load_summaries,
    save_facts,
    save_summaries,
    stamps_fingerprint,
    summarize_files,
)
from syncllint.project.wire import decode_summary

_SKIPPED_FOLDERS = frozenset(("__pycache__", "node_modules", "site-packages", "build", "dist"))


def project_files(files: Iterable[Path]) -> list[Path]:
    """Every ``.py`` file of the top-level packages the files belong to (their folder, outside one)."""
    roots: set[Path] = set()
    loose: set[Path] = set()
    for path in files:
        folder = path.absolute().parent
        root = package_root(folder)
        if root is None:
            loose.add(folder)
        else:
            roots.add(root)
    found = {p for folder in loose for p in folder.glob("*.py")}
    for root in roots:
        found.update(_package_files(root))
    return sorted(found)


def _package_files(root: Path) -> Iterator[Path]:
    for folder, subfolders, names in os.walk(root):
        subfolders[:] = [s for s in subfolders if not s.startswith(".") and s not in _SKIPPED_FOLDERS]
        yield from (Path(folder) / name for name in names if name.endswith(".py"))


class ProjectIndex:
    """Summaries by module name, with the calls of each project function gathered once."""

    def __init__(self, summaries: Iterable[FileSummary], whole: Iterable[FileSummary] = ()) -> None:
        """``whole``: the complete summaries read in this run (the others are stored, exported ones)."""
        self.modules = {s.module: s for s in summaries}
        self._whole = {s.module: s for s in whole}
        self._functions = {m: dict(s.functions) for m, s in self.modules.items()}
        self._aliases = {m: dict(s.aliases) for m, s in self.modules.items()}
        self._calls: dict[tuple[str, str], list[tuple[str, CallSummary]]] = {}
        self._escaped: set[tuple[str, str]] = set()
        # Attribute names every ``self.<name> = ...`` of the project fills with host data.
        places: dict[str, set[str]] = {}
        for summary in self.modules.values():
            for name, place in summary.attributes:
                places.setdefault(name, set()).add(place)
        self.host_attributes = frozenset(name for name, found in places.items() if _host_attribute(found))
        self.accelerator_default = any(s.sets_accelerator_default for s in self.modules.values())
        self.allowed_only = only_called_when_allowed(
            (s.calls_allowed for s in self.modules.values()), (s.calls_outside for s in self.modules.values())
        )
        # Method name -> the calls that spell it (``x.name(...)``), with their modules.
        self._by_name: dict[str, list[tuple[str, CallSummary]]] = {}
        # Method names whose calls say nothing of one method: classes define the name with different
        # parameters (a call may be either's), or some module passes it on (``hook=obj.name``) and its
        # calls are unseen. Copies of one helper (``rot_pos_emb(self, grid_thw)`` in each vision
        # model) pool their calls: what all of them pass, each of them gets.
        signatures: dict[str, set[tuple[tuple[str, ...], tuple[str, ...]]]] = {}
        for summary in self.modules.values():
            for key, function in summary.functions:
                if function.method:
                    signatures.setdefault(key.split(".", 1)[1], set()).add((function.params, function.keyword_only))
        self._unseen_callers = {name for name, found in signatures.items() if len(found) > 1}
        for module, summary in self.modules.items():
            # Tests call a model's internals with toy host data: what production code passes counts.
            production = not is_test_module(module.replace(".", "/") + ".py")
            # ``self._fn(...)`` where the module defines the private ``_fn`` reaches that definition,
            # not a copy in another module: diffusers' schedulers each call their own copy of
            # ``_convert_to_exponential``, and one scheduler's arguments say nothing of another's.
            # Public methods keep pooling: a framework calls ``compute_loss`` too, unseen, and the
            # copies' calls together are the better hedge.
            own_methods = {
                name for key, function in summary.functions if function.method
                and (name := key.split(".", 1)[1]).startswith("_") and not name.startswith("__")
            }
            for call in summary.calls:
                # ``x.fn(...)`` and ``self.fn(...)`` (a base class's method, maybe in another module).
                name = call.target[1:] if call.target.startswith(BY_NAME) else call.target[5:] if call.target.startswith("self.") else ""
                if name and call.target.startswith("self.") and name in own_methods:
                    continue
                if name and not name.startswith("__") and name != "forward" and production:
                    self._by_name.setdefault(name, []).append((module, call))
                if name:
                    continue
                found = self.resolve(call.target)
                if found is not None and found[0] != module:
                    self._calls.setdefault(found, []).append((module, call))
                elif found is None and production:
                    # ``LoRAModel.from_checkpoint(...)``: a method reached through its class, by name.
                    self._by_name.setdefault(call.target.rpartition(".")[2], []).append((module, call))
            for name in summary.escaped:
                if name.startswith(BY_NAME):
                    self._unseen_callers.add(name[1:])
                elif (found := self.resolve(name)) is not None:
                    self._escaped.add(found)

    @classmethod
    def build(
        cls, stamps: dict[str, list[int]], options: SummaryOptions, cache_dir: Path | None = None, jobs: int | None = None
    ) -> ProjectIndex:
        """From the summaries of the files ``stamps`` names (path -> [mtime, size]), read again where stale."""
        stored = load_summaries(cache_dir, options)
        stale = [(path, stamp) for path, stamp in stamps.items() if (stored.get(path) or [])[:2] != stamp]
        summaries: list[FileSummary] = []
        for path in stamps:
            entry = stored.get(path)
            if entry is None or entry[:2] != stamps[path] or entry[2] is None:
                continue
            try:
                summaries.append(decode_summary(entry[2]))
            except (ValueError, TypeError, KeyError):  # a damaged index file: read the module again
                stale.append((path, stamps[path]))
        whole: list[FileSummary] = []
        if stale:
            fresh = summarize_files(stale, options, jobs)
            stored.update((path, entry) for path, entry, _ in fresh)
            whole.extend(summary for _, _, summary in fresh if summary is not None)
            if cache_dir is not None:
                save_summaries(cache_dir, options, stored)
        return cls([*summaries, *whole], whole)

    def resolve(self, qualified: str, depth: int = 0) -> tuple[str, str] | None:
        """(module, function) that ``pkg.mod.fn`` names, through re-exports (``from .impl import fn``)."""
        module, _, name = qualified.rpartition(".")
        if not module or depth > 3:
            return None
        if name in self._functions.get(module, ()):
            return module, name
        aliases = self._aliases.get(module, {})
        alias = aliases.get(name)
        if alias is not None:
            return self.resolve(alias, depth + 1) if alias != qualified else None
        for local, source in aliases.items():
            found = self.resolve(f"{source}.{name}", depth + 1) if local.startswith(STAR_IMPORT) else None
            if found is not None:
                return found
        return None

    def function(self, found: tuple[str, str]) -> FunctionSummary | None:
        return self._functions.get(found[0], {}).get(found[1])

    def facts_for(
        self, module: str, attributes_read: frozenset[str] = frozenset(), defined: frozenset[str] = frozenset()
    ) -> LinkedFacts:
        """``attributes_read``: the attribute names the module reads; ``defined``: the names it
        defines functions by (only those facts travel)."""
        summary = self.modules.get(module)
        if summary is None:
            return LinkedFacts(accelerator_default=self.accelerator_default)
        outside: list[tuple[str, tuple[CallSummary, ...] | None]] = []
        for key, function in summary.functions:
            if function.method:
                continue
            calls = tuple(call for _, call in self._calls.get((module, key), ()))
            if (module, key) in self._escaped:
                outside.append((key, None))
            elif calls:
                outside.append((key, calls))
        methods = {key.split(".", 1)[1] for key, function in (self._whole.get(module) or summary).functions if function.method}
        by_name: list[tuple[str, tuple[CallSummary, ...] | None]] = []
        for name in sorted((methods | defined) & (self._by_name.keys() | self._unseen_callers)):
            calls = tuple(call for caller, call in self._by_name.get(name, ()) if caller != module)
            by_name.append((name, None if name in self._unseen_callers else calls))
        returns, elements = self._imported_results(summary)
        linked = LinkedFacts(
            tuple(sorted(returns.items())),
            tuple(outside),
            tuple(sorted(self.host_attributes & attributes_read)),
            tuple(sorted(self.allowed_only & defined)),
            method_calls=tuple(by_name),
            elements=tuple(sorted(elements.items())),
            accelerator_default=self.accelerator_default,
        )
        whole = self._whole.get(module)
        return replace(linked, module=combine(whole, linked)) if whole is not None else linked

    def _imported_functions(self, summary: FileSummary) -> Iterator[tuple[str, FunctionSummary]]:
        """The project's functions the module reaches, by how it spells them: imported helpers
        (``load_dump``, ``loader.load_dump``) and inherited methods (``self._snapshot``)."""
        for local, qualified in summary.aliases:
            resolved = self.resolve(qualified)
            if resolved is not None and (function := self.function(resolved)) is not None and not function.method:
                yield local, function
            elif qualified in self.modules:  # ``from pkg import loader`` / ``import pkg.loader as loader``
                for name, function in self._functions[qualified].items():
                    if not function.method:
                        yield f"{local}.{name}", function
        defined_here = {name.split(".", 1)[1] for name, f in summary.functions if f.method}
        for _, bases in summary.bases:
            for name, function in self._inherited(bases):
                if name not in defined_here:
                    yield "self." + name, function

    def _imported_results(self, summary: FileSummary) -> tuple[dict[str, str], dict[str, tuple[str | None, ...]]]:
        """Where the results of the module's imported and inherited calls live: whole, and per
        element of the tuples they return."""
        found: dict[str, str | None] = {}
        elements: dict[str, tuple[str | None, ...] | None] = {}
        for spelled, function in self._imported_functions(summary):
            note_place(found, spelled, function.returns)
            note_elements(elements, spelled, function.elements)
        return (
            {key: place for key, place in found.items() if place is not None},
            {key: places for key, places in elements.items() if places},
        )

    def _inherited(self, bases: Iterable[str], depth: int = 0) -> Iterator[tuple[str, FunctionSummary]]:
        """Methods of project base classes (and of theirs): (method name, summary)."""
        for base in bases:
            module, _, cls = base.rpartition(".")
            for _ in range(3):  # a base re-exported by a package
                summary = self.modules.get(module)
                alias = None if summary is None or cls in dict(summary.bases) else self._aliases[module].get(cls)
                if alias is None:
                    break
                module, _, cls = alias.rpartition(".")
            summary = self.modules.get(module)
            if summary is None or cls not in dict(summary.bases):
                continue
            for key, function in summary.functions:
                if key.startswith(cls + "."):
                    yield key.split(".", 1)[1], function
            if depth < 3:
                yield from self._inherited(dict(summary.bases)[cls], depth + 1)


def linked_facts(
    files: Iterable[Path], options: SummaryOptions, cache_dir: Path | None = None, jobs: int | None = None
) -> dict[str, LinkedFacts]:
    """Each ``.py`` file's facts from the rest of its project, by the path as given.

    A run that finds every project file as the last one left it reuses that run's facts without
    reading the summaries (a warm pre-commit run only stats).
    """
    named = [path for path in files if path.suffix in (".py", ".pyi")]
    stamps = file_stamps(project_files(named))
    fingerprint = stamps_fingerprint(stamps, options)
    remembered = load_facts(cache_dir, fingerprint)
    wanted = [str(path) for path in named]
    if all(path in remembered for path in wanted):
        return {path: remembered[path] for path in wanted}
    index = ProjectIndex.build(stamps, options, cache_dir, jobs)
    found = {str(path): index.facts_for(module_name(path)[0], *_names_in(path)) for path in named}
    if cache_dir is not None:
        save_facts(cache_dir, fingerprint, {**remembered, **found})
    return found


_ATTRIBUTE = re.compile(rb"\.\s*([A-Za-z_]\w*)")
_DEFINED = re.compile(rb"\bdef\s+([A-Za-z_]\w*)")


def _names_in(path: Path) -> tuple[frozenset[str], frozenset[str]]:
    """The attribute names a file reads and the names it defines functions by."""
    try:
        data = path.read_bytes()
    except OSError:
        return frozenset(), frozenset()
    return (
        frozenset(name.decode() for name in _ATTRIBUTE.findall(data)),
        frozenset(name.decode() for name in _DEFINED.findall(data)),
    )


def summary_options(settings: Settings) -> SummaryOptions:
    return SummaryOptions(settings.host_suffixes, settings.model_init_modules, settings.allowed_contexts)


def _host_attribute(places: set[str]) -> bool:
    """Every assignment of the attribute name shows host data; or a class declares it a numpy array
    and nothing in the project declares or assigns it a tensor (unshown assignments aside)."""
    if places <= {HOST, DECLARED_HOST}:
        return bool(places)
    return DECLARED_HOST in places and places <= {HOST, DECLARED_HOST, UNKNOWN_PLACE}
