"""What the CI formats share: paths relative to the repository, source lines and fingerprints that survive
lines moving."""

from __future__ import annotations

import hashlib
import os
from collections import Counter
from functools import lru_cache
from pathlib import Path

from aoti_lint.diagnostics import Finding
from aoti_lint.report import ReportContext


@lru_cache(maxsize=8)
def repository_root(cwd: Path) -> Path:
    """The enclosing git checkout (code scanning resolves URIs against it), else the working directory."""
    for directory in (cwd, *cwd.parents):
        if (directory / ".git").exists():
            return directory
    return cwd


def repository_path(finding: Finding, context: ReportContext) -> str:
    """The finding's file as a forward-slash path relative to the repository root (absolute if outside)."""
    absolute = context.absolute(finding.path)
    root = repository_root(context.cwd.resolve())
    relative = os.path.relpath(absolute, root) if os.path.isabs(absolute) else absolute
    if relative.startswith(".."):
        return Path(absolute).as_posix()
    return Path(relative).as_posix()


def source_line(finding: Finding, context: ReportContext) -> str:
    lines = context.lines(finding.path, finding.cell)
    row = finding.start.row
    return lines[row - 1] if 0 < row <= len(lines) else ""


def fingerprints(findings: list[Finding], context: ReportContext) -> list[str]:
    """One id per finding from its rule, file, cell and the text of its line (not the line number), so an
    alert keeps its identity when code above it moves; a counter tells identical lines apart."""
    seen: Counter[tuple] = Counter()
    result = []
    for finding in findings:
        key = (
            finding.code,
            repository_path(finding, context),
            finding.cell,
            " ".join(source_line(finding, context).split()),
        )
        seen[key] += 1
        material = "\0".join(str(part) for part in (*key, seen[key]))
        # surrogateescape: a file name that is not UTF-8 hashes as its own bytes.
        result.append(hashlib.sha256(material.encode("utf-8", "surrogateescape")).hexdigest()[:32])
    return result
