"""`aoti-lint flows`: each artifact flow the migration is planned on, its members and its verdict (issue 42), the
same flows `--fix` acts on, as a text tree, JSON and a Mermaid graph."""

from __future__ import annotations

import json

import pytest

from tests.test_pipelines import FIX, TWO_MODELS, _texts


@pytest.fixture
def project(tmp_path):
    for path, content in {
        **TWO_MODELS,
        "Makefile": "serve:\n\tpython serve.py --model /srv/models/encoder.so\n",
    }.items():
        (tmp_path / path).write_text(content)
    return tmp_path


def test_the_text_tree_shows_each_member_and_what_blocks_a_flow(cli, project):
    result = cli("flows", cwd=project)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("flow 1: blocked: ") and "Makefile:2 also names `encoder.so`" in lines[0]
    assert lines[1:4] == [
        "├── build.py:6 compile (deprecated): /srv/models/encoder.so",
        "├── paths.py:1 path constant `ENCODER`: /srv/models/encoder.so",
        "└── serve.py:4 load (deprecated): /srv/models/encoder.so",
    ]
    assert lines[4].startswith("flow 2: migrates whole (unsafe fix: ")
    assert lines[5:] == [
        "├── build.py:7 compile (deprecated): /srv/models/decoder.so",
        "├── paths.py:2 path constant `DECODER`: /srv/models/decoder.so",
        "└── serve.py:5 load (deprecated): /srv/models/decoder.so",
    ]


def test_the_flows_shown_are_those_fix_acts_on(cli, project):
    shown = json.loads(cli("flows", "--output-format", "json", cwd=project).stdout)
    assert [flow["verdict"]["applicability"] for flow in shown] == ["display-only", "unsafe"]
    assert [(m["filename"], m["row"], m["role"]) for m in shown[1]["members"]] == [
        ("build.py", 7, "compile"),
        ("paths.py", 2, "constant"),
        ("serve.py", 5, "load"),
    ]
    cli(*FIX, ".", cwd=project)
    after = _texts(project)
    assert "aoti_load_package(DECODER)" in after["serve.py"] and "aot_load(ENCODER" in after["serve.py"]


def test_the_mermaid_graph_links_writers_to_readers_through_the_path(cli, project):
    graph = cli("flows", "--output-format", "mermaid", cwd=project).stdout.splitlines()
    assert graph[0] == "flowchart LR"
    assert "    f2m1[\"paths.py:2 path constant 'DECODER': /srv/models/decoder.so\"]" in graph
    assert "    f2m0 --> f2m1" in graph and "    f2m1 --> f2m2" in graph
    assert not any('"' in line.split('["', 1)[1][:-2] for line in graph if '["' in line)  # labels stay quoted


def test_a_lone_load_is_a_flow_blocked_by_its_missing_producer(cli, tmp_path):
    (tmp_path / "serve.py").write_text("import torch\n\nrunner = torch._export.aot_load('/srv/m.so', 'cpu')\n")
    result = cli("flows", cwd=tmp_path)
    assert result.stdout.splitlines() == [
        "flow 1: blocked: no compile of this run is known to write the `.pt2` package the new loader needs: run "
        "aoti-lint on the files that write its artifact too, or migrate both by hand",
        "└── serve.py:3 load (deprecated): /srv/m.so",
    ]


def test_no_flow(cli, tmp_path):
    (tmp_path / "a.py").write_text("import torch\n")
    result = cli("flows", cwd=tmp_path)
    assert (result.returncode, result.stdout) == (0, "No artifact flow with a deprecated call.\n")
    assert cli("flows", "--output-format", "json", cwd=tmp_path).stdout == "[]\n"


def test_a_usage_error_exits_two(cli, tmp_path):
    result = cli("flows", "--output-format", "dot", cwd=tmp_path)
    assert result.returncode == 2 and "--output-format" in result.stderr


def test_the_installed_command_knows_the_subcommand(cli_process, project):
    """The entry point answers some runs before the full command line is read: it must hand `flows` on."""
    result = cli_process("flows", cwd=project)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("flow 1: blocked: ")


def test_a_file_added_beside_the_project_reaches_a_warm_run(cli, tmp_path, monkeypatch):
    """The plan read the project's other files: the memo of the whole run stamps them too, so a Makefile added
    later that names the artifact is seen by the next run, cache or not."""
    from tests.test_speed import move_the_runs_clock_on

    move_the_runs_clock_on(monkeypatch)  # the files are old enough for a memo
    for path, content in TWO_MODELS.items():
        (tmp_path / path).write_text(content)
    cache = ("--cache-dir", str(tmp_path / ".cache"))
    for _ in range(2):  # cold, then warm: the memo answers
        assert "also names" not in cli(*cache, ".", cwd=tmp_path).stdout
    assert list((tmp_path / ".cache").glob("*.run"))
    (tmp_path / "Makefile").write_text("all:\n\tcp /srv/models/encoder.so /opt\n")
    assert "Makefile:2 also names `encoder.so`" in cli(*cache, ".", cwd=tmp_path).stdout


def test_a_staged_file_names_the_files_its_flows_need_and_a_warm_run_sees_them_change(cli, tmp_path, monkeypatch):
    from tests.test_speed import move_the_runs_clock_on

    move_the_runs_clock_on(monkeypatch)
    for path, content in TWO_MODELS.items():
        (tmp_path / path).write_text(content)
    cache = ("--cache-dir", str(tmp_path / ".cache"))
    for _ in range(2):  # cold, then warm: the memo answers, the unnamed files' stamps in it
        shown = cli(*cache, "serve.py", cwd=tmp_path).stdout
        assert shown.count("build.py, paths.py are not among the files given: include them in the run") == 2
    assert list((tmp_path / ".cache").glob("*.run"))
    build = tmp_path / "build.py"
    build.write_text(build.read_text().replace("aot_compile(dec", "other_compile(dec"))
    shown = cli(*cache, "serve.py", cwd=tmp_path).stdout
    assert "no compile of this run is known to write the `.pt2` package" in shown


def test_a_file_outside_the_project_root_does_not_take_the_root_s_files_for_its_project(cli, tmp_path):
    """Run from one project on a file of another tree: the working directory's files are not that file's project,
    so neither its Python files nor its Makefile are read for the file's flows."""
    here, there = tmp_path / "here", tmp_path / "there"
    for root in (here, there):
        root.mkdir()
    for path, content in {**TWO_MODELS, "Makefile": "all:\n\tcp /srv/models/encoder.so /opt\n"}.items():
        (here / path).write_text(content)
    (there / "serve.py").write_text(TWO_MODELS["serve.py"].replace("from paths import DECODER, ENCODER\n", ""))
    shown = cli("--isolated", "--no-cache", str(there / "serve.py"), cwd=here).stdout
    assert "not among the files given" not in shown and "Makefile" not in shown
    assert shown.count("no compile of this run is known to write the `.pt2` package") == 2
