"""The real command, with AOTI002 swapped for the test-only fixing rule (tests/reliability_sources.py).

Tests of --fix under faults (concurrent runs, interrupts, read-only and symlinked files, newline styles) need
findings that have fixes; this gives them one whose edits are known, whatever the real codemod does.
Run as ``python -m tests.reliability_cli [aoti-lint arguments]``.

A file holding ``SEGFAULT_MARKER`` makes the worker process that lints it crash for real (a null pointer read through
ctypes, SIGSEGV), as libcst's native parser did on deep nesting: the crash-containment tests need one. A file
holding ``STALL_MARKER`` keeps the worker process that lints it busy for an hour, as a pathological file could: the
interrupt tests need a worker that does not finish on its own.
"""

from __future__ import annotations

import sys

from aoti_lint import cli
from aoti_lint.rules import ALL_RULES
from aoti_lint.run import lint, ruleset
from tests.reliability_sources import RenameDeprecatedLoad

SEGFAULT_MARKER = "# aoti-lint test: segfault here"
STALL_MARKER = "# aoti-lint test: stall here"


class RenameOrCrash(RenameDeprecatedLoad):
    @classmethod
    def reader(cls, module):
        import multiprocessing

        if multiprocessing.parent_process() is None:
            return super().reader(module)  # as libcst, the native parser, runs only in workers
        if SEGFAULT_MARKER in module.text:
            import ctypes

            ctypes.string_at(0)
        if STALL_MARKER in module.text:
            import time

            time.sleep(3600)
        return super().reader(module)


FIXING_RULES = tuple(RenameOrCrash if rule.code == RenameDeprecatedLoad.code else rule for rule in ALL_RULES)


class FixingRuleSet(ruleset.RuleSet):
    def __init__(self, settings, rules=FIXING_RULES) -> None:
        super().__init__(settings, rules)


if __name__ == "__main__":
    lint.RuleSet = FixingRuleSet
    sys.exit(cli.main())
