"""The closing lines of the human formats, worded as ruff words them."""

from __future__ import annotations

from aoti_lint.diagnostics import Finding
from aoti_lint.report import ReportContext, printable


def _plural(count: int, word: str) -> str:
    if count == 1:
        return f"{count} {word}"
    return f"{count} {word}es" if word.endswith(("x", "s")) else f"{count} {word}s"


def closing_lines(findings: list[Finding], context: ReportContext) -> list[str]:
    if context.quiet:
        return []
    fixed = sum(context.fixed.values())
    lines: list[str] = []
    if context.show_fixes and fixed:
        lines.append("")
        lines.append(f"Fixed {_plural(fixed, 'error')}:")
        for path, count in sorted(context.fixed.items()):
            lines.append(f"- {printable(path)}:")
            lines.append(f"    {_plural(count, 'fix')}")
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
        lines.append(f"[*] {safe} fixable with the `--fix` option.")
    if unsafe:
        option = "`--fix --unsafe-fixes`" if not context.fix_mode else "`--unsafe-fixes`"
        lines.append(f"{_plural(unsafe, 'hidden fix')} can be enabled with the {option} option.")
    return lines
