"""The flow summary of a file that only names a `.so` file in strings, read from ``ast`` without libcst.

Such a file calls and imports no AOTI API and binds no module constant to an artifact path (the device-flow
rules' ``mentions_only``), so its full summary (``analysis.module_flow``) holds no compile, load, call, constant or
migration site: only ``so_mentions``, and ``path_arguments`` (`.so` paths passed to some function). The
mentions are read here exactly as libcst reads them; a string whose position libcst would tell otherwise (an
implicit concatenation) sends the file to libcst. A mention inside an f-string is kept by name only
(``unplaced_mentions``): its place matters only if the run's plan asks about that name, and then the run
summarises the file with libcst. Path arguments matter only when a function of
the run loads its parameter with a deprecated call: the summary lists the names the file calls, and the run
summarises it in full when one of them is such a function (``migration_flow.incomplete``).
"""

from __future__ import annotations

import ast
import io
import posixpath
import tokenize
from pathlib import Path

from aoti_lint.analysis.flow_summary import FlowSummary
from aoti_lint.pyast import source_lines, source_segment, walk


def _literals(segment: str) -> list[tuple[str, int, int]] | None:
    """The string literals a constant's source is made of (several when implicitly concatenated), as
    (token, row, column) relative to the segment, columns in characters; None when it does not tokenize."""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(segment).readline))
    except (tokenize.TokenError, SyntaxError):
        return None
    return [(token.string, *token.start) for token in tokens if token.type == tokenize.STRING]


def _mention(value: str) -> str | None:
    """The `.so` file name a string names, as ``analysis.module_flow`` reads it."""
    value = value.strip()
    return posixpath.basename(value) if value.endswith(".so") and "\n" not in value else None


def light_summary(
    path: Path, display_path: str, text: str, tree: ast.Module, callees: frozenset[str]
) -> FlowSummary | None:
    """The summary libcst would give, or None when some mention cannot be placed exactly without it."""
    inside_fstrings: set[int] = set()
    unplaced: set[str] = set()
    lines = source_lines(text)
    nodes = list(walk(tree))
    for node in nodes:
        if type(node) is ast.JoinedStr:
            parts = [part for part in walk(node) if type(part) is ast.Constant]
            inside_fstrings.update(id(part) for part in parts)
            named = [part.value for part in parts if type(part.value) is str and ".so" in part.value]
            if not named:
                continue
            # libcst reads an f-string's raw text (escapes and doubled braces as written), and each piece of a
            # concatenation apart, which ``ast`` merges: then even the name it reads is not known here.
            segment = source_segment(lines, node)
            pieces = _literals(segment)
            if pieces is None or len(pieces) != 1 or any(mark in segment for mark in ("\\", "{{", "}}")):
                unplaced.add("*")
            else:
                unplaced.update(name for name in map(_mention, named) if name is not None)
    found: list[tuple[str, int, int]] = []
    for node in nodes:
        if type(node) is not ast.Constant or type(node.value) is not str or id(node) in inside_fstrings:
            continue
        if ".so" not in node.value:
            continue
        line = lines[node.lineno - 1]
        column = len(line.encode("utf-8")[: node.col_offset].decode("utf-8", "replace"))
        pieces = _literals(source_segment(lines, node))
        if pieces is None:
            return None
        for token, row, offset in pieces:
            try:
                value = ast.literal_eval(token)  # one string literal: evaluates nothing else
            except (ValueError, SyntaxError):
                return None
            name = _mention(value) if type(value) is str else None
            if name is not None:
                found.append((name, node.lineno + row - 1, (column if row == 1 else 0) + offset + 1))
    found.sort(key=lambda mention: (mention[1], mention[2]))
    return FlowSummary(
        path=display_path,
        directory=str(path.resolve().parent),
        so_mentions=tuple(found),
        callees=callees,
        unplaced_mentions=frozenset(unplaced),
    )
