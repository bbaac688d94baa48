"""A deprecated load's device as the migration's plan judges it: whether the new loader can be given it (a literal
device, `f"cuda:{rank}"`, `torch.device(...)`, a value whose reading has no effect), and how."""

from __future__ import annotations

import ast

from aoti_lint.diagnostics import Applicability
from aoti_lint.flows.migration_verdicts import (
    DEVICE_EFFECTS,
    DEVICE_INDEX_ZERO,
    DEVICE_NOT_LITERAL,
    Verdict,
    device_index_needed,
)
from aoti_lint.flows.path_expressions import PathExpressions, string_value
from aoti_lint.flows.values import parse_device
from aoti_lint.knowledge.deprecated_api import DEVICE_CALLS_WITHOUT_EFFECTS, LOAD_PACKAGE_PARAMETERS_SINCE
from aoti_lint.knowledge.device_flow import TORCH_DEVICE
from aoti_lint.model.syntax_tree import children

NOT_LITERAL = (Applicability.UNSAFE, DEVICE_NOT_LITERAL)


class LoadDevice(PathExpressions):
    """Judges the device argument of a deprecated load."""

    def judge_load_device(self, verdict: Verdict, value: ast.expr) -> tuple[int | None, bool]:
        """Whether a deprecated load's device (``value``) can be given to the new loader; ``verdict`` is lowered where
        it cannot. Returns the new loader's device index: a number, or True where it is the index expression the
        device holds (`f"cuda:{rank}"`, `torch.device("cuda", rank)`), passed on as written."""
        device = self._literal_device(value)
        indexed = self._device_index_expression(value) if device is None else None
        if indexed is not None:
            if indexed == "cpu":
                return None, False
            if self.target_torch >= LOAD_PACKAGE_PARAMETERS_SINCE["device_index"]:
                return None, True
            verdict.lower(Applicability.DISPLAY_ONLY, device_index_needed(self.code(value)))
            return None, False
        if device is None:
            verdict.lower(*((Applicability.DISPLAY_ONLY, DEVICE_EFFECTS) if self._has_effects(value) else NOT_LITERAL))
            return None, False
        device_type, index = device
        if index is None or device_type == "cpu":
            return None, False
        if self.target_torch >= LOAD_PACKAGE_PARAMETERS_SINCE["device_index"]:
            return index, False
        if index == 0:
            verdict.lower(Applicability.UNSAFE, DEVICE_INDEX_ZERO)
        else:
            verdict.lower(Applicability.DISPLAY_ONLY, device_index_needed(f"{device_type}:{index}"))
        return None, False

    def _literal_device(self, node: ast.expr) -> tuple[str, int | None] | None:
        """A literal device: "cuda:1", torch.device("cuda", 1), torch.device("cpu")."""
        literal = string_value(node)
        if literal is not None:
            device = parse_device(literal.strip())
            return None if device is None else (device.type, device.index)
        if type(node) is ast.Call and self._names_torch_device(node) and 1 <= len(node.args) <= 2:
            if node.keywords or any(type(arg) is ast.Starred for arg in node.args):
                return None
            parsed = self._literal_device(node.args[0])
            if parsed is None or len(node.args) == 1:
                return parsed
            index = node.args[1]
            if parsed[1] is not None or not self._is_integer(index):
                return None
            return parsed[0], index.value  # type: ignore[attr-defined]
        return None

    def _device_index_expression(self, node: ast.expr) -> str | None:
        """The device type of ``f"cuda:{rank}"`` or ``torch.device("cuda", rank)``."""
        if type(node) is ast.JoinedStr and len(node.values) == 2:
            text, expression = node.values
            if (
                type(text) is ast.Constant
                and type(expression) is ast.FormattedValue
                and expression.conversion == -1
                and expression.format_spec is None
                and str(text.value).endswith(":")
            ):
                device = parse_device(str(text.value)[:-1].strip())
                if device is not None and device.index is None:
                    return device.type
        if type(node) is ast.Call and self._names_torch_device(node) and len(node.args) == 2 and not node.keywords:
            if any(type(arg) is ast.Starred for arg in node.args):
                return None
            parsed = self._literal_device(node.args[0])
            if parsed is not None and parsed[1] is None and not self._is_integer(node.args[1]):
                return parsed[0]
        return None

    def _names_torch_device(self, call: ast.Call) -> bool:
        return self.may_name(call.func, {"device"}) and self.names(call.func) == {TORCH_DEVICE}

    def _is_integer(self, node: ast.expr) -> bool:
        """Whether ``node`` is an integer literal written in decimal (the fix reads `0x1` as no literal)."""
        return type(node) is ast.Constant and type(node.value) is int and self.code(node).isdigit()

    def _has_effects(self, node: ast.AST) -> bool:
        """Whether evaluating ``node`` may do more than give a value: an await, a yield, an assignment expression, or a
        call other than those that only read a value; a lambda's body runs only when called."""
        pending = [node]
        while pending:
            current = pending.pop()
            kind = type(current)
            if kind in (ast.Await, ast.Yield, ast.YieldFrom, ast.NamedExpr):
                return True
            if kind is ast.Lambda:
                continue
            if kind is ast.Call and not self._reads_only(current.func):  # type: ignore[attr-defined]
                return True
            pending.extend(children(current))
        return False

    def _reads_only(self, callee: ast.expr) -> bool:
        literal = type(callee) is ast.Attribute and type(callee.value) is ast.Constant
        if literal and type(callee.value.value) in (str, bytes) and callee.attr == "format":  # type: ignore[attr-defined]
            return True
        names = self.names(callee)
        return bool(names) and names <= DEVICE_CALLS_WITHOUT_EFFECTS
