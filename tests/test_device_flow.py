"""AOTI101-AOTI103 on fixture projects (several files per run), the project pass, and one real torch run."""

from __future__ import annotations

import importlib.util
import json
import pickle
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from aoti_lint.read.files import Candidate
from aoti_lint.run.project_pass import check_project
from aoti_lint.run.ruleset import RuleSet
from aoti_lint.run.runner import Execution, run_files
from aoti_lint.settings.config import Settings
from tests.conftest import FIXTURES
from tests.helpers import by_code, expected_by_code, reported

# The projects of the three rules, each filed under the code it was written for, with expectations for all three.
PROJECTS = sorted(path.parent for path in (FIXTURES / "rules").glob("AOTI10[123]/*/expected.AOTI101.txt"))
SELECT = ("--select", "AOTI101,AOTI102,AOTI103")


def _project(name: str) -> Path:
    return next(path for path in PROJECTS if path.name == name)


@pytest.mark.parametrize("project", PROJECTS, ids=[p.name for p in PROJECTS])
def test_project_output(cli, project: Path, tmp_path):
    expected = expected_by_code(project)
    assert sorted(expected) == SELECT[1].split(",")
    # Cold, then warm: the summaries the project pass needs come back from the cache intact.
    for _ in range(2):
        result = cli("--quiet", "--isolated", "--cache-dir", str(tmp_path / "cache"), *SELECT, ".", cwd=project)
        assert by_code(result.stdout) == reported(expected)
        assert result.returncode == (1 if reported(expected) else 0), result.stderr
    assert any((tmp_path / "cache").iterdir())


def test_precision_corpus_is_silent(cli):
    result = cli("--quiet", "--isolated", ".", cwd=_project("precision"))
    assert [line for line in result.stdout.splitlines() if " AOTI10" in line] == []


def test_a_finding_does_not_depend_on_the_files_named(cli):
    """serve.py alone (pre-commit's staged file): the run reads the project's export.py too, read-only, and reports
    in serve.py what a run over both reports there."""
    project = _project("cuda_export_cpu_serve")
    alone = cli("--quiet", "--isolated", *SELECT, "serve.py", cwd=project).stdout
    assert "AOTI102" in alone
    both = cli("--quiet", "--isolated", *SELECT, "serve.py", "export.py", cwd=project).stdout
    assert alone == "".join(line + "\n" for line in both.splitlines() if line.startswith("serve.py"))


def _copy(project: str, tmp_path: Path) -> Path:
    target = tmp_path / project
    shutil.copytree(_project(project), target)
    return target


def test_noqa_suppresses_project_findings(cli, tmp_path):
    project = _copy("cuda_export_cpu_serve", tmp_path)
    serve = project / "serve.py"
    serve.write_text(serve.read_text().replace("  # noqa: AOTI102", ""))
    lines = cli("--quiet", "--isolated", *SELECT, ".", cwd=project).stdout.splitlines()
    assert [line.split(" ")[0:2] for line in lines] == [
        ["serve.py:19:9:", "AOTI102"],
        ["serve.py:21:9:", "AOTI103"],
        ["serve.py:22:9:", "AOTI102"],
    ]
    serve.write_text("# aoti-lint: noqa: AOTI102, AOTI103\n" + serve.read_text())
    assert cli("--quiet", "--isolated", *SELECT, ".", cwd=project).stdout == ""


def test_per_file_ignores_apply_to_project_findings(cli):
    project = _project("old_api")
    result = cli("--quiet", "--isolated", *SELECT, "--per-file-ignores", "infer.py:AOTI103", ".", cwd=project)
    assert [line.split(" ")[1] for line in result.stdout.splitlines()] == ["AOTI101", "AOTI102"]
    # Ignoring the rules where the compile is does not hide what the loading file does wrong.
    result = cli("--quiet", "--isolated", *SELECT, "--per-file-ignores", "compile_so.py:AOTI1", ".", cwd=project)
    assert len(result.stdout.splitlines()) == 4


def test_project_parts_are_plain_data(tmp_path):
    """What the project pass needs survives pickling (a worker process, a cache)."""
    project = _project("old_api")
    settings = Settings(root=project).with_enabled()
    ruleset = RuleSet(settings)
    candidates = [Candidate(path, "python", explicit=True) for path in sorted(project.glob("*.py"))]
    outcomes = run_files(candidates, ruleset, project, _no_fix(), Execution(cache_dir=None, jobs=1))
    parts = [outcome.project for outcome in outcomes if outcome.project is not None]
    assert len(parts) == 2
    copied = pickle.loads(pickle.dumps(parts))
    findings, errors = check_project(ruleset.rules, copied)
    assert not errors
    assert [(f.code, f.start.row) for f in sorted(findings, key=lambda f: f.sort_key())] == [
        ("AOTI101", 4),
        ("AOTI102", 5),
        ("AOTI103", 5),
        ("AOTI103", 9),
    ]
    assert check_project(ruleset.rules, parts)[0] == findings


def _no_fix():
    from aoti_lint.settings.run_options import FixOptions

    return FixOptions()


# -- a real run: what AOTI101 and AOTI103 prevent -----------------------------------------------------------

BATCH_SCRIPT = _project("torch_run") / "batch_mismatch.py"
HAS_TORCH = importlib.util.find_spec("torch") is not None


def _run_script(mode: str, cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    import os

    return subprocess.run(
        [sys.executable, str(BATCH_SCRIPT), mode],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, **(env or {})},
    )


@pytest.fixture(scope="session")
def batch2_package(tmp_path_factory) -> Path:
    """The package batch_mismatch.py compiles for batch 2 (one compile per session)."""
    workdir = tmp_path_factory.mktemp("batch_mismatch")
    compiled = _run_script("compile", workdir)
    assert compiled.returncode == 0, compiled.stderr[-3000:]
    assert (workdir / "batch_mismatch.pt2").is_file()
    return workdir


@pytest.mark.torch
@pytest.mark.skipif(not HAS_TORCH, reason="needs torch")
def test_batch_mismatch_runs_silently_with_wrong_rows(batch2_package):
    result = _run_script("run", batch2_package, env={"AOTI_RUNTIME_CHECK_INPUTS": "0"})
    assert result.returncode == 0, result.stderr[-3000:]
    facts = json.loads(result.stdout.strip().splitlines()[-1])
    # No error: a [3, 4] result whose first two rows are right and whose third row skipped the ReLU.
    assert facts["shape"] == [3, 4]
    assert facts["rows_equal_to_eager"] == [True, True, False]
    assert facts["third_row_is_pre_relu"] is True
    assert facts["min"] < 0
    # The only sign of trouble is ATen's resize warning, quoted in AOTI103's docs.
    assert (
        "An output with one or more elements was resized since it had shape [2, 4], which does not match "
        "the required output shape [3, 4]"
    ) in result.stderr
    # AOTI101: a CPU package loaded with device_index=0 fails, after a misleading warning.
    assert facts["wrong_index_error"] == "Incorrect device passed to aoti_runner_cpu"
    assert "Loading outdated pt2 file. Please regenerate your package." in result.stderr


@pytest.mark.torch
@pytest.mark.skipif(not HAS_TORCH, reason="needs torch")
def test_batch_mismatch_fails_under_runtime_input_checks(batch2_package):
    result = _run_script("run", batch2_package, env={"AOTI_RUNTIME_CHECK_INPUTS": "1"})
    assert result.returncode != 0
    assert "RuntimeError: input_handles[0]: unmatched dim value at 0, expected: 2, but got: 3" in result.stderr


def test_batch_mismatch_script_is_reported(cli):
    """The script the real run executes is the one AOTI101 and AOTI103 report, at the load and the call."""
    result = cli("--quiet", "--isolated", *SELECT, BATCH_SCRIPT.name, cwd=BATCH_SCRIPT.parent)
    reported = [line.split(" ", 2)[:2] for line in result.stdout.splitlines()]
    assert reported == [["batch_mismatch.py:38:9:", "AOTI101"], ["batch_mismatch.py:43:11:", "AOTI103"]]
    lines = BATCH_SCRIPT.read_text().splitlines()
    assert "device_index=0" in lines[37]
    assert "loaded(batch)" in lines[42]


def test_docs_quote_the_real_run():
    from aoti_lint.rules.cross_device_load import CrossDeviceLoad
    from aoti_lint.rules.input_shape_mismatch import InputShapeMismatch

    assert '"Incorrect device passed to aoti_runner_cpu"' in " ".join(CrossDeviceLoad.explanation().split())
    docs = " ".join(InputShapeMismatch.explanation().split())
    assert "An output with one or more elements was resized since it had shape [2, 4]" in docs
    assert "input_handles[0]: unmatched dim value at 0, expected: 2, but got: 3" in docs


def test_imported_constant_from_an_ambiguous_module_links_nothing(cli, tmp_path):
    project = _copy("shared_config", tmp_path)
    assert by_code(cli("--quiet", "--isolated", *SELECT, ".", cwd=project).stdout) == reported(
        expected_by_code(project)
    )
    (project / "vendor" / "app").mkdir(parents=True)
    shutil.copy(project / "app" / "settings.py", project / "vendor" / "app" / "settings.py")
    assert cli("--quiet", "--isolated", *SELECT, ".", cwd=project).stdout == ""


# Files that only name a `.so` in strings, and where the migration plan sees each mention: (file name, row, column),
# each piece of a concatenation apart, an f-string's text where it stands.
SO_MENTION_FORMS = {
    "plain": ('import ctypes\nctypes.CDLL("libfoo.so")\n', [("libfoo.so", 2, 13)]),
    "stripped": (
        'print([" build/m.so ", "m.so\\n", "a.so.1", "x.so"])\n',
        [("m.so", 1, 8), ("m.so", 1, 24), ("x.so", 1, 44)],
    ),
    "concatenated": (
        'print(("prefix/" "m.so"), "m.so" " tail", ("a"\n     "b/c.so"))\n',
        [("m.so", 1, 18), ("m.so", 1, 27), ("c.so", 2, 6)],
    ),
    "unicode-before": ('print({"é€": "lib/€.so"})\n', [("€.so", 1, 14)]),
    "triple-quoted": ('def f():\n    """\n  see m.so\n"""\n    return "x.so"\n', [("see m.so", 2, 5), ("x.so", 5, 12)]),
    "bytes-and-fstring-text": ('print(b"m.so", f"no {name} here, also a .so file", "x.so")\n', [("x.so", 1, 52)]),
    "fstring-ending": ('print(f"{root}/m.so")\n', [("m.so", 1, 15)]),
    "fstring-merged": ('print("m.so" f"{x}")\n', [("m.so", 1, 8)]),
    "fstring-split": ('print("m" f".so", f"lib{v}" ".so")\n', [("m.so", 1, 7), (".so", 1, 30)]),
    "fstring-escaped": (
        'print(f"dir\\\\m.so", f"{{x}}.so", f"{x:.so}")\n',
        [("dir\\m.so", 1, 7), ("{x}.so", 1, 21), (".so", 1, 34)],
    ),
    "fstring-triple": ('print(f"""\n  {root}/lib/m.so\n""", rf"{a}\\b.so")\n', [("m.so", 1, 7), ("\\b.so", 3, 12)]),
    "crlf": ('import os\r\nprint(os.path.join(d,\r\n  "m.so"))\r\n', [("m.so", 3, 3)]),
}


@pytest.mark.parametrize("name", sorted(SO_MENTION_FORMS))
def test_so_mentions_are_where_the_strings_stand(name):
    from aoti_lint.read.source import SourceFile
    from aoti_lint.rules import ALL_RULES
    from aoti_lint.run.engine import check_source
    from aoti_lint.run.file_context import FileContext
    from aoti_lint.run.results import FLOW_SUMMARY

    text, expected = SO_MENTION_FORMS[name]
    source = SourceFile(Path("m.py"), "m.py", "python", text.encode())
    read = check_source(source, FileContext.of(ALL_RULES))
    assert read.project is not None
    assert list(read.project.summaries[FLOW_SUMMARY].so_mentions) == expected


# The device-flow rules' text stage: (text, whether it wants the file's summary). Each is also checked against the
# code stage: a file the code stage would keep, the text stage keeps.
WANTED_BY_TEXT = {
    "a call in a docstring": ('def f():\n    """Load it: torch._inductor.aoti_load_package("m.pt2")."""\n', False),
    "a call in a comment": ("# aoti_load_package(path)\nx = 1\n", False),
    "a call in code": ("import torch\nm = torch._inductor.aoti_load_package(p)\n", True),
    "a call in an f-string": ('import torch\nprint(f"{torch._inductor.aoti_load_package(p)}")\n', True),
    "an import": ("from torch._inductor import aoti_load_package\n", True),
    "an import in a docstring": ('"""\nfrom torch._inductor import aoti_load_package\n"""\n', False),
    "a .pt2 path in a function": ('def f(ep):\n    return str(ep) + "m.pt2"\n', False),
    "a .pt2 module constant": ('PACKAGE = "out/m.pt2"\n', True),
    "a .pt2 constant in brackets": ('PATHS = [\n"out/m.pt2",\n]\n', True),
    "a .so path in a function": ('def f():\n    return "lib/m.so"\n', True),
    "a .so path in a comment": ('# see "lib/m.so"\nx = 1\n', False),
    "a call after a comment, lone carriage returns": ("# c\rimport torch\rm = torch._export.aot_load(p)\r", True),
    "a .pt2 path in a function, lone carriage returns": ('def f(ep):\r    return "m.pt2"\r', True),
}


@pytest.mark.parametrize("name", sorted(WANTED_BY_TEXT))
def test_the_text_stage_wants_the_summary_of_code_not_of_its_docs(name):
    from aoti_lint.model.name_index import code_index
    from aoti_lint.rules.device_flow import DeviceFlowRule

    text, wanted = WANTED_BY_TEXT[name]
    assert DeviceFlowRule.wants_summary_python(text) == wanted
    if DeviceFlowRule.wants_summary(text.encode()) and DeviceFlowRule.wants_summary_code(code_index(text)):
        assert wanted, "the text stage dropped a file the code stage keeps"


def test_a_helper_of_another_module_gives_its_value_and_the_run_depends_on_it(cli, tmp_path):
    """What a helper of another project module returns (no parameter, one returned expression) is its value here:
    the input made on the CPU by `data.batch()` meets a model compiled for CUDA (AOTI102), whichever files are named;
    the finding goes when the helper's module changes, cache or not. A helper that takes a parameter is not
    followed, and two modules importing each other's helpers stay silent instead of looping."""
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "export.py").write_text(
        "import torch\nfrom model import Net\n\n"
        'ep = torch.export.export(Net().cuda(), (torch.randn(2, 8, device="cuda"),))\n'
        'torch._inductor.aoti_compile_and_package(ep, package_path="/srv/net.pt2")\n'
    )
    (tmp_path / "data.py").write_text("import torch\n\n\ndef batch():\n    return torch.randn(2, 8)\n")
    (tmp_path / "serve.py").write_text(
        'import torch\nfrom data import batch\n\nmodel = torch._inductor.aoti_load_package("/srv/net.pt2")\n'
        "out = model(batch())\n"
    )
    for named in ((".",), ("serve.py", "export.py")):
        shown = cli("--quiet", "--isolated", "--select", "AOTI102", *named, cwd=tmp_path).stdout
        assert shown.startswith("serve.py:5:7: AOTI102") and "`batch()` (on cpu)" in shown, shown
    (tmp_path / "data.py").write_text('import torch\n\n\ndef batch():\n    return torch.randn(2, 8, device="cuda")\n')
    assert cli("--quiet", "--isolated", "--select", "AOTI102", ".", cwd=tmp_path).stdout == ""
    (tmp_path / "data.py").write_text("import torch\n\n\ndef batch(n=2):\n    return torch.randn(n, 8)\n")
    assert cli("--quiet", "--isolated", "--select", "AOTI102", ".", cwd=tmp_path).stdout == ""
    (tmp_path / "data.py").write_text("import torch\nfrom serve import batch\n")
    (tmp_path / "serve.py").write_text(
        'import torch\nfrom data import batch\n\nmodel = torch._inductor.aoti_load_package("/srv/net.pt2")\n'
        "out = model(batch())\n"
    )
    assert cli("--quiet", "--isolated", "--select", "AOTI102", ".", cwd=tmp_path).stdout == ""
