"""The values of `--output-format`, each with the module of `aoti_lint/report/` that renders it."""

# Format name -> module (imported only when chosen).
FORMATS = {
    "concise": "aoti_lint.report.concise",
    "full": "aoti_lint.report.full",
    "json": "aoti_lint.report.json_format",
    "json-lines": "aoti_lint.report.json_format",
    "github": "aoti_lint.report.github",
    "gitlab": "aoti_lint.report.gitlab",
    "junit": "aoti_lint.report.junit",
    "pylint": "aoti_lint.report.pylint",
    "sarif": "aoti_lint.report.sarif",
}
# Formats that print each fix's edits; the others only say whether a fix exists.
FORMATS_WITH_EDITS = frozenset({"json", "json-lines", "sarif"})
