"""``--add-noqa``, as ruff's: a ``# noqa: CODE`` comment on the line of each finding, so that a large codebase adopts
the tool at once and only new code is held to it. Codes join a line's ``# noqa: ...`` when it has one; a second run
adds nothing. A directive goes only where a ``#`` comment is one, on the finding's own row (the row a noqa is read
from): never inside a string that goes on to the next line, after a backslash that continues the line, in a
Dockerfile (where a ``#`` after an instruction is part of it), a notebook or C++; such findings are named and left.
Each edited file is re-parsed and must give the same syntax tree, and is written atomically over the bytes read
(``disk.write_bytes``), or not at all."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from aoti_lint.diagnostics import FileError, Finding

# The kinds whose comments are `#` comments that may follow code on a line.
_HASH_KINDS = frozenset({"python", "shell", "yaml", "env", "makefile"})
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")
# A line noqa with codes (``suppressions``'s form); a bare one suppresses every code, so it is never met here.
_NOQA_CODES = re.compile(r"#\s*noqa:\s*(?P<codes>[A-Za-z]+[0-9]+(?:[\s,]+[A-Za-z]+[0-9]+)*)", re.IGNORECASE)


@dataclass
class Added:
    """What ``--add-noqa`` did: directives added, files written, findings left (with why), files not written."""

    directives: int = 0
    files: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    errors: list[FileError] = field(default_factory=list)


def add_noqa(findings: list[Finding], cwd: Path) -> Added:
    """Add the directives for ``findings`` (their display paths relative to ``cwd``)."""
    from aoti_lint.read.file_bytes import NotRegularFile, read_regular_file_stat
    from aoti_lint.read.source import DecodeError, SourceFile, file_kind
    from aoti_lint.run.disk import make_source, write_bytes

    # A file named on the command line is read as Python whatever its suffix (``files.discover``).
    kinds = {finding.path: file_kind(Path(finding.path)) or "python" for finding in findings}
    added = Added()
    rows: dict[str, dict[int, list[str]]] = {}
    for finding in findings:
        kind = kinds.get(finding.path, "python")
        why = _unfit(finding, kind)
        if why is not None:
            added.skipped.append(f"{finding.path}:{finding.start.row}: {finding.code}: {why}")
            continue
        codes = rows.setdefault(finding.path, {}).setdefault(finding.start.row, [])
        if finding.code not in codes:
            codes.append(finding.code)
    for shown, wanted in sorted(rows.items()):
        path = Path(cwd, shown)
        try:
            data, _ = read_regular_file_stat(path)
        except (OSError, NotRegularFile) as exc:
            added.errors.append(FileError(shown, f"cannot add noqa directives: {exc}"))
            continue
        source = make_source(path, shown, kinds.get(shown, "python"), data)
        assert isinstance(source, SourceFile)  # a notebook is never edited here
        try:
            text = source.text
        except DecodeError as exc:
            added.errors.append(FileError(shown, f"cannot add noqa directives: {exc}"))
            continue
        edited, count, refused = _with_directives(text, wanted, source.kind)
        added.skipped += [f"{shown}:{row}: {', '.join(wanted[row])}: {why}" for row, why in refused]
        if not count:
            continue
        if source.kind == "python" and not _same_tree(text, edited):
            added.errors.append(FileError(shown, "not written: the noqa directives would change its syntax tree"))
            continue
        error = write_bytes(source.path, shown, data, source.with_text(edited).data)
        if error is not None:
            added.errors.append(error)
            continue
        added.directives += count
        added.files.append(shown)
    return added


def _unfit(finding: Finding, kind: str) -> str | None:
    """Why no directive can be added for ``finding`` whatever its line holds; None when one may."""
    if finding.code == "AOTI000":
        return "a file that does not parse takes no noqa directive; fix the syntax"
    if finding.cell is not None or kind == "jupyter":
        return "notebooks are not edited by --add-noqa; add the comment in the cell"
    if kind == "dockerfile":
        return (
            "a `#` after a Dockerfile instruction is part of it; `# aoti-lint: noqa: CODE` on a line of its own "
            "silences the code in the whole file"
        )
    if kind not in _HASH_KINDS:
        return f"--add-noqa does not edit {kind} files; add `// noqa: {finding.code}`"
    return None


def _with_directives(text: str, wanted: dict[int, list[str]], kind: str) -> tuple[str, int, list[tuple[int, str]]]:
    """``text`` with a directive on each row of ``wanted`` that can hold one; how many were added; the rows that
    cannot, with why."""
    lines = _LINE.findall(text)
    comments, unfit = _python_layout(text) if kind == "python" else ({}, {})
    refused: list[tuple[int, str]] = []
    count = 0
    for row, codes in sorted(wanted.items()):
        if not 1 <= row <= len(lines):
            refused.append((row, "the line is not in the file any more"))
            continue
        line = lines[row - 1]
        body = line.rstrip("\r\n")
        end = line[len(body) :]
        if row in unfit:
            refused.append((row, unfit[row]))
            continue
        if row not in comments and body.endswith("\\"):
            refused.append((row, "the line goes on after a backslash: a comment cannot follow it"))
            continue
        comment_at = comments.get(row) if kind == "python" else _hash_comment_at(body)
        existing = _NOQA_CODES.search(body, comment_at) if comment_at is not None else None
        if existing is not None:
            have = re.split(r"[\s,]+", existing.group("codes"))
            new = [code for code in codes if code.upper() not in {c.upper() for c in have}]
            if not new:
                continue
            merged = ", ".join([*have, *new])
            body = body[: existing.start("codes")] + merged + body[existing.end("codes") :]
        else:
            code = body.rstrip(" \t")
            body = f"{code}  # noqa: {', '.join(codes)}"
        lines[row - 1] = body + end
        count += 1
    return "".join(lines), count, refused


def _python_layout(text: str) -> tuple[dict[int, int], dict[int, str]]:
    """Where each row's comment starts (a column) and the rows whose end lies inside a string that goes on."""
    import io
    import tokenize

    comments: dict[int, int] = {}
    unfit: dict[int, str] = {}
    inside_string = "the line ends inside a string that goes on to the next line"
    opened: list[int] = []  # rows of the f-strings open (Python 3.12 tokenizes their parts)
    for token in tokenize.generate_tokens(io.StringIO(text, newline=None).readline):
        name = tokenize.tok_name[token.type]
        if token.type == tokenize.COMMENT:
            comments[token.start[0]] = token.start[1]
        elif token.type == tokenize.STRING:
            for row in range(token.start[0], token.end[0]):
                unfit[row] = inside_string
        elif name == "FSTRING_START":
            opened.append(token.start[0])
        elif name == "FSTRING_END" and opened:
            for row in range(opened.pop(), token.end[0]):
                unfit[row] = inside_string
    return comments, unfit


def _hash_comment_at(body: str) -> int | None:
    """Where a line-based file's `#` comment starts, as ``suppressions.hash_comment_suppressions`` reads it."""
    match = re.search(r"(?:^|\s)(#.*)$", body)
    return match.start(1) if match else None


def _same_tree(before: str, after: str) -> bool:
    from aoti_lint.model.syntax_tree import parse

    old, new = parse(before), parse(after)
    if isinstance(old, BaseException) or isinstance(new, BaseException):
        return False
    import ast

    return ast.dump(old) == ast.dump(new)
