"""The flow summary of a file that only names a `.so` file in strings, read from its text or its strings alone.

Such a file calls and imports no AOTI API and binds no module constant to an artifact path (the device-flow
rules' ``mentions_only``), so its full summary (``rules.module_flow``) holds no compile, load, call, constant or
migration site: only ``so_mentions``, and ``path_arguments`` (`.so` paths passed to some function). The
mentions are read here as the full reading places them; a string this reading cannot place (an implicit
concatenation that does not tokenize) sends the file to the full reading. A mention inside an f-string is kept by
name only (``unplaced_mentions``), or by texts that hold its name: its place matters only if the run's plan asks
about that name, and then the run reads the file in full. Path
arguments matter only when a function of the run loads its parameter with a deprecated call: the summary lists
the names the file calls, and the run summarises it in full when one of them is such a function
(``migration_flow.incomplete``).

Most such files need no parse at all (``text_mentions``): their strings are found by a small lexer
(``text_layout``), and each one naming a `.so` is read as ``light_summary`` reads it, when the text names no AOTI API
and no `.pt2` and no such string can lie in a module-level assignment. On torch's sources that settles most of the
files read here, without their parse.
"""

from __future__ import annotations

import ast
import bisect
import functools
import io
import posixpath
import re
import tokenize
import unicodedata
from dataclasses import dataclass
from pathlib import Path

from aoti_lint.flows.flow_summary import FlowSummary
from aoti_lint.knowledge.device_flow import ARTIFACT_SUFFIXES, SUMMARY_IDENTIFIERS
from aoti_lint.model.syntax_tree import source_lines, source_segment, walk
from aoti_lint.screen.text_layout import Places, string_prefix


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


def light_summary(
    path: Path, display_path: str, text: str, tree: ast.Module, callees: frozenset[str]
) -> FlowSummary | None:
    """The summary the full reading gives, or None when some mention cannot be placed here."""
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
            # An f-string with escapes or doubled braces, or joined to other pieces, which ``ast`` merges: its
            # mention is kept by the texts that may hold its name.
            segment = source_segment(lines, node)
            pieces = literal_tokens(segment)
            if pieces is None or len(pieces) != 1 or any(mark in segment for mark in ("\\", "{{", "}}")):
                unplaced.update(unsure_texts(segment, named))
            else:
                unplaced.update(name for name in map(_mention, named) if name is not None)
    found: list[tuple[str, int, int]] = []
    for node in nodes:
        if type(node) is not ast.Constant or type(node.value) is not str or id(node) in inside_fstrings:
            continue
        if ".so" not in node.value:
            continue
        placed = placed_mentions(node, lines)
        if placed is None:
            return None
        found.extend(placed)
    found.sort(key=lambda mention: (mention[1], mention[2]))
    return FlowSummary(
        path=display_path,
        directory=str(path.resolve().parent),
        so_mentions=tuple(found),
        callees=callees,
        unplaced_mentions=frozenset(unplaced),
    )


def unsure_texts(source: str, parts: list[str]) -> frozenset[str]:
    """What stands for the mentions of an f-string this reading does not place: its source and its literal parts
    holding ".so" (the values of the plain literals joined to it). Each name the full reading may find there is part
    of one of these texts."""
    return frozenset((source, *parts))


def may_mention(unplaced: frozenset[str], names: set[str]) -> bool:
    """Whether the unplaced mentions of a summary (``FlowSummary.unplaced_mentions``) may name one of ``names``."""
    return any(name in text for text in unplaced for name in names)


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


@dataclass(frozen=True)
class TextMentions:
    """What ``light_summary`` reads of a file, read from its text: whether some string's value ends with ".so" (the
    code stage's test), the placed and unplaced mentions, and a superset of the callees."""

    named: bool
    found: tuple[tuple[str, int, int], ...]
    unplaced: frozenset[str]
    callees: frozenset[str]
    # The rows (first, last) of every string literal whose text holds a `#` (``CodeIndex.hash_strings``, for the
    # file's noqa comments: ``suppressions.indexed_suppressions``).
    hash_strings: tuple[tuple[int, int], ...]

    def summary(self, path: Path, display_path: str) -> FlowSummary:
        return FlowSummary(
            path=display_path,
            directory=str(path.resolve().parent),
            so_mentions=self.found,
            callees=self.callees,
            unplaced_mentions=self.unplaced,
        )


# What may stand between two string literals that Python joins into one (and, as a superset, between two that are
# separate statements).
_JOINED_GAP = re.compile(r"(?:\s|\\|#[^\n]*(?![^\n]))*")
# A name that may be a callee's last name: followed by what opens its call or subscript, or closes the parentheses
# around it (``(f)(x)``), or by the end of its line's code (a comment, a backslash or a line break before the
# bracket). Read from the text reversed, each match starting at that character (``re`` skips to the next one) and
# the name running to its start: a pattern that starts with the name is tried at every position, three times the
# time.
_CALLEE_REVERSED = re.compile(r"[(\[)#\\\r\n][ \t\f]*(\w+)")
# An import statement's names, on its logical line or in its parentheses. The word comes first and its start is
# tested after it: ``re`` then skips from one occurrence of the word to the next, where a pattern starting with a
# look-behind is tried at every position (thirty times the time).
_IMPORT = re.compile(r"import(?<!\wimport)(?!\w)(?:\s*\([^)]*\)|(?:[^\n;\\]|\\\r?\n|\\)*)")
_WORD = re.compile(r"\w+")
# The statements in which a string cannot be a module-level constant's value: a compound statement's, whose body
# binds nothing at module level for ``code_index.module_string_suffixes`` (which reads ``Module.body`` only). Any
# other is parsed on its own.
_COMPOUND = re.compile(r"(?:def|class|async|if|for|while|try|with)(?!\w)|@")
_SKIPPED = re.compile(r"(?:\s|#[^\n]*(?![^\n]))*")
_LINE_END = re.compile(r"[ \t\f]*(?:#[^\r\n]*)?(?:\r?\n|\Z)")


@functools.lru_cache(maxsize=1)
def text_mentions(text: str) -> TextMentions | None:
    """``light_summary`` of a file read from its text without parsing it; None where only the tree can tell (a name
    of the AOTI API that may be called or imported, a string naming a `.so` or a `.pt2` in a statement that may bind
    a module-level name, a lone carriage return, a string the lexer cannot end)."""
    if text.count("\r") != text.count("\r\n"):
        return None
    places = Places.of(text)
    if places is None:
        return None
    spans = places.spans
    if _names_the_api(text, places):
        return None
    found: list[tuple[str, int, int]] = []
    unplaced: set[str] = set()
    named = False
    for group in _joined(text, places):
        # From the first quote: the prefix letters before it hold none of these.
        quoted = text[group[0][0] : group[-1][1]]
        if ".so" not in quoted and ".pt2" not in quoted and "\\" not in quoted:
            continue  # neither written nor escaped: no value of it holds an artifact's suffix
        first = group[0][0] - len(string_prefix(text, group[0][0]))
        source = text[first : group[-1][1]]
        kinds = [string_prefix(text, start).lower() for start, _ in group]
        if any("f" in kind for kind in kinds):
            joined = _fstring_mentions(source, len(group))
            if joined is None:
                return None
            holds, names = joined
            unplaced |= names
            package = ".pt2" in source or "\\" in source
        elif any("b" in kind for kind in kinds):
            continue  # bytes: no mention (and str literals joined to bytes do not compile)
        else:
            holds, package, tail = False, False, ""
            for start, end in group:
                opening = start - len(string_prefix(text, start))
                value = _value(text[opening:end], start - opening)
                if value is None:
                    return None
                # Whether the literals joined up to this one end with ".so" (``code_index``'s suffix of the value),
                # from whichever starts the literal Python joins (the group may join separate statements).
                tail = (tail + value)[-4:]
                holds = holds or tail.endswith(".so")
                package = package or tail == ".pt2"
                name = _mention(value) if ".so" in value else None
                if name is not None:
                    row = text.count("\n", 0, opening) + 1
                    found.append((name, row, opening - (text.rfind("\n", 0, opening) + 1) + 1))
        named = named or holds
        if not (holds or package):
            continue
        # A module-level constant of either suffix is a site for another file to import (``_has_sites``).
        statements = places.top_level_starts()
        if statements is None or not _outside_module_bindings(text, statements, first, group[-1][1]):
            return None
    found.sort(key=lambda mention: (mention[1], mention[2]))
    hashes = []
    row, counted = 1, 0  # rows counted up to the last string holding a `#`: each count goes on from there
    for start, end in spans:
        if text.find("#", start, end) != -1:
            row += text.count("\n", counted, start)
            hashes.append((row, row + text.count("\n", start, end)))
            counted = start
    return TextMentions(named, tuple(found), frozenset(unplaced), _callees(text), tuple(hashes))


# What follows a callee's last name: a call's or a subscript's opening, or a closing parenthesis around it.
_CALLED_AFTER = re.compile(r"(?:\s|\\|#[^\n]*(?![^\n]))*[(\[)]")
_WORD_CHARACTER = re.compile(r"\w")


def _names_the_api(text: str, places: Places) -> bool:
    """Whether a name of the AOTI API may be called or imported (``DeviceFlowRule``'s sites): written in code (not in
    a string or a comment) before what opens a call, or inside an import statement."""
    imports: list[tuple[int, int]] | None = None
    for name in SUMMARY_IDENTIFIERS:
        at = text.find(name)
        while at != -1:
            end = at + len(name)
            if (
                not (at and _WORD_CHARACTER.match(text, at - 1))
                and not _WORD_CHARACTER.match(text, end)
                and places.in_code(at)
            ):
                if _CALLED_AFTER.match(text, end):
                    return True
                if imports is None:
                    imports = [statement.span() for statement in _IMPORT.finditer(text)]
                if any(start <= at < stop for start, stop in imports):
                    return True
            at = text.find(name, at + 1)
    return False


def _joined(text: str, places: Places) -> list[list[tuple[int, int]]]:
    """The string literals in groups that Python may join into one (only what joins them lies between)."""
    groups: list[list[tuple[int, int]]] = []
    end = -1
    for (start, stop), opening in zip(places.spans, places.openings, strict=True):
        if groups and _JOINED_GAP.fullmatch(text, end, opening):
            groups[-1].append((start, stop))
        else:
            groups.append([(start, stop)])
        end = stop
    return groups


def _value(token: str, prefix: int) -> str | None:
    """A plain (not f-) string literal's value; None where it does not evaluate."""
    if "\\" not in token:
        quote = 3 if token.startswith(token[prefix] * 3, prefix) else 1
        return token[prefix + quote : -quote]
    try:
        value = ast.literal_eval(token)  # one string literal: evaluates nothing else
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None
    return value if type(value) is str else None


def _fstring_mentions(source: str, pieces: int) -> tuple[bool, frozenset[str]] | None:
    """For joined literals holding an f-string: whether one of its parts holds ".so", and the names
    ``light_summary`` keeps unplaced; None where they do not parse as one expression."""
    try:
        node = ast.parse(f"({source})", mode="eval").body
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None
    if type(node) is not ast.JoinedStr:
        return None
    parts = [part.value for part in walk(node) if type(part) is ast.Constant and type(part.value) is str]
    # Some part ends with ".so" (``code_index``'s suffix of its value): the parts of literals joined across
    # statements merge, so a part holding ".so" counts.
    holds = any(".so" in part for part in parts)
    named = [part for part in parts if ".so" in part]
    if not named:
        return holds, frozenset()
    if pieces != 1 or any(mark in source for mark in ("\\", "{{", "}}")):
        return holds, unsure_texts(source, named)
    return holds, frozenset(name for name in map(_mention, named) if name is not None)


def may_bind_module_constant(places: Places, string: int) -> bool:
    """Whether the string literal of that index (``Places``) may be the value of a module-level constant (None where
    the top-level statements cannot be told)."""
    statements = places.top_level_starts()
    if statements is None:
        return True
    start, end = places.openings[string], places.spans[string][1]
    return not _outside_module_bindings(places.text, statements, start, end)


def _outside_module_bindings(text: str, statements: list[int], start: int, end: int) -> bool:
    """Whether the literal at ``text[start:end]`` lies where no module-level assignment binds it to a name (what
    ``code_index.module_string_suffixes`` reads): in a compound statement (a definition, a decorator's, an `if`...),
    as a statement of its own (a docstring), or in statements whose own parse binds no such path."""
    at = bisect.bisect_right(statements, start) - 1
    statement = statements[at]
    skipped = _SKIPPED.match(text, statement)
    first = skipped.end() if skipped is not None else statement
    if first == start and _LINE_END.match(text, end) is not None:
        return True
    if first < start and _COMPOUND.match(text, first) is not None:
        return True
    try:
        # As many line ends before it as before the statement: a statement at the text's start parses alike.
        tree = ast.parse(text[statement : statements[at + 1]])
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return False
    for node in tree.body:
        targets = node.targets if type(node) is ast.Assign else [node.target] if type(node) is ast.AnnAssign else []
        value = getattr(node, "value", None)
        if value is None or type(value) is ast.IfExp or not any(type(target) is ast.Name for target in targets):
            continue
        for item in walk(value):
            if type(item) is ast.Constant and type(item.value) is str and item.value.endswith(ARTIFACT_SUFFIXES):
                return False
    return True


def callee_names(text: str) -> set[str]:
    """Each name written before an opening (or a closing) bracket, or at the end of its line's code."""
    # The text's end counts as a line's: a line break after it, before the name once reversed.
    return {name[::-1] for name in set(_CALLEE_REVERSED.findall((text + "\n")[::-1]))}


def _callees(text: str) -> frozenset[str]:
    """A superset of ``code_index.CodeIndex.reached``: each name written before an opening (or a closing)
    bracket, and every name of an import statement."""
    words = callee_names(text)
    for statement in _IMPORT.finditer(text):
        words.update(_WORD.findall(statement.group()))
        if "*" in statement.group():
            words.add("*")  # a star import: ``reached`` names it so
    if not text.isascii():
        words |= {unicodedata.normalize("NFKC", word) for word in words}  # as ``ast`` spells names
    return frozenset(words)
