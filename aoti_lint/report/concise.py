"""``path:line:col: CODE [*] message``, one finding a line, then ruff's summary."""

from __future__ import annotations

from aoti_lint.diagnostics import Finding
from aoti_lint.report import ReportContext, printable
from aoti_lint.report.closing import closing_lines
from aoti_lint.report.colour import BOLD, CYAN, RED, paint


def format_finding(finding: Finding, context: ReportContext) -> str:
    on = context.colour
    colon = paint(":", CYAN, on)
    where = paint(printable(finding.path), BOLD, on) + colon
    if finding.cell is not None:
        where += f"cell {finding.cell}{colon}"
    marker = " " + paint("[*]", CYAN, on) if finding.fix_applies(context.unsafe_fixes) else ""
    code = paint(finding.code, BOLD + RED, on)
    return f"{where}{finding.start.row}{colon}{finding.start.column}{colon} {code}{marker} {printable(finding.message)}"


def render(findings: list[Finding], context: ReportContext) -> str:
    lines = [format_finding(finding, context) for finding in findings]
    lines += closing_lines(findings, context)
    return "\n".join(lines) + "\n" if lines else ""
