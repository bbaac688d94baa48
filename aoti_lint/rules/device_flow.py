"""AOTI101-AOTI103: the first three checks of PyTorch's AOTI debugging guide, made static.

1. the load device type is the compile device type; 2. the inputs are on that device; 3. the input shapes are
the compile-time shapes, or within the declared dynamic dims. The analysis (``aoti_lint.analysis.module_flow``)
summarises each module; the checks run over the summaries of all the files of a run, so a package written by
``export.py`` and loaded by ``serve.py`` is checked too.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from aoti_lint.diagnostics import Finding, Position, Severity
from aoti_lint.knowledge import device_flow as K
from aoti_lint.rules.base import Invalid, ProjectRule, Valid

if TYPE_CHECKING:  # the summary types load with the first summary: a clean file never needs them
    from aoti_lint.analysis.flow_summary import CallArgument, ExampleInput, FlowSummary, Link, Span


@functools.cache
def _summary_text() -> re.Pattern[str]:
    """An API name called or imported, or a string ending in an artifact suffix; compiled on first use."""
    names = "|".join(sorted(K.SUMMARY_IDENTIFIERS))
    suffixes = "|".join(re.escape(suffix) for suffix in K.ARTIFACT_SUFFIXES)
    return re.compile(
        rf"\b(?:{names})(?:\s|\\)*\("  # called
        rf"|\bimport\b(?:[^\n;]|\\\n)*?\b(?:{names})\b"  # imported, on one logical line
        rf"|\bimport\s*\([^)]*\b(?:{names})\b"  # imported, in parentheses
        rf"|(?:{suffixes})[\"']"  # a string ending in an artifact suffix
    )


class DeviceFlowRule(ProjectRule):
    """Shared by the three rules: one summary per file, findings only where a load is."""

    summary_key: ClassVar[str] = "device-flow"
    summary_triggers = K.SUMMARY_TOKENS
    triggers = K.LOAD_TOKENS
    severity = Severity.ERROR

    @classmethod
    def wants_summary_python(cls, text: str) -> bool:
        # The same, in the text: an API name called or imported, or a string ending in an artifact suffix.
        return _summary_text().search(text) is not None

    @classmethod
    def wants_summary_code(cls, code: Any) -> bool:
        # A summary holds compile and load sites (calls of the API, or of a name imported from it) and
        # artifact paths in module-level constants that other files may import. A relative import never
        # names the API (libcst resolves `from . import aot_compile` to `.aot_compile`).
        # Any string naming a `.so` counts too: the migration plan must see every reader of an artifact (a
        # path passed to a load helper, a file deleted or copied) before it rewrites the artifact's format.
        return cls._has_sites(code) or ".so" in code.string_suffixes

    @staticmethod
    def _has_sites(code: Any) -> bool:
        imported = {name for module, name in code.imported_names if not module.startswith(".")}
        return bool((code.called | imported) & K.SUMMARY_IDENTIFIERS) or bool(
            code.module_string_suffixes & set(K.ARTIFACT_SUFFIXES)
        )

    @classmethod
    def mentions_only(cls, code: Any) -> bool:
        """Whether the file is summarised only for strings naming a `.so`: then its summary holds no site or
        constant, and ``analysis.so_mentions`` reads it from ``ast``."""
        return not cls._has_sites(code)

    @classmethod
    def summarize(cls, context: Any) -> FlowSummary:
        from aoti_lint.analysis.module_flow import summarize

        return summarize(context)

    @classmethod
    def check_project(cls, summaries: Sequence[FlowSummary]) -> list[Finding]:
        from aoti_lint.analysis.flow_summary import link_loads

        links = link_loads(summaries)
        findings = []
        for summary in summaries:
            for index, load in enumerate(summary.loads):
                link = links.get((summary.path, index))
                message = cls.check_load(link) if link is not None else None
                if message is not None:
                    findings.append(cls.at(summary.path, load.span, message))
            for call in summary.calls:
                link = links.get((summary.path, call.load_index))
                message = cls.check_call(link, call.arguments) if link is not None else None
                if message is not None:
                    findings.append(cls.at(summary.path, call.span, message))
        return findings

    @classmethod
    def check_load(cls, link: Link) -> str | None:
        return None

    @classmethod
    def check_call(cls, link: Link, arguments: Sequence[CallArgument]) -> str | None:
        return None

    @classmethod
    def at(cls, path: str, span: Span, message: str) -> Finding:
        return cls.finding(path, Position(span.row, span.column), Position(span.end_row, span.end_column), message)


class CrossDeviceLoad(DeviceFlowRule):
    """
    ## What it does
    Finds loads of an AOTInductor artifact for another device type than the one it was compiled for:
    `torch._export.aot_load(path, "cpu")` of a model compiled with CUDA inputs (and the reverse), a
    `device_index` other than -1 for a package compiled on CPU, and `device_index=dev.index` where `dev` is of
    another type than the package. The compile is found through the variable holding the returned path, or
    through a constant artifact path (`package_path=`, `aot_inductor.output_path`, `os.path.join`/`pathlib`
    of constants, a constant imported from a module of the run), in the same file or in another file of the
    same run (e.g. `export.py` writes `artifacts/model.pt2` and `serve.py` loads it).

    ## Why is this bad?
    AOTI cannot load a model across device types; only the device index may differ (a model compiled on
    `cuda:0` runs on `cuda:1`). `aot_load` trusts its `device` argument and never checks it: a CUDA `.so`
    loaded for CPU crashes or fails with "The specified pointer resides on host memory and is not registered
    with any CUDA device". `aoti_load_package` takes the device type from the package; on a CPU-only
    machine a CUDA package fails with "Cannot load AOTInductor package for device 'cuda' because CUDA is not
    available in this process" (torch 2.14) or "Torch not compiled with CUDA enabled" (torch 2.13). A CPU
    package loads only with `device_index=-1`; any other index fails with "Incorrect device passed to
    aoti_runner_cpu", after a misleading "Loading outdated pt2 file. Please regenerate your package." warning
    (torch 2.13, CPU, verified by this project's tests).

    ## Known problems
    Only devices that are certain are compared: a device chosen at run time (`torch.cuda.is_available()`,
    a CLI flag, the package's `AOTI_DEVICE_KEY`) is unknown and never reported. Relative artifact paths
    are matched as written, assuming the scripts of a project run from the same directory; when several
    compiles write the same path with different devices, the load is not checked.

    ## Fix safety
    No automatic fix: compile for the device the artifact will run on, or load it there.

    ## References
    - [AOTInductor debugging guide](https://pytorch.org/docs/main/torch.compiler_aot_inductor_debugging_guide.html)
    - [AOTInductor docs](https://pytorch.org/docs/stable/torch.compiler_aot_inductor.html)
    """

    code = "AOTI101"
    name = "cross-device-load"
    summary = "An AOTI artifact is loaded for another device type than it was compiled for"

    @classmethod
    def check_load(cls, link: Link) -> str | None:
        compiled, load = link.compile.device, link.load
        if compiled is None:
            return None
        where = f"compiled for {compiled.type} at {link.compile_location}"
        if load.api == "aot_load":
            if load.device is not None and load.device.type != compiled.type:
                return f"`aot_load` runs on {load.device.type} a model {where}; AOTI cannot load across device types"
            return None
        if load.device is not None and load.device.type != compiled.type:
            return (
                f"`{load.api}` asks for {load.device.type} (`device_index=....index`) but the package was "
                f"{where}; the device type always comes from the package"
            )
        if compiled.type == "cpu" and load.device_index is not None and load.device_index != K.CPU_DEVICE_INDEX:
            return (
                f"`{load.api}(..., device_index={load.device_index})` asks for a device index, but the package "
                f'was {where}: a cpu package loads only with device_index=-1 ("{K.CPU_INDEX_ERROR}")'
            )
        return None

    INVALID: ClassVar[list[Invalid]] = [
        Invalid(
            """
            import torch

            example = (torch.randn(8, 16, device="cuda"),)
            so_path = torch._export.aot_compile(model, example)
            runner = torch._export.aot_load(so_path, "cpu")
            """,
            line=5,
            column=10,
            message_contains="`aot_load` runs on cpu a model compiled for cuda at example.py:4",
        ),
        Invalid(
            """
            import torch

            x = torch.randn(8, 16)
            ep = torch.export.export(model, (x,))
            torch._inductor.aoti_compile_and_package(ep, package_path="model.pt2")
            loaded = torch._inductor.aoti_load_package("model.pt2", device_index=0)
            """,
            line=6,
            message_contains="Incorrect device passed to aoti_runner_cpu",
        ),
        Invalid(
            """
            import os
            import torch
            from torch._inductor import aoti_compile_and_package, aoti_load_package

            ARTIFACTS = "artifacts"
            PACKAGE = os.path.join(ARTIFACTS, "model.pt2")
            DEVICE = torch.device("cuda", 1)

            def export(model):
                ep = torch.export.export(model, (torch.randn(4, 3),))
                aoti_compile_and_package(ep, package_path=PACKAGE)

            def serve():
                return aoti_load_package(PACKAGE, device_index=DEVICE.index)
            """,
            line=14,
            message_contains="asks for cuda",
        ),
        Invalid(
            """
            import torch
            from pathlib import Path

            out = Path("build") / "m.so"
            with torch.device("cuda"):
                args = (torch.zeros(2, 3),)
            torch._export.aot_compile(model, args, options={"aot_inductor.output_path": str(out)})
            fn = torch._export.aot_load("build/m.so", device="cpu")
            """,
            line=8,
        ),
        # A parameter's literal default, when no call in the module passes the parameter.
        Invalid(
            """
            import torch

            def serve(device="cpu"):
                return torch._export.aot_load("m.so", device)

            options = {"aot_inductor.output_path": "m.so"}
            torch._export.aot_compile(model, (torch.randn(2, device="cuda"),), options=options)
            runner = serve()
            """,
            line=4,
            message_contains="`aot_load` runs on cpu",
        ),
    ]
    VALID: ClassVar[list[Valid]] = [
        Valid(
            """
            import torch

            example = (torch.randn(8, 16, device="cuda"),)
            so_path = torch._export.aot_compile(model, example)
            runner = torch._export.aot_load(so_path, "cuda")
            """
        ),
        # Compiled on cuda:0, loaded on cuda:1: only the index differs.
        Valid(
            """
            import torch

            x = torch.randn(8, 16, device="cuda:0")
            path = torch._inductor.aoti_compile_and_package(torch.export.export(model, (x,)))
            loaded = torch._inductor.aoti_load_package(path, device_index=1)
            """
        ),
        # Compile and load both on CPU, with the default device_index.
        Valid(
            """
            import torch

            x = torch.randn(8, 16)
            path = torch._inductor.aoti_compile_and_package(torch.export.export(model, (x,)), package_path="m.pt2")
            loaded = torch._inductor.aoti_load_package("m.pt2", device_index=-1)
            out = loaded(x)
            """
        ),
        # The device is chosen at run time: unknown, never reported.
        Valid(
            """
            import torch

            device = "cuda" if torch.cuda.is_available() else "cpu"
            x = torch.randn(8, 16, device=device)
            so_path = torch._export.aot_compile(model, (x,))
            runner = torch._export.aot_load(so_path, "cpu")
            """
        ),
        Valid(
            """
            import torch

            x = torch.randn(8, 16, device="cuda")
            path = torch._inductor.aoti_compile_and_package(torch.export.export(model, (x,)))
            device = torch.device("cuda", 1)
            loaded = torch._inductor.aoti_load_package(path, device_index=device.index)
            """
        ),
        # The same path is written by two compiles for different devices: which one is loaded is not known.
        Valid(
            """
            import sys
            import torch

            OPTIONS = {"aot_inductor.output_path": "m.so"}
            if sys.argv[1] == "gpu":
                so = torch._export.aot_compile(model, (torch.randn(2, device="cuda"),), options=OPTIONS)
            else:
                so = torch._export.aot_compile(model, (torch.randn(2),), options=OPTIONS)
            runner = torch._export.aot_load("m.so", "cpu")
            """
        ),
        # A loop over devices, and a helper whose arguments are unknown.
        Valid(
            """
            import torch

            def load(path, device):
                return torch._export.aot_load(path, device)

            for device in ("cpu", "cuda"):
                x = torch.randn(8, 16, device=device)
                runner = torch._export.aot_load(torch._export.aot_compile(model, (x,)), device)
            """
        ),
        # A parameter's default that a caller overrides (here, inside another function) is unknown.
        Valid(
            """
            import torch

            def serve(device="cpu"):
                return torch._export.aot_load("m.so", device)

            def main():
                options = {"aot_inductor.output_path": "m.so"}
                torch._export.aot_compile(model, (torch.randn(2, device="cuda"),), options=options)
                serve("cuda")

            main()
            """
        ),
    ]


class InputDeviceMismatch(DeviceFlowRule):
    """
    ## What it does
    Finds calls of a loaded AOTI model (the result of `aoti_load_package`, `load_package` or `aot_load`)
    with a tensor whose device type is known and differs from the device type the model was compiled for
    (the device of the example inputs). The message names the argument. The tensor's device is known from
    `device=`, `.to(...)`, `.cuda()`, `.cpu()`, `torch.set_default_device`, `with torch.device(...)`, or the
    default (cpu) of a factory; containers (`*inputs`, lists, dicts) are looked into.

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

    ## References
    - [AOTInductor debugging guide](https://pytorch.org/docs/main/torch.compiler_aot_inductor_debugging_guide.html)
    - [AOTInductor docs](https://pytorch.org/docs/stable/torch.compiler_aot_inductor.html)
    """

    code = "AOTI102"
    name = "input-device-mismatch"
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
    Finds calls of a loaded AOTI model with a tensor whose static shape (from a factory with literal sizes,
    e.g. `torch.randn(3, 10)`) differs from the compile-time example input at a dimension that is not
    declared dynamic in `dynamic_shapes`, or lies outside a declared `Dim`'s literal `min`/`max`.

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

    ## References
    - [AOTInductor docs](https://pytorch.org/docs/stable/torch.compiler_aot_inductor.html)
    - [torch.export dynamic shapes](https://pytorch.org/docs/stable/export.html#expressing-dynamism)
    """

    code = "AOTI103"
    name = "input-shape-mismatch"
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
