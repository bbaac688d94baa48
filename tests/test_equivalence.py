"""Proof on real torch: each script runs as written (old API) and after `aoti-lint --fix`; outputs must match.

torch 2.13 (CPU) still has the deprecated API. Each run compiles with AOTInductor (~15-20 s of g++), so all
runs happen once per session, two at a time, in a shared fixture.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.conftest import FIXTURES

# Imported by the tests that use it, not here: collecting this module under the fast suite's
# `-m "not torch"` would otherwise cost each worker the seconds of an import it never uses.
if importlib.util.find_spec("torch") is None:
    pytest.skip("torch is not installed", allow_module_level=True)

EQUIVALENCE = FIXTURES / "equivalence"
SCRIPTS = sorted(p.stem for p in EQUIVALENCE.glob("*.py") if p.name != "harness.py")


def _run(directory: Path, script: str, env: dict) -> dict:
    import torch

    result = subprocess.run(
        [sys.executable, "harness.py", f"{script}.py", f"{script}.result.pt"],
        cwd=directory,
        capture_output=True,
        text=True,
        env=env,
        timeout=900,
    )
    assert result.returncode == 0, f"{directory.name}/{script}.py failed:\n{result.stderr[-4000:]}"
    return torch.load(directory / f"{script}.result.pt", weights_only=False)


@pytest.fixture(scope="session")
def equivalence_runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("equivalence")
    old, new = root / "old", root / "new"
    shutil.copytree(EQUIVALENCE, old)
    shutil.copytree(EQUIVALENCE, new)
    fix = subprocess.run(
        [sys.executable, "-m", "aoti_lint", "--isolated", "--fix", *(f"{s}.py" for s in SCRIPTS)],
        cwd=new,
        capture_output=True,
        text=True,
    )
    env = {**os.environ, "TORCHINDUCTOR_CACHE_DIR": str(root / "inductor-cache"), "PYTHONWARNINGS": "ignore"}
    jobs = [(directory, script) for script in SCRIPTS for directory in (old, new)]
    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(lambda job: _run(job[0], job[1], env), jobs))
    runs = {}
    for (directory, script), result in zip(jobs, results, strict=True):
        runs.setdefault(script, {})[directory.name] = result
    return fix, runs, new


@pytest.mark.torch
def test_fix_migrates_every_script_with_safe_fixes(equivalence_runs):
    fix, _, new = equivalence_runs
    assert fix.returncode == 0, fix.stdout + fix.stderr
    for script in SCRIPTS:
        text = (new / f"{script}.py").read_text()
        assert "torch._export" not in text and "aot_load" not in text and "aot_compile(" not in text, script


@pytest.mark.torch
@pytest.mark.parametrize("script", SCRIPTS)
def test_migrated_script_gives_the_same_outputs(equivalence_runs, script):
    import torch

    _, runs, _ = equivalence_runs
    old, new = runs[script]["old"], runs[script]["new"]
    torch.testing.assert_close(new["outputs"], old["outputs"])
    # The old run proves the capture works; the migrated run must be free of the deprecation notice.
    assert any("is being deprecated" in message for message in old["deprecations"])
    assert new["deprecations"] == []
