"""Where tensors, modules and AOTI artifacts get their device, as data (for AOTI101-AOTI103).

Facts: ``shared/reference/aoti-api.md`` sections 1-3 (torch 2.13/2.14 loaders, what the package records) and the
torch factory signatures. Names are qualified names as libcst's ``QualifiedNameProvider`` spells them.
"""

from __future__ import annotations

from aoti_lint.knowledge import deprecated_api

# Device types AOTI has runners for; any other type ("meta", "hpu", ...) is treated as unknown.
DEVICE_TYPES = frozenset({"cpu", "cuda", "xpu", "mps"})

# Factories whose device comes from ``device=`` (else the default device) and whose leading arguments give
# the size: value = index of the first size argument (sizes are ``f(2, 3)`` or ``f((2, 3))``), or None when
# the size is not read from the arguments.
TENSOR_FACTORIES: dict[str, int | None] = {
    "torch.randn": 0,
    "torch.rand": 0,
    "torch.zeros": 0,
    "torch.ones": 0,
    "torch.empty": 0,
    "torch.full": None,  # full(size, fill_value): size is one sequence, read separately
    "torch.tensor": None,  # with a tensor as data: that tensor's device
    "torch.as_tensor": None,
    "torch.arange": None,
    "torch.randint": None,
    "torch.randperm": None,
    "torch.eye": None,
    "torch.linspace": None,
}
# ``*_like(t)`` factories: device and shape of ``t`` unless ``device=`` says otherwise.
LIKE_FACTORIES = frozenset(
    {
        "torch.randn_like",
        "torch.rand_like",
        "torch.zeros_like",
        "torch.ones_like",
        "torch.empty_like",
        "torch.full_like",
        "torch.randint_like",
    }
)
TORCH_DEVICE = "torch.device"
# Calls that change the default device of a whole process or block: a factory without ``device=`` in such a
# module only has a known device when the one setter is at module level with a literal device.
SET_DEFAULT_DEVICE = "torch.set_default_device"
OTHER_DEFAULT_DEVICE_SETTERS = frozenset({"torch.set_default_tensor_type"})

# Methods that return the same tensor/module, or a copy with the same device and shape.
PRESERVING_METHODS = frozenset(
    {
        "eval",
        "train",
        "float",
        "half",
        "double",
        "bfloat16",
        "int",
        "long",
        "bool",
        "contiguous",
        "detach",
        "clone",
        "requires_grad_",
        "share_memory_",
        "pin_memory",
    }
)
# Methods that move to one device type: ``t.cuda(1)`` is cuda:1.
MOVING_METHODS = {"cuda": "cuda", "cpu": "cpu", "xpu": "xpu"}
# ``.to(torch.float16)`` changes the dtype only.
DTYPES = frozenset(
    f"torch.{name}"
    for name in (
        *("float16", "float32", "float64", "bfloat16", "half", "float", "double"),
        *("int8", "int16", "int32", "int64", "uint8", "bool", "long", "int", "short"),
        *("complex64", "complex128", "cfloat", "cdouble", "float8_e4m3fn", "float8_e5m2"),
    )
)

# Compile sites. aot_compile(f, args, kwargs, *, dynamic_shapes, options) (torch._export) and
# aot_compile(gm, args, kwargs, *, options) (torch._inductor) write to options[deprecated_api.OUTPUT_PATH_OPTION];
# aoti_compile_and_package(exported_program, *, package_path) takes what export(mod, args, kwargs, *,
# dynamic_shapes) recorded.
EXPORT = deprecated_api.EXPORT
AOT_COMPILE_INDUCTOR = frozenset({"torch._inductor.aot_compile"})
COMPILE_AND_PACKAGE = frozenset({deprecated_api.NEW_COMPILE})

# Load sites.
AOT_LOAD_OLD = deprecated_api.AOT_LOAD.qualified_name
# aoti_load_package(path, run_single_threaded=False, device_index=-1);
# load_package(path, model_name="model", run_single_threaded=False, num_runners=1, device_index=-1).
PACKAGE_LOADERS: dict[str, int] = {
    deprecated_api.NEW_LOAD: 2,
    deprecated_api.NEW_LOAD_LOW_LEVEL: 4,
    "torch._inductor.package.package.load_package": 4,
}
# The only device_index a CPU package loads with (torch 2.13, [ran]); others raise this.
CPU_DEVICE_INDEX = -1
CPU_INDEX_ERROR = "Incorrect device passed to aoti_runner_cpu"

# torch.export dynamic shapes.
DIM = frozenset({"torch.export.Dim", "torch.export.dynamic_shapes.Dim"})
DIM_DYNAMIC = frozenset(
    {
        "torch.export.Dim.AUTO",
        "torch.export.Dim.DYNAMIC",
        "torch.export.dynamic_shapes.Dim.AUTO",
        "torch.export.dynamic_shapes.Dim.DYNAMIC",
    }
)
DIM_STATIC = frozenset({"torch.export.Dim.STATIC", "torch.export.dynamic_shapes.Dim.STATIC"})

# ``tuple(x)``/``list(x)`` of a known sequence is that sequence.
SEQUENCE_BUILTINS = frozenset({"builtins.tuple", "builtins.list"})

# Path builders whose result is a known path when their arguments are.
OS_PATH_JOIN = frozenset({"os.path.join", "posixpath.join"})
OS_PATH_IDENTITY = frozenset({"os.path.abspath", "os.path.realpath", "os.path.normpath", "os.fspath", "str"})
OS_PATH_DIRNAME = frozenset({"os.path.dirname"})
PATHLIB_PATH = frozenset({"pathlib.Path", "pathlib.PurePath", "pathlib.PosixPath"})

# Artifact files: a module-level constant with such a path may be imported by the files that compile or load.
ARTIFACT_SUFFIXES = (".pt2", ".so")

# Summary collection needs compile sites, load sites and artifact path constants; findings need a load in the
# file they are in.
LOAD_TOKENS = ((b"aot_load",), (b"load_package",))
# The same, as names the code must spell (second prefilter stage, over the ast).
SUMMARY_IDENTIFIERS = frozenset(
    {"aot_compile", "aoti_compile_and_package", "aot_load", "aoti_load_package", "load_package"}
)
SUMMARY_TOKENS = (
    (b"aot_compile",),
    (b"aoti_compile_and_package",),
    *LOAD_TOKENS,
    (b".pt2",),
    (b'.so"',),
    (b".so'",),
)
