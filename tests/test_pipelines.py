"""The migration follows the artifact across files: multi-file pipelines (tests/fixtures/pipelines/*), fixed
through the CLI, migrate whole (compile, loads, path constants, paths handed to a load helper) or not at all.

The torch-marked test runs each pipeline for real, one process per step (export, then serve), before and
after ``--fix --unsafe-fixes``, and compares the outputs.
"""

from __future__ import annotations

import itertools
import json
import os
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.conftest import FIXTURES

PIPELINES = FIXTURES / "pipelines"
NAMES = sorted(path.name for path in PIPELINES.iterdir() if path.is_dir())
FIX = ("--isolated", "--no-cache", "--fix", "--unsafe-fixes")


def _copy(name: str, tmp_path: Path) -> Path:
    target = tmp_path / name
    shutil.copytree(PIPELINES / name, target)
    return target


def _texts(root: Path) -> dict[str, str]:
    return {str(path.relative_to(root)): path.read_text() for path in sorted(root.rglob("*.py"))}


def _findings(cli, root: Path, *args: str) -> list[dict]:
    return json.loads(cli("--isolated", "--no-cache", "--output-format", "json", *args, ".", cwd=root).stdout)


@pytest.mark.parametrize("name", NAMES)
def test_pipeline_migrates_whole_and_idempotently(cli, tmp_path, name):
    root = _copy(name, tmp_path)
    misuse_before = {f["message"] for f in _findings(cli, root, "--select", "AOTI003")}
    result = cli(*FIX, ".", cwd=root)
    assert result.returncode == 0, result.stdout + result.stderr
    texts = _texts(root)
    for path, text in texts.items():
        assert "torch._export" not in text, path
        # No `.so` is left for a `.pt2` loader: every path of the flow was rewritten with its compile.
        assert '.so"' not in text and ".so'" not in text, path
    assert any(".pt2" in text for text in texts.values())
    # The count is what was rewritten: one per deprecated call.
    calls = sum(text.count("aoti_compile_and_package(") + text.count("aoti_load_package(") for text in texts.values())
    assert f"({calls} fixed, 0 remaining)" in result.stdout
    again = cli(*FIX, "--diff", ".", cwd=root)
    assert again.stdout == "", "a second --fix would change the pipeline again"
    assert {f["message"] for f in _findings(cli, root, "--select", "AOTI003")} <= misuse_before


@pytest.mark.parametrize("name", NAMES)
def test_a_reader_the_fix_cannot_follow_keeps_the_whole_flow(cli, tmp_path, name):
    root = _copy(name, tmp_path)
    texts = _texts(root)
    so_name = next(
        text.split('.so"')[0].rsplit('"', 1)[-1].rsplit("/", 1)[-1] + ".so" for text in texts.values() if '.so"' in text
    )
    (root / "cleanup.py").write_text(f'import os\n\nos.remove("{so_name}")\n')
    result = cli(*FIX, ".", cwd=root)
    assert _texts(root) == {**texts, "cleanup.py": (root / "cleanup.py").read_text()}
    assert result.returncode == 1
    deprecated = [f for f in _findings(cli, root) if f["code"] in ("AOTI001", "AOTI002")]
    assert deprecated
    for finding in deprecated:
        assert finding["fix"]["applicability"] == "display-only"
        assert "cleanup.py:3 also names" in finding["message"]
        # Every site of the flow is named, in every message.
        for other in deprecated:
            site = f"{Path(other['filename']).relative_to(root)}:{other['location']['row']}"
            assert site in finding["message"], (site, finding["message"])


def test_a_half_migrating_fix_is_refused(cli, tmp_path):
    """The server cannot be written: the export job and the paths module keep the .so too."""
    root = _copy("paths_module", tmp_path)
    texts = _texts(root)
    (root / "serve.py").chmod(0o444)
    try:
        result = cli(*FIX, ".", cwd=root)
    finally:
        (root / "serve.py").chmod(0o644)
    assert _texts(root) == texts
    assert result.returncode == 2 or "not written" in result.stderr + result.stdout
    assert "serve.py: is read-only" in result.stderr
    assert "export.py: fixes not written: its artifact flow could not be migrated in serve.py" in result.stderr
    assert "paths.py: fixes not written" in result.stderr


def test_a_load_whose_producer_is_not_in_the_run(cli, tmp_path):
    """The export job is not among the files named (pre-commit's staged files): migrating the load and the paths
    module would leave the job writing a `.so` that `aoti_load_package` cannot read (issue 42). The run reads the
    job, read-only, and names it; no edit."""
    root = _copy("paths_module", tmp_path)
    listed = cli("--isolated", "--no-cache", "--output-format", "json", "serve.py", "paths.py", cwd=root).stdout
    (load,) = [f for f in json.loads(listed) if f["code"] == "AOTI002"]
    assert load["fix"]["applicability"] == "display-only"
    assert "export.py is not among the files given: include it in the run" in load["message"]
    before = _texts(root)
    cli(*FIX, "serve.py", "paths.py", cwd=root)
    assert _texts(root) == before


# Issue 42's first shape: the path is a module constant built from the environment, imported by the export job and
# the server. Neither side's value is known, so neither is proven to be the other's artifact.
ENV_PATHS = {
    "paths.py": 'import os\n\nMODEL = os.path.join(os.environ.get("OUT", "/tmp"), "model.so")\n',
    "build.py": "import torch\n\nfrom paths import MODEL\n\n"
    'torch._export.aot_compile(model, (x,), options={"aot_inductor.output_path": MODEL})\n',
    "serve.py": 'import torch\n\nfrom paths import MODEL\n\nrunner = torch._export.aot_load(MODEL, "cpu")\n',
}


@pytest.mark.parametrize("named", [(".",), ("serve.py",), ("serve.py", "paths.py")], ids=["project", "one", "two"])
def test_a_load_of_a_path_the_run_cannot_follow_is_never_migrated(cli, tmp_path, named):
    """Migrated alone, the load would read the `.so` the export job still writes ("Failed to initialize zip
    archive"): whatever files are named, nothing is written, and the load says why it has no fix."""
    for name, text in ENV_PATHS.items():
        (tmp_path / name).write_text(text)
    before = _texts(tmp_path)
    result = cli(*FIX, *named, cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    assert _texts(tmp_path) == before
    assert "no compile of this run is known to write the `.pt2` package" in result.stdout


# Issue 42's fifth shape: files that are not Python name the artifact's file; migrated, the flow would leave them
# naming a `.so` that is no longer written.
TWO_MODELS = {
    "paths.py": 'ENCODER = "/srv/models/encoder.so"\nDECODER = "/srv/models/decoder.so"\n',
    "build.py": "import torch\nfrom paths import DECODER, ENCODER\n\n\ndef build(enc, dec, x):\n"
    '    torch._export.aot_compile(enc, (x,), options={"aot_inductor.output_path": ENCODER})\n'
    '    torch._export.aot_compile(dec, (x,), options={"aot_inductor.output_path": DECODER})\n',
    "serve.py": "import torch\nfrom paths import DECODER, ENCODER\n\n"
    'enc = torch._export.aot_load(ENCODER, "cpu")\ndec = torch._export.aot_load(DECODER, "cpu")\n',
}


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("Makefile", "serve:\n\tpython serve.py --model /srv/models/encoder.so\n"),
        ("deploy/check.sh", "#!/bin/sh\ntest -f /srv/models/encoder.so\n"),
        ("store.yaml", "models:\n  - path: /srv/models/encoder.so\n"),
        ("config/models.json", '{"encoder": "/srv/models/encoder.so"}\n'),
        ("CMakeLists.txt", 'install(FILES ${OUT}/encoder.so DESTINATION "models")\n'),
    ],
    ids=["make", "shell", "yaml", "json", "cmake"],
)
@pytest.mark.parametrize("named", [(".",), ("serve.py",)], ids=["project", "staged"])
def test_a_file_that_is_not_python_naming_the_artifact_blocks_its_flow(cli, tmp_path, name, text, named):
    for path, content in {**TWO_MODELS, name: text}.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(content)
    cli(*FIX, *named, cwd=tmp_path)
    after = _texts(tmp_path)
    assert "torch._export.aot_load(ENCODER" in after["serve.py"] and "encoder.so" in after["paths.py"]
    if named == (".",):  # the other model's flow names no such file: it migrates whole
        assert "aoti_load_package(DECODER)" in after["serve.py"] and "decoder.pt2" in after["paths.py"]
    listed = json.loads(cli("--isolated", "--no-cache", "--output-format", "json", ".", cwd=tmp_path).stdout)
    (load,) = [f for f in listed if f["code"] == "AOTI002" and f["location"]["row"] == 4]
    assert f"{name}:" in load["message"] and "also names `encoder.so`" in load["message"]


def test_documentation_naming_the_artifact_does_not_block_its_flow(cli, tmp_path):
    """A page names files without running them (docs/migration.md showed `tiny.so` and blocked the shipped example's
    flow): both flows migrate whole, and the page is left to update by hand."""
    docs = {"README.md": "Serve with `/srv/models/encoder.so`.\n", "docs/models.rst": "encoder.so\n"}
    for path, content in {**TWO_MODELS, **docs}.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(content)
    cli(*FIX, ".", cwd=tmp_path)
    after = _texts(tmp_path)
    assert "aoti_load_package(ENCODER)" in after["serve.py"] and "encoder.pt2" in after["paths.py"]
    assert (tmp_path / "README.md").read_text() == docs["README.md"]


def test_a_longer_name_that_holds_the_artifact_s_is_another_file(cli, tmp_path):
    for path, content in {**TWO_MODELS, "Makefile": "all: libencoder.so encoder.so.1 old_encoder.so\n"}.items():
        (tmp_path / path).write_text(content)
    cli(*FIX, ".", cwd=tmp_path)
    assert "aoti_load_package(ENCODER)" in (tmp_path / "serve.py").read_text()


def test_cross_device_load_gets_no_fix(cli, tmp_path):
    (tmp_path / "export.py").write_text(
        "import torch\n\nx = torch.randn(2, 3, device='cuda')\n"
        "torch._export.aot_compile(model, (x,), options={'aot_inductor.output_path': '/srv/m.so'})\n"
    )
    (tmp_path / "serve.py").write_text("import torch\n\nrunner = torch._export.aot_load('/srv/m.so', 'cpu')\n")
    before = _texts(tmp_path)
    cli(*FIX, ".", cwd=tmp_path)
    assert _texts(tmp_path) == before
    findings = _findings(cli, tmp_path)
    assert "AOTI101" in {f["code"] for f in findings}
    (load,) = [f for f in findings if f["code"] == "AOTI002"]
    assert load["fix"]["applicability"] == "display-only"
    assert "AOTI101 reports it" in load["message"]


def test_check_without_the_device_rules_still_plans_per_flow(cli, tmp_path):
    root = _copy("paths_module", tmp_path)
    cli("--isolated", "--no-cache", "--select", "AOTI001,AOTI002", "--fix", "--unsafe-fixes", ".", cwd=root)
    assert "ranker.pt2" in (root / "paths.py").read_text()


# -- real runs ---------------------------------------------------------------------------------------------


def _run_steps(root: Path, env: dict) -> dict:
    """Each step of the pipeline in its own process, in order; the last step's outputs and every step's
    deprecation records."""
    steps = (root / "steps.txt").read_text().split()
    harness = FIXTURES / "equivalence" / "harness.py"
    records: list[str] = []
    outputs = None
    for step in steps:
        result = subprocess.run(
            [sys.executable, str(harness), str(root / step), str(root / f"{step}.result.pt")],
            cwd=root,
            capture_output=True,
            text=True,
            env={**env, "PYTHONPATH": str(root)},
            timeout=900,
        )
        assert result.returncode == 0, f"{root.name}/{step} failed:\n{result.stderr[-4000:]}"
        import torch

        saved = torch.load(root / f"{step}.result.pt", weights_only=False)
        records += saved["deprecations"]
        outputs = saved["outputs"]
    return {"outputs": outputs, "deprecations": records}


@pytest.fixture(scope="session")
def pipeline_runs(tmp_path_factory):
    """Runs one pipeline, as written and after the fix, two processes at a time; each pipeline once a session."""
    pytest.importorskip("torch")
    root = tmp_path_factory.mktemp("pipelines")
    env = {**os.environ, "TORCHINDUCTOR_CACHE_DIR": str(root / "inductor-cache"), "PYTHONWARNINGS": "ignore"}
    done: dict[str, dict] = {}

    def run(name: str) -> dict:
        if name not in done:
            targets = {}
            for side in ("old", "new"):
                target = targets[side] = root / side / name
                shutil.copytree(PIPELINES / name, target)
                if side == "new":
                    fix = subprocess.run(
                        [sys.executable, "-m", "aoti_lint", *FIX, "."], cwd=target, capture_output=True, text=True
                    )
                    assert fix.returncode == 0, fix.stdout + fix.stderr
            with ThreadPoolExecutor(max_workers=2) as pool:
                results = dict(
                    zip(targets, pool.map(lambda target: _run_steps(target, env), targets.values()), strict=True)
                )
            done[name] = results
        return done[name]

    return run


@pytest.mark.torch
@pytest.mark.parametrize("name", NAMES)
def test_migrated_pipeline_gives_the_same_outputs(pipeline_runs, name):
    import torch

    runs = pipeline_runs(name)
    old, new = runs["old"], runs["new"]
    torch.testing.assert_close(new["outputs"], old["outputs"])
    assert any("is being deprecated" in message for message in old["deprecations"])
    assert new["deprecations"] == []


@pytest.mark.parametrize("sites", [10, pytest.param(100, marks=pytest.mark.slow)])
def test_fixing_is_linear_in_the_number_of_sites(tmp_path, monkeypatch, sites):
    """One tidying pass and a fixed number of lint passes per file, however many calls it migrates."""
    from aoti_lint.codemods import migration
    from aoti_lint.run import fixing
    from aoti_lint.run.lint import lint_paths
    from aoti_lint.settings.config import Settings
    from aoti_lint.settings.run_options import FixOptions

    body = "".join(f'r{i} = aot_load("/srv/m{i}.pt2", "cpu")\n' for i in range(sites))
    target = tmp_path / "many.py"
    target.write_text(f"from torch._export import aot_load\n\n{body}")
    counts = {"tidy": 0, "check": 0}

    def counting(name, function):
        def wrapper(*args, **kwargs):
            counts[name] += 1
            return function(*args, **kwargs)

        return wrapper

    monkeypatch.setattr(migration, "tidy_imports", counting("tidy", migration.tidy_imports))
    monkeypatch.setattr(fixing, "check_source", counting("check", fixing.check_source))
    run = lint_paths([target], Settings(root=tmp_path).with_enabled(), tmp_path, FixOptions(apply=True))
    assert sum(run.fixed.values()) == sites
    assert "aot_load" not in target.read_text().replace("aoti_load_package", "")
    assert counts["tidy"] == 1
    assert counts["check"] <= 3


def test_a_cpp_consumer_keeps_the_flow_display_only(cli, tmp_path):
    root = tmp_path / "cpp_consumer"
    shutil.copytree(FIXTURES / "pipelines_cpp" / "cpp_consumer", root)
    before = (root / "export.py").read_text()
    result = cli(*FIX, ".", cwd=root)
    assert (root / "export.py").read_text() == before
    assert result.returncode == 1
    deprecated = [f for f in _findings(cli, root) if f["code"] in ("AOTI001", "AOTI002")]
    assert len(deprecated) == 2
    for finding in deprecated:
        assert finding["fix"]["applicability"] == "display-only"
        assert "loaded from C++ at serve.cpp:6: migrate it to AOTIModelPackageLoader" in finding["message"]
        assert "export.py:9 (compile), export.py:10 (load), export.py:5 (constant `ARTIFACT`)" in finding["message"]
    # Without the C++ file among the files named, the run still reads it (the rest of the project): no edit.
    cli(*FIX, "export.py", cwd=root)
    assert (root / "export.py").read_text() == before


@pytest.mark.parametrize("named", ["ranker.so", "other.so"])
def test_an_f_string_naming_the_artifact_keeps_the_flow_whole(tmp_path, named):
    """A mention inside an f-string keeps the flow whole, as a plain string would, where it names the artifact."""
    from aoti_lint.run.lint import lint_paths
    from aoti_lint.settings.config import Settings

    root = _copy("paths_module", tmp_path)
    so_name = "ranker.so"
    assert any(so_name in text for text in _texts(root).values())
    (root / "cleanup.py").write_text(f'import os\n\nos.remove(f"{{os.getcwd()}}/{named}")\n')
    run = lint_paths([root], Settings(root=root).with_enabled(), root)
    deprecated = [f for f in run.findings if f.code in ("AOTI001", "AOTI002")]
    assert deprecated
    stray = [f for f in deprecated if "cleanup.py:3 also names" in f.message]
    assert stray == (deprecated if named == so_name else [])


# -- issue 42's shapes: flows the fix must not migrate, and every subset of a pipeline's files -----------------

BLOCKED = FIXTURES / "pipelines_blocked"
# What each finding of a blocked pipeline names as its blocker, by file.
BLOCKERS = {
    "helper_path": {"export.py": "its path names the `.so` where this run cannot rewrite it", "serve.py": "no compile"},
    "dataclass_default": {"export.py": "its path names the `.so`", "serve.py": "no compile"},
    "cached_property": {"export.py": "its path names the `.so`", "serve.py": "no compile"},
    "env_constant": {"build.py": "`MODEL` names the `.so` where this run cannot rewrite it", "serve.py": "no compile"},
    "method_parameter": {"export.py": "serve.py:5 also names `runner.so`", "runner.py": "no compile"},
    "makefile_consumer": {"export.py": "Makefile:2 also names `scorer.so`", "serve.py": "Makefile:2 also names"},
    "yaml_manifest": {"export.py": "model_store.yaml:3 also names `intent.so`"},
    "suffix_dispatch": {"loader.py": "no compile of this run is known to write the `.pt2` package"},
    "inductor_producer": {"serve.py": "export.py:6 (producer): a compile no fix migrates goes on writing this `.so`"},
    "exported_program": {"export.py": "`ep` is already an `ExportedProgram`"},
}


def test_every_blocked_pipeline_is_listed():
    assert sorted(BLOCKERS) == sorted(path.name for path in BLOCKED.iterdir() if path.is_dir())


@pytest.mark.parametrize("name", sorted(BLOCKERS))
def test_a_flow_the_fix_cannot_follow_is_left_byte_identical_and_named(cli, tmp_path, name):
    root = tmp_path / name
    shutil.copytree(BLOCKED / name, root)
    before = {path.name: path.read_bytes() for path in root.iterdir()}
    result = cli(*FIX, ".", cwd=root)
    assert result.returncode == 1, result.stderr
    assert {path.name: path.read_bytes() for path in root.iterdir()} == before
    findings = [f for f in _findings(cli, root) if f["code"] in ("AOTI001", "AOTI002")]
    assert {Path(f["filename"]).name for f in findings} == set(BLOCKERS[name])
    for finding in findings:
        assert finding["fix"]["applicability"] == "display-only"
        assert BLOCKERS[name][Path(finding["filename"]).name] in finding["message"], finding["message"]


def _flow_files(cli, root: Path) -> list[set[str]]:
    flows = json.loads(cli("flows", "--isolated", "--output-format", "json", cwd=root).stdout)
    return [{member["filename"] for member in flow["members"]} for flow in flows]


ALL_PIPELINES = [PIPELINES / name for name in NAMES] + [BLOCKED / name for name in sorted(BLOCKERS)]


@pytest.mark.parametrize("source", ALL_PIPELINES, ids=[p.name for p in ALL_PIPELINES])
def test_every_subset_of_a_pipeline_s_files_fixes_whole_flows_or_nothing(cli, tmp_path, source):
    """pre-commit names the staged files, in any combination. For every subset of the files that hold a member of
    some flow, `--fix --unsafe-fixes` leaves each file as it was or as the fix of the whole project writes it, and
    each flow's files all migrated or all untouched: never half a flow (the whole project's migration is run on
    torch by ``test_migrated_pipeline_gives_the_same_outputs``)."""
    whole = tmp_path / "whole"
    shutil.copytree(source, whole)
    flows = _flow_files(cli, whole)
    cli(*FIX, ".", cwd=whole)
    migrated = _texts(whole)
    original = _texts(source)
    members = sorted(set().union(*flows))
    disjoint = sum(map(len, flows)) == len(members)
    for size in range(1, len(members) + 1):
        for subset in itertools.combinations(members, size):
            root = tmp_path / "-".join(subset).replace("/", "_")
            shutil.copytree(source, root)
            cli(*FIX, *subset, cwd=root)
            after = _texts(root)
            changed = {path for path in after if after[path] != original[path]}
            for path in changed:
                assert after[path] == migrated[path], (subset, path)
            if disjoint:  # each flow's own files: all migrated, or all as they were
                for files in flows:
                    assert files <= changed or not files & changed, (subset, files, changed)


def test_a_package_load_of_a_so_constant_of_another_file_is_reported(cli, tmp_path):
    """Issue 42's third shape: a flow half-migrated by hand (the load moved, the constant and the compile did not)
    fails at run time ('Failed to initialize zip archive'); AOTI003 says so at the load, whatever files are named."""
    files = {
        "paths.py": 'MODEL = "/srv/models/model.so"\n',
        "serve.py": "import torch\nfrom paths import MODEL\n\nrunner = torch._inductor.aoti_load_package(MODEL)\n",
        "pt2.py": 'import torch\n\nPKG = "/srv/models/model.pt2"\nrunner = torch._inductor.aoti_load_package(PKG)\n',
    }
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    for named in ((".",), ("serve.py",)):
        result = cli("--isolated", "--no-cache", "--select", "AOTI003", *named, cwd=tmp_path)
        assert result.returncode == 1
        assert result.stdout.splitlines()[0] == (
            "serve.py:4:10: AOTI003 `aoti_load_package` reads a `.pt2` package, not a bare `.so` (`model.so`) "
            "(fails with 'Failed to initialize zip archive'): compile with `aoti_compile_and_package(..., "
            "package_path=...pt2)` and load that; `MODEL` holds that path"
        )
    (tmp_path / "serve.py").write_text(files["serve.py"].replace("(MODEL)", "(MODEL)  # noqa: AOTI003"))
    assert cli("--isolated", "--no-cache", "--select", "AOTI003", ".", cwd=tmp_path).returncode == 0
