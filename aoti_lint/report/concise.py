"""``path:line:col: CODE [*] message``, one finding a line, then ruff's summary."""

from __future__ import annotations

from aoti_lint.diagnostics import Finding
from aoti_lint.report import ReportContext, printable
from aoti_lint.report.closing import closing_lines


def format_finding(finding: Finding, context: ReportContext) -> str:
    where = f"{printable(finding.path)}:"
    if finding.cell is not None:
        where += f"cell {finding.cell}:"
    marker = " [*]" if finding.fix_applies(context.unsafe_fixes) else ""
    return f"{where}{finding.start.row}:{finding.start.column}: {finding.code}{marker} {printable(finding.message)}"


def render(findings: list[Finding], context: ReportContext) -> str:
    lines = [format_finding(finding, context) for finding in findings]
    lines += closing_lines(findings, context)
    return "\n".join(lines) + "\n" if lines else ""
