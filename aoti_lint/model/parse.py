"""The parse step: one libcst parse of a Python text, refused (with CPython's own wording) where CPython's parser
gives up or libcst's would overflow the C stack.

libcst is imported only here, inside the functions, i.e. only when some file passes the prefilter.
"""

from __future__ import annotations

import re

from aoti_lint.read.source import PYTHON_KINDS

TYPE_CHECKING = False
if TYPE_CHECKING:
    import libcst as cst

    from aoti_lint.read.source import SourceFile

# Why a text does not parse: the message, its row and its column (AOTI000 reports it, ``rules.syntax_error``).
Refusal = tuple[str, int, int]


def parse_module(source: SourceFile, text: str) -> cst.Module | Refusal:
    """The module, or why it cannot be parsed."""
    refused = syntax_error(text)
    if refused is not None:
        return refused
    import libcst as cst

    try:
        return cst.parse_module(text)
    except cst.ParserSyntaxError as exc:
        message, row, column = f"SyntaxError: {exc.message}", exc.raw_line, exc.raw_column + 1
    except RecursionError:
        message, row, column = "SyntaxError: too deeply nested to parse", 1, 1
    except (ValueError, UnicodeError) as exc:
        message, row, column = f"SyntaxError: {exc}", 1, 1
    return message, row, column


def syntax_error(text: str) -> Refusal | None:
    """Why CPython's parser refuses a text, in its own wording; None when it parses. Asked of
    every text a rule reads, whether or not libcst reads it next, so that its AOTI000 never depends on the path
    it takes through the engine. ``ast`` compiles nothing and runs nothing; a text it refuses never reaches
    libcst, whose native parser overflows the C stack past CPython's nesting limits (~1,200 nested brackets) or
    takes minutes on them."""
    from aoti_lint.model.syntax_tree import parse

    if "\x00" in text:
        message, row, column = "SyntaxError: source code contains NUL bytes", 1, 1
    else:
        outcome = parse(text)
        if isinstance(outcome, SyntaxError):
            message, row, column = f"SyntaxError: {outcome.msg}", outcome.lineno or 1, outcome.offset or 1
        elif isinstance(outcome, (RecursionError, MemoryError)):
            message, row, column = "SyntaxError: too deeply nested to parse", 1, 1
        elif isinstance(outcome, BaseException):
            message, row, column = f"SyntaxError: {outcome}", 1, 1
        else:
            return None
    return message, row, column


def python_syntax_error(text: str) -> tuple[str, int, int] | None:
    """CPython's own wording of a syntax error (clearer than libcst's), found by ast.parse: it compiles
    nothing and runs nothing."""
    from aoti_lint.model.syntax_tree import parse

    outcome = parse(text)
    if isinstance(outcome, SyntaxError):
        return f"SyntaxError: {outcome.msg}", outcome.lineno or 1, outcome.offset or 1
    return None


def parse_error(source: SourceFile) -> str | None:
    """Why the fixed text of a Python file does not parse, or None. Re-parsed whatever the prefilter says."""
    if source.kind not in PYTHON_KINDS:
        return None
    import libcst as cst

    try:
        cst.parse_module(source.text)
    except Exception as exc:  # any parser failure means: do not write
        first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        cpython = python_syntax_error(source.text)
        return cpython[0].removeprefix("SyntaxError: ") if cpython else first_line
    return None


# Past this many bytes of a Python text, libcst is given only the top-level statements the rules can read
# (``focused_text``) and builds no fix: its parse costs time and memory many times the text's size
# (docs/reliability.md, "Cost limits").
MAX_LIBCST_BYTES = 200_000


# Rounds of the search for statements tied by names before the index of every statement's names is built.
_ROUNDS = 8


def focused_text(text: str, tokens: frozenset[str]) -> tuple[str, int] | None:
    """``text`` with every top-level statement dropped (its lines left empty but for the quotes of a string that
    spans them, their ends kept, so every row and column stays where it is) but those that hold one of ``tokens``
    and those that share a name with them, however indirectly (the names a kept statement binds or reads are bound
    and read in the kept statements alone), the first statement (a docstring) always kept; and the number of bytes
    of the lines kept. A statement's names are the words it spells outside of keywords (in its strings and comments
    too: more than its names, never fewer; NFKC-normalised, as CPython reads identifiers). None where CPython does
    not read the text, or a star import binds names no statement spells."""
    import ast
    import bisect
    import itertools
    import keyword
    import re
    import unicodedata

    from aoti_lint.model.syntax_tree import parse, source_lines

    tree = parse(text)
    if not isinstance(tree, ast.Module):
        return None
    lines = source_lines(text)
    words = re.compile(r"[^\W\d]\w*")
    # Statements that share a line (`a = 1; b = 2`) are one unit: [first row, last row].
    units: list[list[int]] = []
    for statement in tree.body:
        if type(statement) is ast.ImportFrom and any(alias.name == "*" for alias in statement.names):
            return None
        first = min([statement.lineno, *(d.lineno for d in getattr(statement, "decorator_list", ()))])
        last = statement.end_lineno or statement.lineno
        if units and first <= units[-1][1]:
            units[-1][1] = max(units[-1][1], last)
        else:
            units.append([first, last])
    starts = [0, *itertools.accumulate(map(len, lines))]
    unit_starts = [starts[first - 1] for first, _ in units]
    unit_ends = [starts[last] for _, last in units]
    ascii_text = text.isascii()

    def unit_at(offset: int) -> int:
        """The unit that holds the offset, or -1."""
        unit = bisect.bisect_right(unit_starts, offset) - 1
        return unit if unit >= 0 and offset < unit_ends[unit] else -1

    def names_of(unit: int) -> set[str]:
        segment = text[unit_starts[unit] : unit_ends[unit]]
        if not segment.isascii():
            segment = unicodedata.normalize("NFKC", segment)
        return set(words.findall(segment)).difference(keyword.kwlist)

    # The units that spell a token, found where each occurs; a unit with other characters than ASCII is read
    # NFKC-normalised too, as CPython reads its names.
    kept: set[int] = set()
    for token in tokens:
        at = text.find(token)
        while at != -1:
            kept.add(unit_at(at))
            at = text.find(token, at + 1)
    if not ascii_text:
        for match in re.finditer(r"[^\x00-\x7f]", text):
            unit = unit_at(match.start())
            if (
                unit >= 0
                and unit not in kept
                and any(
                    token in names_of(unit)
                    or token in unicodedata.normalize("NFKC", text[unit_starts[unit] : unit_ends[unit]])
                    for token in tokens
                )
            ):
                kept.add(unit)
    kept.discard(-1)
    # The units reached from those through shared names: a pass over the text per round, for the names the last
    # round added; where a few rounds do not settle it (or names are not spelled as they read), an index of every
    # unit's names, built in one pass.
    pending = set().union(*(names_of(unit) for unit in kept)) if kept else set()
    seen: set[str] = set()
    for _ in range(_ROUNDS if ascii_text else 0):
        pending -= seen
        if not pending:
            break
        seen |= pending
        spelled = re.compile(r"(?<!\w)(?:" + "|".join(map(re.escape, sorted(pending))) + r")(?!\w)")
        pending = set()
        for match in spelled.finditer(text):
            unit = unit_at(match.start())
            if unit >= 0 and unit not in kept:
                kept.add(unit)
                pending |= names_of(unit)
    if pending - seen:
        by_name: dict[str, list[int]] = {}
        for unit in range(len(units)):
            for name in names_of(unit):
                by_name.setdefault(name, []).append(unit)
        queue = list(kept)
        seen = set()
        while queue:
            for name in names_of(queue.pop()) - seen:
                seen.add(name)
                for other in by_name[name]:
                    if other not in kept:
                        kept.add(other)
                        queue.append(other)
    if units:
        kept.add(0)  # the module docstring's place
    if len(kept) == len(units):
        return text, len(text.encode())
    # Each run of dropped statements with only blank lines between becomes one string over the same lines (one token for
    # libcst, where blank lines would be a node each); lines between them (comments) stay.
    focused = list(lines)
    run_start = -1
    for index, (first, last) in enumerate(units):
        if index in kept:
            continue
        if run_start == -1:
            run_start = first
        following = index + 1
        if (
            following < len(units)
            and following not in kept
            and all(not lines[row].strip() for row in range(last, units[following][0] - 1))
        ):
            continue  # the next statement is dropped too, with only blank lines between
        rows = range(run_start - 1, last)
        for row in rows:
            focused[row] = lines[row][len(lines[row].rstrip("\r\n")) :]
        if len(rows) == 1:
            focused[rows[0]] = '""' + focused[rows[0]]
        else:
            focused[rows[0]] = '"""' + focused[rows[0]]
            focused[rows[-1]] = '"""' + focused[rows[-1]]
        run_start = -1
    dropped = {row for index, (first, last) in enumerate(units) if index not in kept for row in range(first - 1, last)}
    return "".join(focused), sum(len(line.encode()) for row, line in enumerate(lines) if row not in dropped)


def named_text(text: str) -> str:
    """``text`` with each name spelled as CPython reads it (NFKC: a fullwidth `l`, U+FF4C, is `l`), for libcst,
    which reads names as written: the same identifiers to CPython, at the same rows and columns. Names whose NFKC
    form has another length (U+FB01, `fi` as one letter) stay as written: columns after them would move."""
    if text.isascii():
        return text
    import io
    import tokenize
    import unicodedata

    from aoti_lint.model.syntax_tree import source_lines

    lines = source_lines(text)
    changed: dict[int, str] = {}
    try:
        for token in tokenize.generate_tokens(io.StringIO(text, newline="").readline):
            if token.type != tokenize.NAME or token.string.isascii():
                continue
            name = unicodedata.normalize("NFKC", token.string)
            (row, column), (end_row, _) = token.start, token.end
            if name == token.string or len(name) != len(token.string) or row != end_row:
                continue
            line = changed.get(row - 1, lines[row - 1])
            changed[row - 1] = line[:column] + name + line[column + len(name) :]
    except (tokenize.TokenError, SyntaxError, IndexError):
        return text
    if not changed:
        return text
    return "".join(changed.get(row, line) for row, line in enumerate(lines))


_WORD = re.compile(r"\w+")


def folds_names(text: str) -> bool:
    """Whether some word of the text is not its own NFKC form, which ``ast`` gives identifiers and libcst does not
    (U+FF58, the fullwidth x, is ``x`` to one and another name to the other): a superset of the identifiers,
    strings and comments included."""
    import unicodedata

    return not text.isascii() and any(unicodedata.normalize("NFKC", word) != word for word in _WORD.findall(text))
