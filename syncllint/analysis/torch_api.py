"""What device inference knows about the torch / numpy API, kept as data."""

from __future__ import annotations

# Factories that allocate a new tensor; the device comes from ``device=`` (or the default device).
TORCH_FACTORIES = frozenset(
    "torch." + n
    for n in (
        "tensor as_tensor asarray zeros ones empty full arange range linspace logspace eye "
        "rand randn randint randperm normal empty_strided scalar_tensor "
        "tril_indices triu_indices bartlett_window hann_window hamming_window blackman_window "
        # Legacy constructors: host tensors (``torch.cuda.FloatTensor`` is the device one).
        "Tensor FloatTensor DoubleTensor HalfTensor BFloat16Tensor LongTensor IntTensor ShortTensor "
        "CharTensor ByteTensor BoolTensor"
    ).split()
)
# The legacy constructors among them: ``torch.Tensor(data)``, ``torch.LongTensor(data)``.
LEGACY_CONSTRUCTORS = frozenset(name for name in TORCH_FACTORIES if name.endswith("Tensor"))
# ``*_like`` factories follow their first argument unless ``device=`` says otherwise.
TORCH_LIKE_FACTORIES = frozenset(
    "torch." + n
    for n in "zeros_like ones_like empty_like full_like rand_like randn_like randint_like".split()
)
# Sparse constructors take their device from the index and value tensors they are given (host
# data for lists), unless ``device=`` names one.
SPARSE_CONSTRUCTORS = frozenset(
    "torch." + n
    for n in "sparse_coo_tensor sparse_csr_tensor sparse_csc_tensor sparse_bsr_tensor sparse_bsc_tensor "
    "sparse_compressed_tensor".split()
)
# Factories that copy host data (a list, a number, an array) into a new tensor.
HOST_DATA_CONSTRUCTORS = frozenset(("torch.tensor", "torch.as_tensor", "torch.asarray"))

# Tensor methods that keep the receiver's place; some fix the dtype or make a 0-d result.
SAME_PLACE_BOOL_METHODS = frozenset(
    "bool any all isnan isinf isfinite isneginf isposinf eq ne lt le gt ge logical_and "
    "logical_or logical_not logical_xor isin signbit".split()
)
SAME_PLACE_INT_METHODS = frozenset(
    "long int short char byte argmax argmin argsort nonzero argwhere nonzero_static bincount count_nonzero".split()
)
SAME_PLACE_FLOAT_METHODS = frozenset("float half double bfloat16".split())
REDUCTIONS_TO_0D = frozenset("sum mean max min prod any all norm argmax argmin std var amax amin".split())

# Tensor attributes / methods that give host values (metadata; never a sync).
METADATA_ATTRS = frozenset(
    "shape ndim dtype device is_cuda is_cpu layout requires_grad is_leaf names "
    "grad_fn is_sparse is_quantized is_meta itemsize nbytes".split()
)
METADATA_METHODS = frozenset(
    "size dim ndimension numel stride element_size data_ptr is_contiguous get_device nelement "
    "storage_offset is_pinned is_floating_point is_complex untyped_storage type".split()
)
# Those of them that give one Python number (or bool).
METADATA_NUMBERS = frozenset(
    "dim ndimension numel element_size data_ptr is_contiguous get_device nelement storage_offset "
    "is_pinned is_floating_point is_complex".split()
)
VIEW_ATTRS = frozenset("T mT H mH data real imag".split())
# A tensor's own tensors that live beside it: ``p.grad`` is allocated on the parameter's device.
SAME_PLACE_ATTRS = frozenset(("grad",))
# ``PackedSequence.batch_sizes``: torch keeps it on the CPU whatever the data's device (documented).
PACKED_SEQUENCE_HOST_FIELDS = frozenset(("batch_sizes",))
# Calls returning ``(data, lengths)`` whose lengths torch keeps on the CPU, the data where it was.
HOST_LENGTHS_RESULTS = frozenset(("torch.nn.utils.rnn.pad_packed_sequence",))
# Methods whose result stays where the receiver is (casts, copies, views, reductions): what holds
# for ``x`` on the host holds for ``x.detach().float()`` and ``losses.mean()`` (project summaries,
# usage evidence).
SAME_PLACE_METHODS = frozenset(
    "clone contiguous detach float double half bfloat16 long int short bool byte view reshape flatten "
    "squeeze unsqueeze transpose permute t narrow expand repeat chunk split abs ravel "
    "sum mean std var prod max min amax amin argmax argmin norm cumsum".split()
)
# Methods that return a view of the same memory (no copy, no read of the data).
VIEW_METHODS = frozenset(
    "squeeze unsqueeze view view_as permute transpose t expand expand_as narrow detach unflatten as_strided".split()
)
# Fields of the named tuples torch ops return (``torch.sort(x).values``, ``cholesky_ex(a).L``):
# tensors on the device of the op's inputs.
RESULT_FIELDS = frozenset(
    "values indices L U S V Vh Q R LU LD pivots info inverse result solution residuals rank "
    "singular_values eigenvalues eigenvectors sign logabsdet mantissa exponent P".split()
)
INT_RESULT_FIELDS = frozenset("indices pivots info rank".split())
# Factories whose default dtype is an integer one.
INT_FACTORIES = frozenset(("torch.randint", "torch.randperm", "torch.tril_indices", "torch.triu_indices"))
# Factories whose first positional arguments are the size (``torch.zeros(())`` is 0-d).
SIZED_FACTORIES = frozenset(
    "torch." + n for n in "zeros ones empty full rand randn".split()
)

# Torch functions whose result is a bool tensor.
TORCH_BOOL_FUNCTIONS = frozenset(
    "torch." + n
    for n in (
        "isin isnan isinf isfinite isneginf isposinf eq ne lt le gt ge greater less "
        "logical_and logical_or logical_not logical_xor isclose any all signbit"
    ).split()
)
# Torch functions that answer on the host without touching tensor data.
TORCH_HOST_FUNCTIONS = frozenset(
    "torch." + n
    for n in (
        "is_tensor is_floating_point is_complex numel is_grad_enabled is_inference_mode_enabled "
        "get_default_dtype get_default_device device dtype Size finfo iinfo manual_seed "
        "initial_seed seed random.initial_seed random.seed get_num_threads get_num_interop_threads "
        "are_deterministic_algorithms_enabled get_float32_matmul_precision "
        "cuda.is_available cuda.device_count cuda.current_device cuda.get_device_name "
        "save compile jit.script jit.trace no_grad inference_mode enable_grad set_grad_enabled "
        "autocast amp.autocast cpu.amp.autocast profiler.profile profiler.record_function "
        "autograd.profiler.profile autograd.profiler.record_function autograd.detect_anomaly "
        "cuda.get_device_capability cuda.memory_allocated cuda.max_memory_allocated "
        "cuda.memory_reserved cuda.mem_get_info cuda.get_device_properties "
        "broadcast_shapes result_type promote_types can_cast typename _C._overlaps "
        "nn.init.calculate_gain nn.init._calculate_fan_in_and_fan_out nn.init._calculate_correct_fan"
    ).split()
)

# Torch functions whose result is a tensor in host memory, wherever the module's tensors live: the
# CPU and CUDA generators' states are CPU ByteTensors.
HOST_TENSOR_FUNCTIONS = frozenset(
    "torch." + n for n in "from_numpy frombuffer get_rng_state random.get_rng_state cuda.get_rng_state".split()
)

# Host-side Python builtins and their results.
PYTHON_RESULT_BUILTINS = frozenset(
    "len int float bool str repr list tuple dict set frozenset range enumerate zip isinstance "
    "issubclass hasattr getattr id hash type round abs divmod ord chr format sorted reversed "
    "any all min max sum map filter iter next slice".split()
)

# The keywords ``Tensor.to`` / ``nn.Module.to`` take (``arguments.is_tensor_to``).
TENSOR_TO_KEYWORDS = frozenset(("device", "dtype", "non_blocking", "copy", "memory_format"))

ACCELERATOR_PREFIXES = ("cuda", "mps", "xpu", "npu", "hpu", "xla", "privateuseone", "mtia")

# Names and annotations that say "numpy".
NUMPY_MODULES = ("numpy",)
# Table libraries: their objects hold host data only (building one from a CUDA tensor raises), and
# their columns and rows act like numpy arrays (``df["x"].unique()``, ``row["epoch"].item()``).
HOST_TABLE_MODULES = frozenset(("pandas", "polars", "pyarrow"))
NUMPY_ANNOTATIONS = frozenset(
    ("numpy.ndarray", "numpy.typing.NDArray", "numpy.typing.ArrayLike", "numpy.generic")
)
TENSOR_ANNOTATIONS = frozenset(
    ("torch.Tensor", "torch.nn.Parameter", "torch.nn.parameter.Parameter")
    + tuple(f"torch.{kind}Tensor" for kind in "Long Float Bool Int Half Double Byte Short Char BFloat16".split())
)
DEVICE_ANNOTATIONS = frozenset(
    f"torch.cuda.{kind}Tensor" for kind in "Long Float Bool Int Half Double Byte Short Char BFloat16".split()
)
# Module state: moved with the module (``model.cuda()``), so its device is not the factory's.
MODULE_STATE_WRAPPERS = frozenset(("torch.nn.Parameter", "torch.nn.parameter.Parameter", "torch.nn.Buffer"))
PYTHON_ANNOTATIONS = frozenset(
    "int float bool str bytes list tuple dict set frozenset complex None "
    "typing.List typing.Tuple typing.Dict typing.Set typing.Sequence typing.Mapping "
    "typing.Iterable collections.abc.Sequence collections.abc.Mapping torch.device torch.dtype torch.Size".split()
)

# Records whose attributes are host data but for the listed device fields: sglang's scheduler moves
# only a ``MultimodalDataItem``'s ``feature`` to the device (``_move_items_to_device``); the rest
# (``tgt_size``, ``model_specific_data[...]``, ``audio_feature_lens``) is processor output on the host.
HOST_RECORDS: dict[str, frozenset[str]] = {
    "sglang.srt.managers.schedule_batch.MultimodalDataItem": frozenset(("feature", "precomputed_embeddings")),
}

# Methods whose result is host data, whatever the tensor was: ``t.cpu()``, ``t.numpy()``, ``t.item()``.
HOST_RESULT_METHODS = frozenset(("cpu", "numpy", "tolist", "item"))

# Readers that decode files and images into host memory (``wav, sr = torchaudio.load(path)``);
# torchvision's decoders take ``device=`` for a GPU decode, which the inference reads.
HOST_READERS = frozenset(
    (
        "torchaudio.load",
        "torchaudio.load_with_torchcodec",
        "torchvision.io.read_image",
        "torchvision.io.decode_image",
        "torchvision.io.read_video",
        "torchvision.io.image.read_image",
        "torchvision.io.image.decode_image",
        "torchvision.transforms.functional.to_tensor",
        "torchvision.transforms.functional.pil_to_tensor",
        "torchvision.transforms.v2.functional.to_image",
        "torchvision.transforms.v2.functional.pil_to_tensor",
    )
)

# Helpers that flatten nested lists (sglang's ``flatten_nested_list``): a list of host data stays one.
FLATTENING_HELPERS = frozenset(("flatten_nested_list", "flatten_list", "flatten"))

# Calls that answer a Python bool or number computed from tensor data (the call itself may
# sync; its result is host data, so using it in ``if`` adds no second sync).
TORCH_PYTHON_RESULT_FUNCTIONS = frozenset(
    "torch." + n for n in "equal allclose is_nonzero is_same_size is_storage is_nonzero".split()
)
PYTHON_RESULT_METHODS = frozenset("equal allclose is_nonzero is_same_size is_set_to".split())

# Methods of strings, dicts and lists that tensors lack: calling one says the receiver is no tensor.
NON_TENSOR_METHODS = frozenset(
    "endswith startswith lower upper strip lstrip rstrip format join replace encode decode isdigit "
    "keys items values get setdefault append extend insert popitem".split()
)

# Stream and event objects, whose ``synchronize()`` makes the host wait.
STREAM_FACTORIES = frozenset(
    "torch." + n
    for n in (
        "cuda.Stream cuda.ExternalStream cuda.current_stream cuda.default_stream Stream "
        "accelerator.current_stream xpu.Stream xpu.current_stream cuda.streams.Stream"
    ).split()
)
EVENT_FACTORIES = frozenset(
    "torch." + n for n in "cuda.Event Event xpu.Event cuda.streams.Event mps.event.Event".split()
)
# Calls that make the host wait for all queued work on the device.
DEVICE_SYNCHRONIZE = frozenset(
    "torch." + n
    for n in (
        "cuda.synchronize accelerator.synchronize xpu.synchronize mps.synchronize "
        # Out-of-tree backends register the same module API (torch_npu, torch_mlu, torch_musa, habana).
        "npu.synchronize mlu.synchronize musa.synchronize hpu.synchronize"
    ).split()
)
# Functions that return the device module of the running accelerator (``torch.cuda``, ``torch.npu``):
# torch's own, verl's ``get_torch_device()``, DeepSpeed's ``get_accelerator()``. By last name.
DEVICE_MODULE_ACCESSORS = frozenset(("get_device_module", "_get_device_module", "get_torch_device", "get_accelerator"))
# ``torch.get_*()``, ``torch.is_*()``, ...: settings and queries answered on the host.
HOST_QUERY_PREFIXES = ("get_", "set_", "is_", "has_", "are_", "use_", "_has_", "_is_")
# Methods that only tensors have: calling one on a name is evidence that it is a tensor.
KNOWN_TENSOR_METHODS = (
    SAME_PLACE_BOOL_METHODS
    | SAME_PLACE_INT_METHODS
    | SAME_PLACE_FLOAT_METHODS
    | REDUCTIONS_TO_0D
    | frozenset(
        "abs add sub mul div neg exp log sqrt pow clamp clamp_ softmax log_softmax sigmoid "
        "relu tanh cumsum cumprod sort topk matmul bmm view reshape flatten squeeze unsqueeze "
        "transpose permute contiguous clone detach masked_fill gather index_select sign".split()
    )
)
# Calls whose result can be anything (a dict, a module, a tensor): their place is unknown.
TORCH_ANY_RESULT_FUNCTIONS = frozenset(("torch.load", "torch.jit.load", "torch.hub.load"))


def is_host_array_api(qualified: str) -> bool:
    """``np.zeros``, ``pd.read_csv``, ``pl.DataFrame``: a function of numpy or a table library,
    whose result is host data."""
    module, dot, _ = qualified.partition(".")
    return bool(dot) and (module in NUMPY_MODULES or module in HOST_TABLE_MODULES)
