"""AOTI302: a fake/meta kernel that branches in Python on a size of a tensor argument."""

from __future__ import annotations

from aoti_lint.knowledge.references import CUSTOM_OPS_DYNAMIC_SHAPES, EXPORT_CONTROL_FLOW, TORCH_CHECK
from aoti_lint.lazy import cst
from aoti_lint.rules.base import Invalid, PythonRule, Valid
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

# libcst's operator classes, by the names `kernel_prefilter.constant_arithmetic` knows them.
_ARITHMETIC = {"Add": "+", "Subtract": "-", "Multiply": "*", "Power": "**", "LeftShift": "<<", "FloorDivide": "//"}


def _number(node: Any, facts: Any = None, depth: int = 0) -> float | None:
    """A number literal, its negation, or arithmetic on them (a threshold written `1 << 20`, `4 * 1024`); with the
    module's ``facts``, a name bound once where it is read to such a number (`_MAX_NUMEL = 1 << 20`)."""
    if isinstance(node, cst.Name) and facts is not None and depth < 4:
        value = facts.single_value(node)
        return None if value is None else _number(value, facts, depth + 1)
    if isinstance(node, (cst.Integer, cst.Float)):
        return float(node.evaluated_value)
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        inner = _number(node.expression, facts, depth)
        return None if inner is None else -inner
    if isinstance(node, cst.BinaryOperation):
        from aoti_lint.rules.kernel_prefilter import constant_arithmetic

        left, right = _number(node.left, facts, depth), _number(node.right, facts, depth)
        operator = _ARITHMETIC.get(type(node.operator).__name__)
        return None if left is None or right is None or operator is None else constant_arithmetic(operator, left, right)
    return None


def _raises_only(body: Any) -> bool:
    """A block that only raises: a check, which the rule leaves to the programmer."""
    statements = list(body.body)
    return bool(statements) and all(
        isinstance(statement, cst.SimpleStatementLine) and all(isinstance(s, cst.Raise) for s in statement.body)
        for statement in statements
    )


class FakeKernelShapeBranch(PythonRule):
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

    def visit_Module(self, node: cst.Module) -> None:
        from aoti_lint.model.kernels import children, is_size, kernel_index

        for kernel in kernel_index(self.context).kernels.values():
            for item in kernel.nodes():
                if isinstance(item, (cst.For, cst.CompFor)):
                    self._check_loop(kernel, item.iter, is_size)
                    continue
                if not (isinstance(item, cst.IfExp) or (isinstance(item, cst.If) and not _raises_only(item.body))):
                    continue
                test = item.test
                for comparison in [test, *children(test)]:
                    if isinstance(comparison, cst.Comparison) and self._specialises(kernel, comparison, is_size):
                        self.report(comparison, self._message(kernel, comparison))
                        break

    def _check_loop(self, kernel: Any, iterable: Any, is_size: Any) -> None:
        if not isinstance(iterable, cst.Call) or "builtins.range" not in self.qualified_names(iterable.func):
            return
        if any(not arg.star and is_size(kernel, arg.value) for arg in iterable.args):
            self.report(
                iterable,
                f"`{self.context.module.code_for_node(iterable)}` loops over a symbolic size in the fake kernel "
                f"`{kernel.name}` ({kernel.registration}): Python runs the loop for the example's size and export "
                "pins it ('Constraints violated' for a `Dim`); compute the result with tensor operations on the "
                "symbolic size instead",
            )

    def _specialises(self, kernel: Any, comparison: Any, is_size: Any) -> bool:
        operands = [comparison.left, *(target.comparator for target in comparison.comparisons)]
        sizes = [operand for operand in operands if is_size(kernel, operand)]
        facts = self.context.facts()
        numbers = [number for number in (_number(operand, facts) for operand in operands) if number is not None]
        if len(sizes) != 1 or len(numbers) != len(operands) - 1:
            return False
        plain = not isinstance(sizes[0], (cst.BinaryOperation, cst.UnaryOperation))
        return not (plain and all(number in (0, 1) for number in numbers))

    def _message(self, kernel: Any, comparison: Any) -> str:
        condition = self.context.module.code_for_node(comparison)
        return (
            f"`{condition}` branches on a symbolic size in the fake kernel `{kernel.name}` "
            f"({kernel.registration}): export keeps only the sizes that take the example's branch (a `Dim` "
            "fails with 'Constraints violated', `Dim.AUTO` silently narrows the range); use one formula "
            "(`torch.sym_max`/`torch.sym_min`/`torch.sym_ite`) or state the assumption with `torch._check(...)`"
        )
