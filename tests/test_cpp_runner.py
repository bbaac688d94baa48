"""AOTI004 through the CLI: a fixture project, C++ noqa comments, and tree-sitter loaded only when needed."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.conftest import FIXTURES, REPO
from tests.helpers import by_code, expected_by_code

PROJECT = FIXTURES / "rules" / "AOTI004" / "cpp_runner"
RUNNER = 'torch::inductor::AOTIModelContainerRunnerCpu runner("model.so");'


def test_fixture_project(cli, tmp_path):
    expected = expected_by_code(PROJECT)
    # Cold, then warm: cached results of C++ files come back as they were.
    for _ in range(2):
        result = cli("--quiet", "--isolated", "--cache-dir", str(tmp_path / "cache"), ".", cwd=PROJECT)
        assert by_code(result.stdout) == expected
        assert result.returncode == 1, result.stderr
    assert expected["AOTI004"].count("AOTI004") == 4


def test_cpp_noqa_comments(cli, tmp_path):
    (tmp_path / "serve.cpp").write_text(
        textwrap.dedent(
            f"""\
            {RUNNER}  // noqa: AOTI004
            {RUNNER}  /* noqa */
            {RUNNER}  // noqa: AOTI002
            auto s = "// noqa"; {RUNNER}
            /* a comment over two lines,
               noqa: AOTI004 */ {RUNNER}
            """
        )
    )
    result = cli("--isolated", "--output-format", "concise", "serve.cpp", cwd=tmp_path)
    rows = [line.split(":")[1] for line in result.stdout.splitlines() if "AOTI004" in line]
    assert rows == ["3", "4"], result.stdout
    (tmp_path / "serve.cpp").write_text(f"// aoti-lint: noqa: AOTI004\n{RUNNER}\n")
    assert cli("--isolated", "serve.cpp", cwd=tmp_path).returncode == 0


def test_python_and_strings_never_report(cli, tmp_path):
    (tmp_path / "notes.py").write_text(f"DOC = '{RUNNER}'\n# AOTIModelContainerRunnerCpu\n")
    (tmp_path / "doc.cpp").write_text(f'// {RUNNER}\nconst char* doc = R"({RUNNER})";\n')
    result = cli("--isolated", ".", cwd=tmp_path)
    assert (result.returncode, result.stdout) == (0, "All checks passed!\n"), result.stderr


def test_a_latin1_comment_does_not_make_the_file_unreadable(cli, tmp_path):
    (tmp_path / "serve.cpp").write_bytes("// r\xe9sum\xe9\n".encode("latin-1") + RUNNER.encode() + b"\n")
    result = cli("--isolated", "serve.cpp", cwd=tmp_path)
    assert (result.returncode, result.stderr) == (1, "")
    assert result.stdout.startswith("serve.cpp:2:18: AOTI004")


def test_stdin_reads_as_its_filename(cli):
    result = cli("--isolated", "-", "--stdin-filename", "src/serve.cpp", stdin=RUNNER + "\n")
    assert result.returncode == 1
    assert "src/serve.cpp:1:18: AOTI004" in result.stdout


def _tree_sitter_loaded(directory) -> bool:
    """Whether a run over ``directory`` imported tree-sitter (in this one process: --jobs 1, no cache)."""
    script = textwrap.dedent(
        f"""\
        import sys
        from aoti_lint.cli import main
        main(["--isolated", "--no-cache", "--jobs", "1", "--quiet", {str(directory)!r}])
        print("tree_sitter" in sys.modules)
        """
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=REPO)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip().splitlines()[-1] == "True"


def test_tree_sitter_is_imported_only_for_cpp_files_with_runner_names(tmp_path):
    for index in range(3):
        (tmp_path / f"kernel{index}.cu").write_text("__global__ void k(float* x) { x[0] = 1; }\n")
        (tmp_path / f"util{index}.hpp").write_text("#pragma once\nint add(int a, int b);  // AOTIModelPackageLoader\n")
    (tmp_path / "job.py").write_text("import torch\n\nso = torch._export.aot_compile(model, (x,))\n")
    assert not _tree_sitter_loaded(tmp_path)
    (tmp_path / "serve.cpp").write_text(RUNNER + "\n")
    assert _tree_sitter_loaded(tmp_path)


def test_torchs_own_headers_are_not_reported(cli):
    """The headers that define the runners (`class TORCH_API AOTIModelContainerRunnerCpu : ...`) are torch's."""
    spec = importlib.util.find_spec("torch")  # finds the wheel without importing torch
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("torch is not installed")
    inductor = Path(spec.submodule_search_locations[0]) / "include" / "torch" / "csrc" / "inductor"
    headers = sorted(str(path) for path in (inductor / "aoti_runner").glob("model_container_runner*.h"))
    assert len(headers) >= 4
    result = cli("--isolated", "--no-cache", "--select", "AOTI004", *headers, str(inductor / "aoti_package"))
    assert (result.returncode, result.stdout) == (0, "All checks passed!\n"), result.stdout + result.stderr
