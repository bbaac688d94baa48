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
from tests.helpers import default_ctrl_c, run_fixing_main
from tests.reliability_cli import SEGFAULT_MARKER
from tests.reliability_sources import RenameDeprecatedLoad

OLD_LOAD = "import torch\n\nrunner = torch._export.aot_load(so_path, 'cpu')\n"
FIXED_LOAD = f"import torch\n\nrunner = {RenameDeprecatedLoad.REPLACEMENT}(so_path, 'cpu')\n"
ENV = {**os.environ, "PYTHONPATH": str(REPO)}
FIXING = [sys.executable, "-m", "tests.reliability_cli", "--isolated", "--no-cache"]
# Root without the capabilities that let it ignore permission bits: file modes then apply to it as to anyone.
WITHOUT_DAC = ["setpriv", "--inh-caps=-dac_override,-dac_read_search", "--bounding-set=-dac_override,-dac_read_search"]


def fixing_process(*args: str, cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess:
    """The command with the test-only fixing rule (tests/reliability_cli.py), in a process of its own."""
    return subprocess.run([*FIXING, *args], cwd=cwd, capture_output=True, text=True, env=ENV, timeout=timeout)


def fixing_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    """The same command, run in this process: for tests whose subject is not the process."""
    return run_fixing_main("--isolated", "--no-cache", *args, cwd=cwd)


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
    result = fixing_process("--fix", "--jobs", "2", ".", cwd=tmp_path)
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
@pytest.mark.parametrize(
    ("output_format", "process"),
    [("concise", True), *((name, False) for name in ("sarif", "gitlab", "concise", "json", "junit", "github", "full"))],
)
def test_file_name_that_is_not_utf8(cli, tmp_path, output_format, process):
    """In process (stdout there is a strict UTF-8 stream, see tests.helpers.run_main) for every format; once
    through a real process whose stdio PYTHONIOENCODING makes strict."""
    name = os.fsdecode(b"bad\xff.py")
    (tmp_path / name).write_text(OLD_LOAD)
    args = ["--isolated", "--no-cache", "--output-format", output_format, "."]
    if process:
        # Strict stdio too: PYTHONIOENCODING without an error handler.
        env = {**ENV, "PYTHONIOENCODING": "utf-8:strict"}
        command = [sys.executable, "-m", "aoti_lint", *args]
        result = subprocess.run(command, cwd=tmp_path, capture_output=True, env=env, timeout=120)
    else:
        result = cli(*args, cwd=tmp_path)
    stderr = result.stderr if isinstance(result.stderr, str) else result.stderr.decode("utf-8", "replace")
    assert "Traceback" not in stderr, stderr
    assert result.returncode == 1, result.stderr
    if output_format == "sarif":
        log = json.loads(result.stdout)
        assert log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == (
            "bad%FF.py"
        )


def test_internal_error_exits_2_not_1(tmp_path):
    """A bug of ours anywhere (here: a rule set that cannot be built) is an error, never "findings"."""
    code = (
        "import sys\nfrom aoti_lint import cli\nfrom aoti_lint.run import lint\n"
        "def broken(*args, **kwargs):\n    raise RuntimeError('boom')\n"
        "lint.lint_paths = broken\nsys.exit(cli.main(sys.argv[1:]))\n"
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
def test_stdin_fix_on_error_prints_the_input_unchanged(cli, tmp_path, setup, code):
    args = ["--fix", "-"]
    if setup == "bad-config":
        (tmp_path / "pyproject.toml").write_text("[tool.aoti-lint]\nselect = 1\n")
        args = ["--no-cache", "--fix", "-"]
    elif setup == "unknown-option":
        args = ["--fix", "--select", "AOTI999", "-"]
    elif setup == "bad-notebook":
        args = ["--fix", "--stdin-filename", "a.ipynb", "-"]
    result = cli(*args, cwd=tmp_path, stdin=code)
    assert_no_traceback(result)
    assert result.stdout == code, (result.stdout, result.stderr)


# ---- interrupts and child processes --------------------------------------------------------------------------------


def _start(tmp_path: Path, *args: str) -> subprocess.Popen:
    return subprocess.Popen(
        [*FIXING, *args],
        cwd=tmp_path,
        env=ENV,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=default_ctrl_c,
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


# Signals during a fix run of 200 files under --jobs 2 (tens of CPU seconds each): the full suite only.
@pytest.mark.slow
@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc")
def test_first_interrupt_stops_handing_out_work(tmp_path):
    """Ctrl-C during --fix --jobs 2 on 200 files: the run stops (it used to fix every remaining file first),
    exits 130, and leaves every file whole and no temporary file."""
    paths = _tree(tmp_path, 200)
    run = _start(tmp_path, "--fix", "--jobs", "2", ".")
    _wait_for_progress(run, paths)
    if run.poll() is not None:
        pytest.skip("the run finished before it could be interrupted")
    run.send_signal(signal.SIGINT)
    # Counted once the signal is sent: the workers' writes until then are not what the interrupt controls.
    before = _fixed(paths)
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


def test_ctrl_c_after_the_last_result_still_ends_the_run_as_interrupted():
    """The pool's handler only notes Ctrl-C (the parent raises at its next check); one noted after the last
    check must not be lost when the pool is done."""
    from aoti_lint.run.worker_pool import InterruptScope as _InterruptScope

    with pytest.raises(KeyboardInterrupt), _InterruptScope():
        signal.raise_signal(signal.SIGINT)


def test_a_pool_that_cannot_start_leaves_ctrl_c_as_it_was(tmp_path, monkeypatch):
    """No semaphores (no /dev/shm) or no descriptors left: the run fails, and Ctrl-C is not left merely noted."""
    from aoti_lint.run import runner, worker_pool
    from aoti_lint.run.lint import lint_paths
    from aoti_lint.settings.config import Settings

    (tmp_path / "a.py").write_text(OLD_LOAD)

    def no_pool(self, jobs, interrupts):
        raise OSError(38, "Function not implemented")

    monkeypatch.setattr(worker_pool.Pool, "__init__", no_pool)
    before = signal.getsignal(signal.SIGINT)
    with pytest.raises(OSError):
        lint_paths(
            [tmp_path],
            Settings(root=tmp_path).with_enabled(),
            tmp_path,
            None,
            runner.Execution(jobs=2, pool_min_seconds=0),
        )
    assert signal.getsignal(signal.SIGINT) is before


@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc")
def test_a_worker_killed_between_passes_costs_one_fresh_pool_not_one_per_file(tmp_path, monkeypatch):
    """A worker that dies idle is only seen by the next pass, with no file in flight: its files go to one fresh
    pool, not each to a pool of its own (a libcst import each)."""
    from aoti_lint.read.files import Candidate
    from aoti_lint.run import runner, worker_pool
    from aoti_lint.run.ruleset import RuleSet
    from aoti_lint.settings.config import Settings

    paths = _tree(tmp_path, 6)
    settings = Settings(root=tmp_path).with_enabled()
    candidates = [Candidate(path, "python", explicit=True) for path in paths]
    execution = runner.Execution(jobs=2, pool_min_seconds=0)
    started: list[int] = []
    original = worker_pool.Pool.__init__
    monkeypatch.setattr(
        worker_pool.Pool, "__init__", lambda self, jobs, i: started.append(jobs) or original(self, jobs, i)
    )
    with runner.Workers() as workers:
        first = runner.run_files(
            candidates, RuleSet(settings), tmp_path, runner.FixOptions(), execution, shared_workers=workers
        )
        for pid in _children(os.getpid())[:1]:
            os.kill(pid, signal.SIGKILL)
        time.sleep(0.5)
        second = runner.run_files(
            candidates, RuleSet(settings), tmp_path, runner.FixOptions(), execution, shared_workers=workers
        )
    assert not [error for outcome in first + second for error in outcome.errors]
    assert [len(o.findings) for o in second] == [len(o.findings) for o in first]
    assert len(started) <= 2, started


def test_stopping_the_pool_leaves_no_manager_thread_for_the_exit_hook_to_race():
    """After the first Ctrl-C the run exits while the executor's manager thread may still be closing its
    wakeup pipe; Python 3.11's exit hook then wrote to the closed pipe, and "OSError: [Errno 9] Bad file
    descriptor" became the run's last line (once in a full suite under load). ``_stop`` now waits for it."""
    from concurrent.futures import ProcessPoolExecutor

    from aoti_lint.run.worker_pool import _stop

    pool = ProcessPoolExecutor(max_workers=1)
    future = pool.submit(time.sleep, 60)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not future.running():
        time.sleep(0.01)
    manager = pool._executor_manager_thread
    workers = list(pool._processes.values())
    _stop(pool, [future])
    assert manager is not None and not manager.is_alive()
    for worker in workers:
        worker.join(timeout=10)
        assert worker.exitcode is not None


@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc")
def test_first_interrupt_stops_a_worker_that_does_not_finish(tmp_path):
    """One worker is stuck on a file; after Ctrl-C and the grace period it is stopped and the run exits 130.
    Before, the stop was a no-op (the executor's shutdown had already forgotten its processes) and the run
    waited for the stuck worker for ever."""
    from tests.reliability_cli import STALL_MARKER

    # 100 kB: enough estimated work for a pool, and (largest first) the stuck file is handed out first.
    (tmp_path / "stuck.py").write_text(OLD_LOAD + STALL_MARKER + "\n" + "# padding\n" * 10_000)
    paths = _tree(tmp_path, 12)
    run = _start(tmp_path, "--fix", "--jobs", "2", ".")
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and run.poll() is None and not _children(run.pid):
        time.sleep(0.02)
    assert run.poll() is None, run.communicate()  # it cannot finish: one file never does
    run.send_signal(signal.SIGINT)
    _, err = run.communicate(timeout=120)
    assert run.returncode == 130, err
    assert err.strip().splitlines()[-1] == "aoti-lint: interrupted"
    assert "Traceback" not in err
    assert (tmp_path / "stuck.py").read_text().startswith(OLD_LOAD)
    for index, path in enumerate(paths):
        assert path.read_text() in (OLD_LOAD + f"value = {index}\n", FIXED_LOAD + f"value = {index}\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["stuck.py", *(p.name for p in paths)])


@pytest.mark.slow
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


@pytest.mark.slow
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


# ---- output the code under review cannot use to inject ------------------------------------------------------------

HOSTILE = "a\n::error file=evil.py::X\x1b[2J\r%0A\u202e\x00"


@pytest.mark.parametrize("output_format", ["concise", "full", "pylint", "github", "junit", "json", "sarif", "gitlab"])
def test_control_characters_from_linted_code_are_escaped(tmp_path, output_format):
    """A message and a file name holding a newline, a forged GitHub command, a terminal escape, a bidi override
    and NUL: one line per finding, no raw control character, valid XML/JSON that still says what was there."""
    import xml.etree.ElementTree as ET

    from aoti_lint.diagnostics import Finding, Position, Severity
    from aoti_lint.report import ReportContext, render

    name = "evil\n::error file=x.py::Y\x1b[31m.py"
    (tmp_path / name).write_text("x = 1\n")
    finding = Finding(
        code="AOTI002",
        message=f"value {HOSTILE}",
        path=name,
        start=Position(1, 1),
        end=Position(1, 2),
        severity=Severity.ERROR,
    )
    text = render([finding], ReportContext(cwd=tmp_path, format=output_format))
    assert not any(char in text for char in "\x1b\r\x00\u202e"), repr(text)
    if output_format in ("concise", "pylint", "github"):
        assert len([line for line in text.splitlines() if "AOTI002" in line]) == 1, text
    if output_format == "github":
        assert [line for line in text.splitlines() if line.startswith("::")] == [text.splitlines()[0]]
        assert "%250A" in text  # the literal `%0A` of the message stays literal
    if output_format == "junit":
        ET.fromstring(text.split("\n", 1)[1])  # valid XML
        assert "\\x1b[2J" in text
    if output_format in ("json", "sarif", "gitlab"):
        assert "\\u001b[2J" in text  # JSON's own escaping
    if output_format in ("concise", "full", "pylint"):
        assert "\\n::error file=evil.py::X\\x1b[2J\\r%0A\\u202e\\x00" in text
        assert "evil\\n::error file=x.py::Y\\x1b[31m.py" in text


def test_error_lines_escape_file_names(tmp_path):
    """`error: PATH: ...` lines on stderr name the file escaped, too."""
    name = "evil\n::error file=x.py::Y\x1b[31m.py"
    (tmp_path / name).write_bytes(b"\x00" * 4)
    (tmp_path / name).chmod(0o644)
    os.mkfifo(tmp_path / f"{name}.fifo.py")
    result = subprocess.run(
        [sys.executable, "-m", "aoti_lint", "--isolated", "--no-cache", "."],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=ENV,
        timeout=120,
    )
    assert result.stderr.splitlines() == [
        "error: evil\\n::error file=x.py::Y\\x1b[31m.py.fifo.py: is not a regular file (a FIFO, socket or device); "
        "not read"
    ]


# ---- writing only what the user asked, where they asked ------------------------------------------------------------


def test_report_into_a_device_is_written_not_replaced(cli, tmp_path):
    """-o onto a character device (a private /dev/full) writes into it: the node stays, ENOSPC is an error."""
    import stat

    device = tmp_path / "full"
    try:
        os.mknod(device, stat.S_IFCHR | 0o666, os.makedev(1, 7))
    except (PermissionError, AttributeError, OSError):
        pytest.skip("cannot create a device node here")
    (tmp_path / "a.py").write_text("x = 1\n")
    result = cli("--isolated", "--no-cache", "-o", str(device), "a.py", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.splitlines() == [f"error: {device}: cannot write the report: No space left on device"]
    assert stat.S_ISCHR(os.lstat(device).st_mode), "the device node was replaced by a regular file"


@pytest.mark.skipif(not Path("/proc/self/fd/1").exists(), reason="needs /proc")
def test_report_to_a_link_to_stdout_reaches_stdout(cli_process, tmp_path):
    (tmp_path / "out").symlink_to("/proc/self/fd/1")
    (tmp_path / "a.py").write_text("x = 1\n")
    result = cli_process("--isolated", "--no-cache", "-o", "out", "a.py", cwd=tmp_path)
    assert (result.returncode, result.stdout) == (0, "All checks passed!\n"), result.stderr
    assert (tmp_path / "out").is_symlink()


@pytest.mark.skipif(os.geteuid() != 0, reason="only root can give a file to another user")
def test_fix_keeps_owner_and_group(tmp_path):
    path = tmp_path / "a.py"
    path.write_text(OLD_LOAD)
    os.chown(path, 65534, 65534)
    result = fixing_cli("--fix", "a.py", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert path.read_text() == FIXED_LOAD
    assert (path.stat().st_uid, path.stat().st_gid) == (65534, 65534)


def test_fix_writes_a_hard_linked_file_in_place(tmp_path):
    (tmp_path / "tree").mkdir()
    path, other = tmp_path / "tree" / "a.py", tmp_path / "elsewhere.py"
    path.write_text(OLD_LOAD)
    os.link(path, other)
    inode = path.stat().st_ino
    result = fixing_cli("--fix", ".", cwd=tmp_path / "tree")
    assert result.returncode == 0, result.stderr
    assert path.stat().st_ino == inode and path.stat().st_nlink == 2, "the fix split the hard link"
    assert other.read_text() == FIXED_LOAD


def test_writer_that_rewrites_the_file_before_the_rename_wins(tmp_path):
    """The guard right before the rename: another writer truncated and rewrote the file after it was re-read
    (size, mtime or inode moved): nothing is written over its data."""
    from aoti_lint.fixes.safe_write import ChangedOnDisk, atomic_write_bytes, identity

    path = tmp_path / "a.py"
    path.write_bytes(b"x" * 2830)
    seen = identity(path.stat())
    with open(path, "wb") as handle:  # the other writer: truncate, then write
        handle.write(b"y" * 667)
    with pytest.raises(ChangedOnDisk):
        atomic_write_bytes(path, b"fixed\n", expected=seen)
    assert path.read_bytes() == b"y" * 667
    assert os.listdir(tmp_path) == ["a.py"]


class _Stopped(Exception):
    pass


def _raise_stopped(signum, frame):
    raise _Stopped


@pytest.mark.skipif(not hasattr(signal, "pthread_sigmask"), reason="signals are masked per thread on POSIX only")
def test_signal_right_after_the_temporary_file_is_created_leaves_no_temporary_file(tmp_path, monkeypatch):
    """A worker being stopped (SIGTERM, whose handler raises) at the worst moment: the temporary file exists
    and the `try` that removes it has not begun. The signal waits until the write is done (CI once saw
    `.m032.py.<random>.aoti-lint.tmp` left behind after Ctrl-C of a --fix --jobs 2 run)."""
    import tempfile

    from aoti_lint.fixes.safe_write import atomic_write_bytes

    real_mkstemp = tempfile.mkstemp

    def mkstemp_then_signal(*args, **kwargs):
        made = real_mkstemp(*args, **kwargs)
        os.kill(os.getpid(), signal.SIGTERM)
        return made

    monkeypatch.setattr(tempfile, "mkstemp", mkstemp_then_signal)
    previous = signal.signal(signal.SIGTERM, _raise_stopped)
    try:
        path = tmp_path / "a.py"
        path.write_bytes(b"old\n")
        with pytest.raises(_Stopped):
            atomic_write_bytes(path, b"fixed\n")
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert path.read_bytes() == b"fixed\n"  # the signal took effect once the write was whole
    assert os.listdir(tmp_path) == ["a.py"]


def test_notebook_fix_edits_only_the_changed_cells_source_in_the_original_text(tmp_path):
    """CRLF, tab indentation, a duplicate key, a number json would respell, a string and a list source: the
    fixed file is the original text with only the changed cells' `source` values replaced."""
    cell_old = OLD_LOAD.replace("\n", "\\n")
    lines = [f'"{line}\\n"' for line in OLD_LOAD.splitlines()]
    original = (
        "{\r\n"
        '\t"cells": [\r\n'
        '\t\t{"cell_type": "code", "execution_count": 1.10000000000000000001, "metadata": {}, "outputs": [],\r\n'
        f'\t\t "source": "{cell_old}"}},\r\n'
        '\t\t{"cell_type": "code", "execution_count": null, "metadata": {"k": 1, "k": 2}, "outputs": [],\r\n'
        '\t\t "source": [\r\n\t\t\t' + ",\r\n\t\t\t".join(lines) + "\r\n\t\t ]},\r\n"
        '\t\t{"cell_type": "code", "execution_count": null, "metadata": {}, "outputs": [], "source": "x = 1e5\\n"}\r\n'
        "\t],\r\n"
        '\t"metadata": {"language_info": {"name": "python"}}, "nbformat": 4, "nbformat_minor": 5\r\n'
        "}\r\n"
    )
    path = tmp_path / "a.ipynb"
    path.write_bytes(original.encode())
    result = fixing_cli("--fix", "a.ipynb", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    new = RenameDeprecatedLoad.REPLACEMENT
    assert path.read_bytes().decode() == original.replace("torch._export.aot_load", new)
    document = json.loads(path.read_text())
    assert "".join(document["cells"][1]["source"]) == FIXED_LOAD


# ---- bounded cost on hostile input ---------------------------------------------------------------------------------


def test_shell_scanner_is_linear_on_a_long_line():
    """`export CUDA_LAUNCH_BLOCKING=1 V0=x ... V19999=x` took 45 s: each pair's removal looked the word up by
    comparing tokens field by field. Counted, not timed: no token comparison per pair."""
    from aoti_lint.scanners import shell

    calls = 0
    real_eq = shell.Token.__eq__

    def counting_eq(self, other):
        nonlocal calls
        calls += 1
        return real_eq(self, other)

    text = "export CUDA_LAUNCH_BLOCKING=1 " + " ".join(f"V{i}=x" for i in range(20_000)) + "\n"
    shell.Token.__eq__ = counting_eq
    try:
        settings = list(shell.scan(text))
    finally:
        shell.Token.__eq__ = real_eq
    assert len(settings) == 20_001
    assert calls < 1_000, calls


def test_notebook_snippets_parse_the_notebook_once_not_per_finding(tmp_path):
    """The `full` format shows each finding's cell: 500 cells with a finding each used to parse the whole
    notebook 500 times (quadratic in cells). Counted: parses do not grow with the cells."""
    from aoti_lint.diagnostics import Finding, Position, Severity
    from aoti_lint.read import notebook
    from aoti_lint.report import ReportContext, render

    counts = {}
    real_parse = notebook.parse

    def counting_parse(data):
        counts[len(data)] = counts.get(len(data), 0) + 1
        return real_parse(data)

    for cells in (50, 500):
        path = tmp_path / f"n{cells}.ipynb"
        path.write_text(_notebook([OLD_LOAD] * cells, {}))
        findings = [
            Finding("AOTI002", "m", path.name, Position(3, 10), Position(3, 32), Severity.ERROR, cell=number)
            for number in range(1, cells + 1)
        ]
        notebook.parse = counting_parse
        try:
            text = render(findings, ReportContext(cwd=tmp_path, format="full", quiet=True))
        finally:
            notebook.parse = real_parse
        assert text.count("torch._export.aot_load") == cells
    assert list(counts.values()) == [1, 1]


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        (
            "size",
            "import torch\n# torch._export.aot_load\n" + "x = 1\n" * 500_000,
            "not checked: 3,000,038 bytes is over the 2,000,000-byte limit",
        ),
        (
            "line",
            "import torch\nx = [" + "1, " * 60_000 + "]\ntorch._export.aot_load(p)\n",
            "not checked: a line of 180,006 bytes is over the 100,000-byte limit",
        ),
    ],
    ids=["size", "line"],
)
def test_files_past_the_limits_are_reported_not_checked(cli, tmp_path, name, text, message):
    """A big file some rule would read (a trigger token, here only in a comment for the size case) is an error
    saying why it was not checked, never parsed for minutes nor passed silently."""
    (tmp_path / "big.py").write_text(text)
    (tmp_path / "small.py").write_text(OLD_LOAD)
    result = cli("--isolated", "--no-cache", ".", cwd=tmp_path)
    assert_no_traceback(result)
    assert result.returncode == 2
    assert result.stderr.splitlines() == [f"error: big.py: {message}"]
    assert "small.py:3:10: AOTI002" in result.stdout


@pytest.mark.parametrize("registers", [False, True], ids=["names-only", "registers"])
def test_the_size_limit_applies_to_what_a_rule_must_parse(cli, tmp_path, registers):
    """A big C++ header that names the Meta key and `*_impl` functions but registers no kernel (as torch's generated
    dispatch headers) is settled by the screen whatever its size; one that registers a kernel is still an error."""
    body = "// Meta dispatch of at::redispatch\nTORCH_API at::Tensor add_impl(const at::Tensor& self);\n" * 30_000
    if registers:
        body += 'TORCH_LIBRARY_IMPL(mylib, Meta, m) {\n  m.impl("twice", &twice_meta);\n}\n'
    (tmp_path / "Redispatch.h").write_text(body)
    (tmp_path / "small.py").write_text(OLD_LOAD)
    result = cli("--isolated", "--no-cache", ".", cwd=tmp_path)
    assert_no_traceback(result)
    assert "small.py:3:10: AOTI002" in result.stdout
    if registers:
        assert result.returncode == 2
        assert result.stderr.splitlines() == [
            f"error: Redispatch.h: not checked: {len(body.encode()):,} bytes is over the 2,000,000-byte limit"
        ]
    else:
        assert (result.returncode, result.stderr) == (1, "")


def test_the_long_line_test_agrees_with_splitlines():
    """``has_line_over`` looks at the last line end of each window only: on texts with every kind of line end, lines
    at, just under and just over the limit, it says what the longest of ``splitlines`` says."""
    import random

    from aoti_lint.run.engine import has_line_over

    rng = random.Random(13)
    limit = 50
    for _ in range(3_000):
        parts = []
        for _ in range(rng.randrange(0, 8)):
            parts.append(b"x" * rng.choice([0, 1, limit - 1, limit, limit + 1, rng.randrange(3 * limit)]))
            parts.append(rng.choice([b"\n", b"\r", b"\r\n", b"\n\r", b""]))
        data = b"".join(parts)
        longest = max(map(len, data.splitlines()), default=0)
        assert has_line_over(data, limit) is (longest > limit), data


# ---- the cache ------------------------------------------------------------------------------------------------------


def _cache_entries(cache_dir: Path) -> list[Path]:
    return sorted(cache_dir.glob("*.json"))


@pytest.mark.parametrize(
    "corrupt",
    ["deep", "row-zero", "bool-column", "unknown-code", "string-row", "not-a-list"],
)
def test_bad_cache_entry_is_a_miss(cli, tmp_path, corrupt):
    """A planted or corrupt entry (a 100,000-deep nesting crashed every run until the cache was deleted) is a
    miss: the file is linted again, the findings are right, no traceback."""
    (tmp_path / "a.py").write_text(OLD_LOAD)
    first = cli("--isolated", "--cache-dir", "cache", "a.py", cwd=tmp_path)
    assert first.returncode == 1, first.stderr
    (entry,) = _cache_entries(tmp_path / "cache")
    data = json.loads(entry.read_text())
    if corrupt == "deep":
        entry.write_text('{"findings": ' + "[" * 100_000 + "]" * 100_000 + "}")
    else:
        finding = data["findings"][0]
        if corrupt == "row-zero":
            finding["start"] = [0, 1]
        elif corrupt == "bool-column":
            finding["end"] = [True, True]
        elif corrupt == "unknown-code":
            finding["code"] = "X999"
        elif corrupt == "string-row":
            finding["start"] = ["3", "1"]
        else:
            data["findings"] = {"a": 1}
        finding["message"] = "from the cache"
        entry.write_text(json.dumps(data))
    again = cli("--isolated", "--cache-dir", "cache", "a.py", cwd=tmp_path)
    assert_no_traceback(again)
    assert (again.returncode, again.stdout) == (first.returncode, first.stdout)


def test_cache_is_pruned_by_age_and_count(tmp_path, monkeypatch):
    from aoti_lint.run import cache

    directory = tmp_path / "cache"
    directory.mkdir()
    now = time.time()
    for index in range(10):
        path = directory / f"{index:040x}.json"
        path.write_text("{}")
        age = cache.MAX_AGE_SECONDS + 100 if index < 3 else index
        os.utime(path, (now - age, now - age))
    (directory / ".x.json.1.ab.tmp").write_text("")
    os.utime(directory / ".x.json.1.ab.tmp", (now - 2 * 86400, now - 2 * 86400))
    monkeypatch.setattr(cache, "MAX_ENTRIES", 5)
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        assert cache.prune(fd, now) == 3 + 2 + 1  # too old, past the count (least recently used), leftover
        assert sorted(p.name[-6:-5] for p in _cache_entries(directory)) == ["3", "4", "5", "6", "7"]
        assert cache.prune(fd, now) == 0  # once a day at most
    finally:
        os.close(fd)


# ---- fuzz: the whole command, --fix under --jobs 2 ------------------------------------------------------------------

_FUZZ_EXAMPLES = int(os.environ.get("AOTI_LINT_FUZZ_EXAMPLES", "0"))


def _program_strategy():
    from hypothesis import strategies as st

    from tests.reliability_sources import aoti_sources

    strategies = [aoti_sources()]
    try:
        import hypothesmith
    except ImportError:
        pass
    else:
        strategies.append(hypothesmith.from_node().map(lambda code: code.encode()))
    return st.one_of(strategies)


def _fuzz_cli_programs(programs: list[bytes]) -> None:
    """Properties of one run of the real command (test rule with known fixes, real pool of two workers)."""
    import ast
    import tempfile

    from aoti_lint.run.lint import lint_paths
    from aoti_lint.settings.config import Settings
    from aoti_lint.settings.run_options import Execution, FixOptions
    from tests.reliability_cli import FixingRuleSet

    with tempfile.TemporaryDirectory() as name:
        root = Path(name)
        paths = []
        for index, data in enumerate(programs):
            path = root / f"f{index}.py"
            path.write_bytes(data)
            paths.append(path)
        before = {path: path.read_bytes() for path in paths}
        # Accounting, in process with a forced pool: every file is checked or an error, none vanishes.
        from aoti_lint.run import lint

        original = lint.RuleSet
        lint.RuleSet = FixingRuleSet
        try:
            run = lint_paths(
                [root],
                Settings(root=root).with_enabled(),
                root,
                FixOptions(),
                Execution(jobs=2, pool_min_seconds=0.0),
            )
        finally:
            lint.RuleSet = original
        errored = {error.path for error in run.errors}
        assert run.files_checked + len(errored) >= len(paths), (run.files_checked, errored)
        result = fixing_process("--fix", "--jobs", "2", ".", cwd=root)
        assert result.returncode in (0, 1, 2), (result.returncode, result.stderr)
        assert "Traceback" not in result.stderr, result.stderr
        for line in result.stderr.splitlines():
            assert line.startswith("error: "), line
        if "All checks passed!" in result.stdout:
            assert result.returncode == 0 and not result.stderr, result.stderr
        for path in paths:
            data = path.read_bytes()
            if data != before[path]:
                ast.parse(data)  # a fixed file parses


# A real process with a pool per example (seconds each), from hypothesmith's slow strategies too: the full suite
# only. The fast suite fuzzes in process (tests/test_reliability_fuzz.py) and runs the crashing pool above.
@pytest.mark.slow
def test_fuzz_the_command_with_fix_under_two_jobs():
    """Hypothesis programs (AOTI-shaped, and hypothesmith's arbitrary Python) through the real command with
    --fix --jobs 2: exit 0/1/2 only, no traceback, every file checked or an error, fixed files parse. A fixed
    small number of examples in CI (each is a real run with a pool); AOTI_LINT_FUZZ_EXAMPLES for a hunt."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    @settings(
        max_examples=_FUZZ_EXAMPLES or 4,
        derandomize=not _FUZZ_EXAMPLES,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(st.lists(_program_strategy(), min_size=2, max_size=6))
    def run(programs):
        _fuzz_cli_programs(programs)

    run()
