"""The text stage of AOTI301/AOTI302: a module's fake/meta kernels judged from the statements that can hold one.

A kernel is registered where a registering name is written: ``register_fake``, ``impl_abstract``, an ``impl``
call, or a name one of them is imported under (``kernel_prefilter``). torch's sources hold 47 modules that
define one to eighteen kernels each among much more code, and parsing them whole was a large share of a cold run.
Here only the top-level statements that hold such a site are parsed, with those that define a function passed
to a registering call, and those holding the imports the kernels' reading depends on (``math`` and ``builtins``,
a name imported as ``range`` or as a registering name); ``kernel_prefilter`` then judges the kernels found there
exactly as it judges the whole tree.

Where a top-level statement starts is read from the text without parsing it (``text_layout``). Such a place may
still lie inside a bracket or after a line-continuing backslash; then the statement before it does not parse, and
neither does a piece that starts inside a bracket and closes it. A piece that does not parse, a string the lexer
cannot end or a lone carriage return gives None: the ``ast`` stage decides on the whole tree, as before. So a
module is never dropped here that the whole tree keeps (``tests/test_kernel_regions.py`` compares both on the
fixtures and on torch's own sources).
"""

from __future__ import annotations

import ast
import bisect
import functools
import re

from aoti_lint.rules.kernel_prefilter import KernelCandidates, KernelScan
from aoti_lint.screen.text_layout import Places, statement_starts

# Whatever may stand between two tokens of one statement: whitespace, a continuing backslash, a comment (in
# brackets).
_GAP = r"(?:\s|\\|#[^\n]*(?![^\n]))*"
# Each starts with its own literal, which ``re`` skips to at C speed: a look-behind first, or an alternation,
# tries every position. That a match starts a word is tested apart (``_starting_words``).
_SITES = (
    re.compile(r"register_fake(?!\w)"),
    re.compile(r"impl_abstract(?!\w)"),
    re.compile(rf"impl{_GAP}(?:\(|as(?!\w))"),  # a call of `impl`, or `impl` imported under another name
    re.compile(rf"range{_GAP}as(?!\w)"),  # `range` imported under another name
    re.compile(r"import(?!\w)(?:[^\n;#]|\\\n)*(?<!\w)(?:math|builtins)(?!\w)"),
    re.compile(r"from(?:\s|\\)+(?:math|builtins)(?!\w)"),
)
_WORD = re.compile(r"\w")
# A function's definition and its name: one pattern for every name a registering call is given (a pattern per name
# would be compiled per module).
_DEFINITION = re.compile(rf"def{_GAP}(\w+)")


def _starting_words(sites: list[int], text: str) -> list[int]:
    """The sites that start a word."""
    return [site for site in sites if not (site and _WORD.match(text, site - 1))]


def _definitions(text: str) -> list[tuple[int, str]]:
    """Where each `def` is followed by a name, and the name. Every `def` is tried, even one inside the gap or the name
    of the match before it (``undef`` at a line's end, then ``def f``)."""
    found = []
    match = _DEFINITION.search(text)
    while match is not None:
        found.append((match.start(), match.group(1)))
        match = _DEFINITION.search(text, match.start() + 1)
    return found


def _word_starts(word: str, text: str) -> list[int]:
    """Where ``word`` occurs not followed by a word character (its start is tested by the caller)."""
    found = []
    at = text.find(word)
    while at != -1:
        end = at + len(word)
        if not _WORD.match(text, end):
            found.append(at)
        at = text.find(word, at + 1)
    return found


@functools.lru_cache(maxsize=1)
def kernel_candidates_in_regions(text: str) -> KernelCandidates | None:
    """``kernel_prefilter.kernel_candidates`` of the module, read from the statements that can hold a kernel or
    what its reading depends on; None when they cannot be told apart (see the module's docstring)."""
    # A lone carriage return ends a line for Python, not for these patterns; the joke future import makes
    # `!=` a syntax error in the whole module, which a piece of it would not know.
    if text.count("\r") != text.count("\r\n") or "barry_as_FLUFL" in text:
        return None
    places = Places.of(text)
    if places is None:
        return None
    starts = statement_starts(text, places.spans)
    body: list[ast.stmt] = []
    parsed: set[int] = set()
    # A site in a string's text or a comment (torch's messages name `register_fake`) registers nothing: its
    # statement, a whole class at times, is not parsed for it.
    sites = [match.start() for pattern in _SITES for match in pattern.finditer(text)]
    sites = [site for site in _starting_words(sites, text) if places.in_code(site)]
    scan = KernelScan(ast.Module(body=body, type_ignores=[]), text)
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
        scan = KernelScan(ast.Module(body=body, type_ignores=[]), text)
        registered = scan.registered_names()
        sites = [start for start, name in _definitions(text) if name in registered] if registered else []
        sites += [site for alias in scan.registering_aliases() for site in _word_starts(alias, text)]
        sites = [site for site in _starting_words(sites, text) if places.in_code(site)]
