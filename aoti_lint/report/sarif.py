"""SARIF 2.1.0 for GitHub code scanning (github/codeql-action/upload-sarif) and other SARIF viewers.

Beyond what the OASIS schema requires, it carries what code scanning reads: every rule with its descriptions,
help and default level; repository-relative URIs; full regions; fingerprints that survive lines moving.
"""

from __future__ import annotations

import json
import re
from urllib.parse import quote

from aoti_lint import __version__
from aoti_lint.diagnostics import Edit, Finding, Severity
from aoti_lint.report import ReportContext
from aoti_lint.report.locations import fingerprints, repository_path, repository_root

SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
INFORMATION_URI = "https://github.com/aoti-lint/aoti-lint"
LEVELS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.NOTE: "note"}
# GitHub truncates descriptions beyond this many characters.
DESCRIPTION_LIMIT = 1024
SRCROOT = "%SRCROOT%"


def _section(explanation: str, title: str) -> str:
    match = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", explanation, flags=re.MULTILINE | re.DOTALL)
    return " ".join(match.group(1).split()) if match else ""


def _rule_descriptor(rule) -> dict:
    explanation = rule.explanation()
    full = _section(explanation, "What it does") or rule.summary
    return {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": full[:DESCRIPTION_LIMIT]},
        "help": {"text": f"{full}\n\n{rule.url()}", "markdown": explanation},
        "helpUri": rule.url(),
        "defaultConfiguration": {"level": LEVELS[rule.severity]},
        "properties": {"tags": ["aoti-lint"], "precision": "high"},
    }


def _region(start, end) -> dict:
    return {"startLine": start.row, "startColumn": start.column, "endLine": end.row, "endColumn": end.column}


def _artifact(finding: Finding, context: ReportContext) -> dict:
    # A file name that is not UTF-8 keeps its bytes, percent-encoded.
    return {"uri": quote(repository_path(finding, context), errors="surrogateescape"), "uriBaseId": SRCROOT}


def _replacement(edit: Edit) -> dict:
    return {"deletedRegion": _region(edit.start, edit.end), "insertedContent": {"text": edit.content}}


def _result(finding: Finding, rule_index: int, fingerprint: str, context: ReportContext) -> dict:
    physical: dict = {"artifactLocation": _artifact(finding, context)}
    message = finding.message
    if finding.cell is None:
        physical["region"] = _region(finding.start, finding.end)
    else:
        # Cell-relative rows would point at the wrong lines of the notebook's JSON.
        message += f" (cell {finding.cell}, line {finding.start.row}, column {finding.start.column})"
    result = {
        "ruleId": finding.code,
        "ruleIndex": rule_index,
        "level": LEVELS[finding.severity],
        "message": {"text": message},
        "locations": [{"physicalLocation": physical}],
        "partialFingerprints": {"aotiLintFingerprint/v1": fingerprint},
    }
    if finding.fix is not None and finding.fix.edits and finding.cell is None:
        result["fixes"] = [
            {
                "description": {"text": f"{finding.fix.message} ({finding.fix.applicability.value} fix)"},
                "artifactChanges": [
                    {
                        "artifactLocation": _artifact(finding, context),
                        "replacements": [_replacement(edit) for edit in finding.fix.edits],
                    }
                ],
            }
        ]
    return result


def sarif_log(findings: list[Finding], context: ReportContext) -> dict:
    from aoti_lint.rules import ALL_RULES

    rules = sorted(ALL_RULES, key=lambda rule: rule.code)
    index = {rule.code: position for position, rule in enumerate(rules)}
    root_uri = repository_root(context.cwd.resolve()).as_uri().rstrip("/") + "/"
    results = [
        _result(finding, index[finding.code], fingerprint, context)
        for finding, fingerprint in zip(findings, fingerprints(findings, context), strict=True)
    ]
    return {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "aoti-lint",
                        "version": __version__,
                        "semanticVersion": __version__,
                        "informationUri": INFORMATION_URI,
                        "rules": [_rule_descriptor(rule) for rule in rules],
                    }
                },
                "originalUriBaseIds": {SRCROOT: {"uri": root_uri}},
                "columnKind": "unicodeCodePoints",
                "results": results,
            }
        ],
    }


def render(findings: list[Finding], context: ReportContext) -> str:
    return json.dumps(sarif_log(findings, context), indent=2) + "\n"
