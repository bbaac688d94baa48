"""In-process helpers: lint a snippet with the real engine; read a rule fixture's expectations."""

from __future__ import annotations

import glob
import re
from pathlib import Path

from aoti_lint.config import Settings
from aoti_lint.engine import check_source
from aoti_lint.file_context import FileContext
from aoti_lint.project import check_project
from aoti_lint.rules import ALL_RULES
from aoti_lint.source import SourceFile, file_kind


def lint_text(
    text: str, filename: str = "example.py", select: tuple[str, ...] = ("ALL",), rules=ALL_RULES, prefilter=True
):
    settings = Settings(root=Path("."), select=select).with_enabled()
    enabled = [rule for rule in rules if rule.code in settings.enabled]
    kind = file_kind(Path(filename)) or "python"
    enabled = [rule for rule in enabled if kind in rule.file_kinds]
    source = SourceFile(path=Path(filename), display_path=filename, kind=kind, data=text.encode("utf-8"))
    result = check_source(source, FileContext.of(enabled), prefilter=prefilter)
    # Project rules see this one file as the whole project.
    findings, errors = check_project(enabled, [result.project] if result.project else [])
    result.findings.extend(findings)
    result.errors.extend(errors)
    return result


_FINDING_LINE = re.compile(r"^\S.*?:\d+:\d+: (AOTI\d{3}) ")


def by_code(output: str) -> dict[str, str]:
    """Concise CLI output grouped by rule code, each group's lines in output order."""
    groups: dict[str, str] = {}
    for line in output.splitlines(keepends=True):
        match = _FINDING_LINE.match(line)
        assert match is not None, line
        groups[match.group(1)] = groups.get(match.group(1), "") + line
    return groups


def expected_by_code(fixture: Path) -> dict[str, str]:
    """A rule fixture's expectations (``tests/fixtures/rules/<CODE>/``), one file per code: ``X.py.<CODE>.expected``
    next to a file, ``expected.<CODE>.txt`` in a project directory. An empty file: silent for that code."""
    if fixture.is_dir():
        files = fixture.glob("expected.AOTI*.txt")
        return {path.name.split(".")[1]: path.read_text() for path in sorted(files)}
    files = fixture.parent.glob(f"{glob.escape(fixture.name)}.AOTI*.expected")
    return {path.name.split(".")[-2]: path.read_text() for path in sorted(files)}


def reported(expected: dict[str, str]) -> dict[str, str]:
    """The codes of ``expected_by_code`` that report something, as ``by_code`` gives them."""
    return {code: text for code, text in expected.items() if text}
