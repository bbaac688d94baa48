"""AOTI302: a fake/meta kernel that branches in Python on a size of a tensor argument."""

from __future__ import annotations

import ast

from aoti_lint.knowledge.references import CUSTOM_OPS_DYNAMIC_SHAPES, EXPORT_CONTROL_FLOW, TORCH_CHECK
from aoti_lint.model.kernels import arguments, number, raises_only
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


class FakeKernelShapeBranch(AstRule):
    """
    ## What it does
    Finds `if` statements and conditional expressions in fake and meta kernels of custom ops (registered as
    for [AOTI301](AOTI301.md)) whose condition compares a size of a tensor argument with a number (a
    literal, arithmetic on literals such as `1 << 20`, or a name bound once to one): `if x.shape[0] > 8:`,
    `a if x.size(1) % 16 == 0 else b`; and Python loops over a size:
    `for i in range(x.shape[0]):`, `[... for i in range(x.size(1))]`.

    Comparisons of a plain size with 0 or 1 (`if x.numel() == 0:`) are not reported: export specialises
    those sizes anyway. Neither is an `if` whose body only raises (a validation), nor a comparison between two
    sizes.

    ## Why is this bad?
    Python control flow cannot stay symbolic: export evaluates the condition for the example input and
    records a guard that keeps only the sizes taking the same branch. Measured with torch 2.13 on a
    `@torch.library.custom_op` whose fake kernel returns `x.new_empty(x.shape[0] * 2, ...)` when
    `x.shape[0] > 8` and `x.new_empty(x.shape[0], ...)` otherwise, exported with a batch of 4:
    - with `dynamic_shapes={"x": {0: Dim("b", min=2, max=64)}}` it fails with
      `UserError: Constraints violated (b)! For more information, run with TORCH_LOGS="+dynamic".`;
    - with `Dim.DYNAMIC` or `Dim.AUTO` it succeeds silently with the range narrowed to `{s77: VR[2, 8]}`:
      the AOTI package rejects every batch above 8.

    A loop `for i in range(x.shape[0])` fails the same way (measured: `Constraints violated (b)!`), even
    when its body does not touch the result: the loop runs in Python for the example's count.

    Write one formula for every size (`torch.sym_max(x.shape[0], 8)`, `torch.sym_min`, `torch.sym_ite`), or,
    when the kernel only supports some sizes, state it with `torch._check(x.shape[0] <= 8)` so export reports
    the assumption instead of silently narrowing the range.

    ## Known problems
    The rule cannot know which dimensions will be dynamic: a branch on a dimension that stays static is
    harmless. Add `# noqa: AOTI302` there.
    """

    code = "AOTI302"
    name = "fake-kernel-shape-branch"
    references = (EXPORT_CONTROL_FLOW, TORCH_CHECK, CUSTOM_OPS_DYNAMIC_SHAPES)
    summary = "A fake/meta kernel branches on a symbolic size, which specialises the exported op"
    triggers = KERNEL_TRIGGERS
    screen_tokens = KERNEL_SCREEN_TOKENS

    @classmethod
    def could_match(cls, data: bytes) -> bool:
        return could_hold_kernel_bytes(data)

    @classmethod
    def could_match_python(cls, text: str) -> bool:
        return could_hold_kernel_text(text) and could_hold_finding_text(text).branch

    VALID = [
        Valid(
            """
            import torch

            @torch.library.register_fake("mylib::pad_rows")
            def _(x):
                torch._check(x.shape[0] <= 64)
                if x.numel() == 0:
                    return x.new_empty(0, x.shape[1])
                if x.shape[0] > 64:
                    raise ValueError("at most 64 rows")
                return x.new_empty(torch.sym_max(x.shape[0], 8), x.shape[1])
            """
        ),
        Valid(
            """
            import torch

            def helper(x):
                if x.shape[0] > 8:
                    return x[:8]
                return x

            @torch.library.register_fake("mylib::same")
            def _(x, y, mode: int):
                if mode > 2 and x.dim() == 2:
                    return torch.empty_like(x)
                return x.new_empty(x.shape[0], y.shape[0])
            """
        ),
    ]
    INVALID = [
        Invalid(
            """
            import torch

            @torch.library.custom_op("mylib::grow", mutates_args=())
            def grow(x: torch.Tensor) -> torch.Tensor:
                return torch.cat([x, x]) if x.shape[0] > 8 else x.clone()

            @grow.register_fake
            def _(x):
                if x.shape[0] > 8:
                    return x.new_empty(x.shape[0] * 2, *x.shape[1:])
                return x.new_empty(x.shape[0], *x.shape[1:])
            """,
            line=9,
            column=8,
            message_contains="torch._check",
        ),
        Invalid(
            """
            import torch

            MAX_NUMEL = 1 << 20


            @torch.library.register_fake("chunk::split")
            def _(x):
                if x.numel() > MAX_NUMEL:
                    return x.new_empty(2, x.numel() // 2)
                return x.new_empty(1, x.numel())
            """,
            line=8,
            column=8,
            message_contains="`x.numel() > MAX_NUMEL`",
        ),
        Invalid(
            """
            import torch

            @torch.library.register_fake("mylib::split_rows")
            def _(x):
                if x.shape[0] >= 1 << 16:
                    return x.new_empty(2, x.shape[0] // 2, x.shape[1])
                return x.new_empty(1, *x.shape)
            """,
            line=5,
            column=8,
        ),
        Invalid(
            """
            import torch

            @torch.library.impl_abstract("mylib::tile")
            def tile_fake(x):
                blocks = x.size(1) // 16 if x.size(1) % 16 == 0 else x.size(1) // 16 + 1
                return x.new_empty(x.size(0), blocks)
            """,
            line=5,
            column=33,
        ),
        Invalid(
            """
            import torch

            @torch.library.register_fake("mylib::offsets")
            def _(x):
                starts = [i * x.shape[1] for i in range(x.shape[0])]
                return x.new_empty(len(starts))
            """,
            line=5,
            column=39,
            message_contains="loops over a symbolic size",
        ),
    ]

    @classmethod
    def could_match_code(cls, code: Any) -> bool:
        return could_hold_kernel(code) and could_hold_finding(code).branch

    @classmethod
    def reader(cls, module: AstModule) -> AstReader:
        return _SizeBranches(cls, module)


class _SizeBranches(AstReader):
    """The branches and loops of each kernel of the module (``model.kernels``) on a symbolic size."""

    def findings(self) -> list[Finding]:
        from aoti_lint.model.kernels import kernel_index, own_nodes

        module = self.module
        index = kernel_index(module.tree, module.text)
        found = self.found
        for kernel in index.kernels.values():
            for item in kernel.nodes():
                kind = type(item)
                if kind in (ast.For, ast.AsyncFor, ast.comprehension):
                    message = _loop(index, kernel, item.iter)  # type: ignore[attr-defined]
                    if message is not None:
                        found.append(self.rule.finding_at(item.iter, module, message))  # type: ignore[attr-defined]
                    continue
                if not (kind is ast.IfExp or (kind is ast.If and not raises_only(item, index.lines))):  # type: ignore[arg-type]
                    continue
                for comparison in own_nodes([item.test]):  # type: ignore[attr-defined]
                    if type(comparison) is ast.Compare and _specialises(index, kernel, comparison):
                        message = _message(index, kernel, comparison)
                        found.append(self.rule.finding_at(comparison, module, message))
                        break
        return found


def _loop(index: KernelIndex, kernel: Kernel, iterable: ast.expr) -> str | None:
    if type(iterable) is not ast.Call or "builtins.range" not in index.model.qualified_names(iterable.func):
        return None
    if not any(kernel.is_size(value) for value in arguments(iterable)):
        return None
    return (
        f"`{source_segment(index.lines, iterable)}` loops over a symbolic size in the fake kernel "
        f"`{kernel.name}` ({kernel.registration}): Python runs the loop for the example's size and export "
        "pins it ('Constraints violated' for a `Dim`); compute the result with tensor operations on the "
        "symbolic size instead"
    )


def _specialises(index: KernelIndex, kernel: Kernel, comparison: ast.Compare) -> bool:
    operands = [comparison.left, *comparison.comparators]
    sizes = [operand for operand in operands if kernel.is_size(operand)]
    numbers = [number for number in (number(operand, index.model) for operand in operands) if number is not None]
    if len(sizes) != 1 or len(numbers) != len(operands) - 1:
        return False
    plain = type(sizes[0]) not in (ast.BinOp, ast.UnaryOp)
    return not (plain and all(number in (0, 1) for number in numbers))


def _message(index: KernelIndex, kernel: Kernel, comparison: ast.Compare) -> str:
    condition = source_segment(index.lines, comparison)
    return (
        f"`{condition}` branches on a symbolic size in the fake kernel `{kernel.name}` "
        f"({kernel.registration}): export keeps only the sizes that take the example's branch (a `Dim` "
        "fails with 'Constraints violated', `Dim.AUTO` silently narrows the range); use one formula "
        "(`torch.sym_max`/`torch.sym_min`/`torch.sym_ite`) or state the assumption with `torch._check(...)`"
    )
