"""Path expressions as the migration writes them: the string literal that carries a path's file name, the `.so`
file name it ends with, the same path with its suffix swapped as the codemod writes it (``codemods.expressions``),
and where a string names a `.so` file.

A string's text is read as written where it is one literal; pieces of an implicit concatenation (`"a" "b.so"`),
which ``ast`` merges, and an f-string's parts where ``ast`` may place them elsewhere (before Python 3.12) are read
from their values, and a path whose text is not known is not rewritten."""

from __future__ import annotations

import ast
import io
import posixpath
import tokenize

from aoti_lint.flows.evaluator import UNLIKE_WRITTEN, ModuleEvaluator
from aoti_lint.model.syntax_tree import source_segment

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class PathExpressions(ModuleEvaluator):
    """The text of a module's path expressions and string literals, as the migration plan reads them."""

    _strings: list[str] | None = None

    @staticmethod
    def ordered_arguments(call: ast.Call) -> list[tuple[str, str | None, ast.expr]]:
        """The call's arguments in the order written: (star, keyword, value)."""
        items: list[tuple[Any, str, str | None, ast.expr]] = []
        for arg in call.args:
            items.append((arg, "*", None, arg.value) if type(arg) is ast.Starred else (arg, "", None, arg))
        for item in call.keywords:
            items.append((item, "" if item.arg else "**", item.arg, item.value))
        items.sort(key=lambda entry: (entry[0].lineno, entry[0].col_offset))
        return [(star, keyword, value) for _, star, keyword, value in items]

    def text_between(self, start: tuple[int, int], end: tuple[int, int]) -> str:
        """The source between two (line, byte offset) places."""
        (first, start_offset), (last, end_offset) = start, end
        if first == last:
            return self.lines[first - 1].encode()[start_offset:end_offset].decode()
        head = self.lines[first - 1].encode()[start_offset:].decode()
        tail = self.lines[last - 1].encode()[:end_offset].decode()
        return "".join([head, *self.lines[first : last - 1], tail])

    # -- string literals ---------------------------------------------------------------------------

    def string_values(self) -> list[str]:
        """The values of the module's plain string literals, each piece of an
        implicit concatenation apart, an f-string's text too."""
        if self._strings is None:
            found = []
            for node in self.nodes:
                if type(node) is not ast.Constant or type(node.value) not in (str, bytes):
                    continue
                if type(self.parent(node)) is ast.JoinedStr:
                    found.append(str(node.value))  # an f-string's text
                    continue
                tokens = None if id(node) in self.in_fstring else literal_tokens(self.code(node))
                if tokens is None:
                    values: list[object] = [node.value]
                else:
                    values = [ast.literal_eval(token) for token, _, _ in tokens]
                found += [value for value in values if type(value) is str]
            self._strings = found
        return self._strings

    def suffix_literal(self, node: ast.expr | None) -> ast.expr | None:
        """The string literal that carries a path's file name ("x.so" in
        os.path.join(d, "x.so"))."""
        if type(node) is ast.Call:
            arguments = self.ordered_arguments(node)
            return self.suffix_literal(arguments[-1][2]) if arguments else node
        if type(node) is ast.BinOp:
            return self.suffix_literal(node.right)
        return node

    def so_name(self, node: ast.expr | None) -> str | None:
        """The `.so` file name a path expression ends with: "m.so", join(d, "m.so"), d / "m.so", f"{d}/m.so"."""
        if node is None:
            return None
        tail = self.suffix_literal(node)
        if type(tail) is ast.JoinedStr and tail.values:
            tail = tail.values[-1]  # an f-string's text after its last `{}`
        if type(tail) is ast.Constant and type(tail.value) is str and tail.value.strip().endswith(".so"):
            return posixpath.basename(tail.value.strip())
        return None

    def replaced_suffix(self, node: ast.expr | None, old: str = ".so", new: str = ".pt2") -> str | None:
        """``codemods.expressions.replace_suffix``, as the text the codemod writes: the same path expression with its
        literal file suffix ``old`` swapped for ``new``, or None."""
        if node is None:
            return None
        kind = type(node)
        if kind is ast.Constant:
            value = node.value  # type: ignore[attr-defined]
            if type(value) is not str or not value.endswith(old):
                return None
            opening = self.as_written(node)  # type: ignore[arg-type]
            raw = self.code(node)
            if opening is None or "\\" in raw:
                return None
            quote = opening.group(1)
            body = raw[: -len(quote)]
            return body[: -len(old)] + new + quote if body.endswith(old) else None
        if kind is ast.Call:
            arguments = self.ordered_arguments(node)  # type: ignore[arg-type]
            if not arguments or arguments[-1][0] or arguments[-1][1] is not None:
                return None
            last = arguments[-1][2]
            replaced = self.replaced_suffix(last, old, new)
            func = node.func  # type: ignore[attr-defined]
            if replaced is None or not (type(func) is ast.Attribute and func.attr == "join"):
                return None
            return self._with(node, last, replaced)
        if kind is ast.BinOp and type(node.op) is ast.Div:  # type: ignore[attr-defined]
            right = node.right  # type: ignore[attr-defined]
            replaced = self.replaced_suffix(right, old, new)
            return None if replaced is None else self._with(node, right, replaced)
        if kind is ast.JoinedStr:
            # `f"{d}/m.so"`: its text after the last `{}`, where written as its value is
            parts = node.values  # type: ignore[attr-defined]
            opening = self.as_written(node)  # type: ignore[arg-type]
            raw = self.code(node)
            if not parts or type(parts[-1]) is not ast.Constant or opening is None:
                return None
            quote = opening.group(1)
            tail = str(parts[-1].value)
            if not tail.endswith(old) or not raw.endswith(tail + quote) or any(m in tail for m in UNLIKE_WRITTEN):
                return None
            return raw[: -len(old) - len(quote)] + new + quote
        return None

    def _with(self, whole: ast.expr, part: ast.expr, text: str) -> str:
        """The source of ``whole`` with ``part`` written as ``text`` (parentheses around ``part`` stay, as the codemod's
        rewrite keeps them)."""
        head = self.text_between((whole.lineno, whole.col_offset), (part.lineno, part.col_offset))
        end = (whole.end_lineno, whole.end_col_offset)
        tail = self.text_between((part.end_lineno, part.end_col_offset), end)  # type: ignore[arg-type]
        return head + text + tail

    def so_mentions(self) -> tuple[tuple[str, int, int], ...]:
        """Where a string names a `.so` file, each piece of a concatenation apart: (file name, row, column)."""
        if not self.so_strings:
            return ()
        found = []
        for node in self.so_strings:
            placed = None if id(node) in self.in_fstring else placed_mentions(node, self.lines)
            if placed is None:
                # Its text is not known as written (inside an f-string's `{}`, or an f-string's part): its value
                # names the `.so`, at the string's place.
                value = node.value if isinstance(node.value, str) else str(node.value)
                text = value.strip()
                if text.endswith(".so") and "\n" not in text:
                    found.append((posixpath.basename(text), *self._text_place(node, value)))
                continue
            found.extend(placed)
        return tuple(sorted(found, key=lambda mention: (mention[1], mention[2])))

    def _text_place(self, node: ast.Constant, value: str) -> tuple[int, int]:
        """Where an f-string's text part stands, (row, column): ``ast`` may place it at the f-string's start."""
        outer = self.parent(node)
        if type(outer) is ast.JoinedStr and id(outer) not in self.in_fstring and outer.lineno == outer.end_lineno:
            line = self.lines[outer.lineno - 1]
            start = len(line.encode()[: outer.col_offset].decode("utf-8", "replace"))
            at = self.code(outer).find(value)
            if at >= 0 and self.code(outer).count(value) == 1:
                return outer.lineno, start + at + 1
        line = self.lines[node.lineno - 1]
        return node.lineno, len(line.encode()[: node.col_offset].decode("utf-8", "replace")) + 1


def string_value(node: ast.AST | None) -> str | None:
    """A string literal's value (several pieces joined), else None."""
    if type(node) is ast.Constant and type(node.value) is str:
        return node.value
    return None


def literal_tokens(segment: str) -> list[tuple[str, int, int]] | None:
    """The string literals a constant's source is made of (several when implicitly concatenated), as
    (token, row, column) relative to the segment, columns in characters; None when it does not tokenize."""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(segment).readline))
    except (tokenize.TokenError, SyntaxError):
        return None
    return [(token.string, *token.start) for token in tokens if token.type == tokenize.STRING]


def _mention(value: str) -> str | None:
    """The `.so` file name a string names, as ``rules.module_flow`` reads it."""
    value = value.strip()
    return posixpath.basename(value) if value.endswith(".so") and "\n" not in value else None


def placed_mentions(node: ast.Constant, lines: list[str]) -> list[tuple[str, int, int]] | None:
    """The `.so` mentions of a string constant outside any f-string, each piece of a concatenation apart: (name, row,
    column), one per piece of an implicit concatenation that names one; None where its pieces do not tokenize."""
    line = lines[node.lineno - 1]
    column = len(line.encode("utf-8")[: node.col_offset].decode("utf-8", "replace"))
    pieces = literal_tokens(source_segment(lines, node))
    if pieces is None:
        return None
    found = []
    for token, row, offset in pieces:
        try:
            value = ast.literal_eval(token)  # one string literal: evaluates nothing else
        except (ValueError, SyntaxError):
            return None
        name = _mention(value) if type(value) is str else None
        if name is not None:
            found.append((name, node.lineno + row - 1, (column if row == 1 else 0) + offset + 1))
    return found
