"""The pre-commit hook as users meet it: the manifest validates, pre-commit hands the hook the right files, and
a real `pre-commit try-repo` / `pre-commit run` against this checkout fails on a finding and passes when clean.

The runs install the hook's environment from this checkout (pip, as pre-commit does): about 15 s each.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from pre_commit.clientlib import load_manifest
from pre_commit.commands.run import Classifier, filter_by_include_exclude

REPO = Path(__file__).resolve().parent.parent
MANIFEST = REPO / ".pre-commit-hooks.yaml"
PRE_COMMIT = [sys.executable, "-m", "pre_commit"]
OLD_COMPILE = "import torch\n\nso = torch._export.aot_compile(model, (x,))\n"


def test_manifest_validates():
    result = subprocess.run([*PRE_COMMIT, "validate-manifest", str(MANIFEST)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    (hook,) = load_manifest(str(MANIFEST))
    assert (hook["id"], hook["entry"], hook["language"], hook["require_serial"]) == (
        "aoti-lint",
        "aoti-lint --force-exclude",
        "python",
        True,
    )


def test_pre_commit_hands_over_exactly_the_files_aoti_lint_reads(tmp_path, monkeypatch):
    wanted = ["a.py", "stubs/b.pyi", "nb.ipynb", "run.sh", "ci/build.yml", "k8s.yaml", ".env", "prod.env"]
    wanted += ["Dockerfile", "docker/Dockerfile.dev", "Containerfile", "Makefile", "build/makefile", "rules.mk"]
    wanted += ["serve.cpp", "src/loader.cc", "include/runner.h", "include/runner.hpp", "kernels/k.cu", "k.cuh"]
    unwanted = ["README.md", "LICENSE", "setup.cfg", "pyproject.toml", "Makefile.am", ".env.example", "a.pyc"]
    unwanted += ["main.c", "CMakeLists.txt", "lib.so", "model.pt2"]
    every = wanted + unwanted
    for name in every:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x = 1\n")
    monkeypatch.chdir(tmp_path)
    (hook,) = load_manifest(str(MANIFEST))
    chosen = Classifier(every).by_types(
        filter_by_include_exclude(every, hook["files"], hook["exclude"]),
        hook["types"],
        hook["types_or"],
        hook["exclude_types"],
    )
    assert sorted(chosen) == sorted(wanted)


def test_only_excluded_files_is_a_clean_exit(cli, tmp_path):
    """pre-commit passes excluded files too; with --force-exclude they are dropped and nothing is left."""
    (tmp_path / "build").mkdir()
    (tmp_path / "build" / "gen.py").write_text(OLD_COMPILE)
    result = cli("--force-exclude", "build/gen.py", cwd=tmp_path)
    # As ruff: nothing was checked, so no "All checks passed!", a warning, and a clean exit.
    assert (result.returncode, result.stdout) == (0, "")
    assert "No Python files found" in result.stderr


def _git(*args: str, cwd: Path) -> str:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True).stdout.strip()


def _checkout_head() -> str:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    try:
        return _git("rev-parse", "HEAD", cwd=REPO)
    except subprocess.CalledProcessError:
        pytest.skip("this checkout is not a git repository")


def _project(root: Path, files: dict[str, str]) -> Path:
    root.mkdir()
    _git("init", "-q", cwd=root)
    for name, text in files.items():
        (root / name).write_text(text)
    _git("add", ".", cwd=root)
    return root


def _pre_commit(*args: str, cwd: Path, home: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PRE_COMMIT_HOME": str(home), "PRE_COMMIT_COLOR": "never"}
    env.pop("AOTI_LINT_OUTPUT_FORMAT", None)
    return subprocess.run([*PRE_COMMIT, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def test_try_repo_fails_on_a_finding(tmp_path, pre_commit_home):
    _checkout_head()
    files = {
        "a.py": OLD_COMPILE,
        "clean.py": "import torch\n",
        "README.md": "# x\n",
        ".env": "AOTI_RUNTIME_CHECK_INPUTS=1\n",  # identify gives it no kind tag; the hook must still hand it over
        "ci.yml": "steps:\n  - run: pytest\n",  # not Python: read as YAML, no syntax error
    }
    project = _project(tmp_path / "p", files)
    result = _pre_commit("try-repo", str(REPO), "aoti-lint", "--all-files", cwd=project, home=pre_commit_home)
    assert result.returncode == 1, result.stdout + result.stderr
    assert re.search(r"^aoti-lint\.+Failed$", result.stdout, re.MULTILINE)
    reported = [line.split(" ")[0:2] for line in result.stdout.splitlines() if ": AOTI" in line]
    # The two findings, then the hidden fix of the first under the summary (`path:line: CODE unsafe fix: ...`).
    assert reported == [[".env:1:1:", "AOTI201"], ["a.py:3:6:", "AOTI001"], [".env:1:", "AOTI201"]]
    assert "Found 2 errors." in result.stdout


@pytest.fixture(scope="session")
def hook_config(tmp_path_factory) -> Path:
    config = tmp_path_factory.mktemp("config") / ".pre-commit-config.yaml"
    config.write_text(f"repos:\n- repo: {REPO}\n  rev: {_checkout_head()}\n  hooks:\n  - id: aoti-lint\n")
    return config


@pytest.mark.parametrize(
    ("files", "args", "status"),
    [
        ({"clean.py": "import torch\n", "README.md": "# x\n"}, [], "Passed"),
        ({"a.py": OLD_COMPILE}, ["--ignore", "AOTI001"], "Passed"),  # arguments pass through
        ({"README.md": "# x\n"}, [], "(no files to check)Skipped"),
    ],
    ids=["clean", "args", "no-files"],
)
def test_run_passes_when_clean_or_skipped(tmp_path, pre_commit_home, hook_config, files, args, status):
    config = hook_config
    if args:
        config = tmp_path / "with-args.yaml"
        config.write_text(hook_config.read_text() + f"    args: [{', '.join(args)}]\n")
    project = _project(tmp_path / "p", files)
    result = _pre_commit("run", "--config", str(config), "--all-files", cwd=project, home=pre_commit_home)
    assert result.returncode == 0, result.stdout + result.stderr
    assert re.search(rf"^aoti-lint\.+{re.escape(status)}$", result.stdout, re.MULTILINE), result.stdout


def test_run_with_fix_rewrites_and_fails_the_commit(tmp_path, pre_commit_home, hook_config):
    """pre-commit fails a run whose hook changed files, so the migration is reviewed before it is committed."""
    config = tmp_path / "with-fix.yaml"
    config.write_text(hook_config.read_text() + "    args: [--fix]\n")
    project = _project(tmp_path / "p", {"a.py": OLD_COMPILE})
    result = _pre_commit("run", "--config", str(config), "--all-files", cwd=project, home=pre_commit_home)
    assert result.returncode == 1, result.stdout + result.stderr
    assert re.search(r"^aoti-lint\.+Failed$", result.stdout, re.MULTILINE)
    assert "- files were modified by this hook" in result.stdout
    assert (project / "a.py").read_text() == OLD_COMPILE.replace(
        "torch._export.aot_compile(model, (x,))",
        "torch._inductor.aoti_compile_and_package(torch.export.export(model, (x,)))",
    )
