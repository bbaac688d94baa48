"""The registry: every rule aoti-lint knows, in code order.

The rule modules are imported on first use of the registry (``ALL_RULES``, ``RULES_BY_CODE``, a rule's class):
a run that reports from its memo (``aoti_lint.run.unchanged_run``) never loads them, which is a sixth of the start-up of
a pre-commit hook on one clean file. What is known of them without importing them (codes, names, modules, the entry
point's screen) is generated from the modules into ``aoti_lint.rule_manifest`` by ``python -m aoti_lint.docs``.
"""

from __future__ import annotations

import importlib

from aoti_lint.rule_manifest import RULES
from aoti_lint.rules.base import PythonRule, Rule

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    ALL_RULES: tuple[type[Rule], ...]
    RULES_BY_CODE: dict[str, type[Rule]]
    RULES_BY_NAME: dict[str, type[Rule]]

# Each rule's class and module, in code order, as the manifest lists them (``python -m aoti_lint.docs`` writes it
# from the rule modules themselves).
_REGISTRY = tuple((cls, module) for _, _, module, cls in RULES)
_LAZY = frozenset({"ALL_RULES", "RULES_BY_CODE", "RULES_BY_NAME", *(name for name, _ in _REGISTRY)})


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    rules = tuple(getattr(importlib.import_module(f"{__name__}.{module}"), cls) for cls, module in _REGISTRY)
    registry = globals()
    registry.update({rule.__name__: rule for rule in rules})
    registry["ALL_RULES"] = rules
    registry["RULES_BY_CODE"] = {rule.code: rule for rule in rules}
    registry["RULES_BY_NAME"] = {rule.name: rule for rule in rules}
    return registry[name]


__all__ = ["ALL_RULES", "RULES_BY_CODE", "RULES_BY_NAME", "PythonRule", "Rule"]
