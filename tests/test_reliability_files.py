"""Hostile files through the real command: each gets a clear line naming it, the documented exit code, no
traceback, and --fix never loses or half-writes anything.

Tests that need a finding with a fix run ``python -m tests.reliability_cli``: the real command with AOTI002
swapped for a test rule whose fix is known (see tests/reliability_sources.py).
"""

from __future__ import annotations

import io
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from aoti_lint.read.files import Candidate
from aoti_lint.run.disk import lint_file, read_source
from aoti_lint.run.file_context import FileContext
from aoti_lint.run.ruleset import RuleSet
from aoti_lint.run.runner import Execution, run_files
from aoti_lint.settings.config import Settings
from aoti_lint.settings.run_options import FixOptions
from tests.conftest import REPO
from tests.helpers import run_fixing_main
from tests.reliability_cli import FIXING_RULES
from tests.reliability_sources import RenameDeprecatedLoad

OLD_LOAD = "import torch\n\nrunner = torch._export.aot_load(so_path, 'cpu')\n"
FIXED_LOAD = f"import torch\n\nrunner = {RenameDeprecatedLoad.REPLACEMENT}(so_path, 'cpu')\n"
FIX = FixOptions(apply=True, unsafe=True)


def fixing_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    """The command with the test-only fixing rule (tests/reliability_cli.py), run in this process."""
    return run_fixing_main("--isolated", *args, cwd=cwd)


def json_rows(result) -> list[tuple[str, str, int, int]]:
    return [
        (Path(i["filename"]).name, i["code"], i["location"]["row"], i["location"]["column"])
        for i in json.loads(result.stdout)
    ]


def assert_user_error(result, path: str, message: str) -> None:
    """Exit 2, one `error: PATH: MESSAGE` line, no traceback."""
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert f"error: {path}: {message}" in result.stderr.splitlines(), result.stderr
    assert "Traceback" not in result.stderr


# ---- contents -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "row", "message"),
    [
        (b"import torch\nso = torch._export.aot_compile(m, (x,)\n", 2, "'(' was never closed"),
        (b"import torch._export\nprint 'aot_load'\n", 2, "Missing parentheses in call to 'print'"),
        (b"import torch._export\nexec 'x'\nraise E, 'aot_load'\n", 2, "Missing parentheses in call to 'exec'"),
        (b"import torch\x00\nso = torch._export.aot_compile(m, (x,))\n", 1, "source code contains NUL bytes"),
        (b"import torch\n# \xff\xfe\nso = torch._export.aot_compile(m, (x,))\n", 1, "not valid utf-8"),
        (bytes(range(256)) * 8 + b"aot_compile _export", 1, "SyntaxError"),
    ],
    ids=["syntax-error", "python2-print", "python2-exec", "nul-bytes", "invalid-utf8", "binary"],
)
def test_unparsable_file_is_one_syntax_finding_and_the_run_goes_on(cli, tmp_path, data, row, message):
    (tmp_path / "bad.py").write_bytes(data)
    (tmp_path / "good.py").write_text(OLD_LOAD)
    result = cli("--isolated", "--output-format", "json", ".", cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    rows = json.loads(result.stdout)
    assert [(Path(r["filename"]).name, r["code"]) for r in rows] == [("bad.py", "AOTI000"), ("good.py", "AOTI002")]
    assert rows[0]["location"]["row"] == row
    assert message in rows[0]["message"]
    assert (tmp_path / "bad.py").read_bytes() == data
    fixing_cli("--fix", ".", cwd=tmp_path)
    assert (tmp_path / "bad.py").read_bytes() == data, "a file with a syntax error was rewritten"
    assert (tmp_path / "good.py").read_text() == FIXED_LOAD


@pytest.mark.parametrize(
    ("name", "data", "row"),
    [
        (
            "latin1",
            "# -*- coding: latin-1 -*-\nimport torch\n# caf\u00e9\nr = torch._export.aot_load(p)\n".encode("latin-1"),
            4,
        ),
        ("latin1-cr", b"# -*- coding: latin-1 -*-\rimport torch\r# caf\xe9\rr = torch._export.aot_load(p)\r", 4),
        ("bom", b"\xef\xbb\xbf" + "# \u00e9\nimport torch\n\nr = torch._export.aot_load(p)\n".encode(), 4),
        ("crlf", b"import torch\r\n\r\nr = torch._export.aot_load(p)\r\n", 3),
        ("cr", b"import torch\r\rr = torch._export.aot_load(p)\r", 3),
        ("mixed", b"import torch\r\n\nr = torch._export.aot_load(p)\ry = 1\r\n", 3),
        ("no-final-newline", b"import torch\n\nr = torch._export.aot_load(p)", 3),
    ],
)
def test_encoding_bom_and_newlines_are_read_right_and_kept_by_fix(cli, tmp_path, name, data, row):
    path = tmp_path / "a.py"
    path.write_bytes(data)
    result = cli("--isolated", "--output-format", "json", "a.py", cwd=tmp_path)
    assert json_rows(result) == [("a.py", "AOTI002", row, 5)]
    assert path.read_bytes() == data, "linting changed the file"

    # The real command's --fix, whatever fixes the registered rules have: a changed file keeps its form.
    cli("--isolated", "--fix", "--unsafe-fixes", "a.py", cwd=tmp_path)
    _assert_same_form(data, path.read_bytes())
    path.write_bytes(data)
    # A fix that is known to apply: only the reference changes, every other byte stays.
    result = fixing_cli("--fix", "a.py", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    old = b"torch._export.aot_load"
    assert path.read_bytes() == data.replace(old, RenameDeprecatedLoad.REPLACEMENT.encode())


def _assert_same_form(before: bytes, after: bytes) -> None:
    if before == after:
        return
    assert after.startswith(b"\xef\xbb\xbf") == before.startswith(b"\xef\xbb\xbf")
    assert after.endswith((b"\n", b"\r")) == before.endswith((b"\n", b"\r"))
    for newline in (b"\r\n", b"\r", b"\n"):
        if before.replace(b"\r\n", b"").count(newline) == 0 and newline != b"\r\n":
            assert after.replace(b"\r\n", b"").count(newline) == 0, f"{newline!r} brought in"


def test_noqa_works_with_old_mac_line_ends(cli, tmp_path):
    (tmp_path / "a.py").write_bytes(
        b"import torch\rr = torch._export.aot_load(p)  # noqa\rs = torch._export.aot_load(p)\r"
    )
    result = cli("--isolated", "--output-format", "json", "a.py", cwd=tmp_path)
    assert json_rows(result) == [("a.py", "AOTI002", 3, 5)]


def test_ten_megabyte_file(tmp_path):
    """A 10 MB generated data module holds no AOTI token: it is read and prefiltered, never parsed (libcst is not
    even imported; a 10 MB module that does need parsing is beyond libcst's speed, see docs/reliability.md)."""
    row = "WEIGHTS.append([" + ", ".join(f"{i}.{i}" for i in range(40)) + "])\n"
    path = tmp_path / "weights.py"
    path.write_text("WEIGHTS = []\n" + row * (10_000_000 // len(row)))
    assert path.stat().st_size > 9_900_000
    probe = (
        "import sys\nfrom aoti_lint.cli import main\n"
        "code = main(['--isolated', '--no-cache', 'weights.py'])\n"
        "print(code, 'libcst' in sys.modules)\n"
    )
    result = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert result.stdout.split()[-2:] == ["0", "False"], result.stdout + result.stderr


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs Linux /proc")
def test_a_file_whose_stat_has_no_size_is_read_to_its_end():
    """/proc files stat as regular files of size 0: the read goes on to the end, not to the stat's size."""
    from aoti_lint.run.disk import read_regular_file_stat

    data, info = read_regular_file_stat("/proc/self/status")
    assert info.st_size == 0 and b"Name:" in data and data.endswith(b"\n")


def test_files_bigger_than_a_read_are_read_whole(tmp_path):
    from aoti_lint.run.disk import read_regular_file_stat

    data = os.urandom(3 * (1 << 20) + 7)
    (tmp_path / "big.py").write_bytes(data)
    assert read_regular_file_stat(tmp_path / "big.py")[0] == data
    (tmp_path / "empty.py").write_bytes(b"")
    assert read_regular_file_stat(str(tmp_path / "empty.py"))[0] == b""


@pytest.mark.parametrize("count", [500, pytest.param(20_000, marks=pytest.mark.slow)])
def test_generated_file_with_thousands_of_assignments_to_one_name(monkeypatch, count):
    """20,000 `x = ...` lines (500 in the fast suite) and one AOTI reference: the rules ask for a name's qualified
    names only where it can be the symbol (``SemanticModel.may_name``), so the number of lookups stays a handful,
    whatever the number of assignments."""
    from aoti_lint.model.semantic import SemanticModel
    from tests.helpers import lint_text

    looked_up = []
    original = SemanticModel.qualified_names

    def counting(self, node, *args, **kwargs):
        looked_up.append(node)
        return original(self, node, *args, **kwargs)

    monkeypatch.setattr(SemanticModel, "qualified_names", counting)
    result = lint_text("import torch\n" + "x = 1\n" * count + "torch._export.aot_load(p)\n", filename="gen.py")
    assert [(f.code, f.start.row) for f in result.findings] == [("AOTI002", count + 2)]
    assert 0 < len(looked_up) < 20


@pytest.mark.parametrize(
    ("name", "text", "outcome"),
    [
        ("parens", "import torch\nx = " + "(" * 1000 + "torch._export.aot_compile" + ")" * 1000 + "\n", "AOTI000"),
        (
            "indent",
            "import torch\n"
            + "".join(" " * i + "if x:\n" for i in range(1000))
            + " " * 999
            + " torch._export.aot_load\n",
            "AOTI000",
        ),
        ("attributes", "import torch\nx = torch._export.aot_compile" + ".a" * 20000 + "\n", "AOTI000"),
        # 24,000 (a 96 kB line): past 100 kB a line is not checked at all (docs/reliability.md, cost limits).
        ("operators", "import torch\nx = torch._export.aot_compile" + " + a" * 24000 + "\n", "AOTI000"),
        ("calls", "import torch\nx = " + "f(" * 1000 + "torch._export.aot_compile" + ")" * 1000 + "\n", "AOTI000"),
        ("lists", "import torch\nx = " + "[" * 1000 + "torch._export.aot_compile" + "]" * 1000 + "\n", "AOTI000"),
        ("calls-200", "import torch\nx = " + "f(" * 190 + "torch._export.aot_compile" + ")" * 190 + "\n", "any"),
    ],
    # Short ids: pytest puts the test id in PYTEST_CURRENT_TEST, and a 500 kB one is too big for exec().
    ids=lambda value: value if isinstance(value, str) and len(value) < 20 else "-",
)
def test_deep_nesting_never_crashes(cli, tmp_path, name, text, outcome):
    """1,000 levels (and 20,000-long chains, which crashed libcst's parser or took minutes): a syntax finding
    (CPython refuses more than 200 nested brackets, and libcst is never given them); under that limit a finding
    or a `too deeply nested` error; never a RecursionError traceback, a crash or a hang."""
    (tmp_path / "deep.py").write_text(text)
    result = cli("--isolated", "--output-format", "json", "deep.py", cwd=tmp_path)
    assert "Traceback" not in result.stderr and "RecursionError" not in result.stderr
    if outcome == "any":
        assert result.returncode in (1, 2), result.stderr
        assert result.returncode == 1 or "error: deep.py: too deeply nested to analyse" in result.stderr
    elif outcome == "error":
        assert_user_error(result, "deep.py", "too deeply nested to analyse")
    else:
        assert result.returncode == 1
        assert [row[1] for row in json_rows(result)] == [outcome]


# ---- the file system ------------------------------------------------------------------------------------------


def test_file_deleted_between_discovery_and_reading(tmp_path):
    path = tmp_path / "gone.py"
    path.write_text(OLD_LOAD)
    candidate = Candidate(path, "python", explicit=False)
    path.unlink()
    (outcome,) = run_files([candidate], RuleSet(Settings(root=tmp_path).with_enabled()), tmp_path, FIX, Execution())
    assert [(e.path, e.message) for e in outcome.errors] == [("gone.py", "file disappeared before it could be read")]


def test_file_deleted_between_reading_and_writing_is_not_recreated(tmp_path):
    path = tmp_path / "gone.py"
    path.write_text(OLD_LOAD)
    source = read_source(Candidate(path, "python", explicit=True), tmp_path)
    path.unlink()
    outcome = lint_file(source, FileContext.of(FIXING_RULES), FIX)
    assert [e.message for e in outcome.errors] == ["cannot write fixes: No such file or directory"]
    assert not path.exists()
    assert list(tmp_path.iterdir()) == []


def test_file_changed_between_reading_and_writing_is_not_overwritten(tmp_path):
    path = tmp_path / "a.py"
    path.write_text(OLD_LOAD)
    source = read_source(Candidate(path, "python", explicit=True), tmp_path)
    users_edit = OLD_LOAD + "extra = 1\n"
    path.write_text(users_edit)  # the user saves while the fixer works
    outcome = lint_file(source, FileContext.of(FIXING_RULES), FIX)
    assert [e.message for e in outcome.errors] == ["changed on disk while it was being fixed; not written"]
    assert path.read_text() == users_edit


def test_fifo_is_refused_not_waited_on(cli, tmp_path):
    os.mkfifo(tmp_path / "pipe.py")
    (tmp_path / "good.py").write_text(OLD_LOAD)
    result = cli("--isolated", ".", cwd=tmp_path)
    assert_user_error(result, "pipe.py", "is not a regular file (a FIFO, socket or device); not read")
    assert "good.py:3:10: AOTI002" in result.stdout


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads a file whatever its mode; see the /proc/self/mem case")
def test_unreadable_file_chmod_000(cli, tmp_path):
    path = tmp_path / "secret.py"
    path.write_text(OLD_LOAD)
    path.chmod(0)
    result = cli("--isolated", ".", cwd=tmp_path)
    assert_user_error(result, "secret.py", "cannot read file: Permission denied")


@pytest.mark.skipif(not Path("/proc/self/mem").exists(), reason="needs Linux /proc")
def test_unreadable_file_even_for_root(cli, tmp_path):
    """/proc/self/mem cannot be read from offset 0 by anyone, root included: a real read error."""
    (tmp_path / "mem.py").symlink_to("/proc/self/mem")
    (tmp_path / "good.py").write_text(OLD_LOAD)
    result = cli("--isolated", ".", cwd=tmp_path)
    assert_user_error(result, "mem.py", "cannot read file: Input/output error")
    assert "good.py:3:10: AOTI002" in result.stdout


def test_symlink_loops(cli, tmp_path):
    (tmp_path / "a.py").symlink_to("b.py")
    (tmp_path / "b.py").symlink_to("a.py")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "up").symlink_to("..")
    (tmp_path / "sub" / "good.py").write_text(OLD_LOAD)
    result = cli("--isolated", ".", cwd=tmp_path, stdin="")
    assert result.returncode == 2
    assert sorted(line for line in result.stderr.splitlines()) == [
        "error: a.py: cannot read file: Too many levels of symbolic links",
        "error: b.py: cannot read file: Too many levels of symbolic links",
    ]
    # Findings only: the concise report also lists each hidden fix under its summary (`path:line: AOTI002 unsafe fix`).
    findings = [line for line in result.stdout.splitlines() if "AOTI002" in line and "unsafe fix:" not in line]
    assert len(findings) == 1, "a directory link to its parent was walked"


def test_symlink_out_of_the_tree_is_read_and_fixed_where_it_lives(cli, tmp_path):
    outside, tree = tmp_path / "outside", tmp_path / "tree"
    outside.mkdir()
    tree.mkdir()
    (outside / "real.py").write_text(OLD_LOAD)
    (tree / "link.py").symlink_to(outside / "real.py")
    result = cli("--isolated", ".", cwd=tree)
    assert "link.py:3:10: AOTI002" in result.stdout
    result = fixing_cli("--fix", ".", cwd=tree)
    assert result.returncode == 0, result.stderr
    assert (tree / "link.py").is_symlink(), "the fix replaced the user's link by a copy"
    assert (outside / "real.py").read_text() == FIXED_LOAD


def test_files_are_under_the_project_as_their_resolved_paths_say(tmp_path, monkeypatch):
    """Whether a run's files lie in the project is read from their real paths (``os.path.realpath``), each folder
    resolved once: a linked file or folder lies where its target does, a loop is outside, `..` is followed."""
    import os

    from aoti_lint.run.lint import _all_under

    project, outside = tmp_path / "project", tmp_path / "outside"
    (project / "pkg").mkdir(parents=True)
    outside.mkdir()
    (project / "pkg" / "a.py").write_text("")
    (outside / "b.py").write_text("")
    (project / "pkg" / "out.py").symlink_to(outside / "b.py")
    (project / "away").symlink_to(outside)
    (project / "loop.py").symlink_to("loop.py")
    (tmp_path / "in.py").symlink_to(project / "pkg" / "a.py")
    monkeypatch.chdir(project)
    paths = [
        "pkg/a.py",
        "pkg/out.py",
        "away/b.py",
        "loop.py",
        tmp_path / "in.py",
        "away/../pkg/a.py",
        "pkg/../../outside/b.py",
        ".",
        "pkg",
    ]
    for path in paths:
        truth = (os.path.realpath(path) + os.sep).startswith(os.path.realpath(project) + os.sep)
        assert _all_under([path], project) == truth, path
    assert _all_under(["pkg/a.py", tmp_path / "in.py", "."], project)
    assert not _all_under(["pkg/a.py", "away/b.py"], project)


def test_read_only_file_under_fix(tmp_path):
    """Mode 0444: not written, even by root (who could); the other files are fixed; exit 2."""
    (tmp_path / "locked.py").write_text(OLD_LOAD)
    (tmp_path / "locked.py").chmod(0o444)
    (tmp_path / "open.py").write_text(OLD_LOAD)
    result = fixing_cli("--fix", ".", cwd=tmp_path)
    assert_user_error(result, "locked.py", "is read-only; fixes not written")
    assert (tmp_path / "locked.py").read_text() == OLD_LOAD
    assert (tmp_path / "open.py").read_text() == FIXED_LOAD
    assert sorted(p.name for p in tmp_path.iterdir()) == ["locked.py", "open.py"]


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("chattr"), reason="chattr +i needs root")
def test_immutable_file_under_fix(tmp_path):
    path = tmp_path / "frozen.py"
    path.write_text(OLD_LOAD)
    if subprocess.run(["chattr", "+i", str(path)], capture_output=True).returncode != 0:
        pytest.skip("this file system does not support the immutable attribute")
    try:
        result = fixing_cli("--fix", ".", cwd=tmp_path)
        assert_user_error(result, "frozen.py", "is read-only; fixes not written")
        assert path.read_text() == OLD_LOAD
    finally:
        subprocess.run(["chattr", "-i", str(path)], check=True)


def _tree(root: Path, count: int) -> list[Path]:
    paths = []
    for index in range(count):
        path = root / f"pkg{index % 10}" / f"m{index}.py"
        path.parent.mkdir(exist_ok=True)
        path.write_text(OLD_LOAD + f"value = {index}\n")
        paths.append(path)
    return paths


def _assert_whole(paths: list[Path]) -> int:
    """Every file is either the original or the fixed text, never a mix; no temporary file is left."""
    fixed = 0
    for index, path in enumerate(paths):
        text = path.read_text()
        assert text in (OLD_LOAD + f"value = {index}\n", FIXED_LOAD + f"value = {index}\n"), path
        fixed += text.startswith(FIXED_LOAD)
    leftovers = [p for p in paths[0].parents[1].rglob("*") if p.is_file() and p.suffix != ".py"]
    assert leftovers == []
    return fixed


# Stress: whole fix runs of hundreds of files in separate processes (tens of CPU seconds): the full suite only.
@pytest.mark.slow
def test_two_fix_runs_on_one_tree_at_once(tmp_path):
    paths = _tree(tmp_path, 200)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    command = [sys.executable, "-m", "tests.reliability_cli", "--isolated", "--fix", "."]
    runs = [subprocess.Popen(command, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)]
    runs.append(
        subprocess.Popen(command, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    )
    for run in runs:
        _, err = run.communicate(timeout=300)
        assert run.returncode in (0, 2), err
        assert "Traceback" not in err
        for line in err.splitlines():
            assert line.endswith(": changed on disk while it was being fixed; not written"), line
    assert _assert_whole(paths) == len(paths)


@pytest.mark.slow
def test_interrupt_during_fix_leaves_no_half_written_file(tmp_path):
    paths = _tree(tmp_path, 600)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    command = [sys.executable, "-m", "tests.reliability_cli", "--isolated", "--fix", "."]
    run = subprocess.Popen(command, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and run.poll() is None:
        if any(p.read_text().startswith(FIXED_LOAD) for p in paths[:50]):
            break
        time.sleep(0.01)
    run.send_signal(signal.SIGINT)
    _, err = run.communicate(timeout=120)
    if run.returncode == 0:
        pytest.skip("the run finished before the interrupt landed")
    assert run.returncode == 130, err
    assert err.strip().splitlines()[-1] == "aoti-lint: interrupted"
    assert "Traceback" not in err
    # Usually some files are fixed and others not; either way none is half-written.
    if _assert_whole(paths) == 0:
        pytest.skip("the interrupt landed before any file was written (a loaded machine): nothing to check mid-write")


@pytest.mark.parametrize("newline", ["\r", "\r\n", "\n"])
def test_a_migrated_file_keeps_its_last_line_end(cli, tmp_path, newline):
    """libcst's code generation drops a module's last line end when it is a lone CR (an old Mac file): the
    migration's text, and the imports it tidies, put it back."""
    lines = ["import torch", "import torch._export", "so = torch._export.aot_compile(m, (x,))"]
    lines += ["r = torch._export.aot_load(so, 'cpu')", ""]
    data = newline.join(lines).encode()
    path = tmp_path / "a.py"
    path.write_bytes(data)
    cli("--isolated", "--fix", "a.py", cwd=tmp_path)
    fixed = path.read_bytes()
    assert b"aoti_load_package" in fixed and b"_export" not in fixed, fixed
    assert fixed.endswith(newline.encode()) and not fixed.endswith(newline.encode() * 2), fixed
    _assert_same_form(data, fixed)


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"import torch\n",
        b"\n# -*- coding: latin-1 -*-\nx = '\xe9'\n",
        b"#!/usr/bin/env python\n# vim: set fileencoding=utf-8 :\n",
        b"# coding: utf-8\r# caf\xc3\xa9\r",
        b"\xef\xbb\xbfx = 1\n",
        b"# caf\xc3\xa9\nx = 1\n",
        b"# caf\xe9\nx = 1\n",  # not UTF-8 in a line tokenize reads: its SyntaxError
        b"x = 1\ny = 2\n# coding: bogus-codec\n",  # a third line's cookie is no cookie
        b"# coding: bogus-codec\n",
        b"x = 1\n\n\n# caf\xe9\n",  # not UTF-8 below the lines tokenize reads: the decode fails
    ],
)
def test_decode_python_settles_the_encoding_as_tokenize_does(data):
    """``decode_python`` answers UTF-8 without tokenize for an ASCII head without a cookie: the same text,
    encoding or error as with it."""
    import tokenize

    from aoti_lint.read.source import DecodeError, decode_python

    def with_tokenize() -> object:
        try:
            encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
            text = data.decode(encoding)
        except (SyntaxError, UnicodeDecodeError, LookupError):
            return DecodeError
        return (text[1:] if text.startswith("\ufeff") else text), encoding

    try:
        ours: object = decode_python(data)
    except DecodeError:
        ours = DecodeError
    assert ours == with_tokenize()


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("a.py", "python"),
        ("a.pyi", "python"),
        ("a.ipynb", "jupyter"),
        ("run.sh", "shell"),
        ("ci.yaml", "yaml"),
        ("ops.cu", "cpp"),
        (".py", "shell"),  # a dotfile's name is no suffix: its shebang tells
        ("Dockerfile", "dockerfile"),
        ("Dockerfile.env", "dockerfile"),  # the name before the `.env` suffix
        ("build.dockerfile", "dockerfile"),
        (".env", "env"),
        ("prod.env", "env"),
        ("a.PY", None),
        ("notes.txt", None),
        ("tool", "shell"),  # no suffix: its shebang tells
        ("tool.", "shell"),  # a trailing dot is no suffix either
        ("tool.txt", None),
    ],
)
def test_a_files_kind_is_told_by_its_suffix_then_its_name_then_its_shebang(tmp_path, name, kind):
    from aoti_lint.read.source import kind_of_name

    path = tmp_path / name
    path.write_text("#!/usr/bin/env bash\necho hi\n")
    assert kind_of_name(name, str(path)) == kind
