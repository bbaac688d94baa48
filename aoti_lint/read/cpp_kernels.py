"""C++ custom-op kernels as tree-sitter reads them: a function's name and parameters, a registration macro, an
op's schema and name, whether a node lies inside a validation check (AOTI304's reading of a C++ file)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from aoti_lint.lazy import LazyPattern

TYPE_CHECKING = False
if TYPE_CHECKING:
    from tree_sitter import Node

# Validation macros: a size read inside one is a check the author wants, not a size that flows on.
CHECK_MACROS = ("TORCH_CHECK", "TORCH_INTERNAL_ASSERT", "TORCH_SYM_CHECK", "AT_ASSERT", "assert")
# `op(Tensor x, SymInt n) -> Tensor` and `ns::op.overload(...)`: the name, then the arguments.
_SCHEMA = LazyPattern(r"\s*(?:[\w]+::)?(?P<name>[\w.]+)\s*\((?P<args>.*)\)\s*->", re.DOTALL)


@dataclass
class MetaKernel:
    node: Node
    op: str


def declarator_name(node: Node | None) -> Node | None:
    """The identifier a (reference/pointer) declarator declares."""
    while node is not None and node.type != "identifier":
        inner = node.child_by_field_name("declarator")
        if inner is None:
            inner = next(
                (child for child in node.named_children if "declarator" in child.type or child.type == "identifier"),
                None,
            )
        node = inner
    return node


def function_name(function: Node) -> str | None:
    declarator = function.child_by_field_name("declarator")
    while declarator is not None and declarator.type != "function_declarator":
        declarator = declarator.child_by_field_name("declarator")
    if declarator is None:
        return None
    name = declarator.child_by_field_name("declarator")
    if name is None:
        return None
    from aoti_lint.read.cpp import last_name

    return last_name(name)


def kernel_parameters(function: Node) -> list[Node]:
    if function.type == "lambda_expression":
        declarator = function.child_by_field_name("declarator")
    else:
        declarator = function.child_by_field_name("declarator")
        while declarator is not None and declarator.type != "function_declarator":
            declarator = declarator.child_by_field_name("declarator")
    parameters = declarator.child_by_field_name("parameters") if declarator is not None else None
    if parameters is None:
        return []
    return [child for child in parameters.named_children if child.type == "parameter_declaration"]


def registration_macro(function: Node) -> tuple[str, list[str]] | None:
    """``TORCH_LIBRARY_IMPL(ns, Meta, m) {...}``, which tree-sitter reads as a function definition: the macro
    name and its arguments."""
    from aoti_lint.read.cpp import text

    declarator = function.child_by_field_name("declarator")
    if function.type != "function_definition" or declarator is None or declarator.type != "function_declarator":
        return None
    name = declarator.child_by_field_name("declarator")
    if name is None or name.type != "identifier" or not text(name).startswith("TORCH_LIBRARY"):
        return None
    return text(name), [text(parameter).strip() for parameter in kernel_parameters(function)]


def schema_arguments(schema: str) -> tuple[str, list[str]] | None:
    """The op name and its argument types, from a schema string; None when it cannot be read for sure."""
    match = _SCHEMA.match(schema)
    if match is None:
        return None
    types, depth, current = [], 0, ""
    for char in match.group("args"):
        depth += (char in "([" and 1) or 0
        depth -= (char in ")]" and 1) or 0
        if char == "," and depth == 0:
            types.append(current)
            current = ""
        else:
            current += char
    if current.strip():
        types.append(current)
    arguments = []
    for argument in types:
        argument = argument.strip()
        if argument == "*":  # keyword-only marker
            continue
        argument = argument.split("=", 1)[0].strip()
        argument = argument.rsplit(None, 1)[0] if " " in argument else argument
        arguments.append(re.sub(r"\[\d*\]", "[]", argument))
    return match.group("name").split(".", 1)[0], arguments


def registered_op_name(node: Node | None) -> str | None:
    """The op a registration names: a string literal's op, or the expression as written (a constant or a
    macro), which then only names the op in messages."""
    from aoti_lint.read.cpp import string_value, text

    if node is None:
        return None
    value = string_value(node)
    if value is None:
        return text(node) if node.type in ("identifier", "qualified_identifier", "call_expression") else None
    return value.rsplit("::", 1)[-1].split(".", 1)[0] if value else None


def in_check(node: Node, body: Node) -> bool:
    """Inside ``TORCH_CHECK(...)``, ``TORCH_INTERNAL_ASSERT(...)`` or ``assert(...)``: a validation, whose
    guard is what the author wants (like a Python ``if ...: raise``)."""
    from aoti_lint.read.cpp import text

    parent = node.parent
    while parent is not None and parent != body:
        if parent.type == "call_expression":
            function = parent.child_by_field_name("function")
            name = text(function) if function is not None and function.type == "identifier" else ""
            if name.startswith(CHECK_MACROS):
                return True
        parent = parent.parent
    return False
