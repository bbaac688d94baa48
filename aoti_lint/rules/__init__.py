"""The registry: every rule aoti-lint knows, in code order.

The rule modules are imported on first use of the registry (``ALL_RULES``, ``RULES_BY_CODE``, a rule's class):
a run that reports from its memo (``aoti_lint.run_memo``) never loads them, which is a sixth of the start-up of
a pre-commit hook on one clean file. Their codes alone are data (``aoti_lint.knowledge.rule_codes``).
"""

from __future__ import annotations

import importlib

from aoti_lint.rules.base import PythonRule, Rule

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from aoti_lint.rules.aoti_api_misuse import AotiApiMisuse
    from aoti_lint.rules.cpp_meta_kernel_concrete_size import CppMetaKernelConcreteSize
    from aoti_lint.rules.cross_device_load import CrossDeviceLoad
    from aoti_lint.rules.debug_env_var import DebugEnvVar
    from aoti_lint.rules.debug_inductor_config import DebugInductorConfig
    from aoti_lint.rules.deprecated_api import DeprecatedAotCompile, DeprecatedAotLoad
    from aoti_lint.rules.deprecated_cpp_runner import DeprecatedCppRunner
    from aoti_lint.rules.deprecated_impl_abstract import DeprecatedImplAbstract
    from aoti_lint.rules.fake_kernel_concrete_size import FakeKernelConcreteSize
    from aoti_lint.rules.fake_kernel_shape_branch import FakeKernelShapeBranch
    from aoti_lint.rules.input_device_mismatch import InputDeviceMismatch
    from aoti_lint.rules.input_shape_mismatch import InputShapeMismatch
    from aoti_lint.rules.syntax_error import SyntaxErrorRule

    ALL_RULES: tuple[type[Rule], ...]
    RULES_BY_CODE: dict[str, type[Rule]]
    RULES_BY_NAME: dict[str, type[Rule]]

# Each rule's class and module, in code order.
_REGISTRY = (
    ("SyntaxErrorRule", "syntax_error"),
    ("DeprecatedAotCompile", "deprecated_api"),
    ("DeprecatedAotLoad", "deprecated_api"),
    ("AotiApiMisuse", "aoti_api_misuse"),
    ("DeprecatedCppRunner", "deprecated_cpp_runner"),
    ("CrossDeviceLoad", "cross_device_load"),
    ("InputDeviceMismatch", "input_device_mismatch"),
    ("InputShapeMismatch", "input_shape_mismatch"),
    ("DebugEnvVar", "debug_env_var"),
    ("DebugInductorConfig", "debug_inductor_config"),
    ("FakeKernelConcreteSize", "fake_kernel_concrete_size"),
    ("FakeKernelShapeBranch", "fake_kernel_shape_branch"),
    ("DeprecatedImplAbstract", "deprecated_impl_abstract"),
    ("CppMetaKernelConcreteSize", "cpp_meta_kernel_concrete_size"),
)
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


__all__ = [
    "ALL_RULES",
    "RULES_BY_CODE",
    "RULES_BY_NAME",
    "AotiApiMisuse",
    "CppMetaKernelConcreteSize",
    "CrossDeviceLoad",
    "DebugEnvVar",
    "DebugInductorConfig",
    "DeprecatedAotCompile",
    "DeprecatedAotLoad",
    "DeprecatedCppRunner",
    "DeprecatedImplAbstract",
    "FakeKernelConcreteSize",
    "FakeKernelShapeBranch",
    "InputDeviceMismatch",
    "InputShapeMismatch",
    "PythonRule",
    "Rule",
    "SyntaxErrorRule",
]
