"""Every output format over the same small project, checked in full, as CI systems read them."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import jsonschema
import pytest

from aoti_lint import __version__
from aoti_lint.diagnostics import Finding, Position, Severity
from aoti_lint.report import FORMATS, ReportContext, render
from aoti_lint.rules import ALL_RULES

SCHEMA = json.loads((Path(__file__).parent / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))

COMPILE = (
    "`torch._export.aot_compile` is deprecated; use "
    "`torch._inductor.aoti_compile_and_package(torch.export.export(...))` (torch 2.6+)"
)
# No compile of the project writes what the load reads: its fix is not offered (issue 42).
NO_PRODUCER = (
    "no compile of this run is known to write the `.pt2` package the new loader needs: run aoti-lint on the files "
    "that write its artifact too, or migrate both by hand"
)
LOAD = (
    "`torch._export.aot_load` is deprecated; use `torch._inductor.aoti_load_package(...)` (torch 2.6+); "
    f"not fixed automatically: {NO_PRODUCER}"
)
COMPILE_FIX = "Export with `torch.export.export` and compile with `aoti_compile_and_package`"
LOAD_FIX = f"Migrate by hand: {NO_PRODUCER}"
NOTEBOOK = {
    "cells": [
        {"cell_type": "markdown", "metadata": {}, "source": ["Compile"]},
        {
            "cell_type": "code",
            "execution_count": None,
            "metadata": {},
            "outputs": [],
            "source": ["%matplotlib inline\n", "import torch\n", "so = torch._export.aot_compile(m, (x,))"],
        },
    ],
    "metadata": {"language_info": {"name": "python"}},
    "nbformat": 4,
    "nbformat_minor": 5,
}
PROJECT = {
    "src/a.py": "import torch\n\nso = torch._export.aot_compile(model, (x,))\n",
    # A comma in the name: GitHub's `file=` property must escape it.
    "src/odd,name.py": 'from torch._export import aot_load\nrunner = aot_load("m.so", "cpu")\n',
    "clean.py": "import torch\n",
    "nb.ipynb": json.dumps(NOTEBOOK, indent=1) + "\n",
}
# Pinned: a changed fingerprint re-opens every alert in code scanning and GitLab.
FINGERPRINTS = [
    "45c066e23589404fd8d87d7edc05be37",
    "0c4041b2b943d8fab17eca6c7a1ab83f",
    "f149f480096195fa782a8553fdcfd3fc",
]


def make_project(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    return make_project(tmp_path_factory.mktemp("project"), PROJECT)


def output(cli, project: Path, fmt: str) -> str:
    result = cli("--output-format", fmt, cwd=project)
    assert result.returncode == 1, result.stderr
    assert result.stderr == ""
    return result.stdout


def test_every_format_is_offered():
    assert set(FORMATS) == {"concise", "full", "json", "json-lines", "github", "gitlab", "junit", "pylint", "sarif"}


def test_concise(cli, project):
    assert output(cli, project, "concise") == (
        f"nb.ipynb:cell 2:3:6: AOTI001 [*] {COMPILE}\n"
        f"src/a.py:3:6: AOTI001 [*] {COMPILE}\n"
        f"src/odd,name.py:2:10: AOTI002 {LOAD}\n"
        "Found 3 errors.\n"
        "[*] 2 fixable with the `--fix` option.\n"
    )


def test_full(cli, project):
    assert output(cli, project, "full") == textwrap.dedent(
        f"""\
        AOTI001 [*] {COMPILE}
         --> nb.ipynb:cell 2:3:6
          |
        2 | import torch
        3 | so = torch._export.aot_compile(m, (x,))
          |      ^^^^^^^^^^^^^^^^^^^^^^^^^
          |
        help: {COMPILE_FIX} (safe fix)

        AOTI001 [*] {COMPILE}
         --> src/a.py:3:6
          |
        2 |
        3 | so = torch._export.aot_compile(model, (x,))
          |      ^^^^^^^^^^^^^^^^^^^^^^^^^
          |
        help: {COMPILE_FIX} (safe fix)

        AOTI002 {LOAD}
         --> src/odd,name.py:2:10
          |
        1 | from torch._export import aot_load
        2 | runner = aot_load("m.so", "cpu")
          |          ^^^^^^^^
          |
        help: {LOAD_FIX} (display-only fix)

        Found 3 errors.
        [*] 2 fixable with the `--fix` option.
        """
    )


def test_json_and_json_lines(cli, project):
    rows = json.loads(output(cli, project, "json"))
    assert [(r["filename"], r["cell"], r["code"], r["location"], r["end_location"]) for r in rows] == [
        (str(project / "nb.ipynb"), 2, "AOTI001", {"row": 3, "column": 6}, {"row": 3, "column": 31}),
        (str(project / "src/a.py"), None, "AOTI001", {"row": 3, "column": 6}, {"row": 3, "column": 31}),
        (str(project / "src/odd,name.py"), None, "AOTI002", {"row": 2, "column": 10}, {"row": 2, "column": 18}),
    ]
    lines = output(cli, project, "json-lines").splitlines()
    assert [json.loads(line) for line in lines] == rows


def test_github(cli, project):
    assert output(cli, project, "github") == (
        # A notebook's rows are cell-relative, meaningless in the file GitHub shows: no line properties.
        f"::warning title=aoti-lint (AOTI001),file=nb.ipynb::nb.ipynb:cell 2:3:6: AOTI001 {COMPILE}\n"
        "::warning title=aoti-lint (AOTI001),file=src/a.py,line=3,col=6,endLine=3,endColumn=31::"
        f"src/a.py:3:6: AOTI001 {COMPILE}\n"
        "::warning title=aoti-lint (AOTI002),file=src/odd%2Cname.py,line=2,col=10,endLine=2,endColumn=18::"
        f"src/odd,name.py:2:10: AOTI002 {LOAD}\n"
    )


def test_github_escapes_like_the_actions_toolkit(tmp_path):
    finding = Finding(
        code="AOTI000",
        message="100% broken\r\nsecond line",
        path="dir:x/a,b.py",
        start=Position(1, 1),
        end=Position(1, 2),
        severity=Severity.ERROR,
    )
    text = render([finding], ReportContext(cwd=tmp_path, format="github"))
    assert text == (
        "::error title=aoti-lint (AOTI000),file=dir%3Ax/a%2Cb.py,line=1,col=1,endLine=1,endColumn=2::"
        "dir:x/a,b.py:1:1: AOTI000 100%25 broken%0D%0Asecond line\n"
    )


def test_pylint(cli, project):
    assert output(cli, project, "pylint") == (
        f"nb.ipynb:cell 2:3: [AOTI001] {COMPILE}\n"
        f"src/a.py:3: [AOTI001] {COMPILE}\n"
        f"src/odd,name.py:2: [AOTI002] {LOAD}\n"
    )


def test_gitlab(cli, project):
    assert json.loads(output(cli, project, "gitlab")) == [
        {
            "check_name": "AOTI001",
            "description": f"AOTI001: {COMPILE} (cell 2, line 3)",
            "fingerprint": FINGERPRINTS[0],
            "severity": "minor",
            "location": {"path": "nb.ipynb", "lines": {"begin": 1}},
        },
        {
            "check_name": "AOTI001",
            "description": f"AOTI001: {COMPILE}",
            "fingerprint": FINGERPRINTS[1],
            "severity": "minor",
            "location": {"path": "src/a.py", "lines": {"begin": 3, "end": 3}},
        },
        {
            "check_name": "AOTI002",
            "description": f"AOTI002: {LOAD}",
            "fingerprint": FINGERPRINTS[2],
            "severity": "minor",
            "location": {"path": "src/odd,name.py", "lines": {"begin": 2, "end": 2}},
        },
    ]


def test_fingerprints_survive_moved_lines_and_tell_twins_apart(cli, tmp_path):
    before = make_project(tmp_path / "before", {"a.py": PROJECT["src/a.py"]})
    moved = make_project(tmp_path / "moved", {"a.py": "# a new header\n\n" + PROJECT["src/a.py"]})
    twice = make_project(tmp_path / "twice", {"a.py": PROJECT["src/a.py"] + PROJECT["src/a.py"].splitlines()[-1]})
    fingerprint = [
        [issue["fingerprint"] for issue in json.loads(output(cli, root, "gitlab"))] for root in (before, moved, twice)
    ]
    assert fingerprint[0] == fingerprint[1]
    assert fingerprint[2][0] == fingerprint[0][0]
    assert len(set(fingerprint[2])) == 2


def test_junit(cli, project):
    assert output(cli, project, "junit") == textwrap.dedent(
        f"""\
        <?xml version="1.0" encoding="UTF-8"?>
        <testsuites name="aoti-lint" tests="3" failures="3" errors="0">
            <testsuite name="nb.ipynb" tests="1" disabled="0" errors="0" failures="1" package="org.aoti-lint">
                <testcase name="org.aoti-lint.AOTI001" classname="nb" line="3" column="6">
                    <failure message="{COMPILE}">cell 2, line 3, col 6, {COMPILE}</failure>
                </testcase>
            </testsuite>
            <testsuite name="src/a.py" tests="1" disabled="0" errors="0" failures="1" package="org.aoti-lint">
                <testcase name="org.aoti-lint.AOTI001" classname="src.a" line="3" column="6">
                    <failure message="{COMPILE}">line 3, col 6, {COMPILE}</failure>
                </testcase>
            </testsuite>
            <testsuite name="src/odd,name.py" tests="1" disabled="0" errors="0" failures="1" package="org.aoti-lint">
                <testcase name="org.aoti-lint.AOTI002" classname="src.odd,name" line="2" column="10">
                    <failure message="{LOAD}">line 2, col 10, {LOAD}</failure>
                </testcase>
            </testsuite>
        </testsuites>
        """
    )


def test_junit_without_findings_is_one_passing_case(tmp_path):
    text = render([], ReportContext(cwd=tmp_path, format="junit"))
    assert '<testcase name="No errors found" classname="aoti-lint" />' in text
    assert 'failures="0"' in text


def _validate_sarif(log: dict) -> None:
    jsonschema.Draft4Validator(SCHEMA).validate(log)


def test_sarif(cli, project):
    log = json.loads(output(cli, project, "sarif"))
    _validate_sarif(log)
    assert log["$schema"].endswith("sarif-schema-2.1.0.json")
    assert log["version"] == "2.1.0"
    (run,) = log["runs"]
    driver = run["tool"]["driver"]
    assert (driver["name"], driver["version"], driver["informationUri"]) == (
        "aoti-lint",
        __version__,
        "https://github.com/aoti-lint/aoti-lint",
    )
    # Every rule, not only those that fired, with what code scanning shows.
    assert [rule["id"] for rule in driver["rules"]] == sorted(rule.code for rule in ALL_RULES)
    for descriptor, rule in zip(driver["rules"], sorted(ALL_RULES, key=lambda r: r.code), strict=True):
        assert descriptor["name"] == rule.name
        assert descriptor["shortDescription"] == {"text": rule.summary}
        assert 0 < len(descriptor["fullDescription"]["text"]) <= 1024
        assert descriptor["help"]["markdown"] == rule.explanation()
        assert rule.url() in descriptor["help"]["text"]
        assert descriptor["helpUri"] == rule.url()
        assert descriptor["defaultConfiguration"] == {"level": rule.severity.value}
    assert run["columnKind"] == "unicodeCodePoints"
    assert run["originalUriBaseIds"] == {"%SRCROOT%": {"uri": project.resolve().as_uri() + "/"}}
    index = {rule["id"]: position for position, rule in enumerate(driver["rules"])}

    def region(start_line, start_column, end_line, end_column):
        return {"startLine": start_line, "startColumn": start_column, "endLine": end_line, "endColumn": end_column}

    def result(code, uri, where, message, fingerprint, fix=None):
        artifact = {"uri": uri, "uriBaseId": "%SRCROOT%"}
        physical = {"artifactLocation": artifact}
        if where:
            physical["region"] = region(*where)
        result = {
            "ruleId": code,
            "ruleIndex": index[code],
            "level": "warning",
            "message": {"text": message},
            "locations": [{"physicalLocation": physical}],
            "partialFingerprints": {"aotiLintFingerprint/v1": fingerprint},
        }
        if fix:
            description, deleted, inserted = fix
            replacement = {"deletedRegion": region(*deleted), "insertedContent": {"text": inserted}}
            change = {"artifactLocation": artifact, "replacements": [replacement]}
            result["fixes"] = [{"description": {"text": description}, "artifactChanges": [change]}]
        return result

    # Fixes are listed whatever their safety (as in the json format); a notebook's cell rows would not locate them.
    compile_fix = "so = torch._inductor.aoti_compile_and_package(torch.export.export(model, (x,)))\n"
    assert run["results"] == [
        result("AOTI001", "nb.ipynb", None, f"{COMPILE} (cell 2, line 3, column 6)", FINGERPRINTS[0]),
        result(
            "AOTI001",
            "src/a.py",
            (3, 6, 3, 31),
            COMPILE,
            FINGERPRINTS[1],
            (f"{COMPILE_FIX} (safe fix)", (3, 1, 4, 1), compile_fix),
        ),
        result(
            "AOTI002",
            "src/odd%2Cname.py",
            (2, 10, 2, 18),
            LOAD,
            FINGERPRINTS[2],
        ),
    ]


def test_sarif_schema_rejects_what_it_should():
    """The validator in use really checks: a log without results' messages is refused."""
    broken = {"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "x"}}, "results": [{"ruleId": "A"}]}]}
    with pytest.raises(jsonschema.ValidationError):
        _validate_sarif(broken)


def test_sarif_paths_are_relative_to_the_repository(cli, tmp_path):
    make_project(tmp_path, {"pkg/sub/a.py": PROJECT["src/a.py"]})
    (tmp_path / ".git").mkdir()
    result = cli("--output-format", "sarif", ".", cwd=tmp_path / "pkg")
    log = json.loads(result.stdout)
    location = log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
    assert location == {"uri": "pkg/sub/a.py", "uriBaseId": "%SRCROOT%"}


@pytest.mark.parametrize("how", ["env", "config"])
def test_format_chosen_by_environment_or_config(cli, tmp_path, how):
    make_project(tmp_path, {"a.py": PROJECT["src/a.py"]})
    env = {}
    if how == "env":
        env["AOTI_LINT_OUTPUT_FORMAT"] = "pylint"
    else:
        (tmp_path / "pyproject.toml").write_text('[tool.aoti-lint]\noutput-format = "pylint"\n', encoding="utf-8")
    result = cli(cwd=tmp_path, env=env)
    assert result.stdout == f"a.py:3: [AOTI001] {COMPILE}\n"
