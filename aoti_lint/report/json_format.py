"""ruff's JSON shape: a list of objects (``json``) or one object a line (``json-lines``)."""

from __future__ import annotations

import json

from aoti_lint.diagnostics import Finding
from aoti_lint.report import ReportContext


def _location(position) -> dict:
    return {"column": position.column, "row": position.row}


def finding_to_json(finding: Finding, context: ReportContext) -> dict:
    fix = None
    if finding.fix is not None:
        fix = {
            "applicability": finding.fix.applicability.value,
            "edits": [
                {"content": edit.content, "end_location": _location(edit.end), "location": _location(edit.start)}
                for edit in finding.fix.edits
            ],
            "message": finding.fix.message,
        }
    return {
        "cell": finding.cell,
        "code": finding.code,
        "end_location": _location(finding.end),
        "filename": context.absolute(finding.path),
        "fix": fix,
        "location": _location(finding.start),
        "message": finding.message,
        "noqa_row": finding.noqa_row or finding.start.row,
        "url": finding.url,
    }


def render_json(findings: list[Finding], context: ReportContext) -> str:
    return json.dumps([finding_to_json(f, context) for f in findings], indent=2) + "\n"


def render_json_lines(findings: list[Finding], context: ReportContext) -> str:
    return "".join(json.dumps(finding_to_json(f, context)) + "\n" for f in findings)
