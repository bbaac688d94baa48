"""Reading libcst expressions the way the migration needs: call arguments bound to parameters, string
literals, literal devices, path expressions whose file suffix can be swapped (``.so`` -> ``.pt2``), and the name
a module's import binds to torch.
"""

from __future__ import annotations

import libcst as cst

from aoti_lint.flows.values import parse_device

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def bind(call: cst.Call, positional: tuple[str, ...], keywords: tuple[str, ...]) -> dict[str, cst.Arg] | None:
    """Map a call's arguments to parameter names; None when that cannot be done statically."""
    bound: dict[str, cst.Arg] = {}
    for index, arg in enumerate(call.args):
        if arg.star:
            return None
        if arg.keyword is None:
            if index >= len(positional):
                return None
            bound[positional[index]] = arg
        else:
            name = arg.keyword.value
            if (name not in positional and name not in keywords) or name in bound:
                return None
            bound[name] = arg
    return bound


def string_value(node: cst.CSTNode | None) -> str | None:
    if isinstance(node, cst.SimpleString):
        value = node.evaluated_value
        return value if isinstance(value, str) else None
    if isinstance(node, cst.ConcatenatedString):
        joined = node.evaluated_value
        return joined if isinstance(joined, str) else None
    return None


def is_true(node: cst.CSTNode | None) -> bool:
    return isinstance(node, cst.Name) and node.value == "True"


def is_false(node: cst.CSTNode | None) -> bool:
    return isinstance(node, cst.Name) and node.value == "False"


def replace_suffix(node: cst.BaseExpression, old: str, new: str) -> cst.BaseExpression | None:
    """The same path expression with its literal file suffix ``old`` swapped for ``new``, or None.

    Handles "x.so", os.path.join(..., "x.so"), f"{d}/x.so" and Path(...) / "x.so".
    """
    if isinstance(node, cst.SimpleString):
        value = string_value(node)
        if value is None or not value.endswith(old) or "\\" in node.value:
            return None
        quote_end = len(node.value) - len(node.quote)
        body = node.value[:quote_end]
        if not body.endswith(old):
            return None
        return node.with_changes(value=body[: -len(old)] + new + node.value[quote_end:])
    if isinstance(node, cst.Call) and node.args and not node.args[-1].keyword and not node.args[-1].star:
        last = replace_suffix(node.args[-1].value, old, new)
        if last is None or not (isinstance(node.func, cst.Attribute) and node.func.attr.value == "join"):
            return None
        return node.with_changes(args=[*node.args[:-1], node.args[-1].with_changes(value=last)])
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Divide):
        right = replace_suffix(node.right, old, new)
        return None if right is None else node.with_changes(right=right)
    if isinstance(node, cst.FormattedString) and node.parts and isinstance(node.parts[-1], cst.FormattedStringText):
        text = node.parts[-1].value
        if not text.endswith(old):
            return None
        tail = node.parts[-1].with_changes(value=text[: -len(old)] + new)
        return node.with_changes(parts=[*node.parts[:-1], tail])
    return None


def literal_device(node: cst.BaseExpression | None, names: Any) -> tuple[str, int | None] | None:
    """(device type, index) of a literal device: "cuda:1", torch.device("cuda", 1), torch.device("cpu")."""
    literal = string_value(node)
    if literal is not None:
        device = parse_device(literal.strip())
        return None if device is None else (device.type, device.index)
    if isinstance(node, cst.Call) and names(node.func) == {"torch.device"} and 1 <= len(node.args) <= 2:
        if any(arg.keyword is not None or arg.star for arg in node.args):
            return None
        parsed = literal_device(node.args[0].value, names)
        if parsed is None:
            return None
        if len(node.args) == 2:
            index = node.args[1].value
            if parsed[1] is not None or not isinstance(index, cst.Integer):
                return None
            return parsed[0], int(index.value)
        return parsed
    return None


def device_index_expression(node: cst.BaseExpression | None, names: Any) -> tuple[str, cst.BaseExpression] | None:
    """(device type, index expression) of ``f"cuda:{rank}"`` or ``torch.device("cuda", rank)``."""
    if isinstance(node, cst.FormattedString) and len(node.parts) == 2:
        text, expression = node.parts
        if (
            isinstance(text, cst.FormattedStringText)
            and isinstance(expression, cst.FormattedStringExpression)
            and expression.conversion is None
            and expression.format_spec is None
            and text.value.endswith(":")
        ):
            device = literal_device(cst.SimpleString(repr(text.value[:-1])), names)
            if device is not None and device[1] is None:
                return device[0], expression.expression
    if isinstance(node, cst.Call) and names(node.func) == {"torch.device"} and len(node.args) == 2:
        if any(arg.keyword is not None or arg.star for arg in node.args):
            return None
        device = literal_device(node.args[0].value, names)
        if device is not None and device[1] is None and not isinstance(node.args[1].value, cst.Integer):
            return device[0], node.args[1].value
    return None


def suffix_literal(node: cst.BaseExpression | None) -> cst.BaseExpression | None:
    """The string literal that carries a path expression's file name ("x.so" in os.path.join(d, "x.so"))."""
    if isinstance(node, cst.Call) and node.args:
        return suffix_literal(node.args[-1].value)
    if isinstance(node, cst.BinaryOperation):
        return suffix_literal(node.right)
    return node


def torch_binding(module: cst.Module) -> str | None:
    """The name a module-level ``import torch[.x] [as t]`` binds to the torch package, if any."""
    for statement in module.body:
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if not isinstance(small, cst.Import):
                continue
            for alias in small.names:
                dotted = cst.helpers.get_full_name_for_node(alias.name) or ""
                if alias.asname is None and dotted.split(".")[0] == "torch":
                    return "torch"
                if dotted == "torch" and bound_as(alias) is not None:
                    return bound_as(alias)
    return None


def bound_as(alias: cst.ImportAlias) -> str | None:
    """The name an ``as`` clause binds, if any."""
    return alias.asname.name.value if alias.asname and isinstance(alias.asname.name, cst.Name) else None
