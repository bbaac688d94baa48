"""Where a Python text's strings and top-level statements lie, read without parsing it: a small linear lexer
for the text stages that parse only part of a module (``kernel_regions``) or none of it (the device-flow screen).

Where a top-level statement starts: a line that begins in column 0, outside every string (``string_spans``), and
not with a closing bracket, a comment or ``else``/``elif``/``except``/``finally``; a decorator's statement runs on
to its ``def`` or ``class``. Such a line may still lie inside a bracket or after a line-continuing backslash: a
reader that parses a statement so found learns it then (it does not parse). A string this reading cannot end (an
f-string nesting its own quotes, as Python 3.12 allows) gives None, and the reader falls back to the whole tree.
``tests/test_kernel_regions.py`` compares the strings with the tokenizer's on every Python file of the repository.
Where the C extension is built, the same lexer and the same reading of the statement starts run there
(``token_scan.string_lexer``, ``token_scan.statement_reader``; ``tests/test_token_scan.py`` compares both).
"""

from __future__ import annotations

import bisect
import functools
import re
import sys

from aoti_lint.screen.token_scan import statement_reader, string_lexer

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# A comment, or a string literal from its quote (the prefix letters are read back from before it); after each form
# of string, its bare opening quote: a string this reading cannot end (one quote for a one-line string, three for
# a long one, then no closing quote). Every alternative starts with its own character, which ``re`` skips to.
TOKEN_FORM = (
    r"#[^\n]*"
    r'|"""(?:[^"\\]|\\.|"(?!""))*"""|"""'
    r"|'''(?:[^'\\]|\\.|'(?!''))*'''|'''"
    r'|"(?:[^"\\\n]|\\.)*"|"'
    r"|'(?:[^'\\\n]|\\.)*'|'"
)
# The same, taking a run of a string's plain characters at once and never giving any back (possessive quantifiers,
# Python 3.11): half the time over torch's sources. Without them a run taken at once would be an exponential
# backtrack on a string that does not end, so Python 3.10 reads a character a step.
POSSESSIVE_TOKEN_FORM = (
    r"#[^\n]*+"
    r'|"""(?:[^"\\]++|\\.|"(?!""))*+"""|"""'
    r"|'''(?:[^'\\]++|\\.|'(?!''))*+'''|'''"
    r'|"(?:[^"\\\n]++|\\.)*+"|"'
    r"|'(?:[^'\\\n]++|\\.)*+'|'"
)
_TOKEN = re.compile(POSSESSIVE_TOKEN_FORM if sys.version_info >= (3, 11) else TOKEN_FORM, re.DOTALL)
_PREFIX = re.compile(r"(?<![\w])[A-Za-z]{1,2}\Z")
# A line that may start a top-level statement: its first character is none of whitespace (form feeds included,
# which Python reads as indentation), a comment's or a closing bracket's.
_LINE_START = re.compile(r"^[^\s#)\]}]", re.MULTILINE)
_CONTINUATION = re.compile(r"(?:else|elif|except|finally)(?!\w)")
_DEFINITION = re.compile(r"(?:def|class|async)(?!\w)")


def string_prefix(text: str, start: int) -> str:
    """The prefix letters (``rb``, ``f``, ...) of the string literal whose quote is at ``start``."""
    prefix = _PREFIX.search(text, max(start - 3, 0), start)
    return prefix.group() if prefix is not None else ""


def string_spans(text: str) -> list[tuple[int, int]] | None:
    """The (start, end) offsets of every string literal, from its opening quote; None where one cannot be
    ended by Python 3.11's rules or is an f-string whose braces do not pair up (one that nests its own quotes,
    as Python 3.12 allows, reads so)."""
    strings = _strings(text)
    return None if strings is None else strings[0]


# One entry: the text stages of several rules read the same text in a row (the device flow's, the `.so` mentions',
# the kernels'). The lists are shared: their readers never change them.
@functools.lru_cache(maxsize=1)
def _strings(text: str) -> tuple[list[tuple[int, int]], list[str]] | None:
    """``string_spans`` and each string's prefix letters (``string_prefix``), in one pass over the text."""
    lexer = string_lexer()
    return lexer(text) if lexer is not None else _read_strings(text)


def _read_strings(text: str) -> tuple[list[tuple[int, int]], list[str]] | None:
    """``_strings`` in Python: the lexer's pattern (``_TOKEN``), a match at a time."""
    spans: list[tuple[int, int]] = []
    prefixes: list[str] = []
    for token in _TOKEN.finditer(text):
        start, end = token.span()
        quote = text[start]
        if quote == "#":
            continue
        if end - start == 1 or (end - start == 3 and text[start + 1] == quote == text[start + 2]):
            return None  # an opening quote alone: the string does not end
        prefix = ""
        before = text[start - 1] if start else ""
        if ("a" <= before <= "z" or "A" <= before <= "Z") or not before.isascii():  # a letter may be a prefix
            prefix = string_prefix(text, start)
            if ("f" in prefix or "F" in prefix) and not _fields_close(text, start, end):
                return None
        spans.append((start, end))
        prefixes.append(prefix)
    return spans, prefixes


_BRACE = re.compile(r"[{}]")


def _fields_close(text: str, start: int, end: int) -> bool:
    """Whether the replacement fields of the f-string at ``text[start:end]`` all close (``{{`` and ``}}``
    outside a field are literal braces; a format spec's fields nest)."""
    depth, skip = 0, -1
    for brace in _BRACE.finditer(text, start, end):
        at = brace.start()
        if at == skip:
            continue
        if depth == 0 and text.startswith(brace.group() * 2, at):
            skip = at + 1  # a literal brace, written twice
        elif brace.group() == "{":
            depth += 1
        elif depth == 0:
            return False
        else:
            depth -= 1
    return depth == 0


def statement_starts(text: str, spans: list[tuple[int, int]]) -> list[int]:
    """The offsets where a top-level statement may start, the text's start first (what comes before the first
    statement: comments, or lines Python rejects), then the text's end. ``spans``: the text's strings."""
    reader = statement_reader()
    if reader is not None:
        found = reader(text, spans, False)
        assert found is not None  # without brackets to pair up, there is an answer
        return found
    return _statement_starts(text, spans)


def _statement_starts(text: str, spans: list[tuple[int, int]], top_level: Any = None) -> list[int]:
    """``statement_starts`` in Python. ``top_level(offset)``: whether a line starting in column 0 there lies outside
    brackets and continues no line (``top_level_starts``)."""
    openings = [start for start, _ in spans]
    starts: list[int] = [0]
    decorated = False
    for line in _LINE_START.finditer(text):
        at = line.start()
        inside = bisect.bisect_right(openings, at) - 1
        if inside >= 0 and openings[inside] < at < spans[inside][1]:
            continue  # a line of a string
        if _CONTINUATION.match(text, at) or (top_level is not None and not top_level(at)):
            continue
        if decorated:
            if text[at] == "@":
                continue
            if _DEFINITION.match(text, at):
                decorated = False
                continue
        decorated = text[at] == "@"
        if at:
            starts.append(at)
    starts.append(len(text))
    return starts


_BRACKET_OR_COMMENT = re.compile(r"[()\[\]{}]|#[^\r\n]*")
_DEPTH = {"(": 1, "[": 1, "{": 1, ")": -1, "]": -1, "}": -1}


def top_level_starts(text: str, spans: list[tuple[int, int]]) -> list[int] | None:
    """``statement_starts`` less those inside brackets or after a line-continuing backslash: the offsets where a
    top-level statement starts, the text's start first, then the text's end. None where the brackets outside
    strings and comments do not pair up, a form feed may indent a line (Python reads it as column 0), or a lone
    carriage return ends one (``statement_starts`` knows line feeds alone)."""
    if "\f" in text or text.count("\r") != text.count("\r\n"):
        return None
    reader = statement_reader()
    if reader is not None:
        return reader(text, spans, True)
    brackets: list[int] = []  # where the depth changes, and the depth after
    depths: list[int] = []
    comments: list[int] = []  # where each comment ends
    depth, position = 0, 0
    for start, end in [*spans, (len(text), len(text))]:
        for found in _BRACKET_OR_COMMENT.finditer(text, position, start):
            mark = found.group()
            if mark[0] == "#":
                comments.append(found.end())
                continue
            depth += _DEPTH[mark]
            if depth < 0:
                return None
            brackets.append(found.start())
            depths.append(depth)
        position = end

    def top_level(start: int) -> bool:
        before = bisect.bisect_left(brackets, start) - 1
        if before >= 0 and depths[before]:
            return False  # inside brackets
        end = start - 2 if text.startswith("\r\n", start - 2) else start - 1  # where the line before ends
        if start and text[end - 1 : end] == "\\":  # (the first line continues none)
            at = bisect.bisect_left(comments, end)
            return at < len(comments) and comments[at] == end  # the backslash ends a comment, or continues the line
        return True

    return _statement_starts(text, spans, top_level)


class Places:
    """What lies at an offset of a text whose strings are known (``string_spans``): a string literal's text, a
    comment, or code (an f-string counts as code too: its fields are)."""

    @staticmethod
    @functools.lru_cache(maxsize=1)
    def of(text: str) -> Places | None:
        """The text's places, shared by the stages that ask in a row; None where its strings cannot be told."""
        strings = _strings(text)
        return None if strings is None else Places(text, *strings)

    def __init__(self, text: str, spans: list[tuple[int, int]], prefixes: list[str] | None = None) -> None:
        self.text = text
        self.spans = spans
        self.prefixes = [string_prefix(text, start) for start, _ in spans] if prefixes is None else prefixes
        self.openings = [start - len(prefix) for (start, _), prefix in zip(spans, self.prefixes, strict=True)]
        self._top_level: list[int] | None = None
        self._top_level_read = False

    def top_level_starts(self) -> list[int] | None:
        """``top_level_starts`` of the text, worked out once."""
        if not self._top_level_read:
            self._top_level, self._top_level_read = top_level_starts(self.text, self.spans), True
        return self._top_level

    def string_at(self, at: int) -> int | None:
        """The index of the string literal holding the offset (its prefix letters included), if any."""
        index = bisect.bisect_right(self.openings, at) - 1
        return index if index >= 0 and at < self.spans[index][1] else None

    def in_code(self, at: int) -> bool:
        """Whether the offset lies in code or an f-string's replacement field: not in a string literal's text, nor
        in a comment."""
        index = self.string_at(at)
        if index is not None and ("f" not in self.prefixes[index].lower() or not self._in_field(index, at)):
            return False
        text = self.text
        line = max(text.rfind("\n", 0, at), text.rfind("\r", 0, at)) + 1  # a lone carriage return ends a line too
        mark = text.find("#", line, at)
        while mark != -1:
            if self.string_at(mark) is None:
                return False  # a comment runs on to the line's end
            mark = text.find("#", mark + 1, at)
        return True

    def _in_field(self, index: int, at: int) -> bool:
        """Whether the offset lies in a replacement field of the f-string of that index (its braces counted from
        its quote, ``{{`` and ``}}`` outside a field being literal braces, as ``_fields_close`` counts them)."""
        depth, skip = 0, -1
        for brace in _BRACE.finditer(self.text, self.spans[index][0], at):
            where = brace.start()
            if where == skip:
                continue
            if depth == 0 and self.text.startswith(brace.group() * 2, where):
                skip = where + 1
            elif brace.group() == "{":
                depth += 1
            elif depth:
                depth -= 1
        return depth > 0
