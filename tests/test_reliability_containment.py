"""Failure containment (issue 18): no crash reported as success, interrupts that stop, workers that die with
their parent, tracebacks that exit 2, stdin --fix that never empties an editor's buffer.

Each test is a reproduction of a probe against the real command, in a real process.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.reliability_cli import SEGFAULT_MARKER
from tests.reliability_sources import RenameDeprecatedLoad

OLD_LOAD = "import torch\n\nrunner = torch._export.aot_load('m.so', 'cpu')\n"
FIXED_LOAD = f"import torch\n\nrunner = {RenameDeprecatedLoad.REPLACEMENT}('m.so', 'cpu')\n"
ENV = {**os.environ, "PYTHONPATH": str(REPO)}
FIXING = [sys.executable, "-m", "tests.reliability_cli", "--isolated", "--no-cache"]
# Root without the capabilities that let it ignore permission bits: file modes then apply to it as to anyone.
WITHOUT_DAC = ["setpriv", "--inh-caps=-dac_override,-dac_read_search", "--bounding-set=-dac_override,-dac_read_search"]


def fixing_cli(*args: str, cwd: Path, timeout: float = 300, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*FIXING, *args], cwd=cwd, capture_output=True, text=True, env=ENV, timeout=timeout, input=stdin
    )


def assert_no_traceback(result) -> None:
    assert "Traceback" not in result.stderr, result.stderr
    assert result.returncode in (0, 1, 2), (result.returncode, result.stderr)


def _tree(root: Path, count: int) -> list[Path]:
    paths = []
    for index in range(count):
        path = root / f"m{index:03}.py"
        path.write_text(OLD_LOAD + f"value = {index}\n")
        paths.append(path)
    return paths


# ---- a crash is never a pass ------------------------------------------------------------------------------------

DEEP = "import torch\nx = " + "(" * 1500 + "1" + ")" * 1500 + "\ntorch._export.aot_load('a', 'cpu')\n"


def test_libcst_segfaults_on_deep_nesting_so_it_is_never_given_it(cli, tmp_path):
    """The real parser, in a subprocess, dies of SIGSEGV on 1,500 nested brackets (the reason for the cap);
    aoti-lint reports CPython's own limit as AOTI000 instead of handing it over."""
    (tmp_path / "p.py").write_text(DEEP)
    crash = subprocess.run(
        [sys.executable, "-c", "import libcst, sys; libcst.parse_module(open(sys.argv[1]).read())", "p.py"],
        cwd=tmp_path,
        capture_output=True,
        timeout=120,
    )
    if crash.returncode != -signal.SIGSEGV:
        pytest.skip(f"libcst did not crash here (exit {crash.returncode}); the cap still applies")
    result = cli("--isolated", "--no-cache", "--output-format", "json", "p.py", cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    (row,) = json.loads(result.stdout)
    assert (row["code"], row["message"]) == ("AOTI000", "SyntaxError: too many nested parentheses")


def test_a_crashed_worker_costs_only_its_file(tmp_path):
    """40 fixable files under --jobs 2, two of which make the worker segfault: those two are errors (exit 2),
    the 38 others are checked and fixed, and the summary never says "All checks passed!"."""
    paths = _tree(tmp_path, 40)
    for crashing in (paths[6], paths[33]):
        crashing.write_text(OLD_LOAD + SEGFAULT_MARKER + "\n")
    result = fixing_cli("--fix", "--jobs", "2", ".", cwd=tmp_path)
    assert_no_traceback(result)
    assert result.returncode == 2, result.stderr
    assert sorted(result.stderr.splitlines()) == [
        f"error: {name}: not checked: the worker process crashed on this file (a native parser crash or out of memory)"
        for name in ("m006.py", "m033.py")
    ]
    assert "All checks passed!" not in result.stdout
    fixed = [p for p in paths if p.read_text().startswith(FIXED_LOAD)]
    assert len(fixed) == 38
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(p.name for p in paths)


# ---- unreadable directories ---------------------------------------------------------------------------------------


def _without_dac(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "aoti_lint", "--isolated", "--no-cache", *args]
    if os.geteuid() == 0:
        if not shutil.which("setpriv"):
            pytest.skip("root needs setpriv to drop the capabilities that bypass file modes")
        command = [*WITHOUT_DAC, *command]
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, env=ENV, timeout=120)


@pytest.mark.parametrize("mode", [0o000, 0o444, 0o111], ids=["none", "read-no-search", "search-no-read"])
def test_unreadable_directory_is_an_error_not_a_pass(tmp_path, mode):
    locked = tmp_path / "locked"
    locked.mkdir()
    (locked / "a.py").write_text(OLD_LOAD)
    (tmp_path / "ok.py").write_text("x = 1\n")
    locked.chmod(mode)
    try:
        probe = _without_dac(".", cwd=tmp_path)
        if os.geteuid() == 0 and "cannot read" not in probe.stderr and probe.returncode == 1:
            pytest.skip("dropping capabilities did not take effect here")
        assert_no_traceback(probe)
        assert probe.returncode == 2, (probe.stdout, probe.stderr)
        assert probe.stderr.splitlines() == ["error: locked: cannot read directory: Permission denied"]
        assert "All checks passed!" not in probe.stdout
    finally:
        locked.chmod(0o755)


# ---- tracebacks exit 2, with one line naming the file ----------------------------------------------------------


@pytest.mark.parametrize("pattern", ["!", "\\", "[z-a]"])
def test_invalid_gitignore_pattern(cli, tmp_path, pattern):
    (tmp_path / ".git").mkdir()
    (tmp_path / ".gitignore").write_text(f"build/\n{pattern}\n")
    (tmp_path / "a.py").write_text(OLD_LOAD)
    (tmp_path / "build").mkdir()
    (tmp_path / "build" / "b.py").write_text(OLD_LOAD)
    result = cli("--isolated", "--no-cache", ".", cwd=tmp_path)
    assert_no_traceback(result)
    assert result.returncode == 2
    (line,) = result.stderr.splitlines()
    assert line.startswith(f"error: .gitignore: invalid pattern `{pattern}` ("), line
    assert line.endswith("); ignored")
    # The valid patterns still apply, the run went on.
    assert "a.py:3:10: AOTI002" in result.stdout and "b.py" not in result.stdout


@pytest.mark.parametrize("key", ["exclude", "extend-exclude"])
def test_invalid_exclude_pattern_in_configuration(cli, tmp_path, key):
    (tmp_path / "pyproject.toml").write_text(f'[tool.aoti-lint]\n{key} = ["[z-a]"]\n')
    (tmp_path / "a.py").write_text(OLD_LOAD)
    result = cli("--no-cache", ".", cwd=tmp_path)
    assert_no_traceback(result)
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        "error: pyproject.toml: exclude: invalid pattern `[z-a]` (bad character range z-a); ignored"
    ]
    assert "a.py:3:10: AOTI002" in result.stdout


def test_invalid_per_file_ignores_pattern(cli, tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.aoti-lint.per-file-ignores]\n"[z-a]" = ["AOTI002"]\n')
    (tmp_path / "a.py").write_text(OLD_LOAD)
    result = cli("--no-cache", ".", cwd=tmp_path)
    assert_no_traceback(result)
    assert result.returncode == 2
    (line,) = result.stderr.splitlines()
    assert line.startswith("error: ") and "per-file-ignores: invalid pattern `[z-a]`" in line
    assert "a.py:3:10: AOTI002" in result.stdout


def test_deeply_nested_array_in_pyproject(cli, tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.other]\nx = " + "[" * 5000 + "1" + "]" * 5000 + "\n")
    (tmp_path / "a.py").write_text(OLD_LOAD)
    result = cli("--no-cache", ".", cwd=tmp_path)
    assert_no_traceback(result)
    assert result.returncode == 2
    assert result.stderr.splitlines() == [f"error: {tmp_path / 'pyproject.toml'}: invalid TOML: nested too deeply"]


def _notebook(cells: list[str], metadata: object) -> str:
    return json.dumps(
        {
            "cells": [
                {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": source}
                for source in cells
            ],
            "metadata": metadata,
            "nbformat": 4,
            "nbformat_minor": 5,
        }
    )


@pytest.mark.parametrize("language_info", ["python", ["python"], 3, None])
def test_notebook_language_info_not_an_object(cli, tmp_path, language_info):
    (tmp_path / "a.ipynb").write_text(_notebook([OLD_LOAD], {"language_info": language_info}))
    result = cli("--isolated", "--no-cache", "a.ipynb", cwd=tmp_path)
    assert_no_traceback(result)
    assert result.stdout.startswith("a.ipynb:cell 1:3:10: AOTI002"), result.stderr


def test_notebook_cell_that_quotes_the_cell_marker(cli, tmp_path):
    """A cell holding the marker line the engine joins cells with: findings stay in their own cell."""
    cells = ["import torch\n# aoti-lint: notebook cell 2\nr = torch._export.aot_load(p)\n", "x = 1\n"]
    (tmp_path / "a.ipynb").write_text(_notebook(cells, {}))
    result = cli("--isolated", "--no-cache", "a.ipynb", cwd=tmp_path)
    assert_no_traceback(result)
    assert result.stdout.startswith("a.ipynb:cell 1:3:5: AOTI002"), result.stdout
    result = fixing_cli("--fix", "a.ipynb", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    document = json.loads((tmp_path / "a.ipynb").read_text())
    assert document["cells"][0]["source"] == cells[0].replace(
        "torch._export.aot_load", RenameDeprecatedLoad.REPLACEMENT
    )
    assert document["cells"][1]["source"] == "x = 1\n"


@pytest.mark.skipif(sys.platform != "linux", reason="needs a file system that takes any bytes in names")
@pytest.mark.parametrize("output_format", ["sarif", "gitlab", "concise", "json", "junit", "github", "full"])
def test_file_name_that_is_not_utf8(tmp_path, output_format):
    name = os.fsdecode(b"bad\xff.py")
    (tmp_path / name).write_text(OLD_LOAD)
    command = [sys.executable, "-m", "aoti_lint", "--isolated", "--no-cache", "--output-format", output_format, "."]
    # Strict stdio too: PYTHONIOENCODING without an error handler.
    env = {**ENV, "PYTHONIOENCODING": "utf-8:strict"}
    result = subprocess.run(command, cwd=tmp_path, capture_output=True, env=env, timeout=120)
    assert b"Traceback" not in result.stderr, result.stderr
    assert result.returncode == 1, result.stderr
    if output_format == "sarif":
        log = json.loads(result.stdout)
        assert log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == (
            "bad%FF.py"
        )


def test_internal_error_exits_2_not_1(tmp_path):
    """A bug of ours anywhere (here: a rule set that cannot be built) is an error, never "findings"."""
    code = (
        "import sys\nfrom aoti_lint import cli, engine\n"
        "def broken(*args, **kwargs):\n    raise RuntimeError('boom')\n"
        "engine.lint_paths = broken\nsys.exit(cli.main(sys.argv[1:]))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code, "--isolated", "."], cwd=tmp_path, capture_output=True, text=True, env=ENV
    )
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        "error: internal error: RuntimeError: boom (please report it; --verbose shows the traceback)"
    ]


# ---- stdin --fix: stdout is always code ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("setup", "code"),
    [
        ("bad-config", OLD_LOAD),
        ("syntax-error", "import torch\nx = torch._export.aot_load(\n"),
        ("unknown-option", OLD_LOAD),
        ("bad-notebook", "{not json"),
    ],
)
def test_stdin_fix_on_error_prints_the_input_unchanged(tmp_path, setup, code):
    args = ["--fix", "-"]
    if setup == "bad-config":
        (tmp_path / "pyproject.toml").write_text("[tool.aoti-lint]\nselect = 1\n")
        args = ["--no-cache", "--fix", "-"]
    elif setup == "unknown-option":
        args = ["--fix", "--select", "AOTI999", "-"]
    elif setup == "bad-notebook":
        args = ["--fix", "--stdin-filename", "a.ipynb", "-"]
    command = [sys.executable, "-m", "aoti_lint", *args]
    result = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, env=ENV, input=code, timeout=120)
    assert_no_traceback(result)
    assert result.stdout == code, (result.stdout, result.stderr)


# ---- interrupts and child processes --------------------------------------------------------------------------------


def _start(tmp_path: Path, *args: str) -> subprocess.Popen:
    return subprocess.Popen(
        [*FIXING, *args], cwd=tmp_path, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def _fixed(paths: list[Path]) -> int:
    return sum(p.read_text().startswith(FIXED_LOAD) for p in paths)


def _wait_for_progress(run: subprocess.Popen, paths: list[Path]) -> None:
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and run.poll() is None and _fixed(paths) < 4:
        time.sleep(0.02)


def _children(pid: int) -> list[int]:
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        with open(task / "children") as handle:
            found += [int(child) for child in handle.read().split()]
    return found


def _alive(pid: int) -> bool:
    """Running, not a zombie (a container's init may never reap an orphan)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc")
def test_first_interrupt_stops_handing_out_work(tmp_path):
    """Ctrl-C during --fix --jobs 2 on 200 files: the run stops (it used to fix every remaining file first),
    exits 130, and leaves every file whole and no temporary file."""
    paths = _tree(tmp_path, 200)
    run = _start(tmp_path, "--fix", "--jobs", "2", ".")
    _wait_for_progress(run, paths)
    if run.poll() is not None:
        pytest.skip("the run finished before it could be interrupted")
    before = _fixed(paths)
    run.send_signal(signal.SIGINT)
    _, err = run.communicate(timeout=120)
    assert run.returncode == 130, err
    assert err.strip().splitlines()[-1] == "aoti-lint: interrupted"
    assert "Traceback" not in err
    after = _fixed(paths)
    # The files in flight (two workers, a few queued) may finish; nothing else is started.
    assert after - before <= 8, (before, after)
    for index, path in enumerate(paths):
        assert path.read_text() in (OLD_LOAD + f"value = {index}\n", FIXED_LOAD + f"value = {index}\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(p.name for p in paths)


@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc")
def test_second_interrupt_exits_at_once(tmp_path):
    paths = _tree(tmp_path, 200)
    run = _start(tmp_path, "--fix", "--jobs", "2", ".")
    _wait_for_progress(run, paths)
    if run.poll() is not None:
        pytest.skip("the run finished before it could be interrupted")
    run.send_signal(signal.SIGINT)
    run.send_signal(signal.SIGINT)
    _, err = run.communicate(timeout=60)  # it used to deadlock here
    assert run.returncode == 130, err
    for index, path in enumerate(paths):
        assert path.read_text() in (OLD_LOAD + f"value = {index}\n", FIXED_LOAD + f"value = {index}\n")


@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc")
def test_workers_exit_when_the_parent_is_killed(tmp_path):
    paths = _tree(tmp_path, 200)
    run = _start(tmp_path, "--fix", "--jobs", "2", ".")
    _wait_for_progress(run, paths)
    workers = _children(run.pid) if run.poll() is None else []
    if not workers:
        run.communicate(timeout=300)
        pytest.skip("no worker was seen running")
    run.kill()
    run.communicate(timeout=60)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and any(_alive(pid) for pid in workers):
        time.sleep(0.05)
    alive = [pid for pid in workers if _alive(pid)]
    for pid in alive:  # do not leave them behind even when the test fails
        os.kill(pid, signal.SIGKILL)
    assert alive == [], "pool workers outlived their parent"
