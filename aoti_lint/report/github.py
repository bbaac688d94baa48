"""GitHub Actions workflow commands: one annotation per finding on the pull request's diff.

Escaped as the Actions toolkit escapes them (actions/toolkit packages/core/src/command.ts), so a message holding
``%``, a newline or (in properties) ``:`` and ``,`` cannot cut the command short.
"""

from __future__ import annotations

from aoti_lint.diagnostics import Finding, Severity
from aoti_lint.report import ReportContext, printable
from aoti_lint.report.locations import repository_path

LEVELS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.NOTE: "notice"}


def escape_data(value: str) -> str:
    # The toolkit's rules for `%` and newlines, then every other control shown escaped (`\x1b`): the code
    # under review wrote them, and a terminal or log viewer would obey them.
    return printable(value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A"))


def escape_property(value: str) -> str:
    return escape_data(value).replace(":", "%3A").replace(",", "%2C")


def format_finding(finding: Finding, context: ReportContext) -> str:
    properties: dict[str, str | int] = {
        "title": f"aoti-lint ({finding.code})",
        "file": repository_path(finding, context),
    }
    # Notebook rows count from the start of a cell, not of the file GitHub shows, so give no line there.
    if finding.cell is None:
        properties |= {
            "line": finding.start.row,
            "col": finding.start.column,
            "endLine": finding.end.row,
            "endColumn": finding.end.column,
        }
    where = f"cell {finding.cell}:" if finding.cell is not None else ""
    message = f"{finding.path}:{where}{finding.start.row}:{finding.start.column}: {finding.code} {finding.message}"
    fields = ",".join(f"{key}={escape_property(str(value))}" for key, value in properties.items())
    return f"::{LEVELS[finding.severity]} {fields}::{escape_data(message)}"


def render(findings: list[Finding], context: ReportContext) -> str:
    return "".join(format_finding(finding, context) + "\n" for finding in findings)
