"""Every rule's code, in the registry's order (``aoti_lint.rules.ALL_RULES``, which a test keeps the same):
what selectors and cached findings are checked against without importing the rules, so that a run whose
files are all unchanged (``aoti_lint.run_memo``) never loads them."""

from __future__ import annotations

RULE_CODES: tuple[str, ...] = (
    "AOTI000",
    "AOTI001",
    "AOTI002",
    "AOTI003",
    "AOTI004",
    "AOTI101",
    "AOTI102",
    "AOTI103",
    "AOTI201",
    "AOTI202",
    "AOTI301",
    "AOTI302",
    "AOTI303",
    "AOTI304",
)
