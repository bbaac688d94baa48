"""``# noqa`` comments (flake8/ruff syntax) and file-level ``# aoti-lint: noqa[: CODES]``."""

from __future__ import annotations

import bisect
import functools
import io
import itertools
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from aoti_lint.diagnostics import Finding

TYPE_CHECKING = False
if TYPE_CHECKING:
    pass

_CODE_LIST = r"[A-Za-z]+[0-9]+(?:[\s,]+[A-Za-z]+[0-9]+)*"


@functools.cache
def _noqa_forms() -> tuple[re.Pattern[str], re.Pattern[str]]:
    """The file-level and the line suppression, compiled for the first text that holds a noqa (a millisecond
    of every run's start otherwise)."""
    return (
        re.compile(rf"#\s*aoti-lint\s*:\s*noqa(?::\s*(?P<codes>{_CODE_LIST}))?", re.IGNORECASE),
        re.compile(rf"#\s*noqa(?::\s*(?P<codes>{_CODE_LIST}))?", re.IGNORECASE),
    )


# Shell, Dockerfile, YAML and .env comments: a `#` at the start of a line or after whitespace.
_HASH_COMMENT = re.compile(r"(?:^|\s)(#.*)$")
# What every suppression holds: a text without it has none, and is not tokenized (a second per MB).
_NOQA = re.compile("noqa", re.IGNORECASE)

ALL = None  # a bare noqa suppresses every code


def _codes(match: re.Match[str]) -> frozenset[str] | None:
    codes = match.group("codes")
    if not codes:
        return ALL
    return frozenset(code.upper() for code in re.split(r"[\s,]+", codes.strip()) if code)


@dataclass
class Suppressions:
    lines: dict[int, frozenset[str] | None] = field(default_factory=dict)
    file_all: bool = False
    file_codes: set[str] = field(default_factory=set)

    def add_comment(self, row: int, comment: str) -> None:
        file_noqa, line_noqa = _noqa_forms()
        file_match = file_noqa.search(comment)
        if file_match:
            codes = _codes(file_match)
            if codes is ALL:
                self.file_all = True
            else:
                self.file_codes |= codes
            return
        match = line_noqa.search(comment)
        if match:
            codes = _codes(match)
            previous = self.lines.get(row, frozenset())
            self.lines[row] = ALL if codes is ALL or previous is ALL else previous | codes

    def suppresses(self, finding: Finding) -> bool:
        if self.file_all or finding.code in self.file_codes:
            return True
        row = finding.noqa_row or finding.start.row
        if row not in self.lines:
            return False
        codes = self.lines[row]
        return codes is ALL or finding.code in codes

    def filter(self, findings: Iterable[Finding]) -> list[Finding]:
        return [finding for finding in findings if not self.suppresses(finding)]


def python_suppressions(text: str) -> Suppressions:
    """Read comments with Python's tokenizer, so ``"# noqa"`` inside a string is not a suppression."""
    result = Suppressions()
    if _NOQA.search(text) is None:
        return result
    import tokenize  # only for a text that holds a suppression

    try:
        # newline=None: a lone "\r" ends a line, as it does for the parser that numbered the findings.
        for token in tokenize.generate_tokens(io.StringIO(text, newline=None).readline):
            if token.type == tokenize.COMMENT:
                result.add_comment(token.start[0], token.string)
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return hash_comment_suppressions(text)
    return result


def indexed_suppressions(text: str, hash_strings: Iterable[tuple[int, int]]) -> Suppressions:
    """``python_suppressions`` of a text ``ast`` has parsed, without the tokenizer (which costs more than the
    parse): a `#` opens a comment, to the line's end, unless it lies in a string literal, whose value then
    holds it (``hash_strings``: the rows of such literals, ``code_index.CodeIndex``). Only the lines holding a
    `noqa` are looked at; where one lies in such a literal, the tokenizer reads the text. (Where the tokenizer
    gives up on a text ast reads, a last line of a backslash and CRLF, its fallback takes a `#` only after
    whitespace; this reads the comment as Python does.)"""
    result = Suppressions()
    row, position, done = 1, 0, 0
    # The literals by first row, and the last row any of the first so many reaches: one bisection per row asked.
    spans = sorted(hash_strings)
    firsts = [first for first, _ in spans]
    reach = list(itertools.accumulate((last for _, last in spans), max))
    for match in _NOQA.finditer(text):
        row += len(_PYTHON_LINE_END.findall(text, position, match.start()))
        position = match.start()
        if row == done:
            continue
        done = row
        opened = bisect.bisect_right(firsts, row)  # the literals starting on or before the row
        if opened and reach[opened - 1] >= row:
            laid_out = _laid_out_suppressions(text)
            return laid_out if laid_out is not None else python_suppressions(text)
        start = max(text.rfind("\n", 0, position), text.rfind("\r", 0, position)) + 1
        end = _PYTHON_LINE_END.search(text, position)
        line = text[start : end.start() if end else len(text)]
        if "#" in line:
            result.add_comment(row, line[line.index("#") :])
    return result


def _laid_out_suppressions(text: str) -> Suppressions | None:
    """``python_suppressions`` of a text ``ast`` has parsed, read from where its string literals lie
    (``text_layout.string_spans``): on a row holding a `noqa`, the first `#` outside them opens the row's comment.
    None where the strings cannot be told, or a lone carriage return ends a line (the lexer knows line feeds
    alone). torch's C++ builder holds a `# noqa` in a docstring that also holds a `#`: tokenizing such a module
    costs more than its `ast` parse."""
    if text.count("\r") != text.count("\r\n"):
        return None
    from aoti_lint.screen.text_layout import string_spans

    spans = string_spans(text)
    if spans is None:
        return None
    openings = [start for start, _ in spans]
    result = Suppressions()
    row, position, done = 1, 0, 0
    for match in _NOQA.finditer(text):
        row += text.count("\n", position, match.start())
        position = match.start()
        if row == done:
            continue
        done = row
        start = text.rfind("\n", 0, position) + 1
        end = text.find("\n", position)
        end = len(text) if end == -1 else end
        hash_at = text.find("#", start, end)
        while hash_at != -1:
            inside = bisect.bisect_right(openings, hash_at) - 1
            if inside < 0 or spans[inside][1] <= hash_at:
                result.add_comment(row, text[hash_at:end].rstrip("\r"))
                break
            hash_at = text.find("#", spans[inside][1], end)
    return result


# Python's line ends, as its tokenizer and parser count rows (a lone "\r" ends a line too).
_PYTHON_LINE_END = re.compile(r"\r\n?|\n")


def python_filter(
    text: str, findings: list[Finding], read: Callable[[str], Suppressions] | None = None
) -> list[Finding]:
    """The findings the text's noqa comments leave (``python_suppressions(text).filter``, or ``read(text)``'s
    where the comments are known otherwise), read only when a comment may apply: a file-level one, or a line
    one on some finding's row. torch's sources hold `# noqa` in most large files, and tokenizing one costs more
    than its `ast` parse."""
    if not findings or _NOQA.search(text) is None:
        return findings
    if _noqa_forms()[0].search(text) is None:
        rows, row, position = set(), 1, 0
        for match in _NOQA.finditer(text):
            row += len(_PYTHON_LINE_END.findall(text, position, match.start()))
            position = match.start()
            rows.add(row)
        if not any((finding.noqa_row or finding.start.row) in rows for finding in findings):
            return findings
    return (read or python_suppressions)(text).filter(findings)


def hash_comment_suppressions(text: str) -> Suppressions:
    """Trailing ``#`` comments of line-based files (shell, Dockerfile, YAML, .env)."""
    result = Suppressions()
    # Rows count "\n" only, as the scanners and edits do (str.splitlines also splits on form feeds).
    for row, line in enumerate(text.split("\n"), start=1):
        match = _HASH_COMMENT.search(line)
        if match:
            result.add_comment(row, match.group(1))
    return result


def cpp_suppressions(data: bytes) -> Suppressions:
    """``// noqa: CODE`` and ``/* noqa */`` comments of C/C++ code, read with tree-sitter (never from strings).

    A file-level ``// aoti-lint: noqa: CODE`` works as ``#`` does in other files. Each line of a block comment
    counts for its own row.
    """
    from aoti_lint.read import cpp

    result = Suppressions()
    for node in cpp.walk(cpp.parse(data).root_node, ("comment",)):
        row = node.start_point[0] + 1
        for offset, line in enumerate(cpp.text(node).split("\n")):
            body = line.strip().removeprefix("//").removeprefix("/*").removesuffix("*/").lstrip("*")
            result.add_comment(row + offset, "#" + body.strip())
    return result
