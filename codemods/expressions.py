"""The syntax the migration rewrites, in libcst's nodes: call arguments bound to parameters, string literals, path
expressions whose file suffix is swapped (``.so`` -> ``.pt2``), and the name a module's import binds to torch.
"""

from __future__ import annotations

import libcst as cst


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
