"""Binding a function's parameters: annotations, names, defaults, comments and what callers pass.

A mixin of DeviceInference: ``infer``, ``device_spec``, ``imports`` and the naming conventions come
from there.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import libcst as cst

from syncllint.analysis.annotations import annotation_value
from syncllint.analysis.arguments import named_parameters
from syncllint.analysis.conventions import says_host
from syncllint.analysis.values import (
    ASSUMED_TENSOR,
    HOST_TENSOR,
    NONE_BY_DEFAULT,
    NONE_FROM_CALLERS,
    PYTHON,
    PYTHON_SCALAR,
    UNKNOWN,
    DeviceLiteral,
    Place,
    Value,
)

if TYPE_CHECKING:
    from syncllint.analysis.imports import ImportMap



class ParameterBinding:
    if TYPE_CHECKING:  # provided by DeviceInference
        imports: ImportMap

        def infer(self, node: cst.BaseExpression) -> Value: ...

        def device_spec(self, node: cst.BaseExpression | None) -> DeviceLiteral | None: ...

        def _suffix_value(self, name: str, attribute: bool = False, conventions_only: bool = False) -> Value | None: ...

        def _refine_by_name(self, name: str, value: Value) -> Value: ...

        def set_local(self, name: str, value: Value) -> None: ...

        def note_none_default(self, name: str, value: Value) -> None: ...

    def bind_parameters(
        self,
        params: cst.Parameters,
        tensor_by_default: bool,
        filled: dict[str, Place | bool] | None = None,
        docstring: str | None = None,
    ) -> None:
        """Bind a function's parameters from annotations, names, callers and the kind of function.

        ``filled``: what every call in the project passes a parameter (project/facts.py): host or
        device data (a tensor there unless the annotation says numpy or Python), or ``None``;
        ``Place.UNKNOWN`` for a ``None`` default some call replaces with data of unknown place.
        ``docstring``: the function's, whose ``Args:`` entries may say where a tensor lives.
        """
        filled = filled or {}
        documented: frozenset[str] | None = None  # read from the docstring once a parameter asks
        for param in named_parameters(params):
            name = param.name.value
            defaults_to_none = isinstance(param.default, cst.Name) and param.default.value == "None"
            value = annotation_value(param.annotation.annotation, self.imports) if param.annotation else None
            flag = filled.get(name)
            if isinstance(flag, bool):
                # ``force_cpu_device: bool = True`` that no call gives: the code runs with its default.
                self.set_local(name, Value(Place.PYTHON, zero_dim=True, truth=flag))
                continue
            if flag is Place.HOST_TENSOR and "device" in name:
                # ``make_tensor_with_pad(..., device="cpu")`` from every caller: a host device spec.
                # Assumed: the callers say so, not the code in view (``CopyToHost`` weighs it lower).
                self.set_local(name, Value(Place.PYTHON, zero_dim=True, device_literal=DeviceLiteral.CPU, assumed=True))
                continue
            place = filled.get(name)
            overridden = place is Place.UNKNOWN
            if isinstance(place, Place) and not overridden and (value is None or value.place in (Place.TENSOR, Place.UNKNOWN)):
                self.set_local(name, Value(place) if place is not Place.PYTHON else NONE_FROM_CALLERS)
                continue
            if value is not None and value.place is Place.PYTHON and param.default is not None:
                # ``device: str = "cpu"``: the annotation says a string, the default says which,
                # unless every call gives another (``device=x.device``).
                spec = None if overridden else self.device_spec(param.default)
                value = Value(Place.PYTHON, zero_dim=True, device_literal=spec) if spec else value
            if value is None or value.place is Place.TENSOR:
                # ``lens_cpu: torch.Tensor``: the annotation says tensor, the name says where;
                # ``n: torch.Tensor,  # CPU tensor [1]``: so does the author's comment, or the
                # docstring's entry, before the module's naming habits (a ``spatial_shapes_cpu``
                # mirror elsewhere in the module).
                if documented is None:
                    documented = documented_host(docstring) if docstring else frozenset()
                if _commented_host(param) or name in documented:
                    value = HOST_TENSOR
                elif not (value is None and _number_default(param)):
                    # ``parallel_gpu=1`` is a count whatever its suffix says.
                    value = self._suffix_value(name) or value
            if value is None and param.default is not None and self.infer(param.default).place is Place.PYTHON:
                # ``fill=-1``, ``eps=1e-5``; ``device=None``: a value only callers may give, and in
                # ``forward(self, x, labels=None)`` an optional tensor.
                if not defaults_to_none:
                    # ``device="cpu"``: a device spec the code spells out, unless every call gives
                    # another (``moving_average(..., "cuda")``).
                    spec = self.device_spec(param.default)
                    if spec and overridden:
                        spec = None
                    value = Value(Place.PYTHON, zero_dim=True, device_literal=spec) if spec else PYTHON_SCALAR
                else:
                    # ``device=None`` that a call gives (``device=module.levels.device``): a value after all.
                    fallback = UNKNOWN if overridden else NONE_BY_DEFAULT
                    value = ASSUMED_TENSOR if tensor_by_default and name not in ("self", "cls") else fallback
            if value is None:
                value = ASSUMED_TENSOR if tensor_by_default and name not in ("self", "cls") else UNKNOWN
            bound = self._refine_by_name(name, value)
            self.set_local(name, bound)
            if defaults_to_none:
                self.note_none_default(name, bound)
        for star in (params.star_arg, params.star_kwarg):
            if isinstance(star, cst.Param):
                self.set_local(star.name.value, PYTHON)


_ARGUMENT_ENTRY = re.compile(r"^\s*\*{0,2}(\w+)\s*(?:\([^)]*\))?\s*:(.*)$")
_ARGUMENT_SECTIONS = frozenset(("Args", "Arguments", "Parameters", "Params", "Keyword Args", "Keyword Arguments"))


def documented_host(docstring: str) -> frozenset[str]:
    """Parameters whose Google-style ``Args:`` entry says they are on the host and names no device
    (``spatial_shapes: (num_tiles, 2) on CPU (height, width) per tile.``)."""
    entries: dict[str, str] = {}
    in_arguments = False
    current: str | None = None
    indent = 0
    for line in docstring.splitlines():
        stripped = line.strip()
        if stripped.endswith(":") and stripped[:-1].istitle() and " " not in stripped[:-1].replace("Keyword ", ""):
            in_arguments, current = stripped[:-1] in _ARGUMENT_SECTIONS, None  # a section header
            continue
        if not in_arguments or not stripped:
            continue
        depth = len(line) - len(line.lstrip())
        match = _ARGUMENT_ENTRY.match(line)
        if match is not None and (current is None or depth <= indent):
            current, indent = match.group(1), depth
            entries[current] = match.group(2)
        elif current is not None and depth > indent:
            entries[current] += " " + stripped  # the entry goes on, indented further
    return frozenset(
        name for name, text in entries.items() if says_host(text)
    )


def _number_default(param: cst.Param) -> bool:
    """``n=1``, ``scale=-0.5``, ``flag=True``: a default that is a Python number or bool."""
    default = param.default
    if isinstance(default, cst.UnaryOperation):
        default = default.expression
    return isinstance(default, (cst.Integer, cst.Float)) or isinstance(default, cst.Name) and default.value in ("True", "False")


def _commented_host(param: cst.Param) -> bool:
    """``num_active_loras: torch.Tensor,  # CPU tensor [1]``: the comment after the parameter says host."""
    comma = param.comma
    if not isinstance(comma, cst.Comma) or not isinstance(comma.whitespace_after, cst.ParenthesizedWhitespace):
        return False
    comment = comma.whitespace_after.first_line.comment
    return comment is not None and says_host(comment.value)
