"""Which Python functions of a module are fake/meta kernels of custom ops, and which of their expressions are
sizes or data of their tensor arguments: read from the module's ``ast`` tree and semantic model.

Shared by the AOTI3xx rules; imported only when a file is read. Precision first: a function counts only when its
registration is spelled in this module and resolves to torch.library, and an expression is a size only when it
provably reads the shape of a parameter that is a tensor and is never rebound in the kernel.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from aoti_lint.knowledge.custom_ops import (
    CUSTOM_OP_METHOD,
    FAKE_REGISTRATIONS,
    LIBRARY_CLASS,
    LIBRARY_IMPL,
    META_KEYS,
    SHAPE_ATTRIBUTES,
    SIZE_METHODS,
    TENSOR_ANNOTATION,
    TENSOR_METHODS,
)
from aoti_lint.model.calls import argument
from aoti_lint.model.name_index import string
from aoti_lint.model.syntax_tree import children, source_lines, source_segment

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from aoti_lint.model.semantic import SemanticModel

_TENSOR_ANNOTATION = re.compile(TENSOR_ANNOTATION)
# Bodies of their own: a kernel's reading does not enter them.
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
# A Meta key as the prefilter finds it in the bytes: a plain literal, quotes and all.
_META_LITERALS = frozenset(quote + key + quote for key in META_KEYS for quote in ('"', "'"))

Function = ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda


def own_nodes(roots: list[ast.AST]) -> Iterator[ast.AST]:
    """``roots`` and everything under them in source order, not entering nested functions, lambdas or classes (which
    are yielded themselves)."""
    stack = list(reversed(roots))
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, _SCOPES):
            stack.extend(reversed(children(node)))


@dataclass
class Kernel:
    function: Function
    # How it is registered, for messages: "register_fake", "impl_abstract", "a Meta impl".
    registration: str
    tensors: frozenset[str] = frozenset()
    # Names bound once in the kernel to a size / to the whole shape of a tensor parameter.
    size_names: set[str] = field(default_factory=set)
    shape_names: set[str] = field(default_factory=set)

    @property
    def name(self) -> str:
        return "<lambda>" if type(self.function) is ast.Lambda else self.function.name  # type: ignore[union-attr]

    def nodes(self) -> Iterator[ast.AST]:
        """The kernel's body and everything under it, nested functions and classes left out."""
        body = self.function.body
        return own_nodes(body if isinstance(body, list) else [body])  # type: ignore[arg-type]

    def is_tensor(self, node: ast.AST) -> bool:
        """A tensor computed from a tensor parameter: ``x``, ``x[0]``, ``x.sum()``, ``(x > 0).sum()``."""
        kind = type(node)
        if kind is ast.Name:
            return node.id in self.tensors  # type: ignore[attr-defined]
        if kind is ast.Subscript:
            return self.is_tensor(node.value)  # type: ignore[attr-defined]
        if kind is ast.Call:
            func = node.func  # type: ignore[attr-defined]
            return type(func) is ast.Attribute and func.attr in TENSOR_METHODS and self.is_tensor(func.value)
        if kind is ast.Compare:
            return self.is_tensor(node.left)  # type: ignore[attr-defined]
        if kind is ast.BinOp:
            return self.is_tensor(node.left) or self.is_tensor(node.right)  # type: ignore[attr-defined]
        return False

    def is_shape(self, node: ast.AST) -> bool:
        """The whole shape (or a slice of it) of a tensor parameter: ``x.shape``, ``x.size()``, ``x.shape[1:]``."""
        kind = type(node)
        if kind is ast.Name:
            return node.id in self.shape_names  # type: ignore[attr-defined]
        if kind is ast.Attribute:
            return node.attr in SHAPE_ATTRIBUTES and self.is_tensor(node.value)  # type: ignore[attr-defined]
        if kind is ast.Call:
            func = node.func  # type: ignore[attr-defined]
            return (
                type(func) is ast.Attribute
                and not node.args  # type: ignore[attr-defined]
                and not node.keywords  # type: ignore[attr-defined]
                and func.attr in ("size", "stride")
                and self.is_tensor(func.value)
            )
        if kind is ast.Subscript:
            return type(_single(node.slice)) is ast.Slice and self.is_shape(node.value)  # type: ignore[attr-defined]
        return False

    def is_size(self, node: ast.AST) -> bool:
        """One size of a tensor parameter, or arithmetic on one: a SymInt under export with dynamic shapes."""
        kind = type(node)
        if kind is ast.Name:
            return node.id in self.size_names  # type: ignore[attr-defined]
        if kind is ast.Subscript:
            index = _single(node.slice)  # type: ignore[attr-defined]
            return type(index) not in (ast.Slice, ast.Tuple) and self.is_shape(node.value)  # type: ignore[attr-defined]
        if kind is ast.Call:
            func = node.func  # type: ignore[attr-defined]
            if type(func) is not ast.Attribute or func.attr not in SIZE_METHODS or not self.is_tensor(func.value):
                return False
            given = bool(node.args or node.keywords)  # type: ignore[attr-defined]
            return given if func.attr in ("size", "stride") else not given
        if kind is ast.BinOp:
            return self.is_size(node.left) or self.is_size(node.right)  # type: ignore[attr-defined]
        if kind is ast.UnaryOp and type(node.op) is ast.USub:  # type: ignore[attr-defined]
            return self.is_size(node.operand)  # type: ignore[attr-defined]
        return False


def _single(index: ast.AST) -> ast.AST:
    """``x[i,]`` indexes with one element, as ``x[i]`` does."""
    if type(index) is ast.Tuple and len(index.elts) == 1:
        return index.elts[0]
    return index


def arguments(call: ast.Call) -> list[ast.expr]:
    """The values a call passes, positional and by keyword, unpacking aside."""
    return [arg for arg in call.args if type(arg) is not ast.Starred] + [
        keyword.value for keyword in call.keywords if keyword.arg is not None
    ]


class KernelIndex:
    """The fake/meta kernels of one module."""

    def __init__(self, tree: ast.Module, text: str, model: SemanticModel) -> None:
        self.model = model
        self.lines = source_lines(text)
        self.kernels: dict[int, Kernel] = {}
        definitions: dict[str, list[ast.FunctionDef | ast.AsyncFunctionDef]] = {}
        calls: list[ast.Call] = []
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                definitions.setdefault(node.name, []).append(node)
                for decorator in node.decorator_list:
                    registration = self._decorator_registration(decorator)
                    if registration is not None:
                        self._add(node, registration)
            elif type(node) is ast.Call:
                calls.append(node)
        for call in calls:
            found = self._call_registration(call)
            if found is None:
                continue
            function, registration = found
            if type(function) is ast.Lambda:
                self._add(function, registration)
            elif type(function) is ast.Name and len(definitions.get(function.id, ())) == 1:
                (definition,) = definitions[function.id]
                # The name must be that very function where the registration reads it.
                if self._binds(function, definition):
                    self._add(definition, registration)

    def _binds(self, name: ast.Name, definition: ast.AST) -> bool:
        bindings = self.model.bindings_of(name)
        return bindings is not None and [b.node for b in bindings if type(b.node) is not ast.alias] == [definition]

    def _add(self, function: Function, registration: str) -> None:
        if id(function) not in self.kernels:
            self.kernels[id(function)] = analyse(Kernel(function, registration), self.lines)

    def _is_meta(self, node: ast.expr | None) -> bool:
        """``"Meta"``, ``"meta"``, or a list/tuple of dispatch keys or device types holding one. Only a plain
        literal counts, spelled as it reads (the prefilter looks for the quoted key in the file's bytes)."""
        if type(node) is ast.List or type(node) is ast.Tuple:
            return any(self._is_meta(element) for element in node.elts)
        if type(node) is not ast.Constant or type(node.value) not in (str, bytes):
            return False
        return source_segment(self.lines, node).lstrip("rRbBuU") in _META_LITERALS

    def _decorator_registration(self, decorator: ast.expr) -> str | None:
        names = self.model.qualified_names
        if type(decorator) is ast.Attribute and decorator.attr == CUSTOM_OP_METHOD:
            # `@my_op.register_fake` on a custom_op object; `@torch.library.register_fake` needs the op.
            return None if names(decorator) & set(FAKE_REGISTRATIONS) else CUSTOM_OP_METHOD
        if type(decorator) is not ast.Call:
            return None
        callee = names(decorator.func)
        for registration in FAKE_REGISTRATIONS:
            if registration in callee:
                return registration.rsplit(".", 1)[-1]
        if LIBRARY_IMPL in callee:
            if string(argument(decorator, 0, "qualname")) is not None:
                return "a Meta impl" if self._is_meta(argument(decorator, 1, "types")) else None
            # The legacy form `impl(lib, name, dispatch_key)`.
            return "a Meta impl" if self._is_meta(argument(decorator, 2, "dispatch_key")) else None
        return None

    def _call_registration(self, call: ast.Call) -> tuple[ast.expr, str] | None:
        """``register_fake("ns::op", fn)``, ``my_op.register_fake(fn)``, ``impl("ns::op", "Meta", fn)``,
        ``lib.impl("op", fn, "Meta")``: the kernel expression and how it is registered."""
        func = call.func
        names = self.model.qualified_names(func)
        for registration in FAKE_REGISTRATIONS:
            if registration in names:
                kernel = argument(call, 1, "func")
                return (kernel, registration.rsplit(".", 1)[-1]) if kernel is not None else None
        if LIBRARY_IMPL in names:
            kernel = argument(call, 2, "func")
            if kernel is not None and string(argument(call, 0, "qualname")) is not None:
                return (kernel, "a Meta impl") if self._is_meta(argument(call, 1, "types")) else None
            return None
        if type(func) is not ast.Attribute:
            return None
        if func.attr == CUSTOM_OP_METHOD and len(call.args) == 1 and not call.keywords:
            if names & set(FAKE_REGISTRATIONS) or type(call.args[0]) is ast.Starred:
                return None
            return call.args[0], CUSTOM_OP_METHOD
        if func.attr == "impl" and self._library(func.value) is not None:
            kernel = argument(call, 1, "fn")
            key = argument(call, 2, "dispatch_key")
            if key is None and not any(keyword.arg == "dispatch_key" for keyword in call.keywords):
                library = self._library(func.value)
                key = argument(library, 2, "dispatch_key") if library is not None else None
            return (kernel, "a Meta impl") if kernel is not None and self._is_meta(key) else None
        return None

    def _library(self, node: ast.expr) -> ast.Call | None:
        """The ``torch.library.Library(...)`` call ``node`` is, or a name bound once to."""
        if type(node) is ast.Name:
            node = self.model.single_value(node) or node
        if type(node) is ast.Call and LIBRARY_CLASS in self.model.qualified_names(node.func):
            return node
        return None


_ARITHMETIC = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Pow: "**", ast.LShift: "<<", ast.FloorDiv: "//"}


def number(node: ast.expr, model: SemanticModel | None = None, depth: int = 0) -> float | None:
    """A number literal, its negation, or arithmetic on them (a threshold written `1 << 20`, `4 * 1024`); with the
    module's ``model``, a name bound once where it is read to such a number (`_MAX_NUMEL = 1 << 20`)."""
    if type(node) is ast.Name and model is not None and depth < 4:
        value = model.single_value(node)
        return None if value is None else number(value, model, depth + 1)
    if type(node) is ast.Constant and isinstance(node.value, int | float) and type(node.value) is not bool:
        return float(node.value)
    if type(node) is ast.UnaryOp and type(node.op) is ast.USub:
        inner = number(node.operand, model, depth)
        return None if inner is None else -inner
    if type(node) is ast.BinOp:
        left, right = number(node.left, model, depth), number(node.right, model, depth)
        operator = _ARITHMETIC.get(type(node.op))
        return None if left is None or right is None or operator is None else _arithmetic(operator, left, right)
    return None


def _arithmetic(operator: str, left: float, right: float) -> float | None:
    """``left operator right``; None where Python would fail, or the result would not be a size's scale."""
    if operator in ("<<", "**") and not (left == int(left) and right == int(right) and 0 <= right <= 64):
        return None
    if operator == "<<":
        return float(int(left) << int(right))
    if operator == "**":
        return float(left**right) if abs(left) <= 1 << 16 else None
    if operator == "//":
        return None if right == 0 else float(left // right)
    return float(left + right if operator == "+" else left - right if operator == "-" else left * right)


def raises_only(node: ast.If, lines: list[str]) -> bool:
    """An `if` whose indented block only raises: a check, which the rules leave to the programmer (a one-line
    `if c: raise E` is no such block)."""
    if not node.body or not all(type(statement) is ast.Raise for statement in node.body):
        return False
    first = node.body[0]
    line = lines[first.lineno - 1] if first.lineno <= len(lines) else ""
    return not line.encode()[: first.col_offset].strip()


# -- inside one kernel --------------------------------------------------------------------------------------
def _bound_names(node: ast.AST | None) -> Iterator[str]:
    """Names an assignment target binds (``a``, ``a, *b``; attributes and subscripts bind none)."""
    if type(node) is ast.Name:
        yield node.id
    elif type(node) is ast.Tuple or type(node) is ast.List:
        for element in node.elts:
            yield from _bound_names(element)
    elif type(node) is ast.Starred:
        yield from _bound_names(node.value)


_Binding = ast.Assign | ast.For | ast.AsyncFor | ast.comprehension


def _assignments(kernel: Kernel) -> tuple[dict[str, int], list[_Binding]]:
    """How often each name is bound in the kernel (nested scopes aside), and its plain assignments and loops, in
    statement order."""
    counts: dict[str, int] = {}
    assigns: list[_Binding] = []
    for node in kernel.nodes():
        kind = type(node)
        targets: list[ast.AST | None] = []
        if kind is ast.Assign:
            targets = list(node.targets)  # type: ignore[attr-defined]
            assigns.append(node)  # type: ignore[arg-type]
        elif kind in (ast.AnnAssign, ast.AugAssign, ast.NamedExpr):
            targets = [node.target]  # type: ignore[attr-defined]
        elif kind in (ast.For, ast.AsyncFor, ast.comprehension):
            targets = [node.target]  # type: ignore[attr-defined]
            assigns.append(node)  # type: ignore[arg-type]
        elif kind is ast.alias:
            # `import a as b` binds `b`; a plain `import a` is not counted, as in the kernels this reads.
            targets = [ast.Name(node.asname)] if node.asname else []  # type: ignore[attr-defined]
        elif kind is ast.withitem:
            targets = [node.optional_vars]  # type: ignore[attr-defined]
        elif kind is ast.ExceptHandler:
            targets = [ast.Name(node.name)] if node.name else []  # type: ignore[attr-defined]
        elif kind is ast.Global or kind is ast.Nonlocal:
            targets = [ast.Name(name) for name in node.names]  # type: ignore[attr-defined]
        for target in targets:
            for name in _bound_names(target):
                counts[name] = counts.get(name, 0) + 1
    return counts, assigns


def analyse(kernel: Kernel, lines: list[str]) -> Kernel:
    """The kernel with its tensor parameters and the names bound to their sizes and shapes (``lines``: the text's
    ``syntax_tree.source_lines``)."""
    counts, assigns = _assignments(kernel)
    parameters = kernel.function.args
    tensors = set()
    for parameter in [*parameters.posonlyargs, *parameters.args, *parameters.kwonlyargs]:
        annotation = parameter.annotation
        if annotation is not None and not _TENSOR_ANNOTATION.fullmatch(source_segment(lines, annotation).strip()):
            continue
        if parameter.arg not in counts:
            tensors.add(parameter.arg)
    kernel.tensors = frozenset(tensors)
    # A name bound once to a size, in statement order (so `n = x.shape[0]; m = n * 2` makes both sizes).
    for assign in assigns:
        if not isinstance(assign, ast.Assign):
            # `for s in x.shape` / `[int(s) for s in x.shape]`: each `s` is a size.
            loop_target = assign.target
            if type(loop_target) is ast.Name and counts.get(loop_target.id) == 1 and kernel.is_shape(assign.iter):
                kernel.size_names.add(loop_target.id)
            continue
        if len(assign.targets) != 1:
            continue
        target = assign.targets[0]
        if type(target) is ast.Name and counts.get(target.id) == 1:
            if kernel.is_size(assign.value):
                kernel.size_names.add(target.id)
            elif kernel.is_shape(assign.value):
                kernel.shape_names.add(target.id)
        elif (type(target) is ast.Tuple or type(target) is ast.List) and kernel.is_shape(assign.value):
            for element in target.elts:
                names = list(_bound_names(element))
                if len(names) == 1 and counts.get(names[0]) == 1:
                    (kernel.shape_names if type(element) is ast.Starred else kernel.size_names).add(names[0])
    return kernel


# The last module read and its kernels: AOTI301 and AOTI302 read the same module in a row.
_last: list[Any] = [None, None]


def kernel_index(tree: ast.Module, text: str) -> KernelIndex:
    """The module's kernels, computed once per module for all the rules."""
    if _last[0] is not tree:
        from aoti_lint.model.semantic import model_of

        _last[:] = [tree, KernelIndex(tree, text, model_of(tree))]
    return _last[1]
