"""Match an error message or a whole log against the known AOTI failures, and render what matched."""

from __future__ import annotations

import json
import textwrap
from dataclasses import dataclass

from aoti_lint.knowledge.known_failure import KnownFailure
from aoti_lint.knowledge.known_failures import KNOWN_FAILURES
from aoti_lint.runtime.escape import printable


@dataclass(frozen=True)
class Match:
    failure: KnownFailure
    # 1-based number and text of the first line the entry matched.
    line: int
    text: str

    def to_dict(self) -> dict:
        entry = self.failure
        return {
            "id": entry.id,
            "title": entry.title,
            "line": self.line,
            "text": self.text,
            "diagnosis": entry.diagnosis,
            "checks": list(entry.checks),
            "fix": entry.fix,
            "rules": list(entry.rules),
        }


def match_text(text: str) -> list[Match]:
    """Every entry that matches somewhere in text, in the order of the log (first matching line)."""
    lines = text.splitlines()
    matches = []
    for order, entry in enumerate(KNOWN_FAILURES):
        regex = entry.regex
        for number, line in enumerate(lines, 1):
            if regex.search(line):
                matches.append((number, order, Match(entry, number, line.strip())))
                break
    return [match for _, _, match in sorted(matches, key=lambda item: item[:2])]


def _wrapped(text: str, indent: str) -> str:
    return textwrap.fill(text, width=110, initial_indent=indent, subsequent_indent=indent + "  ")


def render_match(match: Match, source: str | None = None, indent: str = "") -> str:
    entry = match.failure
    # The log line is someone else's text: shown escaped, on one line (escape.py).
    where = f"{printable(source)}:{match.line}: " if source else ""
    out = [f"{indent}{where}{entry.id}: {entry.title}", f"{indent}  | {printable(match.text[:300])}"]
    out.append(_wrapped(f"Diagnosis: {entry.diagnosis}", indent + "  "))
    out.append(f"{indent}  Checks:")
    out.extend(_wrapped(f"{n}. {check}", indent + "    ") for n, check in enumerate(entry.checks, 1))
    out.append(_wrapped(f"Fix: {entry.fix}", indent + "  "))
    if entry.rules:
        out.append(f"{indent}  Found statically by: {', '.join(entry.rules)} (`aoti-lint check`)")
    return "\n".join(out)


def render(matches: list[Match], source: str, output_format: str) -> str:
    if output_format == "json":
        return json.dumps({"source": source, "matches": [m.to_dict() for m in matches]}, indent=2) + "\n"
    if not matches:
        return f"{printable(source)}: no known AOTInductor failure found\n"
    return "\n\n".join(render_match(match, source) for match in matches) + "\n"
