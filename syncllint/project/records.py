"""The values the project index passes around: summaries of modules, functions and calls, and
the options a summary depends on. ``summary`` reads them from a module; ``wire`` stores them.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

HOST = "host"
DEVICE = "device"
UNKNOWN_PLACE = "?"
# What an argument (or a parameter's default) shows: the rules of ``PlaceReader.argument``.
NOT_HOST, HOST_DATA, NO_VALUE, DEVICE_DATA = 0, 1, 2, 3
NONE = "none"  # a parameter every call leaves ``None``
PYTHON_NUMBER = "number"  # a function annotated to return a Python number (``-> int``)
STAR_IMPORT = "*"  # prefix of the alias key that records ``from pkg.mod import *``
# A parameter defaulting to ``None`` that some call gives a value of unknown place (``device=x.device``).
GIVEN = "given"
# A flag every call leaves at its ``True`` / ``False`` default (``force_cpu_device: bool = True``).
FLAG_TRUE, FLAG_FALSE = "flag-true", "flag-false"

@dataclass(frozen=True)
class FunctionSummary:
    """A function or method: its parameters (without ``self``/``cls``) and where its results live."""

    params: tuple[str, ...]  # positional parameters, in order
    keyword_only: tuple[str, ...]
    defaults: tuple[tuple[str, int], ...]  # parameter -> what its default shows (NOT_HOST / HOST_DATA / NO_VALUE)
    returns: str | None  # HOST, DEVICE, PYTHON_NUMBER (`-> int`), or None: the returns disagree or do not say
    method: bool
    # Where each element of the tuples it returns lives (``return rows, names``); and, only for the
    # module itself (``exported`` drops it), the parameter whose place its result keeps.
    elements: tuple[str | None, ...] = ()
    follows: str = ""
    # Parameters whose default is ``True`` or ``False``: the flag's value where no call gives it.
    flags: tuple[tuple[str, bool], ...] = ()
    # Keys of the dict every return builds (``return dict(grid_thw=grid_thw, ...)``) -> where the
    # value lives, where it shows (HOST / DEVICE).
    keys: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class CallSummary:
    """A call of a function that may be the project's: which arguments show host data."""

    target: str  # ``pkg.mod.fn`` (resolved through the imports), ``fn`` (this module) or ``self.fn``
    positional: tuple[int, ...]  # NOT_HOST / HOST_DATA / NO_VALUE per argument
    keywords: tuple[tuple[str, int], ...]
    star: bool  # ``*args`` / ``**kwargs``: the parameters not given before it or by name are hidden
    # Arguments that pass on a parameter of the calling function untouched: (position as digits, or
    # keyword) -> that parameter. ``caller`` is the calling function's key (``fn`` / ``self.fn``), so
    # what every call fills it with reaches this call too (``_outer(x.cpu())`` -> ``_inner(x)``).
    # ``self.<name>`` for an argument that is an attribute of ``self``: what the module assigns it.
    forwarded: tuple[tuple[str, str], ...] = ()
    caller: str = ""

    def with_kinds(self, kinds: dict[str, int]) -> CallSummary:
        """The call with the arguments in ``kinds`` (position as digits, or keyword) shown as given there."""
        if not kinds:
            return self
        positional = tuple(kinds.get(str(i), kind) for i, kind in enumerate(self.positional))
        keywords = tuple((k, kinds.get(k, kind)) for k, kind in self.keywords)
        return replace(self, positional=positional, keywords=keywords)

    def with_host_attributes(self, host_attributes: frozenset[str] | set[str]) -> CallSummary:
        """The call with each ``self.<name>`` argument the module's classes fill with host data (and
        nothing else) shown as host data: ``self.sort_chunks(x, self.sorted_idxs)``."""
        return self.with_kinds({slot: HOST_DATA for slot, name in self.forwarded if name in host_attributes})


@dataclass(frozen=True)
class FileSummary:
    module: str  # dotted name, ``pkg.sub.mod`` (``pkg.sub`` for ``pkg/sub/__init__.py``)
    aliases: tuple[tuple[str, str], ...]  # module-level imports: local name -> qualified name
    functions: tuple[tuple[str, FunctionSummary], ...]  # ``fn`` / ``Class.fn``
    bases: tuple[tuple[str, tuple[str, ...]], ...]  # class -> qualified base names
    calls: tuple[CallSummary, ...]
    escaped: frozenset[str]  # qualified names of imported functions used other than by a call
    # ``self.<name> = value`` in the module's methods: name -> HOST / DEVICE, or UNKNOWN_PLACE when
    # one assignment does not show (``None`` says nothing).
    attributes: tuple[tuple[str, str], ...] = ()
    # Functions defined inside others (a model's ``weight_loader`` closure): names the module itself
    # may hold facts for; other modules never call them, so ``exported`` drops them.
    nested: tuple[str, ...] = ()
    # Names the module calls (``x.name(...)`` / ``name(...)``) inside its allowed regions, and outside them.
    calls_allowed: frozenset[str] = frozenset()
    calls_outside: frozenset[str] = frozenset()
    # ``torch.set_default_device("cuda")`` run at import (DeepXDE's backend): every factory of the
    # project without ``device=`` builds on the accelerator once this module is imported.
    sets_accelerator_default: bool = False

    def exported(self) -> FileSummary:
        """What other modules need, as the index stores it: the calls into them, the module's
        functions by name and where results live. Its own calls and its functions' parameters
        matter only to the module (the engine gets them while the module is fresh, ``ModuleFacts``)."""
        own = self.module + "."
        return replace(
            self,
            # Every method travels, its name and parameters at least: calls by name count for names
            # defined once, or by classes whose methods of that name take the same parameters.
            functions=tuple(
                (key, FunctionSummary(f.params, f.keyword_only, (), f.returns, True, f.elements) if f.method
                 else FunctionSummary((), (), (), f.returns, False, f.elements))
                for key, f in self.functions
            ),
            # ``self.fn(...)`` may reach a base class's method in another module, which reads it by name.
            # What a call forwards names the caller's parameters: it means something in this module only.
            calls=tuple(
                replace(call, forwarded=(), caller="")
                for call in self.calls
                if not call.target.startswith((own, "self.__", "self.forward"))
            ),
            nested=(),
        )


@dataclass(frozen=True)
class SummaryOptions:
    """The settings a summary depends on (part of the stored index's name)."""

    host_suffixes: tuple[str, ...] = ("_cpu", "_np", "_host")
    # Where models are built under the target device: a factory without ``device=`` shows nothing.
    model_init_modules: tuple[str, ...] = ()
    allowed_contexts: tuple[str, ...] = ("gpu_sync_allowed",)
