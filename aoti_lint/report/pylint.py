"""pylint's parseable line, ``path:line: [CODE] message``, for tools that read pylint output."""

from __future__ import annotations

from aoti_lint.diagnostics import Finding
from aoti_lint.report import ReportContext, printable


def render(findings: list[Finding], context: ReportContext) -> str:
    lines = []
    for finding in findings:
        where = f"cell {finding.cell}:" if finding.cell is not None else ""
        path, message = printable(finding.path), printable(finding.message)
        lines.append(f"{path}:{where}{finding.start.row}: [{finding.code}] {message}\n")
    return "".join(lines)
