"""AOTI005: an `aot_compile` whose `aot_inductor.output_path` is a relative path."""

from __future__ import annotations

import ast
import posixpath
import re

from aoti_lint.knowledge.deprecated_api import ABSOLUTE_PATH_FUNCTIONS, AOT_COMPILE, OUTPUT_PATH_OPTION
from aoti_lint.knowledge.references import AOTI_DOCS, MIGRATION_GUIDE
from aoti_lint.model.calls import argument
from aoti_lint.model.name_index import string
from aoti_lint.rules.base import AstModule, AstReader, AstRule, Invalid, Valid

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from aoti_lint.model.semantic import SemanticModel

# The compiles that take `options` and link the library at `aot_inductor.output_path`: the deprecated one calls the
# other, which is not deprecated (it takes a GraphModule).
_COMPILES = frozenset({AOT_COMPILE.qualified_name, "torch._inductor.aot_compile"})
# The key written as a dict's key: a finding needs one (torch's own modules read the key with `.get(...)`).
_KEY = re.compile(r"""output_path['"]\s*:""")


class RelativeOutputPath(AstRule):
    """
    ## What it does
    Finds `torch._export.aot_compile` and `torch._inductor.aot_compile` calls whose `options` set
    `aot_inductor.output_path` to a relative path: a string literal, or `os.path.join` of literals whose first
    part is relative.

    ## Why is this bad?
    The library is linked in a temporary build directory under the Inductor cache, with the output path as it is
    given. Checked on torch 2.13 (CPU): with a bare file name (`"model.so"`) the compile returns `"model.so"`, but
    no file is at that path afterwards (nor anywhere once the build directory is cleaned), and
    `aot_load("model.so", ...)` fails with "Error in dlopen: model.so: cannot open shared object file: No such
    file or directory"; with a directory part (`"out/model.so"`) the compile itself fails:
    `CppCompileError: ... ld: cannot open output file out/model.so: No such file or directory`. Code that passes
    tests on one machine through a leftover file breaks on a clean one.

    ## Known problems
    A path the rule cannot read as a literal (a variable, an f-string, a function's result) is not reported, nor a
    key written as two concatenated strings (`"aot_inductor." "output_path"`).

    ## Fix safety
    No automatic fix: make the path absolute (`os.path.abspath("model.so")`, `os.path.join(os.getcwd(), ...)`),
    or migrate to `aoti_compile_and_package(..., package_path=...)` (AOTI001), whose `package_path` is relative
    to the working directory.
    """

    code = "AOTI005"
    name = "relative-output-path"
    summary = "`aot_compile` with a relative `aot_inductor.output_path`: the library never appears there"
    references = (*AOT_COMPILE.references, AOTI_DOCS, MIGRATION_GUIDE)
    triggers = ((b"aot_compile", b"output_path"),)

    VALID = [
        Valid(
            """
            import os
            import torch
            torch._export.aot_compile(model, (x,), options={"aot_inductor.output_path": "/srv/models/model.so"})
            torch._export.aot_compile(model, (x,), options={"aot_inductor.output_path": os.path.abspath("model.so")})
            torch._export.aot_compile(
                model, (x,), options={"aot_inductor.output_path": os.path.join(os.getcwd(), "model.so")}
            )
            """
        ),
        Valid(
            """
            import torch
            torch._export.aot_compile(model, (x,), options={"aot_inductor.output_path": path})
            torch._inductor.aoti_compile_and_package(ep, package_path="model.pt2")
            """
        ),
    ]
    INVALID = [
        Invalid(
            """
            import torch
            so_path = torch._export.aot_compile(model, (x,), options={"aot_inductor.output_path": "model.so"})
            runner = torch._export.aot_load(so_path, "cpu")
            """,
            line=2,
            column=87,
            message_contains="`model.so` is relative",
        ),
        Invalid(
            """
            import os
            import torch._inductor
            gm = torch.export.export(model, (x,)).module()
            torch._inductor.aot_compile(gm, (x,), options={"aot_inductor.output_path": os.path.join("out", "m.so")})
            """,
            line=4,
            message_contains="ld: cannot open output file",
        ),
        Invalid(
            """
            from torch._export import aot_compile
            options = {"aot_inductor.output_path": "build/model.so", "max_autotune": True}
            aot_compile(model, (x,), options=options)
            """,
            line=2,
        ),
    ]

    @classmethod
    def could_match_python(cls, text: str) -> bool:
        return _KEY.search(text) is not None

    @classmethod
    def could_match_code(cls, code: Any) -> bool:
        # `options` is keyword-only in both compiles: a module that never passes it to a call of that name cannot
        # hold a finding (torch's own modules define `aot_compile` and spell the key without calling it so).
        return "aot_compile" in code.reached and "options" in code.keywords

    @classmethod
    def reader(cls, module: AstModule) -> AstReader:
        return _OutputPaths(cls, module)


class _OutputPaths(AstReader):
    """The `aot_inductor.output_path` a compile's `options` set, where it is relative."""

    node_types = (ast.Call,)

    def visit(self, node: ast.AST) -> None:
        model = self.module.model
        if not model.may_name(node.func, {"aot_compile"}):  # type: ignore[attr-defined]
            return
        if not model.qualified_names(node.func) & _COMPILES:  # type: ignore[attr-defined]
            return
        options = argument(node, None, "options")  # type: ignore[arg-type]
        if type(options) is ast.Name:
            options = model.single_value(options)
        if type(options) is not ast.Dict:
            return
        for key, value in zip(options.keys, options.values, strict=True):
            relative = _relative(model, value) if string(key) == OUTPUT_PATH_OPTION else None
            if relative is not None:
                self.found.append(self.rule.finding_at(value, self.module, _message(relative)))


def _relative(model: SemanticModel, path: ast.expr) -> str | None:
    """The path a literal (or `os.path.join` of literals) names when it is relative; None otherwise."""
    literal = string(path)
    if literal is None and type(path) is ast.Call and "os.path.join" in model.qualified_names(path.func):
        parts = [string(arg) for arg in path.args]
        first = path.args[0] if path.args else None
        if type(first) is ast.Call and model.qualified_names(first.func) & ABSOLUTE_PATH_FUNCTIONS:
            return None
        if not parts or None in parts or path.keywords:
            return None
        literal = posixpath.join(*[part for part in parts if part is not None])
    if literal is None or not literal or literal.startswith(("/", "~")) or "\\" in literal:
        return None
    return literal


def _message(path: str) -> str:
    what = (
        "the compile fails (`ld: cannot open output file`)"
        if "/" in path
        else "the compile returns the name, but no file is there (`cannot open shared object file` at load)"
    )
    return (
        f"`aot_inductor.output_path` `{path}` is relative: the library is linked in a temporary build directory, "
        f"so {what}; make it absolute"
    )
