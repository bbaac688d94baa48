"""Rule documentation in ruff's layout, generated from each rule's docstring and examples.

``python -m aoti_lint.docs`` rewrites ``docs/rules/``; a test fails when a page is missing or stale.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from aoti_lint.rules import ALL_RULES
from aoti_lint.rules.base import Rule
from aoti_lint.source import file_kind

FIX_AVAILABILITY = {
    "never": "Fix is not available.",
    "sometimes": "Fix is sometimes available.",
    "always": "Fix is always available.",
}
# Sections after which the generated "Example" / "Use instead" go, in ruff's order.
_EXAMPLE_AFTER = ("What it does", "Why is this bad?", "Known problems")


def _sections(explanation: str) -> list[tuple[str, str]]:
    parts = re.split(r"^## (.+)$", explanation, flags=re.MULTILINE)
    sections = []
    for index in range(1, len(parts), 2):
        sections.append((parts[index].strip(), parts[index + 1].strip()))
    return sections


def _fence(filename: str) -> str:
    """The opening code fence for an example, in the language of its file."""
    return "```cpp" if file_kind(Path(filename)) == "cpp" else "```python"


def _example(rule: type[Rule]) -> list[str]:
    if not rule.INVALID:
        return []
    first = rule.INVALID[0]
    fence = _fence(first.filename)
    out = ["## Example", fence, first.source.rstrip(), "```"]
    use_instead = first.fixed_source
    if use_instead is None and rule.VALID:
        use_instead = rule.VALID[0].source
        fence = _fence(rule.VALID[0].filename)
    if use_instead is not None and use_instead.strip():
        out += ["", "Use instead:", fence, use_instead.rstrip(), "```"]
    return out


def rule_markdown(rule: type[Rule]) -> str:
    lines = [
        f"# {rule.name} ({rule.code})",
        "",
        f"{rule.summary}.",
        "",
        f"Severity: {rule.severity.value}. {FIX_AVAILABILITY[rule.fix_availability]} "
        f"Reads: {', '.join(sorted(rule.file_kinds))} files.",
        "",
    ]
    example_done = False
    for title, body in _sections(rule.explanation()):
        if not example_done and title not in _EXAMPLE_AFTER:
            lines += [*_example(rule), ""]
            example_done = True
        lines += [f"## {title}", body, ""]
    if not example_done:
        lines += [*_example(rule), ""]
    return "\n".join(lines).rstrip() + "\n"


def source_path(rule: type[Rule]) -> str:
    """The rule's module, relative to the repository root (where this page links it from docs/rules/)."""
    return rule.__module__.replace(".", "/") + ".py"


def index_markdown() -> str:
    lines = ["# Rules", "", "| Code | Name | Summary | Fix | Source |", "| --- | --- | --- | --- | --- |"]
    for rule in ALL_RULES:
        fix = {"never": "", "sometimes": "🛠️ sometimes", "always": "🛠️"}[rule.fix_availability]
        source = source_path(rule)
        lines.append(
            f"| [{rule.code}]({rule.code}.md) | {rule.name} | {rule.summary} | {fix} "
            f"| [{source.rsplit('/', 1)[-1]}](../../{source}) |"
        )
    return "\n".join(lines) + "\n"


def expected_pages() -> dict[str, str]:
    pages = {f"{rule.code}.md": rule_markdown(rule) for rule in ALL_RULES}
    pages["README.md"] = index_markdown()
    return pages


def write_pages(directory: Path) -> list[str]:
    directory.mkdir(parents=True, exist_ok=True)
    changed = []
    for name, text in expected_pages().items():
        page = directory / name
        if not page.exists() or page.read_text(encoding="utf-8") != text:
            page.write_text(text, encoding="utf-8")
            changed.append(name)
    return changed


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("docs/rules")
    for name in write_pages(target):
        print(f"wrote {target / name}")
