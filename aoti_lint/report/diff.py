"""``--diff``: the fixes as a unified diff, and the line that says what they would fix."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from aoti_lint.diagnostics import Finding


def unified_diffs(changes: dict[str, tuple[str, str]]) -> str:
    import difflib

    from aoti_lint.fixes.edits import split_lines

    chunks: list[str] = []
    for path, (before, after) in sorted(changes.items()):
        chunks.extend(difflib.unified_diff(split_lines(before), split_lines(after), f"a/{path}", f"b/{path}"))
    return "".join(chunk if chunk.endswith("\n") else chunk + "\n" for chunk in chunks)


def print_diff_summary(fixed: int, findings: Sequence[Finding], unsafe: bool) -> None:
    """What ``--diff`` would fix, and, as ruff says it, how many more fixes ``--unsafe-fixes`` would show."""
    hidden = 0 if unsafe else sum(1 for f in findings if f.fix_applies(True) and not f.fix_applies(False))
    more = f"{hidden} {'fix' if hidden == 1 else 'fixes'}"
    if fixed and hidden:
        line = f"Would fix {fixed} error{'s' if fixed != 1 else ''} ({more.replace(' fix', ' additional fix')} "
        line += "available with `--unsafe-fixes`)."
    elif fixed:
        line = f"Would fix {fixed} error{'s' if fixed != 1 else ''}."
    elif hidden:
        line = f"No errors would be fixed ({more} available with `--unsafe-fixes`)."
    else:
        return
    print(line, file=sys.stderr)
