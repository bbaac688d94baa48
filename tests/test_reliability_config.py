"""Hostile configuration: one clear line naming the file and the key, exit 2, no traceback; odd but valid
configuration (thousands of patterns, spaces and non-ASCII in paths) works and stays fast."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from aoti_lint.run.ruleset import RuleSet
from aoti_lint.settings.config import Settings

OLD_LOAD = "import torch\n\nrunner = torch._export.aot_load('m.so', 'cpu')\n"


def assert_config_error(result, *fragments: str) -> None:
    assert result.returncode == 2, (result.stdout, result.stderr)
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])


@pytest.mark.parametrize(
    ("name", "data", "fragments"),
    [
        ("aoti-lint.toml", b"select = [\n", ("aoti-lint.toml: invalid TOML",)),
        ("aoti-lint.toml", b"select = ['AOTI001']\nselect = ['AOTI002']\n", ("invalid TOML", "line 2")),
        ("aoti-lint.toml", b"\xff\xfe select = []\n", ("aoti-lint.toml: configuration is not valid UTF-8",)),
        ("aoti-lint.toml", b"select = 1\n", ("`select` must be a list of strings", "int `1`")),
        ("aoti-lint.toml", b"select = ['AOTI001', 2]\n", ("`select` must be a list of strings",)),
        ("aoti-lint.toml", b"per-file-ignores = ['a']\n", ("`per-file-ignores` must be a table",)),
        ("aoti-lint.toml", b"[per-file-ignores]\n'x.py' = 'AOTI001'\n", ("per-file-ignores.x.py", "list of strings")),
        ("aoti-lint.toml", b"extend-exclude = 'build'\n", ("`extend-exclude` must be a list of strings",)),
        ("aoti-lint.toml", b"output-format = 3\n", ("`output-format` must be one of",)),
        ("aoti-lint.toml", b"force-exclude = 1\n", ("`force-exclude` must be true or false",)),
        ("aoti-lint.toml", b"target-torch = '2'\n", ("`target-torch` must be a version string",)),
        ("pyproject.toml", b"[tool]\naoti-lint = 'on'\n", ("pyproject.toml: [tool.aoti-lint] must be a table",)),
        ("aoti-lint.toml", b"select = ['AOTI999']\n", ("unknown rule selector `AOTI999`",)),
        ("aoti-lint.toml", b"select = ['E501']\n", ("unknown rule selector `E501`",)),
        ("aoti-lint.toml", b"ignore = ['']\n", ("`ignore`",)),
        ("aoti-lint.toml", b"[per-file-ignores]\n'x.py' = ['NOPE1']\n", ("per-file-ignores.x.py", "NOPE1")),
    ],
)
def test_bad_configuration_is_one_clear_line(cli, tmp_path, name, data, fragments):
    (tmp_path / name).write_bytes(data)
    (tmp_path / "a.py").write_text(OLD_LOAD)
    result = cli("a.py", cwd=tmp_path)
    assert_config_error(result, name, *fragments)


def test_config_given_on_the_command_line_is_missing_or_a_directory(cli, tmp_path):
    assert_config_error(cli("--config", "nope.toml", cwd=tmp_path), "nope.toml", "cannot read configuration")
    (tmp_path / "conf.toml").mkdir()
    assert_config_error(cli("--config", "conf.toml", cwd=tmp_path), "conf.toml", "cannot read configuration")


def test_unknown_code_on_the_command_line(cli, tmp_path):
    (tmp_path / "a.py").write_text(OLD_LOAD)
    assert_config_error(cli("--select", "AOTI002,BOGUS9", cwd=tmp_path), "BOGUS9")
    assert_config_error(cli("--per-file-ignores", "a.py:WHAT1", cwd=tmp_path), "--per-file-ignores", "WHAT1")
    assert_config_error(cli("--per-file-ignores", "AOTI002", cwd=tmp_path), "expected PATTERN:CODES")


@pytest.mark.parametrize("count", [500, pytest.param(5000, marks=pytest.mark.slow)])
def test_thousands_of_per_file_ignores_are_correct_and_fast(cli, tmp_path, count):
    lines = ["[per-file-ignores]"]
    lines += [f'"generated/mod{index}/**" = ["AOTI002"]' for index in range(count)]
    lines += ['"tests/*.py" = ["AOTI002"]', '"!src/keep.py" = ["AOTI002"]']
    (tmp_path / "aoti-lint.toml").write_text("\n".join(lines) + "\n")
    for folder in ("src", "tests", f"generated/mod{count - 1}/sub"):
        for index in range(20):
            path = tmp_path / folder / f"m{index}.py"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(OLD_LOAD)
    result = cli("--output-format", "json", ".", cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    folders = {Path(item["filename"]).parent.relative_to(tmp_path).as_posix() for item in json.loads(result.stdout)}
    assert folders == {"src"}


@pytest.mark.parametrize("count", [2000, pytest.param(20_000, marks=pytest.mark.slow)])
def test_per_file_ignores_cost_does_not_grow_per_pattern(tmp_path, monkeypatch, count):
    """20,000 patterns (2,000 in the fast suite) over 402 paths: one spec per code set, not one per pattern
    (which took ~17 s here with 20,000).

    Counted, not timed: the specs built and the matches tried do not depend on the number of patterns."""
    import pathspec

    real_from_lines = pathspec.GitIgnoreSpec.from_lines
    built: list[int] = []
    matched: list[str] = []

    def counting_from_lines(cls, lines, *args, **kwargs):
        lines = list(lines)
        built.append(len(lines))
        spec = real_from_lines(lines, *args, **kwargs)
        real_match = spec.match_file

        def match_file(path, *more):
            matched.append(path)
            return real_match(path, *more)

        spec.match_file = match_file
        return spec

    monkeypatch.setattr(pathspec.GitIgnoreSpec, "from_lines", classmethod(counting_from_lines))
    patterns = tuple((f"generated/mod{index}/**", ("AOTI002",)) for index in range(count))
    settings = Settings(root=tmp_path, per_file_ignores=(*patterns, ("tests/**", ("AOTI001",)))).with_enabled()
    ruleset = RuleSet(settings)
    codes = {
        folder: {rule.code for rule in ruleset.for_file(tmp_path / folder / f"m{index}.py", "python")}
        for folder in ("src", "tests", f"generated/mod{count - 1}")
        for index in range(134)
    }
    python = {rule.code for rule in ruleset.rules if "python" in rule.file_kinds}
    assert codes == {"src": python, "tests": python - {"AOTI001"}, f"generated/mod{count - 1}": python - {"AOTI002"}}
    # One spec per set of ignored codes, each asked at most twice per file (its path, then its name).
    assert sorted(built) == [1, count]
    assert len(matched) <= 2 * len(built) * 3 * 134


def test_paths_with_spaces_and_non_ascii_names(cli, tmp_path):
    folder = tmp_path / "my project" / "modèles 模型"
    folder.mkdir(parents=True)
    (folder / "export ünïcode.py").write_text(OLD_LOAD)
    (folder / "ignored é.py").write_text(OLD_LOAD)
    (tmp_path / "my project" / "aoti-lint.toml").write_text('[per-file-ignores]\n"ignored é.py" = ["AOTI002"]\n')
    result = cli("--output-format", "json", "modèles 模型", cwd=tmp_path / "my project")
    assert result.returncode == 1, result.stderr
    assert [Path(item["filename"]).name for item in json.loads(result.stdout)] == ["export ünïcode.py"]
    result = cli("modèles 模型/export ünïcode.py", cwd=tmp_path / "my project")
    assert result.stdout.startswith("modèles 模型/export ünïcode.py:3:10: AOTI002")


@pytest.mark.skipif(os.geteuid() == 0, reason="root can read any directory")
def test_config_in_an_unreadable_parent_directory_is_passed_over(cli, tmp_path):
    parent = tmp_path / "parent"
    (parent / "project").mkdir(parents=True)
    (parent / "aoti-lint.toml").write_text("select = [\n")
    (parent / "project" / "a.py").write_text(OLD_LOAD)
    parent.chmod(0o311)  # searchable, not listable or readable
    (parent / "aoti-lint.toml").chmod(0)
    try:
        result = cli("a.py", cwd=parent / "project")
    finally:
        parent.chmod(0o755)
    assert_config_error(result, "aoti-lint.toml", "cannot read configuration: Permission denied")


@pytest.mark.skipif(not Path("/proc/self/mem").exists(), reason="needs Linux /proc")
def test_config_in_a_parent_directory_that_cannot_be_read(cli, tmp_path):
    """A config found above the project that nobody, root included, can read: an error naming it, not a
    silent run with other settings."""
    (tmp_path / "project").mkdir()
    (tmp_path / "aoti-lint.toml").symlink_to("/proc/self/mem")
    (tmp_path / "project" / "a.py").write_text(OLD_LOAD)
    result = cli("a.py", cwd=tmp_path / "project")
    assert_config_error(result, str(tmp_path / "aoti-lint.toml"), "cannot read configuration: Input/output error")


def test_symlinked_config_roots_the_project_where_the_link_sits(cli, tmp_path):
    """A config shared by a symlink: its patterns are relative to the project, not to the shared folder."""
    (tmp_path / "shared").mkdir()
    (tmp_path / "shared" / "aoti-lint.toml").write_text('[per-file-ignores]\n"tests/**" = ["AOTI002"]\n')
    project = tmp_path / "project"
    (project / "tests").mkdir(parents=True)
    (project / "aoti-lint.toml").symlink_to(tmp_path / "shared" / "aoti-lint.toml")
    (project / "tests" / "a.py").write_text(OLD_LOAD)
    (project / "b.py").write_text(OLD_LOAD)
    result = cli("--output-format", "json", ".", cwd=project)
    assert [Path(item["filename"]).name for item in json.loads(result.stdout)] == ["b.py"]
