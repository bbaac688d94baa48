"""AOTI002: references to the deprecated ``torch._export.aot_load``."""

from __future__ import annotations

from aoti_lint.knowledge.deprecated_api import AOT_LOAD
from aoti_lint.knowledge.references import MIGRATION_GUIDE
from aoti_lint.rules.base import Invalid, Valid
from aoti_lint.rules.deprecated_reference import DeprecatedReference


class DeprecatedAotLoad(DeprecatedReference):
    """
    ## What it does
    Finds every reference to `torch._export.aot_load`, called or not, under any import form, and through names
    other modules of the project bind to it, as AOTI001 does.

    ## Why is this bad?
    Since torch 2.6, `torch._export.aot_load` logs a deprecation notice; the replacement is
    `torch._inductor.aoti_load_package`. `aot_load(so_path, device)` trusts the caller's `device`: nothing
    checks it against the device the `.so` was compiled for, and a mismatch segfaults or fails with
    "The specified pointer resides on host memory and is not registered with any CUDA device".
    `aoti_load_package` reads the compile device from the `.pt2` package; the caller may only choose the
    device index (`device_index=`, torch 2.8+).

    ## Fix safety
    `aoti-lint --fix` rewrites `aot_load(path, device)` to `aoti_load_package(path)`, with
    `device_index=N` for `"cuda:N"` or `torch.device("cuda", N)` (also `f"cuda:{rank}"` and
    `torch.device("cuda", rank)`: `device_index=rank`) when `target-torch` is 2.8 or newer; below, a
    device index other than 0 leaves the call to be migrated by hand. A load is migrated only with the
    compile that writes its artifact: `aoti_load_package` cannot read a `.so` ("Failed to initialize zip
    archive"), so a load whose producer this run does not see migrating too (another repository, a file not
    named, a path the run cannot follow) gets no fix, and its message says so; a load of a literal `.pt2` path
    needs none. The fix is safe when the compile is in the same module (both sides are migrated together and
    stay consistent), and unsafe when its artifact flow spans files: a `.so` path the load is given (a
    literal, `os.path.join`, a constant of the run) is rewritten to the `.pt2` with it; a fix never hands a
    `.so` to `aoti_load_package`. A load that AOTI101 reports gets no fix: the rewrite would
    silently move it to the compile's device. A device that is not a literal is left to the package (the
    device type always comes from the package); the fix is then unsafe too, and there is none when the
    device is computed by a call that may do more than read a value (`aot_load(path, pick_device())`, unlike
    `torch.device(name)` or `torch.cuda.is_available()`): dropping the argument would drop the call.
    """

    code = "AOTI002"
    name = "deprecated-aot-load"
    references = (*AOT_LOAD.references, MIGRATION_GUIDE)
    summary = "`torch._export.aot_load` is deprecated; use `aoti_load_package`"
    symbol = AOT_LOAD
    triggers = ((b"aot_load", b"_export"),)

    VALID = [
        Valid(
            """
            import torch
            loader = getattr(torch._inductor, "aot_load", None)
            other = getattr(registry, "aot_load")
            named = getattr(torch._export, name)
            """
        ),
        Valid(
            """
            import torch

            model = torch._inductor.aoti_load_package("model.pt2")
            """
        ),
        Valid(
            """
            def aot_load(path):
                return open(path).read()

            aot_load("model.so")
            """
        ),
        Valid(
            """
            import torch
            from torch._inductor.package import load_package

            def load_package(path):
                return path

            load_package("model.pt2")
            """
        ),
        Valid(
            """
            try:
                from torch._export import aot_load
            except ImportError:
                aot_load = None

            def aot_load_or_fail(path, device):
                raise NotImplementedError("install torch>=2.2")
            """
        ),
    ]
    INVALID = [
        Invalid(
            """
            from torch._export import aot_compile, aot_load

            def build_and_serve(model, x):
                so_path = aot_compile(model, (x,))
                return aot_load(so_path, "cuda:1")
            """,
            line=5,
            column=12,
            message_contains="aoti_load_package",
            fixed="""
            import torch

            def build_and_serve(model, x):
                so_path = torch._inductor.aoti_compile_and_package(torch.export.export(model, (x,)))
                return torch._inductor.aoti_load_package(so_path, device_index=1)
            """,
            target_torch="2.8",
        ),
        Invalid(
            """
            from torch._export import aot_load

            def serve(path):
                return aot_load(path, "cuda")
            """,
            line=4,
            column=12,
            message_contains="no compile of this run is known to write the `.pt2` package",
        ),
        Invalid(
            """
            from torch._export import aot_compile, aot_load

            runner = aot_load(path, device)
            """,
            line=3,
            column=10,
        ),
        Invalid(
            """
            from torch import _export as ex

            loader = ex.aot_load
            """,
            line=3,
        ),
        Invalid(
            """
            import torch

            def load(path, device):
                if hasattr(torch._inductor, "aoti_load_package") and path.endswith(".pt2"):
                    return torch._inductor.aoti_load_package(path)
                return getattr(torch._export, "aot_load")(path, device)
            """,
            line=6,
            column=12,
        ),
    ]
