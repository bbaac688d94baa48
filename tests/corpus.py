"""The scored corpus (``tests/fixtures/corpus/<case>/``) and the findings each output format reports.

Each case is a small project; its ``expected.txt`` opens with ``# shape: ...`` and lists one
``path:line: CODE`` per finding the rule docs promise (a line twice when two are due there). The parsers below
read every output format back to the same tuples, so that one run can be compared with another."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

from tests.conftest import FIXTURES, REPO

CORPUS = FIXTURES / "corpus"
FORMATS = ("concise", "full", "json", "json-lines", "github", "sarif", "gitlab", "pylint", "junit")
# Formats that do not print a column: their findings are compared on (path, row, code).
WITHOUT_COLUMN = frozenset({"gitlab", "pylint"})

Finding = tuple  # (path relative to the run's root, row, column or None, code)


def cases() -> list[Path]:
    return sorted(p for p in CORPUS.iterdir() if (p / "expected.txt").is_file())


def shape(case: Path) -> str:
    first = (case / "expected.txt").read_text().splitlines()[0]
    return first.removeprefix("# shape:").strip()


def expected(case: Path) -> Counter:
    """(path, row, code) of each finding the case is due, counted."""
    due: Counter = Counter()
    for line in (case / "expected.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            where, code = line.rsplit(": ", 1)
            path, row = where.rsplit(":", 1)
            due[(path, int(row), code.strip())] += 1
    return due


def _relative(path: str, root: Path) -> str:
    """A path as a format prints it (absolute, from the working directory or from the repository) made relative
    to the run's root."""
    candidate = Path(path)
    if not candidate.is_absolute():
        for base in (root, REPO):
            if (base / candidate).exists():
                candidate = base / candidate
                break
    try:
        return candidate.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return path


_CONCISE = re.compile(r"^(?P<path>.+?):(?:cell (?P<cell>\d+):)?(?P<row>\d+):(?P<col>\d+): (?P<code>AOTI\d{3}) ")
_FULL = re.compile(r"^ *--> (?P<path>.+?):(?:cell (?P<cell>\d+):)?(?P<row>\d+):(?P<col>\d+)$")
_FULL_CODE = re.compile(r"^(?P<code>AOTI\d{3}) ")
_GITHUB = re.compile(
    r"^::\w+ title=aoti-lint \((?P<code>AOTI\d{3})\),file=(?P<path>[^,]+),line=(?P<row>\d+),col=(?P<col>\d+)"
)
_PYLINT = re.compile(r"^(?P<path>.+?):(?P<row>\d+): \[(?P<code>AOTI\d{3})\]")


def findings(fmt: str, output: str, root: Path) -> Counter:
    """The findings an output in format ``fmt`` reports, as (path, row, column or None, code), counted."""
    found: Counter = Counter()

    def add(path: str, row: int, col: int | None, code: str) -> None:
        found[(_relative(path, root), int(row), None if fmt in WITHOUT_COLUMN else int(col or 0), code)] += 1

    if fmt in ("concise", "full", "github", "pylint"):
        code = None
        for line in output.splitlines():
            if fmt == "concise" and (m := _CONCISE.match(line)):
                add(m["path"], m["row"], m["col"], m["code"])
            elif fmt == "full" and (m := _FULL_CODE.match(line)):
                code = m["code"]
            elif fmt == "full" and code and (m := _FULL.match(line)):
                add(m["path"], m["row"], m["col"], code)
                code = None
            elif fmt == "github" and (m := _GITHUB.match(line)):
                add(m["path"], m["row"], m["col"], m["code"])
            elif fmt == "pylint" and (m := _PYLINT.match(line)):
                add(m["path"], m["row"], None, m["code"])
    elif fmt in ("json", "json-lines"):
        items = json.loads(output) if fmt == "json" else [json.loads(line) for line in output.splitlines() if line]
        for item in items:
            add(item["filename"], item["location"]["row"], item["location"]["column"], item["code"])
    elif fmt == "gitlab":
        for item in json.loads(output):
            add(item["location"]["path"], item["location"]["lines"]["begin"], None, item["check_name"])
    elif fmt == "sarif":
        for result in json.loads(output)["runs"][0]["results"]:
            where = result["locations"][0]["physicalLocation"]
            region = where["region"]
            add(where["artifactLocation"]["uri"], region["startLine"], region.get("startColumn"), result["ruleId"])
    elif fmt == "junit":
        for suite in ET.fromstring(output).iter("testsuite"):
            for case in suite.iter("testcase"):
                if case.find("failure") is not None:
                    code = (case.get("name") or "").rsplit(".", 1)[-1]
                    add(suite.get("name") or "", int(case.get("line") or 0), int(case.get("column") or 0), code)
    else:
        raise ValueError(fmt)
    return found


def without_column(found: Counter) -> Counter:
    kept: Counter = Counter()
    for (path, row, _column, code), count in found.items():
        kept[(path, row, None, code)] += count
    return kept


def run_case(case: Path, fmt: str = "concise", *extra: str):
    """aoti-lint on one case, in this process, as a user runs it from the case's root; no cache, no config."""
    from tests.helpers import run_main

    return run_main(".", "--isolated", "--no-cache", "--output-format", fmt, *extra, cwd=case)


class Score:
    """Found, due and false positives of one case, on (path, row, code)."""

    def __init__(self, case: Path, reported: Counter) -> None:
        self.case = case.name
        self.shape = shape(case)
        due = expected(case)
        got: Counter = Counter()
        for (path, row, _column, code), count in reported.items():
            got[(path, row, code)] += count
        self.due = sum(due.values())
        self.found = sum(min(count, got[key]) for key, count in due.items())
        self.false_positives = sum(max(0, count - due[key]) for key, count in got.items())
        self.missed = sorted((due - got).elements())
        self.unexpected = sorted((got - due).elements())


def score(case: Path) -> Score:
    # json: a format that shows fixes, so the modules whose findings come with one are read by libcst as well
    # (tests/test_format_consistency.py holds every other format to the same findings).
    result = run_case(case, "json")
    assert result.returncode in (0, 1), result.stderr
    return Score(case, findings("json", result.stdout, case))


TABLE_START = "<!-- corpus-score: start -->"
TABLE_END = "<!-- corpus-score: end -->"


def table(scores: list[Score]) -> str:
    """The per-case table of docs/corpus.md, with the totals."""
    lines = ["| Case | Shape | Found / due | False positives |", "| --- | --- | --- | --- |"]
    for s in scores:
        lines.append(f"| `{s.case}` | {s.shape} | {s.found} / {s.due} | {s.false_positives} |")
    found = sum(s.found for s in scores)
    due = sum(s.due for s in scores)
    false_positives = sum(s.false_positives for s in scores)
    lines.append(f"| **all {len(scores)} cases** | | **{found} / {due}** | **{false_positives}** |")
    return "\n".join(lines)


if __name__ == "__main__":
    # `python -m tests.corpus`: rewrite the score table of docs/corpus.md from a run over the corpus.
    doc = REPO / "docs" / "corpus.md"
    text = doc.read_text()
    head, rest = text.split(TABLE_START, 1)
    _, tail = rest.split(TABLE_END, 1)
    doc.write_text(f"{head}{TABLE_START}\n{table([score(c) for c in cases()])}\n{TABLE_END}{tail}")
