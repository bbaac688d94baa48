"""ruff's ``full`` format: the finding, its location, a source snippet with carets, and the fix."""

from __future__ import annotations

from aoti_lint.diagnostics import Finding
from aoti_lint.report import ReportContext, printable
from aoti_lint.report.closing import closing_lines
from aoti_lint.report.colour import BOLD, CYAN, RED, paint

CONTEXT_LINES = 1


def _snippet(finding: Finding, context: ReportContext) -> list[str]:
    lines = context.lines(finding.path, finding.cell)
    row = finding.start.row
    if not lines or row > len(lines):
        return []
    first = max(1, row - CONTEXT_LINES)
    last = min(len(lines), max(row, finding.end.row) + CONTEXT_LINES)
    width = len(str(last))
    gutter = " " * width
    out = [f"{gutter} |"]
    for number in range(first, last + 1):
        text = printable(lines[number - 1].rstrip("\r\n"))
        out.append(f"{number:>{width}} | {text}".rstrip())
        if number == row:
            end = finding.end.column if finding.end.row == row else len(text) + 1
            carets = "^" * max(1, end - finding.start.column)
            out.append(f"{gutter} | {' ' * (finding.start.column - 1)}{carets}")
    out.append(f"{gutter} |")
    return out


def render(findings: list[Finding], context: ReportContext) -> str:
    out: list[str] = []
    for finding in findings:
        on = context.colour
        marker = " " + paint("[*]", CYAN, on) if finding.fix_applies(context.unsafe_fixes) else ""
        out.append(f"{paint(finding.code, BOLD + RED, on)}{marker} {paint(printable(finding.message), BOLD, on)}")
        cell = f"cell {finding.cell}:" if finding.cell is not None else ""
        where = f"{printable(finding.path)}:{cell}{finding.start.row}:{finding.start.column}"
        out.append(f" {paint('-->', CYAN, on)} {where}")
        out += _snippet(finding, context)
        if finding.fix is not None:
            out.append(f"help: {printable(finding.fix.message)} ({finding.fix.applicability.value} fix)")
        out.append("")
    out += closing_lines(findings, context)
    return "\n".join(out) + "\n" if out else ""
