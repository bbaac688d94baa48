from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).resolve().parent / "fixtures"


def run_cli(*args: str, cwd: Path | None = None, stdin: str | None = None, env: dict | None = None):
    """Run aoti-lint in a fresh process, as users and pre-commit do."""
    full_env = {**os.environ, **(env or {})}
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


@pytest.fixture
def cli():
    return run_cli


@pytest.fixture(scope="session")
def aoti_packages(tmp_path_factory):
    """Real packages compiled once per session: plain (dynamic batch), debug-built, and the exported reference."""
    from tests.runtime_helpers import build_packages

    return build_packages(tmp_path_factory.mktemp("aoti-packages"))
