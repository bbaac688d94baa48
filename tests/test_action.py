"""The GitHub Action (action.yml): its metadata follows GitHub's rules, and its shell steps, run here the way the
runner runs them (`bash --noprofile --norc -eo pipefail`, expressions replaced by their values), annotate, write
valid SARIF and exit as docs/ci.md says.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
import yaml

from tests.conftest import REPO

ACTION = REPO / "action.yml"
SARIF_SCHEMA = json.loads((REPO / "tests" / "sarif-schema-2.1.0.json").read_text())
LEGACY = REPO / "examples" / "legacy_project"
EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")
# What `shell:` accepts (GitHub's workflow syntax, jobs.<id>.steps[*].shell).
SHELLS = {"bash", "pwsh", "python", "sh", "cmd", "powershell"}
BASH = ["bash", "--noprofile", "--norc", "-eo", "pipefail"]  # the runner's command line for `shell: bash`


def load_action() -> dict:
    return yaml.safe_load(ACTION.read_text())


def test_metadata_follows_githubs_rules():
    action = load_action()
    assert isinstance(action["name"], str) and action["name"]
    assert isinstance(action["description"], str) and action["description"]
    assert set(action) <= {"name", "author", "description", "inputs", "outputs", "runs", "branding"}
    for name, spec in action["inputs"].items():
        assert re.fullmatch(r"[A-Za-z_][A-Za-z0-9_-]*", name), name
        assert isinstance(spec["description"], str) and spec["description"], name
        assert set(spec) <= {"description", "required", "default", "deprecationMessage"}, name
        assert isinstance(spec.get("default", ""), str), name  # inputs are strings; a YAML 1 or true is not
    runs = action["runs"]
    assert runs["using"] == "composite"
    assert runs["steps"], "a composite action needs steps"
    for step in runs["steps"]:
        assert ("run" in step) != ("uses" in step), step
        if "run" in step:
            assert step.get("shell") in SHELLS, f"step {step.get('name')!r} has no valid shell"


def test_inputs_are_ruff_actions_and_reach_the_scripts_only_through_env():
    action = load_action()
    assert set(action["inputs"]) == {"args", "src", "version", "output-format", "sarif-file"}
    assert action["inputs"]["output-format"]["default"] == "github"
    used = set()
    for step in action["runs"]["steps"]:
        # An expression pasted into a script would run whatever a caller put in it.
        assert not EXPRESSION.search(step["run"]), step["name"]
        for value in step.get("env", {}).values():
            for expression in EXPRESSION.findall(value):
                allowed = {"github.action_path", "github.action_repository", "runner.temp"}
                assert expression in allowed or expression.startswith("inputs."), value
                used.add(expression.removeprefix("inputs."))
    assert set(action["inputs"]) <= used


def test_ci_docs_list_the_inputs_with_their_defaults():
    docs = (REPO / "docs" / "ci.md").read_text()
    for name, spec in load_action()["inputs"].items():
        default = f"`{spec['default']}`" if spec["default"] else "(empty)"
        assert re.search(rf"^\| `{re.escape(name)}` \| {re.escape(default)} \|", docs, re.MULTILINE), name


# The owner/name of `uses:` and the server the runner was given, as in a workflow that uses the action.
ACTION_REPOSITORY = "aoti-lint/aoti-lint"
SERVER_URL = "https://github.com"


def _value(expression: str, inputs: dict[str, str], action_path: Path, runner_temp: Path) -> str:
    if expression == "github.action_path":
        return str(action_path)
    if expression == "github.action_repository":
        return ACTION_REPOSITORY
    if expression == "runner.temp":
        return str(runner_temp)
    return inputs[expression.removeprefix("inputs.")]


def run_step(
    step_id: str,
    workspace: Path,
    runner_temp: Path,
    action_path: Path = REPO,
    server_url: str = SERVER_URL,
    path: str | None = None,
    **given: str,
):
    """Run one step of action.yml as the runner would: defaults filled in, expressions replaced, runner env set;
    ``path``: $PATH, when commands of the test's own stand for the runner's."""
    action = load_action()
    inputs = {name: spec.get("default", "") for name, spec in action["inputs"].items()}
    inputs.update({name.replace("_", "-"): value for name, value in given.items()})
    (step,) = [step for step in action["runs"]["steps"] if step.get("id") == step_id]
    assert step["shell"] == "bash"
    env = {key: value for key, value in os.environ.items() if not key.startswith(("AOTI_LINT_", "GITHUB_"))}
    env.update(RUNNER_TEMP=str(runner_temp), GITHUB_PATH=str(runner_temp / "github_path"), GITHUB_ACTIONS="true")
    env.update(GITHUB_SERVER_URL=server_url, **({"PATH": path} if path else {}))
    for key, value in step.get("env", {}).items():
        env[key] = EXPRESSION.sub(lambda m: _value(m.group(1), inputs, action_path, runner_temp), value)
    script = runner_temp / f"{step_id}.sh"
    script.write_text(step["run"])
    return subprocess.run([*BASH, str(script)], cwd=workspace, env=env, capture_output=True, text=True, timeout=600)


def _workspace(tmp_path: Path, source: Path | None = LEGACY) -> Path:
    """A checked-out repository, as actions/checkout leaves it in $GITHUB_WORKSPACE."""
    workspace = tmp_path / "workspace"
    if source is None:
        workspace.mkdir()
        (workspace / "clean.py").write_text("import torch\n")
    else:
        shutil.copytree(source, workspace, ignore=shutil.ignore_patterns(".aoti_lint_cache"))
    subprocess.run(["git", "init", "-q"], cwd=workspace, check=True)
    return workspace


def _runner_temp(tmp_path: Path, aoti_lint: str | None = None) -> Path:
    """$RUNNER_TEMP, with the install step's result already in place when aoti_lint (a command) is given."""
    runner_temp = tmp_path / "runner-temp"
    runner_temp.mkdir()
    if aoti_lint:
        venv_bin = runner_temp / "aoti-lint-venv" / "bin"
        venv_bin.mkdir(parents=True)
        (venv_bin / "aoti-lint").write_text(f'#!/bin/sh\nexec {aoti_lint} "$@"\n')
        (venv_bin / "aoti-lint").chmod(0o755)
    return runner_temp


# This tree's aoti-lint, standing in for the install step (which the slow test below runs for real).
THIS_TREE = f"{sys.executable} -m aoti_lint"


def _annotations(stdout: str) -> list[tuple[str, str, str]]:
    return re.findall(r"^::warning title=aoti-lint \((AOTI\d+)\),file=([^,]+),line=(\d+),", stdout, re.MULTILINE)


def _check_sarif(path: Path) -> list[tuple[str, str, int]]:
    report = json.loads(path.read_text())
    jsonschema.Draft4Validator(SARIF_SCHEMA).validate(report)
    return [
        (
            result["ruleId"],
            result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
            result["locations"][0]["physicalLocation"]["region"]["startLine"],
        )
        for result in report["runs"][0]["results"]
    ]


EXPECTED = [
    ("AOTI201", "build.sh", "3"),
    ("AOTI201", "build.sh", "4"),
    ("AOTI001", "export_model.py", "21"),
    ("AOTI002", "export_model.py", "26"),
    ("AOTI002", "serve.py", "7"),
]


def test_findings_are_annotated_written_to_sarif_and_fail_the_step(tmp_path):
    workspace = _workspace(tmp_path)
    runner_temp = _runner_temp(tmp_path, THIS_TREE)
    result = run_step("run", workspace, runner_temp, sarif_file="aoti-lint.sarif")
    assert result.returncode == 1, result.stdout + result.stderr
    assert _annotations(result.stdout) == EXPECTED
    assert sorted(_check_sarif(workspace / "aoti-lint.sarif")) == sorted((c, f, int(n)) for c, f, n in EXPECTED)
    # The cache lives in $RUNNER_TEMP, not in the user's checkout.
    assert not (workspace / ".aoti_lint_cache").exists()
    assert (runner_temp / "aoti-lint-cache").is_dir()


def test_clean_tree_passes_and_still_writes_sarif(tmp_path):
    workspace = _workspace(tmp_path, source=None)
    runner_temp = _runner_temp(tmp_path, THIS_TREE)
    result = run_step("run", workspace, runner_temp, sarif_file="out/aoti-lint.sarif")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "::" not in result.stdout
    assert _check_sarif(workspace / "out" / "aoti-lint.sarif") == []


def test_args_src_and_output_format_reach_aoti_lint(tmp_path):
    workspace = _workspace(tmp_path)
    runner_temp = _runner_temp(tmp_path, THIS_TREE)
    result = run_step("run", workspace, runner_temp, args="check --select AOTI002", src="serve.py export_model.py",
                      output_format="concise")  # fmt: skip
    assert result.returncode == 1, result.stderr
    # The findings of both files (serve.py's load has no fix: no compile of the run writes what it reads).
    assert [line.split(" ")[:2] for line in result.stdout.splitlines() if " AOTI" in line] == [
        ["export_model.py:26:14:", "AOTI002"],
        ["serve.py:7:12:", "AOTI002"],
    ]
    assert not (workspace / "aoti-lint.sarif").exists()


def test_an_error_fails_the_step_with_exit_two(tmp_path):
    workspace = _workspace(tmp_path)
    runner_temp = _runner_temp(tmp_path, THIS_TREE)
    result = run_step("run", workspace, runner_temp, src="missing/", sarif_file="aoti-lint.sarif")
    assert result.returncode == 2, result.stdout + result.stderr
    assert "missing" in result.stderr


@pytest.fixture(scope="session")
def action_checkout(tmp_path_factory) -> Path:
    """What the runner downloads for `uses: aoti-lint/aoti-lint@<sha>`: this repository at HEAD."""
    clone = tmp_path_factory.mktemp("action") / "aoti-lint"
    subprocess.run(["git", "clone", "-q", str(REPO), str(clone)], check=True)
    return clone


@pytest.mark.slow
def test_install_step_installs_the_actions_own_ref_then_runs_it(tmp_path, action_checkout):
    """The real install step: a fresh virtual environment, aoti-lint from the action's checkout (pip, PyPI)."""
    workspace = _workspace(tmp_path)
    runner_temp = _runner_temp(tmp_path)
    installed = run_step("install", workspace, runner_temp, action_path=action_checkout)
    assert installed.returncode == 0, installed.stdout + installed.stderr
    venv_bin = runner_temp / "aoti-lint-venv" / "bin"
    assert installed.stdout.strip().splitlines()[-1].startswith("aoti-lint ")
    assert (runner_temp / "github_path").read_text() == f"{venv_bin}\n"
    result = run_step("run", workspace, runner_temp, sarif_file="aoti-lint.sarif")
    assert result.returncode == 1, result.stdout + result.stderr
    assert _annotations(result.stdout) == EXPECTED
    assert len(_check_sarif(workspace / "aoti-lint.sarif")) == len(EXPECTED)


# A `python3` standing in for the runner's: `-m venv DIR` makes a venv whose python logs its arguments.
_STUB_PYTHON = """#!/bin/sh
[ "$1 $2" = "-m venv" ] || exit 3
mkdir -p "$3/bin"
printf '#!/bin/sh\\nfor a in "$@"; do printf "%%s\\\\n" "$a"; done > "%s/pip-args"\\n' "$3" > "$3/bin/python"
printf '#!/bin/sh\\necho aoti-lint stub\\n' > "$3/bin/aoti-lint"
chmod +x "$3/bin/python" "$3/bin/aoti-lint"
"""


@pytest.mark.parametrize(
    ("version", "spec"),
    [("", None), ("v0.2.0", "aoti-lint @ git+https://github.com/aoti-lint/aoti-lint@v0.2.0")],
)
def test_install_step_installs_its_checkout_or_the_git_ref_in_version(tmp_path, version, spec):
    """`version` names a tag or commit of the action's repository, installed from git: aoti-lint is on no registry."""
    stubs = tmp_path / "stubs"
    stubs.mkdir()
    (stubs / "python3").write_text(_STUB_PYTHON)
    (stubs / "python3").chmod(0o755)
    runner_temp = _runner_temp(tmp_path)
    path = f"{stubs}{os.pathsep}{os.environ['PATH']}"
    result = run_step("install", _workspace(tmp_path, None), runner_temp, path=path, version=version)
    assert result.returncode == 0, result.stdout + result.stderr
    args = (runner_temp / "aoti-lint-venv" / "pip-args").read_text().splitlines()
    assert args[:3] == ["-m", "pip", "install"]
    assert args[-1] == (spec or str(REPO))


@pytest.mark.slow
def test_install_step_installs_the_git_ref_named_in_version(tmp_path):
    """The real install step with `version`: pip installs that commit of the action's repository from git (a clone
    of this repository served from a file:// URL, laid out as `<server>/<owner>/<name>`)."""
    server = tmp_path / "server"
    clone = server / ACTION_REPOSITORY
    subprocess.run(["git", "clone", "-q", str(REPO), str(clone)], check=True)
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=clone, capture_output=True, text=True, check=True)
    runner_temp = _runner_temp(tmp_path)
    installed = run_step(
        "install",
        _workspace(tmp_path),
        runner_temp,
        action_path=tmp_path / "not-used",
        server_url=f"file://localhost{server}",  # pip 23 refuses a file URL without a host
        version=head.stdout.strip(),
    )
    assert installed.returncode == 0, installed.stdout + installed.stderr
    assert installed.stdout.strip().splitlines()[-1].startswith("aoti-lint ")
