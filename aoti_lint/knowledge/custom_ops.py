"""Custom-op registration APIs and their SymInt spellings, as data (the AOTI3xx rules read only this table).

Facts come from torch 2.13.0 (``torch/library.py``, ``c10/core/TensorImpl.h``) and from exports measured by
``tests/test_custom_ops.py``.
"""

from __future__ import annotations

# Python registrations of a fake (abstract) kernel: the decorator or call takes the op first, the kernel
# second (``register_fake(op, func=None, /, *, lib=None, ...)``).
REGISTER_FAKE = "torch.library.register_fake"
IMPL_ABSTRACT = "torch.library.impl_abstract"
FAKE_REGISTRATIONS = (REGISTER_FAKE, IMPL_ABSTRACT)
# ``@my_op.register_fake`` on a ``torch.library.custom_op`` object (CustomOpDef.register_fake(fn)).
CUSTOM_OP_METHOD = "register_fake"
# ``torch.library.impl(qualname, types, func=None, *, lib=None)``, and the legacy
# ``torch.library.impl(lib, name, dispatch_key="")``.
LIBRARY_IMPL = "torch.library.impl"
# ``Library(ns, kind, dispatch_key="")`` and its method ``impl(op_name, fn, dispatch_key="")``.
LIBRARY_CLASS = "torch.library.Library"
# The dispatch key (``"Meta"``) or device type (``"meta"``) that makes an impl a meta kernel.
META_KEYS = frozenset({"Meta", "meta"})

# ``impl_abstract`` was renamed ``register_fake`` in torch 2.4; 2.13 still has it, with a FutureWarning.
REGISTER_FAKE_SINCE = (2, 4)
IMPL_ABSTRACT_WARNING = (
    "`torch.library.impl_abstract` was renamed to `torch.library.register_fake`. Please use that instead; "
    "we will remove `torch.library.impl_abstract` in a future version of PyTorch."
)
# register_fake's op and func are positional-only: a call naming them cannot be renamed as is.
IMPL_ABSTRACT_KEYWORDS = frozenset({"qualname", "func"})

# Python builtins that turn a SymInt into a Python number (a guard that specialises the size). Not `bool`:
# `bool(s)` asks `s != 0`, which export decides from the range alone (sizes 0 and 1 are specialised anyway).
CONCRETE_BUILTINS = frozenset({"builtins.int", "builtins.float"})
# Tensor methods that read the data of a tensor, which a fake kernel does not have.
DATA_METHODS = frozenset({"item", "tolist", "numpy"})
# Tensor methods that return a tensor computed from the receiver (so ``x.sum().item()`` reads ``x``'s data).
TENSOR_METHODS = frozenset(
    {
        "abs",
        "all",
        "amax",
        "amin",
        "any",
        "argmax",
        "argmin",
        "bool",
        "clone",
        "contiguous",
        "count_nonzero",
        "cpu",
        "cumsum",
        "detach",
        "flatten",
        "float",
        "int",
        "long",
        "max",
        "mean",
        "min",
        "nonzero",
        "prod",
        "reshape",
        "squeeze",
        "sum",
        "to",
        "unsqueeze",
        "view",
    }
)
# Tensor methods returning one size (SymInt under export) or the whole shape.
SIZE_METHODS = frozenset({"size", "stride", "numel"})
SHAPE_ATTRIBUTES = frozenset({"shape"})
# A parameter annotation that says "a tensor" (matched in full against its text); no annotation says it too:
# fake kernels are often unannotated.
TENSOR_ANNOTATION = r"(Optional\[)?(torch\.)?Tensor(\]|\s*\|\s*None)?"

# C++: the Meta dispatch key as spelled in registrations, and the SymInt spelling of each size accessor.
CPP_META_KEY = "Meta"
CPP_SYMINT_METHODS = {
    "sizes": "sym_sizes",
    "size": "sym_size",
    "numel": "sym_numel",
    "strides": "sym_strides",
    "stride": "sym_stride",
}
CPP_TENSOR_TYPES = frozenset({"Tensor"})
# A kernel parameter type, and the schema argument type it cannot take symbolically, with the right type.
CPP_SYMINT_PARAMETERS = {
    "int64_t": ("SymInt", "c10::SymInt"),
    "IntArrayRef": ("SymInt[]", "c10::SymIntArrayRef"),
}

# What torch 2.13 does, measured by tests/test_custom_ops.py (export with a Dim("b", min=2, max=64) batch).
CONSTRAINTS_VIOLATED = 'Constraints violated (b)! For more information, run with TORCH_LOGS="+dynamic".'
