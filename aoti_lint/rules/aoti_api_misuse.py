"""AOTI003: hand-written or half-migrated calls of the new AOTI API that fail at run time."""

from __future__ import annotations

import re

from aoti_lint.diagnostics import Finding, Position
from aoti_lint.knowledge.references import AOTI_DOCS, MIGRATION_GUIDE
from aoti_lint.rules.aoti_calls import (
    CALLED_FOR_THEMSELVES,
    CALLEE_NAMES,
    CONFIG_DICT_ARGUMENTS,
    PRINTER_KEY,
    CallMisuse,
    package_of_so,
)
from aoti_lint.rules.base import AstModule, AstReader, AstRule, Invalid, Valid, defined_at

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

# The text stage. A name is called (`f(`, `(f)(`, `f[0](`) or imported (`import f`, `f as g`, `f,`, `(f,`) only where
# the next character that is no blank opens or ends brackets, separates, ends the line or opens a comment; where
# it is a `.`, a quote, a backtick or an operator, the name is a mention (most of torch's files that name the API
# do so in docstrings and messages) or a value. A `def`/`class` of the name defines it.
_WORD = re.compile(r"\w")
_AFTER_CALLED_OR_IMPORTED = frozenset("()[,;\\#\r\n")


def _called_or_imported(text: str, name: str) -> bool:
    at = text.find(name)
    while at != -1:
        end = at + len(name)
        if not (at and _WORD.match(text, at - 1)) and not _WORD.match(text, end):
            after = end
            while after < len(text) and text[after] in " \t\f":
                after += 1
            if (
                after == len(text)
                or text[after] in _AFTER_CALLED_OR_IMPORTED
                or (text.startswith("as", after) and not _WORD.match(text, after + 2))
            ) and not defined_at(text, at):
                return True
        at = text.find(name, at + 1)
    return False


def _printer_key_in_string(text: str) -> bool:
    """The printer's key where a string can spell it: after a quote and what of `aot_inductor.` may open it
    (`"aot_inductor.debug_...`, `"aot_inductor." "debug_..."`), not in `config.aot_inductor.debug_...`."""
    token = PRINTER_KEY.rsplit(".", 1)[-1]
    at = text.find(token)
    while at != -1:
        start = at
        while start and (text[start - 1] == "." or _WORD.match(text, start - 1)):
            start -= 1
        if start and text[start - 1] in "\"'":
            return True
        at = text.find(token, at + 1)
    return False


class AotiApiMisuse(AstRule):
    """
    ## What it does
    Finds calls of the current AOTI API that are known to fail at run time, as hand-written or half-migrated
    code often has them:
    - `aoti_compile_and_package` given something that is not an `ExportedProgram` (an `nn.Module`, a
      `.module()` result, a lambda or `functools.partial`);
    - a `package_path` whose file name does not end in `.pt2`;
    - `aot_inductor.output_path` in `inductor_configs`;
    - keyword arguments `aoti_load_package` does not take, such as `device=`;
    - a bare `.so` path handed to `aoti_load_package` or `load_package`, written as a literal, through
      `os.path.join`, `pathlib.Path`, `/`, `+`, an f-string ending in `.so`, `.with_suffix(".so")`, a
      constant of the same module, or a constant imported from another file of the run (a half-migrated flow:
      `MODEL = "model.so"` in `paths.py`, `aoti_load_package(MODEL)` in `serve.py`);
    - an integer for `aot_inductor.debug_intermediate_value_printer` (it must be a string: `"0"`..`"3"`);
    - the old `torch._export.aot_load` applied to a `.pt2` package (in the same path forms).

    Only paths whose ending is certain are reported: a path from `argv`, the environment or an unknown
    variable is left alone.

    ## Why is this bad?
    Each fails when it runs, after a long compile or on the serving host:
    `ValueError: Only ExportedProgram is supported`;
    `AssertionError: Expect package path to be a file ending in .pt2, is None, or is a buffer`;
    `RuntimeError: Please pass in a package path to aot_inductor_compile() instead of setting the
    aot_inductor.output_path config.`; `TypeError: aoti_load_package() got an unexpected keyword argument
    'device'`; `ValueError: 3 is not a valid IntermediateValueDebuggingLevel`. The package loaders read a
    `.pt2` zip archive and fail on a bare `.so` with `RuntimeError: Failed to initialize zip archive`; the old
    loader reads a bare `.so` and cannot open a `.pt2` archive.

    The device of a package is recorded in it at compile time; the loader only takes `device_index=`.
    """

    code = "AOTI003"
    name = "aoti-api-misuse"
    # A package load of a `.so` constant of another file is read from the run's flow summaries (``check_flows``).
    reads_flows = True
    references = (AOTI_DOCS, MIGRATION_GUIDE)
    summary = "A call of the AOTI API that fails at run time"
    triggers = (
        (b"aoti_compile_and_package",),
        (b"load_package",),
        (b"aot_load", b".pt2"),
        (b"debug_intermediate_value_printer",),
    )

    VALID = [
        Valid(
            """
            import torch

            ep = torch.export.export(model, (x,))
            path = torch._inductor.aoti_compile_and_package(
                ep, package_path="model.pt2", inductor_configs={"aot_inductor.debug_intermediate_value_printer": "0"}
            )
            runner = torch._inductor.aoti_load_package(path, device_index=1)
            """
        ),
        Valid(
            """
            import os
            import torch

            def build(program, out_dir):
                pkg = os.path.join(out_dir, "model.pt2")
                return torch._inductor.aoti_compile_and_package(program, package_path=pkg)
            """
        ),
        Valid(
            """
            import os
            import sys
            from torch._inductor import aoti_load_package

            runner = aoti_load_package(sys.argv[1])
            other = aoti_load_package(os.path.join(out_dir, name))
            third = aoti_load_package(os.path.join(out_dir, "model.pt2"))
            """
        ),
        Valid(
            """
            import torch

            torch._inductor.config.aot_inductor.debug_intermediate_value_printer = "2"
            so = torch._export.aot_load("model.so", "cpu")
            """
        ),
        Valid(
            """
            import torch

            # The keyword goes to the loaded model's call, not to `aoti_load_package`.
            out = torch._inductor.aoti_load_package("model.pt2")(x, device="cuda")
            """
        ),
    ]
    INVALID = [
        Invalid(
            """
            import torch

            model = MyModel().eval()
            path = torch._inductor.aoti_compile_and_package(model.module(), package_path="model.pt2")
            """,
            line=4,
            column=49,
            message_contains="ExportedProgram",
        ),
        Invalid(
            """
            import torch

            model = torch.nn.Linear(4, 4)
            path = torch._inductor.aoti_compile_and_package(model, package_path="model.pt2")
            """,
            line=4,
            column=49,
        ),
        Invalid(
            """
            import torch

            torch._inductor.aoti_compile_and_package(ep, package_path="model.so")
            """,
            line=3,
            column=59,
            message_contains=".pt2",
        ),
        Invalid(
            """
            import torch

            torch._inductor.aoti_compile_and_package(ep, inductor_configs={"aot_inductor.output_path": "m.so"})
            """,
            line=3,
            message_contains="package_path",
        ),
        Invalid(
            """
            from torch._inductor import aoti_load_package

            runner = aoti_load_package("model.pt2", device="cuda:0")
            """,
            line=3,
            column=41,
            message_contains="device_index",
        ),
        Invalid(
            """
            import torch

            torch._inductor.aoti_compile_and_package(
                ep, inductor_configs={"aot_inductor.debug_intermediate_value_printer": 3}
            )
            """,
            line=4,
            message_contains='"3"',
        ),
        Invalid(
            """
            import os
            from torch._inductor import aoti_load_package

            MODEL = os.path.join(os.environ["ARTIFACTS"], "model.so")
            runner = aoti_load_package(MODEL)
            other = aoti_load_package(f"{out_dir}/encoder.so", device_index=0)
            """,
            line=5,
            column=28,
            count=2,
            message_contains="not a bare `.so` (`model.so`)",
        ),
        Invalid(
            """
            import os
            import torch

            runner = torch._export.aot_load(os.path.join(out_dir, "model.pt2"), "cpu")
            """,
            line=4,
            column=33,
            message_contains="cannot read a `.pt2`",
        ),
        Invalid(
            """
            import torch

            path = torch._inductor.aoti_compile_and_package(ep, package_path="model.pt2")
            runner = torch._export.aot_load(path, "cuda")
            """,
            line=4,
            column=33,
            message_contains="cannot read a `.pt2`",
        ),
    ]

    @classmethod
    def could_match_python(cls, text: str) -> bool:
        # Every check but the printer's is on a call of the API; the printer's key is a dict's, in a string.
        return any(_called_or_imported(text, name) for name in CALLED_FOR_THEMSELVES) or _printer_key_in_string(text)

    @classmethod
    def could_match_code(cls, code: Any) -> bool:
        # Every check is on a call of the API, reached by its name or by a name imported from it; the config
        # dict checks need the dict passed by keyword. A relative import never names the API (libcst resolves
        # `from .package import load_package` to `.package.load_package`): a name it binds counts once called.
        reached = code.called | {module.rsplit(".", 1)[-1] for module in code.imported_modules}
        reached |= {name for module, name in code.imported_names if not module.startswith(".")}
        if reached & CALLED_FOR_THEMSELVES:
            return True
        return bool(code.keywords & set(CONFIG_DICT_ARGUMENTS.values())) and bool(reached & CALLEE_NAMES)

    @classmethod
    def reader(cls, module: AstModule) -> AstReader:
        return CallMisuse(cls, module)

    @classmethod
    def check_flows(cls, summaries: Sequence[Any]) -> list[Finding]:
        """A package load of a path that is a `.so` constant of another file of the run (a half-migrated flow:
        `MODEL = "model.so"` in paths.py, `aoti_load_package(MODEL)` in serve.py). A path written in the load's own
        file is read by ``_check_package_path``."""
        from aoti_lint.flows.flow_summary import ArtifactResolver

        resolve = ArtifactResolver(summaries)
        found = []
        for summary in summaries:
            for load in summary.loads:
                if load.api == "aot_load" or load.artifact is not None or load.artifact_ref is None:
                    continue
                path = resolve(None, load.artifact_ref)
                if path is not None and path.endswith(".so"):
                    name = load.artifact_ref.rpartition(".")[2]
                    message = package_of_so(load.api, path) + f"; `{name}` holds that path"
                    span = load.span
                    start, end = Position(span.row, span.column), Position(span.end_row, span.end_column)
                    found.append(cls.make_finding(summary.path, start, end, message))
        return found
