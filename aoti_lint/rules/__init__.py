"""The registry: every rule aoti-lint knows, in code order."""

from __future__ import annotations

from aoti_lint.rules.aoti_api_misuse import AotiApiMisuse
from aoti_lint.rules.base import PythonRule, Rule
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

ALL_RULES: tuple[type[Rule], ...] = (
    SyntaxErrorRule,
    DeprecatedAotCompile,
    DeprecatedAotLoad,
    AotiApiMisuse,
    DeprecatedCppRunner,
    CrossDeviceLoad,
    InputDeviceMismatch,
    InputShapeMismatch,
    DebugEnvVar,
    DebugInductorConfig,
    FakeKernelConcreteSize,
    FakeKernelShapeBranch,
    DeprecatedImplAbstract,
    CppMetaKernelConcreteSize,
)

RULES_BY_CODE: dict[str, type[Rule]] = {rule.code: rule for rule in ALL_RULES}
RULES_BY_NAME: dict[str, type[Rule]] = {rule.name: rule for rule in ALL_RULES}

__all__ = ["ALL_RULES", "RULES_BY_CODE", "RULES_BY_NAME", "PythonRule", "Rule"]
