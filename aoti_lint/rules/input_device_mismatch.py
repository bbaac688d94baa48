"""AOTI102 input-device-mismatch: a loaded model called with a tensor on another device type."""

from __future__ import annotations

from collections.abc import Sequence

from aoti_lint.knowledge.references import AOTI_DEBUGGING_GUIDE_MAIN, AOTI_DOCS
from aoti_lint.rules.base import Invalid, Valid
from aoti_lint.rules.device_flow import DeviceFlowRule

TYPE_CHECKING = False
if TYPE_CHECKING:  # the summary types load with the first summary: a clean file never needs them
    from typing import ClassVar

    from aoti_lint.flows.flow_summary import CallArgument, Link


class InputDeviceMismatch(DeviceFlowRule):
    """
    ## What it does
    Finds calls of a loaded AOTI model (the result of `aoti_load_package`, `load_package` or `aot_load`)
    with a tensor whose device type is known and differs from the device type the model was compiled for
    (the device of the example inputs). The message names the argument. The tensor's device is known from
    `device=`, `.to(...)`, `.cuda()`, `.cpu()`, `torch.set_default_device`, `with torch.device(...)`, or the
    default (cpu) of a factory, also where a helper without parameters returns it (defined in the module or in
    another module of the project); containers (`*inputs`, lists, dicts) are looked into.

    ## Why is this bad?
    The compiled kernels read the input memory as if it were on the compile device. PyTorch's AOTI debugging
    guide lists inputs on another device as a cause of RuntimeErrors during execution, crashes and wrong
    results. Nothing checks by default; with `AOTI_RUNTIME_CHECK_INPUTS=1` the package checks its inputs and
    raises `RuntimeError: input_handles[0]: unmatched device type, expected: 00(cpu), but got: 14`.

    ## Known problems
    A device decided at run time is unknown and never reported: checking
    `model.get_metadata()["AOTI_DEVICE_KEY"]` before choosing the input device is the recommended pattern.
    A factory without `device=` is taken to be on cpu unless its module changes the default device.

    ## Fix safety
    No automatic fix: move the inputs to the compile device (`x.to(device)`) before the call.
    """

    code = "AOTI102"
    name = "input-device-mismatch"
    references = (AOTI_DEBUGGING_GUIDE_MAIN, AOTI_DOCS)
    summary = "A loaded AOTI model is called with a tensor on another device than it was compiled for"

    @classmethod
    def check_call(cls, link: Link, arguments: Sequence[CallArgument]) -> str | None:
        compiled = link.compile.device
        if compiled is None:
            return None
        wrong = [arg for arg in arguments if arg.device is not None and arg.device.type != compiled.type]
        if not wrong:
            return None
        names = ", ".join(f"`{arg.text}` (on {arg.device.type})" for arg in wrong)  # type: ignore[union-attr]
        return (
            f"the model loaded at line {link.load.span.row} was compiled for {compiled.type} at "
            f"{link.compile_location}, but is called with {names}"
        )

    INVALID: ClassVar[list[Invalid]] = [
        Invalid(
            """
            import torch

            x = torch.randn(8, 16, device="cuda")
            path = torch._inductor.aoti_compile_and_package(torch.export.export(model, (x,)))
            loaded = torch._inductor.aoti_load_package(path)
            out = loaded(torch.randn(8, 16))
            """,
            line=6,
            column=7,
            message_contains="called with `torch.randn(8, 16)` (on cpu)",
        ),
        Invalid(
            """
            import torch

            torch.set_default_device("cuda")
            inputs = (torch.randn(8, 16), torch.ones(8))
            so_path = torch._export.aot_compile(model, inputs)
            runner = torch._export.aot_load(so_path, "cuda")
            runner(*[t.cpu() for t in inputs])
            runner(inputs[0].cpu(), inputs[1])
            """,
            line=8,
            message_contains="`inputs[0].cpu()` (on cpu)",
        ),
        Invalid(
            """
            import torch

            class Handler:
                def __init__(self):
                    self.model = torch._inductor.aoti_load_package("model.pt2")

                def __call__(self, batch):
                    return self.model(batch.to("cuda"))

            def export(model):
                ep = torch.export.export(model, (torch.randn(2, 3),))
                torch._inductor.aoti_compile_and_package(ep, package_path="model.pt2")
            """,
            line=8,
            message_contains='`batch.to("cuda")` (on cuda)',
        ),
        # A `with torch.device(...)` elsewhere in the module does not reach a function it never calls.
        Invalid(
            """
            import torch

            def warm_up():
                with torch.device("cuda"):
                    return torch.zeros(1)

            def serve():
                return loaded(torch.randn(8, 16))

            x = torch.randn(8, 16, device="cuda")
            path = torch._inductor.aoti_compile_and_package(torch.export.export(model, (x,)))
            loaded = torch._inductor.aoti_load_package(path)
            """,
            line=8,
            message_contains="`torch.randn(8, 16)` (on cpu)",
        ),
    ]
    VALID: ClassVar[list[Valid]] = [
        Valid(
            """
            import torch

            x = torch.randn(8, 16, device="cuda")
            path = torch._inductor.aoti_compile_and_package(torch.export.export(model, (x,)))
            loaded = torch._inductor.aoti_load_package(path)
            out = loaded(torch.randn(8, 16, device="cuda"))
            """
        ),
        # The input device follows the package's own metadata.
        Valid(
            """
            import torch

            x = torch.randn(8, 16, device="cuda")
            path = torch._inductor.aoti_compile_and_package(torch.export.export(model, (x,)))
            loaded = torch._inductor.aoti_load_package(path)
            device = loaded.get_metadata()["AOTI_DEVICE_KEY"]
            out = loaded(torch.randn(8, 16, device=device))
            """
        ),
        # Compile on cuda:0, run on cuda:1.
        Valid(
            """
            import torch

            x = torch.randn(8, 16, device="cuda:0")
            path = torch._inductor.aoti_compile_and_package(torch.export.export(model, (x,)))
            loaded = torch._inductor.aoti_load_package(path, device_index=1)
            out = loaded(x.to("cuda:1"))
            """
        ),
        # Inputs built in a helper, or moved to a device chosen at run time: unknown.
        Valid(
            """
            import sys
            import torch

            def make_inputs(device):
                return torch.randn(8, 16, device=device)

            x = torch.randn(8, 16, device="cuda")
            path = torch._inductor.aoti_compile_and_package(torch.export.export(model, (x,)))
            loaded = torch._inductor.aoti_load_package(path)
            loaded(make_inputs("cpu"))
            loaded(torch.randn(8, 16).to(sys.argv[1]))
            for device in ["cpu", "cuda"]:
                loaded(torch.randn(8, 16, device=device))
            """
        ),
        # A factory in a function that may run inside a caller's `with torch.device(...)`.
        Valid(
            """
            import torch

            def run(model):
                return model(torch.randn(8, 16))

            x = torch.randn(8, 16, device="cuda")
            path = torch._inductor.aoti_compile_and_package(torch.export.export(model, (x,)))
            loaded = torch._inductor.aoti_load_package(path)
            with torch.device("cuda"):
                loaded(torch.randn(8, 16))
                run(loaded)
            """
        ),
        # dtype-only `.to` keeps the device.
        Valid(
            """
            import torch

            x = torch.randn(8, 16).cuda()
            path = torch._inductor.aoti_compile_and_package(torch.export.export(model, (x,)))
            loaded = torch._inductor.aoti_load_package(path)
            loaded(x.to(torch.float16))
            """
        ),
    ]
