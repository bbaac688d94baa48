"""GitLab Code Quality report (a Code Climate issue list), shown in merge request widgets and diffs."""

from __future__ import annotations

import json

from aoti_lint.diagnostics import Finding, Severity
from aoti_lint.report import ReportContext
from aoti_lint.report.locations import fingerprints, repository_path

SEVERITIES = {Severity.ERROR: "major", Severity.WARNING: "minor", Severity.NOTE: "info"}


def render(findings: list[Finding], context: ReportContext) -> str:
    issues = []
    for finding, fingerprint in zip(findings, fingerprints(findings, context), strict=True):
        where = f" (cell {finding.cell}, line {finding.start.row})" if finding.cell is not None else ""
        # A notebook's cell rows mean nothing in the file GitLab displays; point at its first line.
        lines = {"begin": finding.start.row, "end": finding.end.row} if finding.cell is None else {"begin": 1}
        issues.append(
            {
                "check_name": finding.code,
                "description": f"{finding.code}: {finding.message}{where}",
                "fingerprint": fingerprint,
                "severity": SEVERITIES[finding.severity],
                "location": {"path": repository_path(finding, context), "lines": lines},
            }
        )
    return json.dumps(issues, indent=2) + "\n"
