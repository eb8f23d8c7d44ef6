"""The abstract values device inference assigns to expressions."""

from __future__ import annotations

import enum
from dataclasses import dataclass, replace


class Place(enum.Enum):
    """Where the data behind an expression lives, as far as the code shows."""

    DEVICE = "device"  # a tensor on an accelerator
    HOST_TENSOR = "host-tensor"  # a tensor in host memory
    NUMPY = "numpy"
    PYTHON = "python"  # numbers, strings, containers, torch.device objects, None
    TENSOR = "tensor"  # a tensor whose device the code does not show
    UNKNOWN = "unknown"


class DType(enum.Enum):
    BOOL = "bool"
    INT = "int"
    FLOAT = "float"
    NUMBER = "number"  # integer or floating, never bool: ``ids - start`` (bool tensors refuse ``-``)
    UNKNOWN = "unknown"


class Handle(enum.Enum):
    """Host objects of the CUDA runtime that code can wait on."""

    STREAM = "stream"
    EVENT = "event"
    DEVICE_MODULE = "device-module"  # ``torch.cuda`` or its like, as a value: ``get_torch_device()``


class DeviceLiteral(enum.Enum):
    """What a device-valued expression (``"cuda"``, ``torch.device("cpu")``) denotes."""

    CPU = "cpu"
    ACCELERATOR = "accelerator"


@dataclass(frozen=True)
class Value:
    place: Place
    dtype: DType = DType.UNKNOWN
    zero_dim: bool = False  # a known 0-d tensor, or a Python scalar
    pinned: bool = False
    device_literal: DeviceLiteral | None = None  # set when the value *is* a device spec
    # A tensor by convention only (an unannotated ``forward`` parameter), not by anything the
    # code shows: good enough for ``.item()``, too weak to call ``if flag:`` a tensor test.
    assumed: bool = False
    handle: Handle | None = None  # set when the value is a stream or an event object
    # A submodule built in the class (``self.proj = RowParallelLinear(...)``): calling it maps
    # tensors to tensors on their device.
    layer: bool = False
    # The number of dimensions, where a factory shows it (``torch.zeros(n)``: 1) and moves keep it.
    rank: int | None = None
    # An object (or a list of them) whose attributes are host data but for its kind's device fields:
    # sglang's ``MultimodalDataItem`` (``torch_api.HOST_RECORDS``).
    host_record: bool = False
    # A flag whose value the project shows (a ``True`` / ``False`` default no call overrides).
    truth: bool | None = None
    # A DataLoader's batch or an item of one: collated on the host, so the code's own
    # ``.to(device)`` of it is an upload; reads stay as unsure as before (a loader prepared by
    # Accelerate or a prefetcher yields device batches, and nothing here shows which).
    collated: bool = False
    # A dtype object read off a tensor (``orig_type = x.dtype``): a cast target, never a device.
    names_dtype: bool = False

    @property
    def is_tensor(self) -> bool:
        return self.place in (Place.DEVICE, Place.HOST_TENSOR, Place.TENSOR)

    @property
    def is_host(self) -> bool:
        """Known to be host data: reading it never waits for a GPU."""
        return self.place in (Place.HOST_TENSOR, Place.NUMPY, Place.PYTHON)

    @property
    def may_be_device(self) -> bool:
        return self.place in (Place.DEVICE, Place.TENSOR, Place.UNKNOWN)

    def with_dtype(self, dtype: DType) -> Value:
        return replace(self, dtype=dtype)

    def with_zero_dim(self, zero_dim: bool) -> Value:
        return replace(self, zero_dim=zero_dim)


UNKNOWN = Value(Place.UNKNOWN)
PYTHON = Value(Place.PYTHON)
PYTHON_SCALAR = Value(Place.PYTHON, zero_dim=True)
DTYPE_OBJECT = Value(Place.PYTHON, names_dtype=True)
NUMPY = Value(Place.NUMPY)
TENSOR = Value(Place.TENSOR)
ASSUMED_TENSOR = Value(Place.TENSOR, assumed=True)
DEVICE_TENSOR = Value(Place.DEVICE)
HOST_TENSOR = Value(Place.HOST_TENSOR)
LAYER = Value(Place.UNKNOWN, layer=True)
HOST_RECORD = Value(Place.PYTHON, host_record=True)
# What a Hugging Face tokenizer or processor returns with ``return_tensors="pt"``: a tensor, or a
# ``BatchEncoding`` of them, in host memory until the code moves it.
HF_TENSORS = Value(Place.HOST_TENSOR, host_record=True)
# A batch a DataLoader yields: a tensor, or a tuple, dict or record of them.
LOADER_BATCH = Value(Place.UNKNOWN, collated=True)
# A parameter defaulting to None (``device=None``, ``mask=None``): None by default, whatever callers pass.
NONE_BY_DEFAULT = Value(Place.UNKNOWN, assumed=True)
# A parameter every call leaves None (the project shows it): no data, and as a device the default one.
NONE_FROM_CALLERS = Value(Place.PYTHON, assumed=True)
STREAM = Value(Place.PYTHON, handle=Handle.STREAM)
EVENT = Value(Place.PYTHON, handle=Handle.EVENT)
DEVICE_MODULE = Value(Place.PYTHON, handle=Handle.DEVICE_MODULE)
CPU_DEVICE = Value(Place.PYTHON, device_literal=DeviceLiteral.CPU)
ACCELERATOR_DEVICE = Value(Place.PYTHON, device_literal=DeviceLiteral.ACCELERATOR)

_TENSOR_PLACES = (Place.DEVICE, Place.TENSOR, Place.HOST_TENSOR)


def join(a: Value, b: Value) -> Value:
    """The value known at a merge of two possibilities (if/else arms)."""
    if a == b:
        return a
    dtype = a.dtype if a.dtype == b.dtype else DType.UNKNOWN
    zero_dim = a.zero_dim and b.zero_dim
    if a.place == b.place:
        return Value(a.place, dtype, zero_dim, assumed=a.assumed and b.assumed)
    if a.place in _TENSOR_PLACES and b.place in _TENSOR_PLACES:
        return Value(Place.TENSOR, dtype, zero_dim)
    # ``None if c else t`` is as good as ``t`` for sync purposes.
    if a.place == Place.PYTHON and b.place != Place.UNKNOWN:
        return b
    if b.place == Place.PYTHON and a.place != Place.UNKNOWN:
        return a
    return UNKNOWN


def compare_operands(values: list[Value]) -> Value:
    """Place of a comparison's result: as arithmetic, but beside a host tensor that is not a 0-d
    scalar a tensor of unknown device is on the host too (two devices meet in one op only through a
    0-d host scalar): ``planned >= kv_lens`` with ``planned`` a slice of a host buffer.

    Only comparisons: their results are tested (``bool(...)``, masks), where a wrong "host" hides
    a finding; arithmetic results flow into copies, where it would make one up."""
    places = {v.place for v in values}
    if Place.DEVICE not in places and any(
        v.place is Place.HOST_TENSOR and not v.zero_dim and v.rank != 0 and not v.assumed for v in values
    ):
        return HOST_TENSOR
    return combine_operands(values)


def combine_operands(values: list[Value]) -> Value:
    """Place of the result of arithmetic over ``values`` (torch broadcasting rules)."""
    places = {v.place for v in values}
    for place, result in ((Place.DEVICE, DEVICE_TENSOR), (Place.TENSOR, TENSOR), (Place.HOST_TENSOR, HOST_TENSOR)):
        if place in places:
            # Arithmetic on convention-only tensors (``seq_len - 1``, ``n_gpu + 1``) proves
            # nothing more about them.
            if all(v.assumed for v in values if v.place is place):
                return replace(result, assumed=True)
            return result
    if Place.NUMPY in places:
        return NUMPY
    if places == {Place.PYTHON}:
        return PYTHON_SCALAR if all(v.zero_dim for v in values) else PYTHON
    return UNKNOWN
