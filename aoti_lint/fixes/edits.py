"""Text edits: applying them to a file's text, and deriving them from a before/after pair."""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable

from aoti_lint.diagnostics import Edit, Position

# Line ends as Python's tokenizer and libcst count them: a lone "\r" ends a line too (old Mac files, mixed
# newlines), so a finding's row must be mapped with the same rule or an edit lands on the wrong text.
_LINE_END = re.compile(r"\r\n?|\n")


def with_last_line_end(code: str, text: str) -> str:
    """``code``, which libcst generated from a module parsed from ``text``, with ``text``'s last line end: libcst
    drops it when it is a lone "\r" (an old Mac file), and a fix would change the file's last line."""
    if text.endswith("\r") and not code.endswith(("\r", "\n")):
        return code + "\r"
    return code


def line_starts(text: str) -> list[int]:
    return [0, *(match.end() for match in _LINE_END.finditer(text))]


def offset(text: str, position: Position, starts: list[int] | None = None) -> int:
    starts = starts if starts is not None else line_starts(text)
    if position.row > len(starts):
        return len(text)
    return min(starts[position.row - 1] + position.column - 1, len(text))


def position(text: str, index: int, starts: list[int] | None = None) -> Position:
    starts = starts if starts is not None else line_starts(text)
    lo, hi = 0, len(starts) - 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if starts[mid] <= index:
            lo = mid
        else:
            hi = mid - 1
    return Position(lo + 1, index - starts[lo] + 1)


def split_lines(text: str) -> list[str]:
    """Lines with their endings, split on "\\n" only (str.splitlines also splits on form feeds and others,
    which would disagree with the row numbers of parsers)."""
    return [line for line in re.split(r"(?<=\n)", text) if line]


def overlaps(a: Iterable[Edit], b: Iterable[Edit]) -> bool:
    """Whether any edit of ``a`` touches the range of any edit of ``b`` (ranges that only meet don't)."""
    for x in a:
        for y in b:
            if x.start < y.end and y.start < x.end:
                return True
            if x.start == y.start and x.end == y.end:
                return True
    return False


def apply_edits(text: str, edits: Iterable[Edit]) -> str:
    """Apply non-overlapping edits (positions refer to ``text`` before any of them)."""
    starts = line_starts(text)
    spans = sorted(
        ((offset(text, e.start, starts), offset(text, e.end, starts), e.content) for e in edits), reverse=True
    )
    result = text
    previous_start = len(text) + 1
    for start, end, content in spans:
        if end > previous_start:
            raise ValueError("overlapping edits")
        result = result[:start] + content + result[end:]
        previous_start = start
    return result


def edits_between(before: str, after: str) -> tuple[Edit, ...]:
    """The smallest set of line-range replacements that turns ``before`` into ``after``."""
    old_lines = split_lines(before)
    new_lines = split_lines(after)
    starts = line_starts(before)
    # The lines both texts start and end with are left out of the comparison: ``SequenceMatcher`` takes time
    # quadratic in the lines it compares where many are alike (thousands of `x = 1`), and a fix changes few.
    head = 0
    limit = min(len(old_lines), len(new_lines))
    while head < limit and old_lines[head] == new_lines[head]:
        head += 1
    tail = 0
    while tail < limit - head and old_lines[-1 - tail] == new_lines[-1 - tail]:
        tail += 1
    old_middle = old_lines[head : len(old_lines) - tail]
    new_middle = new_lines[head : len(new_lines) - tail]
    skipped = sum(len(line) for line in old_lines[:head])
    edits = []
    matcher = difflib.SequenceMatcher(a=old_middle, b=new_middle, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        start = skipped + sum(len(line) for line in old_middle[:i1])
        end = start + sum(len(line) for line in old_middle[i1:i2])
        edits.append(Edit("".join(new_middle[j1:j2]), position(before, start, starts), position(before, end, starts)))
    return tuple(edits)
