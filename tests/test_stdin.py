"""Editors and other tools: `aoti-lint - --stdin-filename PATH` reads the code from stdin."""

from __future__ import annotations

import json

OLD_COMPILE = "import torch\n\nso = torch._export.aot_compile(model, (x,))\n"


def test_reports_under_the_given_name(cli, tmp_path):
    result = cli("-", "--stdin-filename", "src/model.py", cwd=tmp_path, stdin=OLD_COMPILE)
    assert result.returncode == 1, result.stderr
    assert result.stdout.splitlines()[0].startswith("src/model.py:3:6: AOTI001 ")
    assert not (tmp_path / "src").exists()


def test_stdin_filename_alone_reads_stdin(cli, tmp_path):
    result = cli("--stdin-filename", "a.py", "--output-format", "pylint", cwd=tmp_path, stdin=OLD_COMPILE)
    assert result.stdout.startswith("a.py:3: [AOTI001] ")


def test_dash_without_a_name(cli, tmp_path):
    result = cli("-", cwd=tmp_path, stdin=OLD_COMPILE)
    assert result.stdout.startswith("-:3:6: AOTI001 ")


def test_full_format_shows_the_stdin_code(cli, tmp_path):
    result = cli("-", "--stdin-filename", "a.py", "--output-format", "full", cwd=tmp_path, stdin=OLD_COMPILE)
    assert "3 | so = torch._export.aot_compile(model, (x,))" in result.stdout


def test_per_file_ignores_follow_the_filename(cli, tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.aoti-lint]\nper-file-ignores = {"legacy/*" = ["AOTI001"]}\n')
    ignored = cli("-", "--stdin-filename", "legacy/old.py", cwd=tmp_path, stdin=OLD_COMPILE)
    assert (ignored.returncode, ignored.stdout) == (0, "All checks passed!\n")
    checked = cli("-", "--stdin-filename", "new/old.py", cwd=tmp_path, stdin=OLD_COMPILE)
    assert checked.returncode == 1


def test_the_filename_decides_the_kind(cli, tmp_path):
    cell = {"cell_type": "code", "metadata": {}, "outputs": [], "source": OLD_COMPILE, "execution_count": None}
    document = json.dumps({"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5})
    result = cli("-", "--stdin-filename", "nb.ipynb", cwd=tmp_path, stdin=document)
    assert result.stdout.startswith("nb.ipynb:cell 1:3:6: AOTI001 ")


def test_force_exclude_hands_back_the_code_untouched(cli, tmp_path):
    args = ("-", "--stdin-filename", "build/gen.py", "--force-exclude")
    assert cli(*args, cwd=tmp_path, stdin=OLD_COMPILE).returncode == 0
    echoed = cli(*args, "--fix", cwd=tmp_path, stdin=OLD_COMPILE)
    assert (echoed.returncode, echoed.stdout) == (0, OLD_COMPILE)


def test_fix_writes_the_code_to_stdout_and_the_report_to_stderr(cli, tmp_path):
    code = OLD_COMPILE + "runner = torch._export.aot_load('m.so', 'cpu')\n"
    result = cli("--fix", "-", "--stdin-filename", "a.py", cwd=tmp_path, stdin=code)
    assert result.returncode == 1  # AOTI002 has no fix: no compile of the run writes `m.so`
    assert result.stdout == code.replace(
        "torch._export.aot_compile(model, (x,))",
        "torch._inductor.aoti_compile_and_package(torch.export.export(model, (x,)))",
    )
    assert result.stderr.splitlines() == [
        "a.py:4:10: AOTI002 `torch._export.aot_load` is deprecated; use `torch._inductor.aoti_load_package(...)` "
        "(torch 2.6+); not fixed automatically: no compile of this run is known to write the `.pt2` package the new "
        "loader needs: run aoti-lint on the files that write its artifact too, or migrate both by hand",
        "Found 2 errors (1 fixed, 1 remaining).",
    ]
    assert list(tmp_path.iterdir()) == []


def test_a_safe_fix_never_migrates_a_compile_without_the_load_that_reads_its_artifact(cli, tmp_path):
    """Without the run's plan (stdin), each fix stands alone: a compile whose load's fix is unsafe (the device is
    a variable) must not be migrated by a safe-only run, or the old loader gets a package (found in review)."""
    code = (
        "from torch._export import aot_compile, aot_load\n\n\ndef f(model, x, dev):\n"
        "    return aot_load(aot_compile(model, (x,)), dev)(x)\n\n\ndef g(model, x, dev):\n"
        "    so = aot_compile(model, (x,))\n    return aot_load(so, dev)(x)\n"
    )
    safe = cli("--fix", "-", "--stdin-filename", "a.py", cwd=tmp_path, stdin=code)
    assert safe.stdout == code and "4 hidden fixes" in safe.stderr, safe.stderr
    unsafe = cli("--fix", "--unsafe-fixes", "-", "--stdin-filename", "a.py", cwd=tmp_path, stdin=code)
    assert "aot_load" not in unsafe.stdout and "aot_compile(" not in unsafe.stdout, unsafe.stdout


def test_fix_with_nothing_to_fix_echoes_the_code(cli, tmp_path):
    result = cli("--fix", "-", "--stdin-filename", "a.py", cwd=tmp_path, stdin="x = 1\n")
    assert (result.returncode, result.stdout, result.stderr) == (0, "x = 1\n", "All checks passed!\n")


def test_diff_from_stdin(cli, tmp_path):
    result = cli("--diff", "-", "--stdin-filename", "a.py", cwd=tmp_path, stdin=OLD_COMPILE)
    assert result.stdout == (
        "--- a/a.py\n+++ b/a.py\n@@ -1,3 +1,3 @@\n import torch\n \n"
        "-so = torch._export.aot_compile(model, (x,))\n"
        "+so = torch._inductor.aoti_compile_and_package(torch.export.export(model, (x,)))\n"
    )
    assert result.returncode == 1


def test_notebook_fix_from_stdin_writes_the_notebook(cli, tmp_path):
    cell = {"cell_type": "code", "metadata": {}, "outputs": [], "source": OLD_COMPILE, "execution_count": None}
    document = {"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    stdin = json.dumps(document, indent=1) + "\n"
    result = cli("--fix", "-", "--stdin-filename", "nb.ipynb", cwd=tmp_path, stdin=stdin)
    assert result.returncode == 0, result.stderr
    cell["source"] = OLD_COMPILE.replace(
        "torch._export.aot_compile(model, (x,))",
        "torch._inductor.aoti_compile_and_package(torch.export.export(model, (x,)))",
    )
    assert result.stdout == json.dumps(document, indent=1) + "\n"


def test_stdin_cannot_mix_with_paths(cli, tmp_path):
    result = cli("-", "a.py", cwd=tmp_path, stdin="")
    assert result.returncode == 2
    assert "cannot be combined" in result.stderr
