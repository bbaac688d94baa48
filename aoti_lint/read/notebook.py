"""Jupyter notebooks as a source kind.

The rules read one Python text: the code cells joined, each after the first preceded by a marker comment, with
IPython syntax (``%magic``, ``!shell``, ``obj?``) replaced by ``pass`` statements that keep the original as a
comment, so rows stay where they were. Findings are mapped back to cell-relative rows, and fixed text is split at
the markers and written back into only the cells whose source changed.
"""

from __future__ import annotations

import bisect
import functools
import json
import re
from dataclasses import dataclass, replace
from pathlib import Path

from aoti_lint.diagnostics import Edit, Finding, Position
from aoti_lint.read.source import SourceFile

CELL_MARKER = "# aoti-lint{tag}: notebook cell {index}"

# Cell magics whose body is Python; any other (%%bash, %%writefile, %%html...) makes the cell not Python.
_PYTHON_CELL_MAGICS = frozenset({"time", "timeit", "capture", "prun", "debug"})
# A line IPython transforms before Python sees it: a magic, a shell escape, a help request (`?obj`,
# `obj.attr??`), or an assignment from a magic or shell escape (`files = !ls`).
_IPYTHON_LINE = re.compile(r"^\s*(?:[%!?]|[\w.]+\s*=\s*[%!]|[\w.*]+\?{1,2}\s*$)")


class NotebookError(ValueError):
    """The bytes are not a notebook; the message says why."""


@dataclass(frozen=True)
class Cell:
    index: int  # 1-based position among all cells, as Jupyter and ruff count them
    source: str  # as stored in the notebook
    python: str  # what the rules read: IPython syntax replaced
    ends_with_newline: bool = True

    @property
    def joined(self) -> str:
        """The Python text as it sits in the joined text: ending with a newline unless empty."""
        return self.python if self.python.endswith("\n") or not self.python else self.python + "\n"

    def restore(self, python: str) -> str:
        """The cell source for (possibly fixed) ``python``: IPython lines put back, trailing newline as it was."""
        originals = {_placeholder(line, indent): line for line, indent in _ipython_lines(self.source)}
        lines = python.split("\n")
        restored = "\n".join(originals.get(line, line) for line in lines)
        if not self.ends_with_newline and restored.endswith("\n"):
            restored = restored[:-1]
        return restored


def _placeholder(line: str, indent: str) -> str:
    return f"{indent}pass  # {line.strip()}"


def _ipython_lines(source: str) -> list[tuple[str, str]]:
    """(line, indent of its placeholder) for each line IPython would transform, with their `\\` continuations."""
    found = []
    lines = source.split("\n")
    continuing_indent: str | None = None
    for line in lines:
        if continuing_indent is not None:
            found.append((line, continuing_indent))
        elif _IPYTHON_LINE.search(line) and not line.lstrip().startswith("#"):
            continuing_indent = line[: len(line) - len(line.lstrip())]
            found.append((line, continuing_indent))
        else:
            continue
        if not line.endswith("\\"):
            continuing_indent = None
    return found


def python_text(source: str) -> str | None:
    """The cell as Python the rules can parse, or None when a cell magic makes it another language."""
    first = source.lstrip().split("\n", 1)[0]
    if first.startswith("%%"):
        name = first[2:].split(maxsplit=1)
        if not name or name[0] not in _PYTHON_CELL_MAGICS:
            return None
    replacements = {line: _placeholder(line, indent) for line, indent in _ipython_lines(source)}
    return "\n".join(replacements.get(line, line) for line in source.split("\n"))


def _source_string(value: object, index: int) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(part, str) for part in value):
        return "".join(value)
    raise NotebookError(f"cell {index}: `source` must be a string or a list of strings")


def parse(data: bytes) -> tuple[dict, list[Cell]]:
    """The notebook document and its Python code cells; raises NotebookError on anything else."""
    try:
        document = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise NotebookError(f"invalid notebook: not UTF-8 ({exc.reason})") from None
    except json.JSONDecodeError as exc:
        raise NotebookError(f"invalid notebook JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})") from None
    if not isinstance(document, dict) or not isinstance(document.get("cells"), list):
        raise NotebookError("invalid notebook: no `cells` list")
    metadata = document.get("metadata")
    info = metadata.get("language_info") if isinstance(metadata, dict) else None
    language = info.get("name", "python") if isinstance(info, dict) else "python"
    if language != "python":
        return document, []
    cells = []
    for index, cell in enumerate(document["cells"], start=1):
        if not isinstance(cell, dict):
            raise NotebookError(f"invalid notebook: cell {index} is not an object")
        if cell.get("cell_type") != "code":
            continue
        source = _source_string(cell.get("source", ""), index)
        python = python_text(source)
        if python is not None:
            cells.append(Cell(index, source, python, ends_with_newline=source.endswith("\n") or not source))
    return document, cells


def cell_source(data: bytes, index: int) -> str:
    """The source of cell ``index`` (1-based), for showing a snippet; empty when there is none."""
    sources = _cell_sources(data)
    return sources[index - 1] if 0 < index <= len(sources) else ""


@functools.lru_cache(maxsize=4)
def _cell_sources(data: bytes) -> tuple[str, ...]:
    """Every cell's source, parsed once per notebook: a snippet per finding must not parse it per finding."""
    try:
        document, _ = parse(data)
        return tuple(
            _source_string(cell.get("source", ""), number) if isinstance(cell, dict) else ""
            for number, cell in enumerate(document["cells"], start=1)
        )
    except (NotebookError, AttributeError):
        return ()


def _source_value(old: str, source: str, ensure_ascii: bool) -> str:
    """The JSON text of a cell's new ``source``, in the form of the ``old`` value: a string, or a list of lines
    laid out as the old list was (nbformat: one line an element, indented)."""
    if not old.startswith("["):
        return json.dumps(source, ensure_ascii=ensure_ascii)
    items = [json.dumps(line, ensure_ascii=ensure_ascii) for line in source.splitlines(keepends=True)]
    lead = re.match(r"\[([ \t\r\n]*)", old)
    close = re.search(r"([ \t\r\n]*)\]$", old)
    before = lead.group(1) if lead and old[lead.end() :].strip() != "]" else ""
    after = close.group(1) if close and before else ""
    return "[" + before + ("," + before).join(items) + after + "]" if items else "[]"


_WHITESPACE = re.compile(r"[ \t\r\n]*")
_STRUCTURE = re.compile(r'["\[\]{}]')
_SCALAR = re.compile(r"[^,\]}\s]*")


def _value_end(text: str, index: int) -> int:
    """The end of the JSON value at ``index`` (already known valid); linear, no recursion."""
    from json.decoder import scanstring  # type: ignore[attr-defined]  # public, though typeshed omits it

    if text[index] == '"':
        return scanstring(text, index + 1)[1]
    if text[index] not in "[{":
        return _SCALAR.match(text, index).end()  # type: ignore[union-attr]
    depth = 0
    while True:
        match = _STRUCTURE.search(text, index)
        assert match is not None, "valid JSON closes what it opens"
        char, index = match.group(), match.end()
        if char == '"':
            index = scanstring(text, index)[1]
        elif char in "[{":
            depth += 1
        else:
            depth -= 1
            if depth == 0:
                return index


def _members(text: str, index: int) -> dict[str, tuple[int, int]]:
    """The value span of each key of the object at ``index``; the last of duplicate keys, as json.loads."""
    from json.decoder import scanstring  # type: ignore[attr-defined]  # public, though typeshed omits it

    members: dict[str, tuple[int, int]] = {}
    index = _WHITESPACE.match(text, index + 1).end()  # type: ignore[union-attr]
    while text[index] != "}":
        key, index = scanstring(text, index + 1)
        index = _WHITESPACE.match(text, index).end() + 1  # type: ignore[union-attr]  # past the colon
        start = _WHITESPACE.match(text, index).end()  # type: ignore[union-attr]
        end = _value_end(text, start)
        members[key] = (start, end)
        index = _WHITESPACE.match(text, end).end()  # type: ignore[union-attr]
        if text[index] == ",":
            index = _WHITESPACE.match(text, index + 1).end()  # type: ignore[union-attr]
    return members


def _elements(text: str, index: int) -> list[tuple[int, int]]:
    spans = []
    index = _WHITESPACE.match(text, index + 1).end()  # type: ignore[union-attr]
    while text[index] != "]":
        end = _value_end(text, index)
        spans.append((index, end))
        index = _WHITESPACE.match(text, end).end()  # type: ignore[union-attr]
        if text[index] == ",":
            index = _WHITESPACE.match(text, index + 1).end()  # type: ignore[union-attr]
    return spans


def source_spans(text: str) -> dict[int, tuple[int, int]]:
    """Where each cell's ``source`` value lies in the notebook's text (1-based cell index -> span)."""
    top = _WHITESPACE.match(text).end()  # type: ignore[union-attr]
    start, _ = _members(text, top)["cells"]
    spans = {}
    for number, (cell_start, _) in enumerate(_elements(text, start), start=1):
        if text[cell_start] == "{":
            source = _members(text, cell_start).get("source")
            if source is not None:
                spans[number] = source
    return spans


def _marker_tag(cells: list[Cell]) -> str:
    """ "" unless a cell holds a marker's words; then the first "-N" that none holds."""
    tag, number = "", 0
    while any(f"# aoti-lint{tag}: notebook cell" in cell.python for cell in cells):
        number += 1
        tag = f"-{number}"
    return tag


@dataclass
class NotebookSource(SourceFile):
    """A notebook whose ``text`` is its code cells joined (see the module docstring)."""

    cells: tuple[Cell, ...] = ()
    # Makes the marker lines unlike any line of the cells (a cell may quote a marker).
    tag: str = ""

    @classmethod
    def from_bytes(cls, path: Path, display_path: str, data: bytes) -> NotebookSource:
        _, cells = parse(data)
        tag = _marker_tag(cells)
        text = "".join(
            (CELL_MARKER.format(tag=tag, index=cell.index) + "\n" if position else "") + cell.joined
            for position, cell in enumerate(cells)
        )
        return cls(path, display_path, "jupyter", data, _text=text, cells=tuple(cells), tag=tag)

    @property
    def _marker_line(self) -> re.Pattern[str]:
        return re.compile(rf"^# aoti-lint{re.escape(self.tag)}: notebook cell (\d+)\n", re.MULTILINE)

    @property
    def text(self) -> str:
        return self._text or ""

    @property
    def prefilter_data(self) -> bytes:
        return self.text.encode("utf-8")

    @property
    def diff_text(self) -> str:
        return "".join(
            f"# %% cell {cell.index}\n" + cell.source + ("" if cell.ends_with_newline else "\n") for cell in self.cells
        )

    def _split(self, text: str) -> list[str]:
        chunks = self._marker_line.split(text)
        # re.split with a group alternates text and marker numbers: [cell1, "3", cell3, "5", cell5, ...]
        numbers = [int(number) for number in chunks[1::2]]
        if numbers != [cell.index for cell in self.cells[1:]]:
            raise ValueError("a fix crossed a notebook cell boundary")
        return chunks[0::2]

    def with_text(self, text: str) -> NotebookSource:
        """The notebook with ``text``'s cells: only the changed cells' ``source`` values are rewritten, in the
        file's own text, so everything else (newlines, indentation, key order and duplicates, the spelling of
        numbers) stays byte for byte."""
        original = self.data.decode("utf-8")
        new_cells, replacements = [], []
        spans: dict[int, tuple[int, int]] | None = None
        ensure_ascii = original.isascii() and "\\u" in original
        for cell, python in zip(self.cells, self._split(text), strict=True):
            if python == cell.joined:
                new_cells.append(cell)
                continue
            source = cell.restore(python)
            spans = source_spans(original) if spans is None else spans
            if cell.index not in spans:
                raise ValueError(f"cell {cell.index} has no `source` key to write into")
            start, end = spans[cell.index]
            replacements.append((start, end, _source_value(original[start:end], source, ensure_ascii)))
            new_cells.append(Cell(cell.index, source, python_text(source) or "", source.endswith("\n") or not source))
        data = original
        for start, end, value in sorted(replacements, reverse=True):
            data = data[:start] + value + data[end:]
        return NotebookSource(
            self.path,
            self.display_path,
            self.kind,
            data.encode("utf-8"),
            _text=text,
            cells=tuple(new_cells),
            tag=self.tag,
        )

    def locate(self, findings: list[Finding]) -> list[Finding]:
        """Findings with cell-relative rows (edits too), as ruff reports them."""
        starts = [1]  # row where each cell's code starts in ``text``
        marker_line = self._marker_line
        for row, line in enumerate(self.text.split("\n"), start=1):
            if marker_line.match(line + "\n"):
                starts.append(row + 1)

        def cell_of(row: int) -> int:  # a binary search: findings times cells would be quadratic
            return max(bisect.bisect_right(starts, row) - 1, 0)

        def moved(position: Position, cell: int) -> Position:
            return Position(max(position.row - starts[cell] + 1, 1), position.column)

        located = []
        for finding in findings:
            cell = cell_of(finding.start.row)
            fix = finding.fix
            if fix is not None:
                # An edit may sit in another cell than its finding (an import at the top): each counts from its own.
                edits = [(e, cell_of(e.start.row)) for e in fix.edits]
                fix = replace(fix, edits=tuple(Edit(e.content, moved(e.start, c), moved(e.end, c)) for e, c in edits))
            located.append(
                replace(
                    finding,
                    cell=self.cells[cell].index if self.cells else None,
                    start=moved(finding.start, cell),
                    end=moved(finding.end, cell),
                    noqa_row=None if finding.noqa_row is None else moved(Position(finding.noqa_row, 1), cell).row,
                    fix=fix,
                )
            )
        return located
