"""AOTI301: a fake/meta kernel that turns a symbolic size into a Python number, or reads tensor data."""

from __future__ import annotations

import ast

from aoti_lint.diagnostics import Severity
from aoti_lint.knowledge.custom_ops import CONCRETE_BUILTINS, DATA_METHODS
from aoti_lint.knowledge.references import AOTI_DEBUGGING_GUIDE, CUSTOM_OPS_DYNAMIC_SHAPES, REGISTER_FAKE_DOCS
from aoti_lint.model.kernels import arguments
from aoti_lint.model.syntax_tree import source_segment
from aoti_lint.rules.base import AstModule, AstReader, AstRule, Invalid, Valid
from aoti_lint.rules.fake_kernels import (
    KERNEL_SCREEN_TOKENS,
    KERNEL_TRIGGERS,
    could_hold_finding,
    could_hold_finding_text,
    could_hold_kernel,
    could_hold_kernel_bytes,
    could_hold_kernel_text,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from aoti_lint.diagnostics import Finding
    from aoti_lint.model.kernels import Kernel, KernelIndex


class FakeKernelConcreteSize(AstRule):
    """
    ## What it does
    Finds fake and meta kernels of custom ops that turn a size of a tensor argument into a Python number,
    or read a tensor argument's data. Kernels are functions registered with
    `@torch.library.register_fake("ns::op")`, `@my_op.register_fake`, `torch.library.impl_abstract`,
    `@torch.library.impl("ns::op", "Meta")` (or the legacy `@torch.library.impl(lib, "op", "Meta")`),
    `Library(...).impl("op", fn, "Meta")`, and the call forms `torch.library.register_fake("ns::op", fn)` /
    `my_op.register_fake(fn)`. Reported inside them:
    - `int(...)` or `float(...)` of a size (`x.shape[0]`, `x.size(1)`, `x.numel()`, `x.stride(0)`,
      arithmetic on them, a local name bound once to one, or the variable of a loop or comprehension over a
      shape: `[int(s) for s in x.shape]`);
    - a `math.*` function applied to a size (`math.ceil(x.shape[0] / 2)`);
    - `.item()` on a size (a `SymInt` has no `.item()`);
    - `.item()`, `.tolist()`, `.numpy()` on a tensor argument or a tensor computed from one (`x.sum().item()`).

    ## Why is this bad?
    Under `torch.export` with dynamic shapes, a fake kernel runs on FakeTensors whose sizes are symbols
    (`SymInt`). `int(x.shape[0])` asks for the concrete value: export records a guard that pins the size to
    the example's, so the op, and the whole exported program, is specialised to one batch size. Measured
    with torch 2.13 on a `@torch.library.custom_op` whose fake kernel is
    `n = int(x.shape[0]); return x.new_empty(n * 2, *x.shape[1:])`:
    - exported with `dynamic_shapes={"x": {0: Dim("b", min=2, max=64)}}` it fails with
      `UserError: Constraints violated (b)! For more information, run with TORCH_LOGS="+dynamic".`;
      `float(...)` and `math.ceil(x.shape[0] / 2)` fail the same way;
    - exported with `Dim.AUTO` it succeeds silently, with the input's size collapsed to the example's
      (`torch.Size([4, 3])`, no range constraint): an AOTI package compiled from it is built for that size only;
    - written `x.new_empty(x.shape[0] * 2, *x.shape[1:])` it exports with `{s77: VR[2, 64]}`.

    A fake kernel has no data: `x.sum().item()` fails with `GuardOnDataDependentSymNode: Could not extract
    specialized integer from data-dependent expression`, `.tolist()` with `Could not guard on
    data-dependent expression`, `.numpy()` with `RuntimeError: .numpy() is not supported for tensor
    subclasses.`, and `x.shape[0].item()` with `AttributeError: 'SymInt' object has no attribute 'item'`.

    Keep sizes symbolic: compute with them directly (`x.shape[0] * 2`), use `torch.sym_max` / `torch.sym_min` /
    `torch.sym_float` / `torch.sym_int` where a Python builtin would force a number, and for an output size
    that depends on data allocate a new symbol with `torch.library.get_ctx().new_dynamic_size()`.

    ## Known problems
    Only sizes the rule can prove belong to a tensor argument count: a size passed in from elsewhere, read
    through a helper function, or from a parameter annotated with something other than `Tensor` is not
    followed.
    """

    code = "AOTI301"
    severity = Severity.ERROR
    name = "fake-kernel-concrete-size"
    references = (REGISTER_FAKE_DOCS, CUSTOM_OPS_DYNAMIC_SHAPES, AOTI_DEBUGGING_GUIDE)
    summary = "A fake/meta kernel forces a symbolic size to a Python number or reads tensor data"
    triggers = KERNEL_TRIGGERS
    screen_tokens = KERNEL_SCREEN_TOKENS

    @classmethod
    def could_match(cls, data: bytes) -> bool:
        return could_hold_kernel_bytes(data)

    @classmethod
    def could_match_python(cls, text: str) -> bool:
        return could_hold_kernel_text(text) and could_hold_finding_text(text).concrete

    VALID = [
        Valid(
            """
            import torch

            @torch.library.custom_op("mylib::twice", mutates_args=())
            def twice(x: torch.Tensor) -> torch.Tensor:
                return torch.cat([x, x])

            @twice.register_fake
            def _(x):
                return x.new_empty(x.shape[0] * 2, *x.shape[1:])
            """
        ),
        Valid(
            """
            import torch

            @torch.library.register_fake("mylib::nonzero_rows")
            def _(x, min_rows: int):
                torch._check(x.shape[0] >= 2)
                n = torch.library.get_ctx().new_dynamic_size()
                return x.new_empty(torch.sym_max(n, min_rows), x.shape[1])
            """
        ),
        Valid(
            """
            import torch

            def eager_only(x):
                return x.new_empty(int(x.shape[0]) * 2)

            @torch.library.register_fake("mylib::scale")
            def _(x, factor: float):
                return x.new_empty(int(factor), x.size(1))
            """
        ),
    ]
    INVALID = [
        Invalid(
            """
            import torch

            @torch.library.custom_op("mylib::twice", mutates_args=())
            def twice(x: torch.Tensor) -> torch.Tensor:
                return torch.cat([x, x])

            @twice.register_fake
            def _(x):
                n = int(x.shape[0])
                return x.new_empty(n * 2, *x.shape[1:])
            """,
            line=9,
            column=9,
            message_contains="x.shape[0]",
        ),
        Invalid(
            """
            import torch

            @torch.library.register_fake("mylib::pack_rows")
            def _(x):
                sizes = [int(s) for s in x.shape]
                return x.new_empty(sizes[0] * sizes[1])
            """,
            line=5,
            column=14,
        ),
        Invalid(
            """
            import math
            from torch.library import register_fake

            @register_fake("mylib::half")
            def half_fake(x):
                return x.new_empty(math.ceil(x.size(0) / 2))
            """,
            line=6,
            column=24,
            message_contains="math.ceil",
        ),
        Invalid(
            """
            import torch

            lib = torch.library.Library("mylib", "FRAGMENT")
            lib.define("rows(Tensor x) -> Tensor")

            def rows_meta(x):
                return x.new_empty(x.sum().item(), 3)

            lib.impl("rows", rows_meta, "Meta")
            """,
            line=7,
            message_contains="new_dynamic_size",
        ),
        Invalid(
            """
            import torch

            @torch.library.impl("mylib::flat", "Meta")
            def flat_meta(x):
                b, c = x.shape
                return x.new_empty(float(b * c), x.shape[0].item())
            """,
            line=6,
            count=2,
        ),
    ]

    @classmethod
    def could_match_code(cls, code: Any) -> bool:
        # Every report is a call in a kernel: `.item()`/`.tolist()`/`.numpy()`, the builtins `int`/`float`, or a
        # `math` function, which only an import of `math` makes resolve so.
        if not could_hold_kernel(code):
            return False
        uses_math = "math" in code.imported_modules or any(module == "math" for module, _ in code.imported_names)
        if not (uses_math or code.called & (DATA_METHODS | {"int", "float"})):
            return False
        return could_hold_finding(code).concrete

    @classmethod
    def reader(cls, module: AstModule) -> AstReader:
        return _ConcreteSizes(cls, module)


class _ConcreteSizes(AstReader):
    """The calls of each kernel of the module (``model.kernels``) that make a number of a size or read data."""

    def findings(self) -> list[Finding]:
        from aoti_lint.model.kernels import kernel_index

        index = kernel_index(self.module.tree, self.module.text)
        for kernel in index.kernels.values():
            for item in kernel.nodes():
                if type(item) is ast.Call:
                    message = _defect(index, kernel, item)
                    if message is not None:
                        self.found.append(self.rule.finding_at(item, self.module, message))
        return self.found


def _defect(index: KernelIndex, kernel: Kernel, call: ast.Call) -> str | None:
    where = f"the fake kernel `{kernel.name}` ({kernel.registration})"

    def code(node: ast.AST) -> str:
        return source_segment(index.lines, node)

    func = call.func
    if type(func) is ast.Attribute and not call.args and not call.keywords:
        method = func.attr
        if method == "item" and kernel.is_size(func.value):
            return (
                f"`{code(func.value)}` is a `SymInt` under export, which has no `.item()` "
                f"(AttributeError) in {where}; use the size as it is"
            )
        if method in DATA_METHODS and kernel.is_tensor(func.value):
            return (
                f"`.{method}()` reads the data of a tensor argument in {where}, and a fake kernel has none "
                "(export fails with a data-dependent guard error); for a size that depends on data, use "
                "`torch.library.get_ctx().new_dynamic_size()`"
            )
        return None
    sizes = [value for value in arguments(call) if kernel.is_size(value)]
    if not sizes:
        return None
    names = index.model.qualified_names(func)
    builtin = next((name for name in sorted(names) if name in CONCRETE_BUILTINS), None)
    if builtin is not None and len(call.args) + len(call.keywords) == 1:
        function = builtin.rsplit(".", 1)[-1]
        return (
            f"`{function}({code(sizes[0])})` turns a symbolic size into a Python number in {where}: export "
            f"specialises the op to the example's size ('Constraints violated' for a `Dim`); keep the size "
            "symbolic (arithmetic on it, `torch.sym_max`/`torch.sym_min`/`torch.sym_float`)"
        )
    math_function = next((name for name in sorted(names) if name.startswith("math.")), None)
    if math_function is not None:
        return (
            f"`{math_function}` on the size `{code(sizes[0])}` turns it into a Python number in {where}: "
            "export specialises the op to the example's size; keep the size symbolic "
            "(`torch.sym_float`/`torch.sym_int`/`torch.sym_max`/`torch.sym_min` take SymInts)"
        )
    return None
