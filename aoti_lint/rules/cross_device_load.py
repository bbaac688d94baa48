"""AOTI101 cross-device-load: an artifact loaded for another device type than it was compiled for."""

from __future__ import annotations

from aoti_lint.knowledge.device_flow import CPU_DEVICE_INDEX, CPU_INDEX_ERROR
from aoti_lint.knowledge.references import AOTI_DEBUGGING_GUIDE_MAIN, AOTI_DOCS
from aoti_lint.rules.base import Invalid, Valid
from aoti_lint.rules.device_flow import DeviceFlowRule

TYPE_CHECKING = False
if TYPE_CHECKING:  # the summary types load with the first summary: a clean file never needs them
    from typing import ClassVar

    from aoti_lint.flows.flow_summary import Link


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
    """

    code = "AOTI101"
    name = "cross-device-load"
    references = (AOTI_DEBUGGING_GUIDE_MAIN, AOTI_DOCS)
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
        if compiled.type == "cpu" and load.device_index is not None and load.device_index != CPU_DEVICE_INDEX:
            return (
                f"`{load.api}(..., device_index={load.device_index})` asks for a device index, but the package "
                f'was {where}: a cpu package loads only with device_index=-1 ("{CPU_INDEX_ERROR}")'
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
