"""What a module knows of itself and of the rest of the project, as the engine uses it.

The runner's project index (``syncllint.project.index``) gives each file its ``LinkedFacts``: the
results of the helpers it imports or inherits, and the calls other modules make to its functions.
``combine`` adds what the module's own text says, so a file linted alone (stdin, a fix re-check)
still knows its own helpers.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from syncllint.analysis.conventions import checkpoint_parameters
from syncllint.project.places import (
    DEVICE,
    DEVICE_DATA,
    HOST,
    HOST_DATA,
    NO_VALUE,
    NOT_HOST,
)
from syncllint.project.records import (
    FLAG_FALSE,
    FLAG_TRUE,
    GIVEN,
    NONE,
    CallSummary,
    FileSummary,
    FunctionSummary,
)


@dataclass(frozen=True)
class ModuleFacts:
    """What the engine uses: where the results of the module's calls live (``fn`` / ``self.fn`` /
    imported spellings -> HOST or DEVICE) and what every call passes some parameters of its
    functions (``fn`` -> parameter -> HOST, DEVICE or NONE)."""

    returns: tuple[tuple[str, str], ...] = ()
    filled: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = ()
    # The module's functions whose result keeps the place of a parameter (``pad(rows, n)`` returning
    # ``torch.cat([rows, ...])``): key -> (parameter, its position, -1 when keyword-only).
    follows: tuple[tuple[str, tuple[str, int]], ...] = ()
    # Functions returning tuples whose elements show their places (``return should_pad, lens_cpu``):
    # key -> per position HOST / DEVICE / None, for ``pad, lens = fn(...)`` and ``fn(...)[1]``.
    elements: tuple[tuple[str, tuple[str | None, ...]], ...] = ()


@dataclass(frozen=True)
class LinkedFacts:
    """What the rest of the project says about one module: its imported helpers' results and the
    calls other modules make to its functions. The module's own text supplies the rest (``combine``)."""

    # How a call is spelled in the module (``load_dump``, ``loader.load_dump``, an inherited
    # ``self._snapshot``) -> where its result lives (``host`` / ``device``).
    returns: tuple[tuple[str, str], ...] = ()
    # A module-level function -> the calls other modules make to it, or None when one of them
    # uses it other than by calling it (passes it on), so its callers are not all known.
    outside_calls: tuple[tuple[str, tuple[CallSummary, ...] | None], ...] = ()
    # Attribute names the module reads that every ``self.<name> = ...`` of the project fills with
    # host data (``input_batch.num_tokens_no_spec``, an ``np.zeros`` in ``InputBatch.__init__``).
    host_attributes: tuple[str, ...] = ()
    # Functions the module defines that the project calls only inside allowed regions: their syncs
    # are accepted (``project.allowed_calls``).
    allowed_callees: tuple[str, ...] = ()
    # Method names the module defines -> the calls other modules make by that name
    # (``project.method_calls``), or None when those say nothing of this method (another class
    # defines the name with other parameters, or some module passes it on).
    method_calls: tuple[tuple[str, tuple[CallSummary, ...] | None], ...] = ()
    # The module's own facts combined with these (``combine``), when the index read the module in
    # this run (a cold run, an edited file): the engine then need not read it with ``ast`` again.
    module: ModuleFacts | None = None
    # As ``returns``, per element of the tuples the helpers return (``ModuleFacts.elements``).
    elements: tuple[tuple[str, tuple[str | None, ...]], ...] = ()
    # Some module of the project makes the accelerator torch's default device at import
    # (``FileSummary.sets_accelerator_default``).
    accelerator_default: bool = False

    def digest(self) -> bytes:
        return hashlib.blake2b(repr(self).encode(), digest_size=16).digest()


NO_LINKED_FACTS = LinkedFacts()


def package_root(folder: Path) -> Path | None:
    """The outermost package folder above ``folder`` (itself included), or None outside a package.

    Folders without ``__init__.py`` between packages (namespace packages, as sglang's
    ``test/kits/``) are crossed, up to two in a row.
    """
    root = None
    gap = 0
    while gap <= 2 and folder.parent != folder:
        if (folder / "__init__.py").is_file():
            root, gap = folder, 0
        else:
            gap += 1
        folder = folder.parent
    return root


def module_name(path: Path) -> tuple[str, bool]:
    """``pkg.sub.mod`` for ``pkg/sub/mod.py`` under the package root; is it a package?"""
    path = path.absolute()
    is_package = path.name == "__init__.py"
    root = package_root(path.parent)
    if root is None:
        return path.stem, is_package
    parts = path.parent.relative_to(root.parent).parts
    return ".".join(parts if is_package else (*parts, path.stem)), is_package


def combine(own: FileSummary, linked: LinkedFacts) -> ModuleFacts:
    """The module's own summary and what the rest of the project says of it, as the engine uses them."""
    found: dict[str, str | None] = {}
    for key, place in linked.returns:
        note_place(found, key, place)
    elements: dict[str, tuple[str | None, ...] | None] = dict(linked.elements)
    own_found: dict[str, str | None] = {}
    own_elements: dict[str, tuple[str | None, ...] | None] = {}
    methods: dict[str, list[FunctionSummary]] = {}
    follows: dict[str, tuple[str, int] | None] = {}
    for key, function in own.functions:
        if function.method:
            methods.setdefault(key.split(".", 1)[1], []).append(function)
        spelled = ("self." + key.split(".", 1)[1]) if function.method else key
        # The module's own definitions shadow what it imports or inherits, also where they say nothing.
        found.pop(spelled, None)
        elements.pop(spelled, None)
        note_place(own_found, spelled, function.returns)
        note_elements(own_elements, spelled, function.elements)
        parameter = function.follows
        followed = (parameter, function.params.index(parameter) if parameter in function.params else -1)
        # Two definitions of one spelling (two classes) must agree, as for returns.
        follows[spelled] = followed if parameter and follows.get(spelled, followed) == followed else None
    found.update(own_found)
    elements.update(own_elements)
    returns = {key: place for key, place in found.items() if place is not None}

    local_calls: dict[str, list[CallSummary]] = {}
    for call in own.calls:
        key = call.target if call.target.startswith("self.") else call.target.removeprefix(own.module + ".")
        if "." not in key or key.startswith(("self.", ".")):
            local_calls.setdefault(key, []).append(call)
    outside = dict(linked.outside_calls)
    candidates: dict[str, tuple[FunctionSummary, list[CallSummary]]] = {}
    for key, function in own.functions:
        if function.method or key in outside and outside[key] is None:
            continue
        elsewhere = outside.get(key) or ()
        private = key.startswith("_") and not key.startswith("__")
        # A public function may have callers beyond the project; where only the project's own calls
        # are seen (in this module or elsewhere), they are the evidence there is.
        if private or elsewhere or key in local_calls:
            candidates[key] = (function, [*local_calls.get(key, ()), *elsewhere])
    # Methods: the calls that spell their name, here and elsewhere (``project.method_calls``).
    by_name = dict(linked.method_calls)
    passed_on = {name[1:] for name in own.escaped if name.startswith(".")}
    for name, definitions in methods.items():
        if len(definitions) != 1 or name.startswith("__"):
            continue
        calls = local_calls.get("self." + name, [])
        if name != "forward" and name not in passed_on and not (name in by_name and by_name[name] is None):
            calls = [*calls, *local_calls.get("." + name, ()), *(by_name.get(name) or ())]
        elif not name.startswith("_"):
            continue  # a public method defined elsewhere too, or passed on: its callers are not all seen
        candidates["self." + name] = (definitions[0], calls)
    filled = _filled_through_chains(candidates)
    # ``forward(**self.prepare_inputs_for_generation(...))``: the generation loop's convention (HF,
    # lmdeploy); the host values of the dict it returns are host data in ``forward``.
    for key, function in own.functions:
        if function.method and key.endswith(".prepare_inputs_for_generation"):
            forward = filled.setdefault("self.forward", {})
            for name, place in function.keys:
                if place == HOST:
                    forward.setdefault(name, HOST)
    # The framework's loader is the caller of ``load_weights``: checkpoint weights are in host memory.
    keys = [("self." + key.split(".", 1)[1]) if function.method else key for key, function in own.functions]
    keys += own.nested
    for key, parameter in checkpoint_parameters(keys, (qualified for _, qualified in own.aliases)).items():
        filled.setdefault(key, {})[parameter] = HOST
    return ModuleFacts(
        tuple(sorted(returns.items())),
        tuple(sorted((key, tuple(sorted(params.items()))) for key, params in filled.items() if params)),
        tuple(sorted((key, found) for key, found in follows.items() if found is not None and key not in returns)),
        tuple(sorted((key, places) for key, places in elements.items() if places)),
    )


def note_place(found: dict[str, str | None], key: str, place: str | None) -> None:
    # The same name twice (two classes, a redefinition) with different answers says nothing.
    if place is not None or key in found:
        found[key] = place if found.get(key, place) == place else None


def note_elements(found: dict[str, tuple[str | None, ...] | None], key: str, places: tuple[str | None, ...]) -> None:
    """As ``note_place``, per element: two definitions of one spelling must return the same places."""
    if places or key in found:
        found[key] = places if found.get(key, places) == places and places else None


_CHAIN_ROUNDS = 4  # ``test -> _outer(x.cpu()) -> _inner(x) -> _leaf(x)``: a few calls deep is plenty


def _filled_through_chains(candidates: dict[str, tuple[FunctionSummary, list[CallSummary]]]) -> dict[str, dict[str, str]]:
    """``_filled`` of each function, where a call that passes on its caller's parameter passes what
    every call fills that parameter with: repeated until nothing changes (or a few rounds)."""
    filled = {key: _filled(function, calls) for key, (function, calls) in candidates.items()}
    for _ in range(_CHAIN_ROUNDS):
        again = {
            key: _filled(function, [_with_forwarded(call, filled) for call in calls])
            for key, (function, calls) in candidates.items()
        }
        if again == filled:
            break
        filled = again
    return filled


_AS_ARGUMENT = {HOST: HOST_DATA, DEVICE: DEVICE_DATA}


def _with_forwarded(call: CallSummary, filled: dict[str, dict[str, str]]) -> CallSummary:
    """The call with each argument that passes on its caller's parameter replaced by what the
    caller's callers fill that parameter with, where they agree."""
    known = filled.get(call.caller, {})
    kinds = {slot: kind for slot, parameter in call.forwarded if (kind := _AS_ARGUMENT.get(known.get(parameter, ""))) is not None}
    return call.with_kinds(kinds)


def _filled(function: FunctionSummary, calls: list[CallSummary]) -> dict[str, str]:
    """Parameter -> ``HOST`` / ``DEVICE`` where every call fills it with host / device data, ``NONE``
    where every call leaves it ``None`` (code that uses it as a tensor does not run for these
    callers). A ``None`` beside data says nothing; nothing is said without a call. A flag no call
    gives (``force_cpu_device: bool = True``) is ``FLAG_TRUE`` / ``FLAG_FALSE``: the code reads its default."""
    if not calls:
        return {}
    defaults = dict(function.defaults)
    seen: dict[str, set[int]] = {name: set() for name in (*function.params, *function.keyword_only)}
    unset_flags = dict(function.flags)
    overridden: set[str] = set()  # ``None`` defaults some call replaces with data of unknown place
    for call in calls:
        given = dict(zip(function.params, call.positional))
        given.update(call.keywords)
        overridden.update(name for name, kind in given.items() if kind == NOT_HOST and defaults.get(name) == NO_VALUE)
        # ``device="cpu"`` that a call replaces (``moving_average(..., "cuda")``): where no call
        # leaves the default, the code runs with the callers' device, not the default's.
        overridden.update(
            name for name, kind in given.items()
            if kind in (NOT_HOST, DEVICE_DATA) and defaults.get(name) == HOST_DATA and "device" in name
        )
        for name in [*given, *(unset_flags if call.star else ())]:
            unset_flags.pop(name, None)
        for name, kinds in seen.items():
            # Behind ``*args`` / ``**kwargs`` a parameter not given explicitly may get anything.
            kinds.add(given.get(name, NOT_HOST if call.star else defaults.get(name, NOT_HOST)))
    found: dict[str, str] = {}
    for name, kinds in seen.items():
        shown = kinds - {NO_VALUE}
        if not shown:
            found[name] = NONE
        elif shown == {HOST_DATA}:
            found[name] = HOST
        elif shown == {DEVICE_DATA}:
            found[name] = DEVICE
        elif name in overridden and (defaults.get(name) != HOST_DATA or HOST_DATA not in shown):
            found[name] = GIVEN
    found.update((name, FLAG_TRUE if flag else FLAG_FALSE) for name, flag in unset_flags.items())
    return found
