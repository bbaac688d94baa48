"""In-process helpers: lint a snippet with the real engine."""

from __future__ import annotations

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
