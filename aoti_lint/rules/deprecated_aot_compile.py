"""AOTI001: references to the deprecated ``torch._export.aot_compile``."""

from __future__ import annotations

from aoti_lint.knowledge.deprecated_api import AOT_COMPILE
from aoti_lint.knowledge.references import MIGRATION_GUIDE
from aoti_lint.rules.base import Invalid, Valid
from aoti_lint.rules.deprecated_reference import DeprecatedReference


class DeprecatedAotCompile(DeprecatedReference):
    """
    ## What it does
    Finds every reference to `torch._export.aot_compile`, called or not, under any import form:
    `torch._export.aot_compile`, `import torch._export as te`, `from torch._export import aot_compile as c`,
    `from torch import _export`, `import torch as t`, and imports inside `if`/`try` blocks. A name another module
    of the project binds to it (a re-export in a package's `__init__.py`, a try/except compat module, a star
    import, `te = torch._export` imported from a shared module) is found where it is used, in any file that
    holds a word of some rule (a file that holds none is settled by its bytes); such a call's fix is left to a
    human: migrate the module that binds the name.

    ## Why is this bad?
    Since torch 2.6, `torch._export.aot_compile` logs a deprecation notice and PyTorch points users to
    `torch._inductor.aoti_compile_and_package(torch.export.export(...))`. The old function writes a bare
    `.so` that does not record which device it was compiled for, so nothing stops it from being loaded on
    the wrong device later (a segfault or "pointer ... not registered with any CUDA device"). The new API
    writes a `.pt2` package that stores the compile device (`AOTI_DEVICE_KEY`), and its loader picks it.

    `torch._inductor.aot_compile` (lower level, takes a `GraphModule`) is not deprecated and is not reported.

    ## Fix safety
    `aoti-lint --fix` exports the model with `torch.export.export` and compiles it with
    `aoti_compile_and_package`, moving `options` to `inductor_configs` and an `aot_inductor.output_path`
    of `x.so` to `package_path="x.pt2"`. The fix is safe when the artifact only serves the module itself
    (the path reaches an `aot_load` in the same module, which is migrated with it). It is unsafe when the
    `.so` or its path escapes the module (returned, stored, loaded in another file): the artifact becomes
    a `.pt2` for someone else. The unit of the fix is the artifact flow: the compile, every load of its
    artifact and every constant naming its path, in every file of the run, migrate together (constants are
    rewritten where they are defined) or, when one of them cannot (a C++ runner of the run loads the `.so`,
    a string names it where the fix cannot follow, a file of the project that is not Python names its file:
    a Makefile, a shell script, a YAML or JSON manifest, even in a run given only some files, AOTI101 reports
    a load), none does and each message names the other sites; `aoti-lint flows` shows every flow and its
    verdict. Calls with no faithful equivalent (`disable_constraint_solver=True`, `same_signature=False`, a
    callable `torch.export.export` does not take) are reported with a message saying what to do by hand; see
    `docs/migration.md`. With `target-torch` below 2.6 (torch 2.5 has neither
    new function) no call gets a fix.
    """

    code = "AOTI001"
    name = "deprecated-aot-compile"
    references = (*AOT_COMPILE.references, MIGRATION_GUIDE)
    summary = "`torch._export.aot_compile` is deprecated; use `aoti_compile_and_package`"
    symbol = AOT_COMPILE
    triggers = ((b"aot_compile", b"_export"),)

    VALID = [
        Valid(
            """
            import torch

            ep = torch.export.export(model, (x,))
            torch._inductor.aoti_compile_and_package(ep, package_path="model.pt2")
            """
        ),
        Valid(
            """
            import torch._inductor

            gm = torch.export.export(model, (x,)).module()
            so_path = torch._inductor.aot_compile(gm, (x,))
            """
        ),
        Valid(
            """
            def aot_compile(model, args):
                return model

            aot_compile(model, (x,))
            """
        ),
        Valid(
            """
            try:
                from torch._export import aot_compile
            except ImportError:

                def aot_compile(*args, **kwargs):
                    raise RuntimeError("aot_compile needs torch >= 2.2")

            __all__ = ["aot_compile"]
            """
        ),
        Valid(
            """
            class Exporter:
                def aot_compile(self):
                    pass

                def run(self):
                    self.aot_compile()
            """
        ),
        Valid(
            """
            import torch

            compiled = torch.compile(model)
            compiled.forward.aot_compile((x,))
            """
        ),
        Valid(
            '''
            def build():
                """Old code called torch._export.aot_compile(model, args) here."""
                # torch._export.aot_compile(model, (x,))
                return "torch._export.aot_compile"
            '''
        ),
    ]
    INVALID = [
        Invalid(
            """
            import os

            import torch

            so_path = torch._export.aot_compile(
                model,
                (x,),
                options={"aot_inductor.output_path": os.path.join(os.getcwd(), "model.so"), "max_autotune": True},
            )
            runner = torch._export.aot_load(so_path, "cuda")
            """,
            line=5,
            column=11,
            message_contains="aoti_compile_and_package",
            fixed="""
            import os

            import torch

            so_path = torch._inductor.aoti_compile_and_package(
                torch.export.export(model, (x,)),
                package_path=os.path.join(os.getcwd(), "model.pt2"),
                inductor_configs={"max_autotune": True},
            )
            runner = torch._inductor.aoti_load_package(so_path)
            """,
        ),
        Invalid(
            """
            from torch._export import aot_compile, aot_load

            aot_load(aot_compile(m, (x,)), "cpu")
            """,
            line=3,
            column=10,
            fixed="""
            import torch

            torch._inductor.aoti_load_package(torch._inductor.aoti_compile_and_package(torch.export.export(m, (x,))))
            """,
        ),
        Invalid(
            """
            import torch._export as te

            te.aot_compile(model, (x,))
            """,
            line=3,
            column=1,
        ),
        Invalid(
            """
            from torch._export import aot_compile as compile_so

            compile_so(model, (x,))
            """,
            line=3,
            column=1,
        ),
        Invalid(
            """
            from torch import _export

            _export.aot_compile(model, (x,))
            """,
            line=3,
        ),
        Invalid(
            """
            import torch as t

            fn = t._export.aot_compile
            """,
            line=3,
            column=6,
        ),
        Invalid(
            """
            try:
                from torch._export import aot_compile
            except ImportError:
                aot_compile = None

            aot_compile(model, (x,))
            """,
            line=6,
        ),
        Invalid(
            """
            import torch

            if hasattr(torch._inductor, "aoti_compile_and_package"):
                path = torch._inductor.aoti_compile_and_package(torch.export.export(model, (x,)))
            else:
                from torch._export import aot_compile

                path = aot_compile(model, (x,))
            """,
            line=8,
        ),
        Invalid(
            """
            import torch

            compile_so = torch._export.aot_compile

            def export(model, x):
                return compile_so(model, (x,))
            """,
            line=3,
            column=14,
            count=2,
            message_contains="aot_compile",
        ),
        Invalid(
            """
            import torch
            ep = torch.export.export(model, (x,))
            if not hasattr(torch._inductor, "aoti_compile_and_package"):
                path = torch._export.aot_compile(ep, (x,))
            """,
            line=4,
            message_contains="`ep` is already an `ExportedProgram`, on which the old call fails",
        ),
    ]
