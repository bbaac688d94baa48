"""The closing lines of the human formats, worded as ruff words them."""

from __future__ import annotations

from aoti_lint.diagnostics import Finding
from aoti_lint.report import ReportContext, printable
from aoti_lint.report.colour import CYAN, paint


def _plural(count: int, word: str) -> str:
    if count == 1:
        return f"{count} {word}"
    return f"{count} {word}es" if word.endswith(("x", "s")) else f"{count} {word}s"


def closing_lines(findings: list[Finding], context: ReportContext) -> list[str]:
    if context.quiet:
        return []
    fixed = sum(context.fixed.values())
    lines: list[str] = []
    # Files a fix wrote without fixing a finding of their own: a module naming the artifact path of a flow fixed
    # in another file.
    with_flow = sorted(set(context.written) - {path for path, count in context.fixed.items() if count})
    if context.show_fixes and fixed:
        lines.append("")
        lines.append(f"Fixed {_plural(fixed, 'error')}:")
        for path in sorted({*context.fixed, *with_flow}):
            lines.append(f"- {printable(path)}:")
            count = context.fixed.get(path, 0)
            lines.append(f"    {_plural(count, 'fix')}" if count else "    edited with a flow fixed in another file")
    elif with_flow:
        lines.append(f"Also edited with a flow fixed in another file: {', '.join(map(printable, with_flow))}")
    if not findings:
        if fixed:
            lines.append(f"Found {_plural(fixed, 'error')} ({fixed} fixed, 0 remaining).")
        elif context.errors:
            # Files that could not be read or checked were not "passed".
            lines.append(f"Not all checks ran: {_plural(context.errors, 'error')}, listed above.")
        else:
            lines.append("All checks passed!")
        return lines
    if fixed:
        total = fixed + len(findings)
        lines.append(f"Found {_plural(total, 'error')} ({fixed} fixed, {len(findings)} remaining).")
    else:
        lines.append(f"Found {_plural(len(findings), 'error')}.")
    safe = sum(1 for f in findings if f.fix_applies(unsafe=False))
    unsafe = sum(1 for f in findings if f.fix_applies(unsafe=True) and not f.fix_applies(unsafe=False))
    if context.unsafe_fixes:
        safe, unsafe = safe + unsafe, 0
    if safe and not context.fix_mode:
        lines.append(f"{paint('[*]', CYAN, context.colour)} {safe} fixable with the `--fix` option.")
    if unsafe:
        option = "`--fix --unsafe-fixes`" if not context.fix_mode else "`--unsafe-fixes`"
        lines.append(f"{_plural(unsafe, 'hidden fix')} can be enabled with the {option} option.")
        if context.format == "concise":  # the full format shows each fix under its finding
            lines += [_hidden(finding) for finding in findings if _is_hidden(finding, context)]
    return lines


def _is_hidden(finding: Finding, context: ReportContext) -> bool:
    return not context.unsafe_fixes and finding.fix_applies(unsafe=True) and not finding.fix_applies(unsafe=False)


def _hidden(finding: Finding) -> str:
    """One hidden fix: where, what it would change, why it is unsafe. ``path:line:`` without a column, so that
    the tools that read ``path:line:col:`` lines as findings do not take it for one."""
    assert finding.fix is not None
    where = f"{printable(finding.path)}:" + (f"cell {finding.cell}:" if finding.cell is not None else "")
    why = f" \u2014 {finding.fix.reason}" if finding.fix.reason else ""
    return f"{where}{finding.start.row}: {finding.code} unsafe fix: {printable(finding.fix.title + why)}"
