"""JUnit XML in ruff's shape: a test suite per file, a failing test case per finding."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from itertools import groupby

from aoti_lint.diagnostics import Finding
from aoti_lint.report import ReportContext, printable

PACKAGE = "org.aoti-lint"


def render(findings: list[Finding], context: ReportContext) -> str:
    root = ET.Element("testsuites", name="aoti-lint", tests=str(len(findings)), failures=str(len(findings)), errors="0")
    if not findings:
        suite = ET.SubElement(root, "testsuite", name="aoti-lint", tests="1", disabled="0", errors="0", failures="0")
        ET.SubElement(suite, "testcase", name="No errors found", classname="aoti-lint")
    for raw_path, group in groupby(findings, key=lambda finding: finding.path):
        in_file = list(group)
        # XML 1.0 cannot hold most control characters at all: escaped, the report stays valid.
        path = printable(raw_path)
        suite = ET.SubElement(
            root,
            "testsuite",
            name=path,
            tests=str(len(in_file)),
            disabled="0",
            errors="0",
            failures=str(len(in_file)),
            package=PACKAGE,
        )
        classname = path.rsplit(".", 1)[0].replace("/", ".")
        for finding in in_file:
            case = ET.SubElement(
                suite,
                "testcase",
                name=f"{PACKAGE}.{finding.code}",
                classname=classname,
                line=str(finding.start.row),
                column=str(finding.start.column),
            )
            where = f"cell {finding.cell}, " if finding.cell is not None else ""
            message = printable(finding.message)
            failure = ET.SubElement(case, "failure", message=message)
            failure.text = f"{where}line {finding.start.row}, col {finding.start.column}, {message}"
    ET.indent(root, space="    ")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
