"""Runtime checks of compiled AOTInductor packages: ``aoti-lint validate`` and ``aoti-lint explain``.

Unlike the linter, this part loads and runs packages (in child processes, with torch). Import cost stays low:
torch is imported only by the child process.
"""

from __future__ import annotations

from aoti_lint.runtime.validate import ValidationReport, validate

__all__ = ["ValidationReport", "validate"]
