"""AOTI103 input-shape-mismatch: a loaded model called with a shape its compile does not allow."""

from __future__ import annotations

from collections.abc import Sequence

from aoti_lint.knowledge.references import AOTI_DOCS, EXPORT_DYNAMIC_SHAPES
from aoti_lint.rules.base import Invalid, Valid
from aoti_lint.rules.device_flow import DeviceFlowRule

TYPE_CHECKING = False
if TYPE_CHECKING:  # the summary types load with the first summary: a clean file never needs them
    from typing import ClassVar

    from aoti_lint.flows.flow_summary import CallArgument, ExampleInput, Link


def _shape_problem(arg: CallArgument, example: ExampleInput) -> str | None:
    shape, expected = arg.shape, example.shape
    if shape is None or expected is None or example.dynamic is None:
        return None
    if len(shape) != len(expected):
        return f"`{arg.text}` has shape {list(shape)} but the example input had {list(expected)}"
    dynamic = {dim.index: dim for dim in example.dynamic}
    for index, (size, compiled) in enumerate(zip(shape, expected, strict=True)):
        dim = dynamic.get(index)
        if dim is None and size != compiled:
            return (
                f"`{arg.text}` has shape {list(shape)} but the example input had {list(expected)} and dim "
                f"{index} is not dynamic"
            )
        if dim is not None and dim.min is not None and size < dim.min:
            return f"`{arg.text}` has size {size} at dim {index}, below the declared min={dim.min}"
        if dim is not None and dim.max is not None and size > dim.max:
            return f"`{arg.text}` has size {size} at dim {index}, above the declared max={dim.max}"
    return None


class InputShapeMismatch(DeviceFlowRule):
    """
    ## What it does
    Finds calls of a loaded AOTI model with a tensor whose static shape (from a factory with literal sizes, e.g.
    `torch.randn(3, 10)`, or a helper without parameters that returns one, of the module or of another module of the
    project) differs from the
    compile-time example input at a dimension that is not declared dynamic in `dynamic_shapes`, or lies outside a
    declared `Dim`'s literal `min`/`max`.

    ## Why is this bad?
    AOTInductor specialises the compiled code to the example shapes, except for dynamic dimensions. Nothing
    checks the inputs by default, so a wrong shape runs with undefined results. On torch 2.13 (CPU, verified by
    this project's tests) a `Linear(10, 4)` + `relu` package compiled for batch 2 and called with a
    `[3, 10]` tensor returns a `[3, 4]` tensor whose third row never went through the `relu`, and only prints
    the ATen warning "An output with one or more elements was resized since it had shape [2, 4], which does
    not match the required output shape [3, 4]. This behavior is deprecated, ...". With
    `AOTI_RUNTIME_CHECK_INPUTS=1` the same call raises
    `RuntimeError: input_handles[0]: unmatched dim value at 0, expected: 2, but got: 3`.

    ## Known problems
    Only positional tensors whose structure lines up with the example inputs are compared. When
    `dynamic_shapes` is a dict keyed by `forward`'s parameter names and the model has several inputs, every
    dimension any entry declares dynamic counts as dynamic for all inputs.

    ## Fix safety
    No automatic fix: call the model with the compile-time shapes, or export with a `Dim` for the dimension
    that varies (`dynamic_shapes={"x": {0: Dim("batch", min=1, max=64)}}`).
    """

    code = "AOTI103"
    name = "input-shape-mismatch"
    references = (AOTI_DOCS, EXPORT_DYNAMIC_SHAPES)
    summary = "A loaded AOTI model is called with a static shape its compile does not allow"

    @classmethod
    def check_call(cls, link: Link, arguments: Sequence[CallArgument]) -> str | None:
        inputs = link.compile.inputs
        if inputs is None:
            return None
        problems = [
            problem
            for arg in arguments
            if arg.position is not None and arg.position < len(inputs)
            for problem in [_shape_problem(arg, inputs[arg.position])]
            if problem is not None
        ]
        if not problems:
            return None
        return f"{'; '.join(problems)} (compiled at {link.compile_location}); the result is undefined"

    INVALID: ClassVar[list[Invalid]] = [
        Invalid(
            """
            import torch

            x = torch.randn(2, 10)
            path = torch._inductor.aoti_compile_and_package(torch.export.export(model, (x,)))
            loaded = torch._inductor.aoti_load_package(path)
            out = loaded(torch.randn(3, 10))
            """,
            line=6,
            column=7,
            message_contains="`torch.randn(3, 10)` has shape [3, 10] but the example input had [2, 10] and dim 0",
        ),
        Invalid(
            """
            import torch


            def make_input():
                return torch.randn(3, 10)


            x = torch.randn(2, 10)
            path = torch._inductor.aoti_compile_and_package(torch.export.export(model, (x,)))
            loaded = torch._inductor.aoti_load_package(path)
            out = loaded(make_input())
            """,
            line=11,
            column=7,
            message_contains="`make_input()` has shape [3, 10] but the example input had [2, 10]",
        ),
        Invalid(
            """
            import torch
            from torch.export import Dim

            batch = Dim("batch", min=1, max=64)
            x = torch.randn(2, 10)
            ep = torch.export.export(model, (x,), dynamic_shapes={"x": {0: batch}})
            so = torch._inductor.aot_compile(ep.module(), (x,), options={"aot_inductor.output_path": "m.so"})
            runner = torch._export.aot_load(so, "cpu")
            runner(torch.randn(128, 10))
            runner(torch.randn(16, 12))
            """,
            line=9,
            count=2,
            message_contains="above the declared max=64",
        ),
        Invalid(
            """
            import torch

            inputs = (torch.zeros(4, 3), torch.zeros(4))
            so = torch._export.aot_compile(model, inputs, dynamic_shapes=({0: torch.export.Dim.AUTO}, None))
            runner = torch._export.aot_load(so, "cpu")
            runner(torch.zeros(9, 3), torch.zeros(9))
            """,
            line=6,
            message_contains="`torch.zeros(9)` has shape [9] but the example input had [4]",
        ),
    ]
    VALID: ClassVar[list[Valid]] = [
        Valid(
            """
            import torch
            from torch.export import Dim

            x = torch.randn(2, 10)
            ep = torch.export.export(model, (x,), dynamic_shapes={"x": {0: Dim("batch", min=1, max=64)}})
            path = torch._inductor.aoti_compile_and_package(ep)
            loaded = torch._inductor.aoti_load_package(path)
            out = loaded(torch.randn(3, 10))
            """
        ),
        Valid(
            """
            import torch

            x = torch.randn(2, 10)
            ep = torch.export.export(model, (x,), dynamic_shapes=((torch.export.Dim.AUTO, None),))
            path = torch._inductor.aoti_compile_and_package(ep)
            loaded = torch._inductor.aoti_load_package(path)
            loaded(torch.randn(7, 10))
            loaded(torch.randn(2, 10))
            """
        ),
        # A dynamic_shapes spec that is not known statically: shapes are not checked.
        Valid(
            """
            import torch

            x = torch.randn(2, 10)
            ep = torch.export.export(model, (x,), dynamic_shapes=make_spec())
            loaded = torch._inductor.aoti_load_package(torch._inductor.aoti_compile_and_package(ep))
            loaded(torch.randn(3, 10))
            """
        ),
    ]
