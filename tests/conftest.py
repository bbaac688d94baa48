from __future__ import annotations

import atexit
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).resolve().parent / "fixtures"
# CLI runs share one cache outside the repository, so that no run leaves .aoti_lint_cache in tests/fixtures.
CLI_CACHE_DIR = Path(tempfile.mkdtemp(prefix="aoti-lint-test-cache-"))
# The report is coloured by these (aoti_lint/report/colour.py): the tests that compare output set them themselves.
for _name in ("FORCE_COLOR", "NO_COLOR"):
    os.environ.pop(_name, None)
atexit.register(shutil.rmtree, CLI_CACHE_DIR, True)


def run_cli(*args: str, cwd: Path | None = None, stdin: str | None = None, env: dict | None = None):
    """Run aoti-lint in a fresh process, as users and pre-commit do."""
    full_env = {**os.environ, "AOTI_LINT_CACHE_DIR": str(CLI_CACHE_DIR), **(env or {})}
    full_env.pop("AOTI_LINT_OUTPUT_FORMAT", None) if "AOTI_LINT_OUTPUT_FORMAT" not in (env or {}) else None
    return subprocess.run(
        [sys.executable, "-m", "aoti_lint", *args],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        text=True,
        env=full_env,
        timeout=600,
    )


# The fast command (CONTRIBUTING.md), `pytest -m "not torch and not slow"`, must leave out every test that compiles with
# AOTInductor or installs an environment from PyPI. Marking here by the fixture that does the work keeps each
# test file's own markers as they are, and a new test using one of these fixtures is marked without thought.
TORCH_FIXTURES = frozenset({"aoti_packages", "migration_packages", "batch2_package", "equivalence_runs"})
SLOW_FIXTURES = frozenset({"pre_commit_home"})


def pytest_collection_modifyitems(config, items):
    for item in items:
        used = set(getattr(item, "fixturenames", ()))
        if used & TORCH_FIXTURES:
            item.add_marker(pytest.mark.torch)
        if used & SLOW_FIXTURES:
            item.add_marker(pytest.mark.slow)


@pytest.fixture
def cli():
    """The real command in this process (tests.helpers.run_main): the same arguments, exit code and output as
    ``run_cli``, at a fraction of the cost. Tests about the process itself use ``cli_process``."""
    from tests.helpers import run_main

    return run_main


@pytest.fixture
def cli_process():
    """aoti-lint in a fresh process: for the entry point, signals, crashes and what a run imports."""
    return run_cli


def _package_folder(tmp_path_factory, name: str) -> Path:
    # AOTI_LINT_TEST_PACKAGES keeps the compiled packages between sessions (each compile takes 20+ s).
    kept = os.environ.get("AOTI_LINT_TEST_PACKAGES")
    if not kept:
        return tmp_path_factory.mktemp(name)
    folder = Path(kept) / name
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture(scope="session")
def pre_commit_home(tmp_path_factory) -> Path:
    """One pre-commit store for the session (tests/test_precommit.py, tests/test_docs_run.py), so each hook
    environment is installed once."""
    return tmp_path_factory.mktemp("pre-commit-home")


@pytest.fixture(scope="session")
def aoti_packages(tmp_path_factory):
    """Real packages compiled once per session: plain (dynamic batch), debug-built, and the exported reference."""
    from tests.runtime_helpers import build_packages

    return build_packages(_package_folder(tmp_path_factory, "aoti-packages"))


@pytest.fixture(scope="session")
def migration_packages(tmp_path_factory):
    """Compiled once per session: old.so (the deprecated aot_compile of plain's model) and other.pt2 (a slightly
    different model, static shape (2, 10))."""
    from tests.runtime_helpers import build_packages

    return build_packages(_package_folder(tmp_path_factory, "aoti-migration"), debug=False, groups=("migration",))


# The fixtures are code for aoti-lint to read, some of it shaped like a project's own tests: never collected.
collect_ignore = ["fixtures"]
