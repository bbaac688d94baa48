"""The text stage of AOTI301/AOTI302: a module's fake/meta kernels judged from the statements that can hold one.

A kernel is registered where a registering name is written: ``register_fake``, ``impl_abstract``, an ``impl``
call, or a name one of them is imported under (``kernel_prefilter``). torch's sources hold 47 modules that
define one to eighteen kernels each among 1.4 MB of other code, and parsing them whole was a third of a cold run.
Here only the top-level statements that hold such a site are parsed, with those that define a function passed
to a registering call, and those holding the imports the kernels' reading depends on (``math`` and ``builtins``,
a name imported as ``range`` or as a registering name); ``kernel_prefilter`` then judges the kernels found there
exactly as it judges the whole tree.

Where a top-level statement starts is read from the text without parsing it: a line that begins in column 0,
outside every string (``string_spans``), and not with a closing bracket, a comment or ``else``/``elif``/``except``
/``finally``; a decorator's statement runs on to its ``def`` or ``class``. Such a line may still lie inside a
bracket or after a line-continuing backslash; then the statement before it does not parse, and neither does a
piece that starts inside a bracket and closes it. A piece that does not parse, a string this reading cannot end
(an f-string nesting its own quotes, as Python 3.12 allows) or a lone carriage return gives None: the ``ast``
stage decides on the whole tree, as before. So a module is never dropped here that the whole tree keeps
(``tests/test_kernel_regions.py`` compares both on the fixtures and on torch's own sources).
"""

from __future__ import annotations

import ast
import bisect
import functools
import re

from aoti_lint.kernel_prefilter import KernelCandidates, KernelScan, lines_of

# What a string or a comment starts with; the prefix letters of a string are read back from before its quote.
_OPENING = re.compile(r"[\"'#]")
_BODY = {
    '"""': re.compile(r'(?:[^"\\]|\\.|"(?!""))*"""', re.DOTALL),
    "'''": re.compile(r"(?:[^'\\]|\\.|'(?!''))*'''", re.DOTALL),
    '"': re.compile(r'(?:[^"\\\n]|\\.)*"', re.DOTALL),
    "'": re.compile(r"(?:[^'\\\n]|\\.)*'", re.DOTALL),
}
_PREFIX = re.compile(r"(?<![\w])[A-Za-z]{1,2}\Z")
# A line that may start a top-level statement: its first character is none of whitespace (form feeds included,
# which Python reads as indentation), a comment's or a closing bracket's.
_LINE_START = re.compile(r"^[^\s#)\]}]", re.MULTILINE)
_CONTINUATION = re.compile(r"(?:else|elif|except|finally)(?!\w)")
_DEFINITION = re.compile(r"(?:def|class|async)(?!\w)")
# Whatever may stand between two tokens of one statement: whitespace, a continuing backslash, a comment (in
# brackets).
_GAP = r"(?:\s|\\|#[^\n]*)*"
# Each starts with its own literal, which ``re`` skips to at C speed: a look-behind first, or an alternation,
# tries every position (a tenth of the speed). That a match starts a word is tested apart (``_sites``).
_SITES = (
    re.compile(r"register_fake(?!\w)"),
    re.compile(r"impl_abstract(?!\w)"),
    re.compile(rf"impl{_GAP}(?:\(|as(?!\w))"),  # a call of `impl`, or `impl` imported under another name
    re.compile(rf"range{_GAP}as(?!\w)"),  # `range` imported under another name
    re.compile(r"import(?!\w)(?:[^\n;#]|\\\n)*(?<!\w)(?:math|builtins)(?!\w)"),
    re.compile(r"from(?:\s|\\)+(?:math|builtins)(?!\w)"),
)
_WORD = re.compile(r"\w")


def _sites(patterns: list[re.Pattern[str]], text: str) -> list[int]:
    """Where a match of one of the patterns starts a word."""
    return [
        match.start()
        for pattern in patterns
        for match in pattern.finditer(text)
        if not (match.start() and _WORD.match(text, match.start() - 1))
    ]


def string_spans(text: str) -> list[tuple[int, int]] | None:
    """The (start, end) offsets of every string literal, from its opening quote; None where one cannot be
    ended by Python 3.11's rules or is an f-string whose braces do not pair up (one that nests its own quotes,
    as Python 3.12 allows, reads so)."""
    spans: list[tuple[int, int]] = []
    search, find = _OPENING.search, text.find
    position = 0
    while True:
        found = search(text, position)
        if found is None:
            return spans
        start = found.start()
        if text[start] == "#":
            position = find("\n", start)
            if position < 0:
                return spans
            continue
        quote = text[start : start + 3] if text.startswith(text[start] * 3, start) else text[start]
        body = _BODY[quote].match(text, start + len(quote))
        if body is None:
            return None
        prefix = _PREFIX.search(text, max(start - 3, 0), start)
        if prefix is not None and "f" in prefix.group().lower() and not _fields_close(text, start, body.end()):
            return None
        spans.append((start, body.end()))
        position = body.end()


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
    statement: comments, or lines Python rejects), then the text's end."""
    openings = [start for start, _ in spans]
    starts: list[int] = [0]
    decorated = False
    for line in _LINE_START.finditer(text):
        at = line.start()
        inside = bisect.bisect_right(openings, at) - 1
        if inside >= 0 and openings[inside] < at < spans[inside][1]:
            continue  # a line of a string
        if _CONTINUATION.match(text, at):
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


@functools.lru_cache(maxsize=1)
def kernel_candidates_in_regions(text: str) -> KernelCandidates | None:
    """``kernel_prefilter.kernel_candidates`` of the module, read from the statements that can hold a kernel or
    what its reading depends on; None when they cannot be told apart (see the module's docstring)."""
    # A lone carriage return ends a line for Python, not for these patterns; the joke future import makes
    # `!=` a syntax error in the whole module, which a piece of it would not know.
    if text.count("\r") != text.count("\r\n") or "barry_as_FLUFL" in text:
        return None
    spans = string_spans(text)
    if spans is None:
        return None
    starts = statement_starts(text, spans)
    lines = lines_of(text)
    body: list[ast.stmt] = []
    parsed: set[int] = set()
    sites = _sites(list(_SITES), text)
    scan = KernelScan(ast.Module(body=body, type_ignores=[]), lines)
    while True:
        wanted = sorted({bisect.bisect_right(starts, site) - 1 for site in sites} - parsed)
        if not wanted:
            return scan.judged()
        for region in wanted:
            start, end = starts[region], starts[region + 1]
            try:
                # As many line ends before it as before the statement: the tree's rows are the module's.
                tree = ast.parse("\n" * text.count("\n", 0, start) + text[start:end])
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                return None
            body.extend(tree.body)
            parsed.add(region)
        # Then the functions registered by their name, and the uses of a registering name imported under another.
        scan = KernelScan(ast.Module(body=body, type_ignores=[]), lines)
        names = [*(rf"def{_GAP}{name}" for name in scan.registered_names()), *scan.registering_aliases()]
        sites = _sites([re.compile(rf"{name}(?!\w)") for name in names], text)
