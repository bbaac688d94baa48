"""Random valid Python shaped like AOTInductor code, as hypothesis strategies, and a test-only fixing rule.

The generator assembles real import forms of ``torch._export``, deprecated and look-alike references, varied
call arguments, comments, strings, nested functions and classes; then picks newlines, encoding, BOM and
trailing newline. Every source it returns parses (the fuzz tests check that too).
"""

from __future__ import annotations

import ast
import re
from typing import Any

from hypothesis import strategies as st

from aoti_lint.diagnostics import Applicability, Edit, Fix, Position
from aoti_lint.rules.base import AstModule, AstReader, AstRule
from aoti_lint.rules.deprecated_aot_load import DeprecatedAotLoad

IMPORTS = (
    "import torch",
    "import torch._export",
    "import torch._export as te",
    "import torch as t",
    "from torch import _export",
    "from torch._export import aot_compile",
    "from torch._export import aot_load",
    "from torch._export import aot_compile as compile_so, aot_load as load_so",
    "from torch._export import (\n    aot_compile,\n    aot_load,  # both\n)",
    "from torch._inductor import aot_compile as inductor_compile",
    "try:\n    from torch._export import aot_load\nexcept ImportError:\n    aot_load = None",
    "if TYPE_CHECKING:\n    import torch._export as te",
)
REFERENCES = (
    "torch._export.aot_compile",
    "torch._export.aot_load",
    "torch . _export . aot_load",
    "te.aot_compile",
    "te.aot_load",
    "t._export.aot_load",
    "_export.aot_compile",
    "aot_compile",
    "aot_load",
    "compile_so",
    "load_so",
    "inductor_compile",
    "torch._inductor.aot_compile",
    "torch._inductor.aoti_load_package",
    "self.aot_load",
    "mylib.aot_compile",
)
ARGUMENTS = (
    "(model, (x,))",
    "(model, (x,), options={'aot_inductor.output_path': 'model.so'})",
    "('model.so', 'cpu')",
    "(path, device='cuda')",
    "(\n    model,\n    (x, y),  # inputs\n)",
    "(model, \\\n    (x,))",
    "()",
    "(*args, **kwargs)",
    "(f'{name}.so', device)",
)
# Comments and strings that name the API without using it, in characters latin-1 can and cannot encode.
LATIN1_NOISE = ("# caf\u00e9 torch._export.aot_load", "s = 'na\u00efve aot_compile'", "# plain")
UTF8_NOISE = ("# \u20ac \U0001f600 aot_compile", "\u00e9t\u00e9 = '\u65e5\u672c torch._export'", "# plain")
NEWLINES = ("\n", "\r\n", "\r", "mixed")


@st.composite
def _statement(draw: Any, noise: tuple[str, ...]) -> str:
    ref = draw(st.sampled_from(REFERENCES))
    args = draw(st.sampled_from(ARGUMENTS))
    shapes = (
        f"result = {ref}{args}",
        f"{ref}{args}",
        f"fn = {ref}",
        f"# {ref}(model, (x,))",
        f"doc = {ref!r}",
        f"x = 1; y = {ref}{args}",
        f"value = \\\n    {ref}{args}",
        f"loader = lambda m: {ref}(m, (x,))",
        f"paths = [{ref}(p) for p in items if p]",
        f"with ctx() as c:\n    {ref}{args}",
        f"if flag:\n    out = {ref}{args}\nelse:\n    out = None",
        draw(st.sampled_from(noise)),
    )
    return draw(st.sampled_from(shapes))


def _indent(block: str) -> str:
    return "\n".join("    " + line if line.strip() else line for line in block.split("\n"))


@st.composite
def _block(draw: Any, noise: tuple[str, ...], depth: int) -> str:
    statements = draw(st.lists(_statement(noise), min_size=1, max_size=4))
    if depth > 0 and draw(st.booleans()):
        inner = draw(_block(noise, depth - 1))
        name = draw(st.sampled_from(("build", "load", "_helper", "export_model")))
        kind = draw(st.sampled_from(("def", "async def", "class", "decorated")))
        if kind == "class":
            method = f"def {name}(self, model, x):\n{_indent(inner)}\n    return None"
            statements.append(f"class Exporter:\n    '''Wraps {name}.'''\n\n{_indent(method)}")
        elif kind == "decorated":
            statements.append(f"@functools.cache\ndef {name}(model, x=None):\n{_indent(inner)}")
        else:
            statements.append(f'{kind} {name}(model, x, *a, k=1, **kw):\n    """Doc: aot_load."""\n{_indent(inner)}')
    return "\n".join(draw(st.permutations(statements)))


@st.composite
def aoti_sources(draw: Any) -> bytes:
    """A valid Python module as bytes, in an encoding, newline style and BOM state chosen at random."""
    encoding = draw(st.sampled_from(("utf-8", "utf-8", "latin-1")))
    noise = LATIN1_NOISE if encoding == "latin-1" else UTF8_NOISE
    imports = draw(st.lists(st.sampled_from(IMPORTS), max_size=4, unique=True))
    body = draw(_block(noise, depth=2))
    text = "\n\n".join(part for part in ("\n".join(imports), body) if part) + "\n"
    if encoding == "latin-1":
        text = "# -*- coding: latin-1 -*-\n" + text
    newline = draw(st.sampled_from(NEWLINES))
    if newline == "mixed":
        ends = draw(
            st.lists(st.sampled_from(("\n", "\r\n", "\r")), min_size=text.count("\n"), max_size=text.count("\n"))
        )
        pieces = text.split("\n")
        text = "".join(piece + end for piece, end in zip(pieces[:-1], ends, strict=True)) + pieces[-1]
    elif newline != "\n":
        text = text.replace("\n", newline)
    if draw(st.booleans()):
        text = text.rstrip("\r\n")
    data = text.encode(encoding)
    if encoding == "utf-8" and draw(st.booleans()):
        data = b"\xef\xbb\xbf" + data
    return data


_LINE_END = re.compile(r"\r\n?|\n")


def offset_of(text: str, position: Position) -> int:
    """A 1-based (row, column) as a string index, counting line ends as Python's tokenizer does.

    Written apart from ``aoti_lint.fixes.edits`` on purpose: it is the oracle the fix pipeline is checked against.
    """
    starts = [0, *(match.end() for match in _LINE_END.finditer(text))]
    return starts[position.row - 1] + position.column - 1


class RenameDeprecatedLoad(DeprecatedAotLoad, AstRule):
    """Test-only rule: AOTI002 with a safe fix replacing each reference by the new loader's dotted name.

    It drives the real fix pipeline (rounds, edits, encoding, writes) whatever the real codemod does, and its
    edits are known exactly, so a test can tell where the text may change and where it may not.
    """

    code = "AOTI002"
    REPLACEMENT = "torch._inductor.aoti_load_package"

    @classmethod
    def reader(cls, module: AstModule) -> AstReader:
        return _Renames(cls, module)

    @classmethod
    def tidy_after_fix(cls, text: str) -> str:
        """No import tidying: the test's oracle expects exactly the reported spans replaced."""
        return text


class _Renames(AstReader):
    """Each reference to `torch._export.aot_load` (imports aside), with the rename as its fix."""

    node_types = (ast.Name, ast.Attribute)

    def visit(self, node: ast.AST) -> None:
        if type(node) is ast.Name and type(node.ctx) is not ast.Load:
            return
        if "torch._export.aot_load" not in self.module.model.qualified_names(node):
            return
        start, end = self.module.start(node), self.module.end(node)
        edit = Edit(RenameDeprecatedLoad.REPLACEMENT, Position(start.row, start.column), Position(end.row, end.column))
        fix = Fix(Applicability.SAFE, "rename", (edit,))
        self.found.append(self.rule.finding_at(node, self.module, "renamed for a test", fix))
