"""The command as users run it: a subprocess, real files, exit codes, config errors, excludes, noqa."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from aoti_lint import __version__

OLD_COMPILE = "import torch\n\nso = torch._export.aot_compile(model, (x,))\n"
OLD_LOAD = "import torch\n\nrunner = torch._export.aot_load('m.so', 'cpu')\n"


def write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))


def test_version(cli):
    result = cli("--version")
    assert result.returncode == 0
    assert result.stdout.strip() == f"aoti-lint {__version__}"


def test_clean_tree_exits_zero(cli, tmp_path):
    write(tmp_path, {"a.py": "import torch\nprint(torch.ones(2))\n"})
    result = cli(cwd=tmp_path)
    assert result.returncode == 0
    assert result.stdout == "All checks passed!\n"


def test_findings_exit_one_sorted_with_summary(cli, tmp_path):
    write(tmp_path, {"b.py": OLD_LOAD, "a.py": OLD_COMPILE, "sub/c.py": OLD_COMPILE + OLD_LOAD.split("\n", 2)[2]})
    result = cli("check", ".", cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    lines = result.stdout.splitlines()
    assert [line.split(":")[0] for line in lines[:4]] == ["a.py", "b.py", "sub/c.py", "sub/c.py"]
    assert "Found 4 errors." in lines


def test_exit_zero(cli, tmp_path):
    write(tmp_path, {"a.py": OLD_COMPILE})
    assert cli("--exit-zero", cwd=tmp_path).returncode == 0


def test_python_m_and_console_script_agree(tmp_path):
    write(tmp_path, {"a.py": OLD_COMPILE})
    script = Path(sys.executable).with_name("aoti-lint")
    by_script = subprocess.run([str(script), "."], cwd=tmp_path, capture_output=True, text=True)
    by_module = subprocess.run([sys.executable, "-m", "aoti_lint", "."], cwd=tmp_path, capture_output=True, text=True)
    assert by_script.stdout == by_module.stdout
    assert by_script.returncode == by_module.returncode == 1


def test_the_console_script_flushes_what_it_printed_before_its_quick_exit(tmp_path):
    # It exits without the interpreter's teardown (``entry_point.entry``): a report larger than a pipe's buffer comes
    # whole, with the run's exit code; a reader gone early is an error exit, without a traceback. Its output is
    # buffered, as by default (with PYTHONUNBUFFERED set, nothing waits to be flushed, and Python's text layer does
    # not report a write that a closed pipe cut short).
    write(tmp_path, {f"m{index:03d}.py": OLD_COMPILE for index in range(300)})
    script = [str(Path(sys.executable).with_name("aoti-lint")), ".", "--no-cache", "--output-format", "json"]
    environment = {name: value for name, value in os.environ.items() if name != "PYTHONUNBUFFERED"}
    result = subprocess.run(script, cwd=tmp_path, env=environment, capture_output=True, text=True)
    assert result.returncode == 1, result.stderr
    assert len(result.stdout) > 65536 and len(json.loads(result.stdout)) == 300
    run = subprocess.Popen(script, cwd=tmp_path, env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert run.stdout is not None and run.stderr is not None
    assert run.stdout.read(10)
    run.stdout.close()
    assert run.wait(timeout=120) == 2
    assert b"Traceback" not in run.stderr.read()
    # Under a profiler it exits the usual way: the profile is written at the interpreter's exit.
    profile = tmp_path / "run.prof"
    profiled = [sys.executable, "-m", "cProfile", "-o", str(profile), "-m", "aoti_lint", "m000.py", "--no-cache"]
    assert b"AOTI001" in subprocess.run(profiled, cwd=tmp_path, capture_output=True).stdout
    assert profile.stat().st_size > 0


@pytest.mark.parametrize(
    ("select", "ignore", "expected"),
    [
        ("AOTI001", None, {"AOTI001"}),
        ("AOTI", "AOTI001", {"AOTI002"}),
        ("ALL", None, {"AOTI001", "AOTI002"}),
        ("AOTI00", "AOTI", {"AOTI001", "AOTI002"}),  # the more specific selector wins
    ],
)
def test_select_and_ignore(cli, tmp_path, select, ignore, expected):
    write(tmp_path, {"a.py": OLD_COMPILE, "b.py": OLD_LOAD})
    args = ["--select", select, "--output-format", "json"]
    if ignore:
        args += ["--ignore", ignore]
    result = cli(*args, cwd=tmp_path)
    assert {item["code"] for item in json.loads(result.stdout)} == expected


def test_unknown_selector_is_usage_error(cli, tmp_path):
    result = cli("--select", "AOTI9", cwd=tmp_path)
    assert result.returncode == 2
    assert "unknown rule selector `AOTI9`" in result.stderr


def test_json_shape(cli, tmp_path):
    write(tmp_path, {"a.py": OLD_COMPILE})
    result = cli("--output-format", "json", cwd=tmp_path)
    (item,) = json.loads(result.stdout)
    assert set(item) == {
        "cell", "code", "end_location", "filename", "fix", "location", "message", "noqa_row", "url"
    }  # fmt: skip
    assert item["location"] == {"row": 3, "column": 6}
    assert item["end_location"] == {"row": 3, "column": 31}
    assert item["filename"] == str(tmp_path / "a.py")
    assert item["noqa_row"] == 3
    assert item["url"].endswith("AOTI001.md")


def test_json_lines(cli, tmp_path):
    write(tmp_path, {"a.py": OLD_COMPILE, "b.py": OLD_LOAD})
    result = cli("--output-format", "json-lines", cwd=tmp_path)
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert [row["code"] for row in rows] == ["AOTI001", "AOTI002"]


def test_output_file(cli, tmp_path):
    write(tmp_path, {"a.py": OLD_COMPILE})
    result = cli("-o", "report.txt", "a.py", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stdout == ""
    assert (tmp_path / "report.txt").read_text().startswith("a.py:3:6: AOTI001")


def test_statistics(cli, tmp_path):
    write(tmp_path, {"a.py": OLD_COMPILE, "b.py": OLD_LOAD + "runner2 = torch._export.aot_load('m.so', 'cpu')\n"})
    result = cli("--statistics", cwd=tmp_path)
    assert result.stdout.splitlines()[0].split("\t")[:2] == ["    2", "AOTI002"]


def test_config_in_pyproject(cli, tmp_path):
    write(
        tmp_path,
        {
            "pyproject.toml": '[tool.aoti-lint]\nignore = ["AOTI002"]\nextend-exclude = ["generated"]\n',
            "a.py": OLD_COMPILE + "r = torch._export.aot_load('m.so', 'cpu')\n",
            "generated/g.py": OLD_COMPILE,
        },
    )
    result = cli("--output-format", "json", cwd=tmp_path)
    assert [(Path(i["filename"]).name, i["code"]) for i in json.loads(result.stdout)] == [("a.py", "AOTI001")]


def test_command_line_overrides_config(cli, tmp_path):
    write(tmp_path, {"aoti-lint.toml": 'select = ["AOTI002"]\n', "a.py": OLD_COMPILE})
    assert cli(cwd=tmp_path).returncode == 0
    assert cli("--select", "AOTI001", cwd=tmp_path).returncode == 1


def test_per_file_ignores(cli, tmp_path):
    write(
        tmp_path,
        {
            "pyproject.toml": '[tool.aoti-lint.per-file-ignores]\n"tests/**" = ["AOTI001"]\n',
            "tests/test_a.py": OLD_COMPILE,
            "src/a.py": OLD_COMPILE,
        },
    )
    result = cli("--output-format", "json", cwd=tmp_path)
    assert [Path(i["filename"]).parent.name for i in json.loads(result.stdout)] == ["src"]


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ("[tool.aoti-lint]\nselect = [\n", "invalid TOML"),
        ("[tool.aoti-lint]\nselekt = ['AOTI001']\n", "unknown key `selekt`; did you mean `select`?"),
        ("[tool.aoti-lint]\nselect = 'AOTI001'\n", "`select` must be a list of strings"),
        ("[tool.aoti-lint]\nignore = ['AOTI999']\n", "unknown rule selector `AOTI999`"),
        ("[tool.aoti-lint]\ntarget-torch = 2.6\n", "`target-torch` must be a version string"),
        ("[tool.aoti-lint]\nrespect-gitignore = 'yes'\n", "`respect-gitignore` must be true or false"),
    ],
)
def test_bad_config_exits_two_with_clear_message(cli, tmp_path, config, message):
    write(tmp_path, {"pyproject.toml": config, "a.py": OLD_COMPILE})
    result = cli(cwd=tmp_path)
    assert result.returncode == 2
    assert message in result.stderr
    assert "pyproject.toml" in result.stderr
    assert "Traceback" not in result.stderr


def test_invalid_toml_names_line(cli, tmp_path):
    write(tmp_path, {"aoti-lint.toml": "select = ['AOTI001']\nignore = [1,,]\nexclude = []\n"})
    result = cli(cwd=tmp_path)
    assert result.returncode == 2
    assert "aoti-lint.toml: invalid TOML" in result.stderr
    assert "line 2" in result.stderr


def test_default_excludes_and_gitignore(cli, tmp_path):
    write(
        tmp_path,
        {
            ".gitignore": "ignored_dir/\n*.gen.py\n",
            ".venv/lib/x.py": OLD_COMPILE,
            "build/x.py": OLD_COMPILE,
            "node_modules/x.py": OLD_COMPILE,
            "ignored_dir/x.py": OLD_COMPILE,
            "model.gen.py": OLD_COMPILE,
            "kept.py": OLD_COMPILE,
        },
    )
    (tmp_path / ".git").mkdir()
    result = cli("--output-format", "json", cwd=tmp_path)
    assert [Path(i["filename"]).name for i in json.loads(result.stdout)] == ["kept.py"]
    result = cli("--output-format", "json", "--no-respect-gitignore", cwd=tmp_path)
    assert sorted(Path(i["filename"]).name for i in json.loads(result.stdout)) == ["kept.py", "model.gen.py", "x.py"]


def test_named_file_is_read_unless_force_exclude(cli, tmp_path):
    write(tmp_path, {"build/x.py": OLD_COMPILE})
    assert cli("build/x.py", cwd=tmp_path).returncode == 1
    result = cli("--force-exclude", "build/x.py", cwd=tmp_path)
    assert result.returncode == 0


def test_named_directory_is_linted_under_an_excluded_name(cli, tmp_path):
    """As ruff: a directory named on the command line is linted even inside `.venv` or a gitignored folder;
    the excludes still apply below it, and --force-exclude applies them to the named path too."""
    torch_dir = ".venv/lib/python3.11/site-packages/torch"
    write(
        tmp_path,
        {
            ".gitignore": "ignored_dir/\n",
            f"{torch_dir}/a.py": OLD_COMPILE,
            f"{torch_dir}/sub/b.py": OLD_LOAD,
            f"{torch_dir}/build/c.py": OLD_COMPILE,
            "ignored_dir/d.py": OLD_COMPILE,
        },
    )
    (tmp_path / ".git").mkdir()
    result = cli("--output-format", "json", torch_dir, cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    names = sorted(Path(item["filename"]).relative_to(tmp_path).as_posix() for item in json.loads(result.stdout))
    assert names == [f"{torch_dir}/a.py", f"{torch_dir}/sub/b.py"]
    assert (cli("ignored_dir", cwd=tmp_path).returncode, cli(".", cwd=tmp_path).returncode) == (1, 0)

    forced = cli("--force-exclude", torch_dir, cwd=tmp_path)
    assert (forced.returncode, forced.stdout) == (0, "")
    assert "warning: No Python files found under the given path(s)" in forced.stderr


def test_no_file_found_warns_and_does_not_claim_checks_passed(cli, tmp_path):
    write(tmp_path, {"empty/README.md": "# nothing to lint\n", ".venv/x.py": OLD_COMPILE})
    for args in (("empty",), ()):
        result = cli(*args, cwd=tmp_path)
        assert (result.returncode, result.stdout) == (0, ""), args
        assert result.stderr == "warning: No Python files found under the given path(s)\n", args


def test_missing_directory_does_not_claim_checks_passed(cli, tmp_path):
    result = cli("no_such_dir", cwd=tmp_path)
    assert result.returncode == 2
    assert "All checks passed!" not in result.stdout + result.stderr
    assert "no_such_dir: No such file or directory" in result.stderr


def test_verbose_reports_the_number_of_files_checked(cli, tmp_path):
    write(tmp_path, {"a.py": OLD_COMPILE, "b.py": "x = 1\n", "deploy.sh": "export CUDA_LAUNCH_BLOCKING=1\n"})
    result = cli("-v", "--exit-zero", cwd=tmp_path)
    assert "debug: Checked 3 files" in result.stderr.splitlines()


def test_syntax_error_does_not_stop_the_run(cli, tmp_path):
    write(tmp_path, {"a.py": "import torch\nso = torch._export.aot_compile(m, (x,)\n", "b.py": OLD_LOAD})
    result = cli("--output-format", "json", cwd=tmp_path)
    assert result.returncode == 1
    assert [i["code"] for i in json.loads(result.stdout)] == ["AOTI000", "AOTI002"]


def test_missing_path_is_an_error_but_others_are_linted(cli, tmp_path):
    write(tmp_path, {"a.py": OLD_COMPILE})
    result = cli("a.py", "nope.py", cwd=tmp_path)
    assert result.returncode == 2
    assert "nope.py: No such file or directory" in result.stderr
    assert "a.py:3:6: AOTI001" in result.stdout


def test_encodings_bom_crlf_and_latin1(cli, tmp_path):
    (tmp_path / "bom.py").write_bytes(b"\xef\xbb\xbf" + OLD_COMPILE.encode())
    (tmp_path / "crlf.py").write_bytes(OLD_COMPILE.replace("\n", "\r\n").encode())
    (tmp_path / "latin.py").write_bytes(
        b"# -*- coding: latin-1 -*-\nimport torch\n# caf\xe9\nso = torch._export.aot_compile(m, (x,))\n"
    )
    (tmp_path / "bad.py").write_bytes(b"import torch\n# \xff\xfe\nso = torch._export.aot_compile(m, (x,))\n")
    result = cli("--output-format", "json", cwd=tmp_path)
    rows = sorted((Path(i["filename"]).name, i["code"], i["location"]["row"]) for i in json.loads(result.stdout))
    assert rows == [
        ("bad.py", "AOTI000", 1),
        ("bom.py", "AOTI001", 3),
        ("crlf.py", "AOTI001", 3),
        ("latin.py", "AOTI001", 4),
    ]


def test_noqa_inside_string_does_not_suppress(cli, tmp_path):
    write(tmp_path, {"a.py": 'import torch\nso = torch._export.aot_compile(m, ("# noqa",))\n'})
    assert cli(cwd=tmp_path).returncode == 1


def test_rule_and_rules_commands(cli):
    result = cli("rule", "AOTI001")
    assert result.returncode == 0
    assert result.stdout.startswith("# deprecated-aot-compile (AOTI001)")
    assert "## Why is this bad?" in result.stdout
    assert cli("rule", "deprecated-aot-load").stdout.startswith("# deprecated-aot-load (AOTI002)")
    assert cli("rule", "AOTI999").returncode == 2
    listing = cli("rules").stdout
    assert "AOTI001" in listing and "AOTI002" in listing


def test_unknown_flag_is_usage_error(cli):
    result = cli("--no-such-flag")
    assert result.returncode == 2


def test_no_libcst_import_when_nothing_can_match(tmp_path):
    """A file without AOTI tokens costs no more than reading it: libcst is never imported."""
    write(tmp_path, {"a.py": "import torch\nprint(torch.ones(1))\n"})
    code = (
        "import sys\nfrom aoti_lint.cli import main\n"
        "rc = main(['--quiet', '.'])\nassert 'libcst' not in sys.modules, 'libcst imported'\nprint(rc)"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True)
    assert result.stdout.strip().endswith("0"), result.stderr


def test_internal_rule_error_is_reported_per_file_and_exits_two(tmp_path, monkeypatch, capsys):
    from aoti_lint.cli import main
    from aoti_lint.rules import module_flow

    write(tmp_path, {"a.py": OLD_LOAD, "b.py": OLD_COMPILE})
    real_read = module_flow.read_flow

    def explode(path, *args):
        if path.name == "a.py":
            raise RuntimeError("boom")
        return real_read(path, *args)

    monkeypatch.setattr(module_flow, "read_flow", explode)
    monkeypatch.chdir(tmp_path)
    assert main(["--isolated", "."]) == 2
    out, err = capsys.readouterr()
    assert "a.py: internal error while linting: RuntimeError: boom" in err
    assert "b.py:3:6: AOTI001" in out


def test_a_file_libcst_does_not_read_as_python_is_reported_as_python_reads_it_and_not_fixed(cli, tmp_path):
    """libcst 1.9 drops a line holding only a backslash: its positions would be a row off and a fix would remove
    the wrong line (found in review). AOTI202 reads the file from ast, as Python does: every format reports the
    key at its row; the fix, which libcst would build, is unavailable and says why, and the file is left as it is."""
    text = "import torch._inductor.config as cfg\n\\\nkeep_me = 1\ncfg.nan_asserts = True\n"
    (tmp_path / "m.py").write_text(text)
    for flags in ([], ["--output-format", "json"], ["--fix", "--unsafe-fixes"]):
        result = cli("--isolated", *flags, "m.py", cwd=tmp_path)
        assert result.returncode == 1, (flags, result.stdout, result.stderr)
        assert "m.py:4:1: AOTI202" in result.stdout or '"row": 4' in result.stdout, result.stdout
    assert "m.py: fixes unavailable: libcst does not read line 2 as Python does" in result.stderr, result.stderr
    assert (tmp_path / "m.py").read_text() == text
