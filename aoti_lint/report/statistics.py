"""``--statistics``: the number of findings per rule, as ruff counts them."""

from __future__ import annotations

from collections.abc import Sequence

from aoti_lint.diagnostics import Finding


def render_statistics(findings: Sequence[Finding], unsafe: bool) -> str:
    from collections import Counter

    from aoti_lint.rules import RULES_BY_CODE

    counts = Counter(f.code for f in findings)
    fixable = Counter(f.code for f in findings if f.fix_applies(unsafe))
    lines = []
    for code, count in sorted(counts.items(), key=lambda item: (-item[1], item[0])):
        marker = "[*]" if fixable[code] else "   "
        lines.append(f"{count:>5}\t{code}\t{marker} {RULES_BY_CODE[code].name}")
    if findings:
        lines.append(f"Found {len(findings)} error{'s' if len(findings) != 1 else ''}.")
    return "\n".join(lines) + "\n" if lines else ""
