"""Which Python functions of a module are fake/meta kernels of custom ops, and which of their expressions are
sizes or data of their tensor arguments.

Shared by the AOTI3xx rules through the rule context; imported only when a file is parsed. Precision first:
a function counts only when its registration is spelled in this module and resolves to torch.library, and an
expression is a size only when it provably reads the shape of a parameter that is a tensor and is never
rebound in the kernel.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field

import libcst as cst

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
from aoti_lint.model.calls import call_argument
from aoti_lint.model.module_facts import ModuleFacts

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_TENSOR_ANNOTATION = re.compile(TENSOR_ANNOTATION)
_SCOPES = (cst.FunctionDef, cst.Lambda, cst.ClassDef)


def _string(node: cst.BaseExpression | None) -> str | None:
    if isinstance(node, (cst.SimpleString, cst.ConcatenatedString)):
        value = node.evaluated_value
        return value if isinstance(value, str) else None
    return None


def _is_meta(node: cst.BaseExpression | None) -> bool:
    """``"Meta"``, ``"meta"``, or a list/tuple of dispatch keys or device types holding one. Only a plain
    literal counts, spelled as it reads (the prefilter looks for the quoted key in the file's bytes)."""
    if isinstance(node, (cst.List, cst.Tuple)):
        return any(_is_meta(element.value) for element in node.elements)
    return isinstance(node, cst.SimpleString) and node.raw_value in META_KEYS


def children(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """The nodes under ``node`` (itself excluded) in source order, not entering nested functions or classes."""
    stack = list(reversed(node.children))
    while stack:
        item = stack.pop()
        yield item
        if not isinstance(item, _SCOPES):
            stack.extend(reversed(item.children))


@dataclass
class Kernel:
    function: cst.FunctionDef | cst.Lambda
    # How it is registered, for messages: "register_fake", "impl_abstract", "a Meta impl".
    registration: str
    tensors: frozenset[str] = frozenset()
    # Names bound once in the kernel to a size / to the whole shape of a tensor parameter.
    size_names: set[str] = field(default_factory=set)
    shape_names: set[str] = field(default_factory=set)

    @property
    def name(self) -> str:
        return self.function.name.value if isinstance(self.function, cst.FunctionDef) else "<lambda>"

    def nodes(self) -> Iterator[cst.CSTNode]:
        """The kernel's body and everything under it, nested functions and classes left out."""
        body = self.function.body
        yield body
        yield from children(body)


class KernelIndex:
    """The fake/meta kernels of one module."""

    def __init__(self, facts: ModuleFacts) -> None:
        self.facts = facts
        self.kernels: dict[int, Kernel] = {}
        definitions: dict[str, list[cst.FunctionDef]] = {}
        calls: list[cst.Call] = []
        for node in _walk(facts.module):
            if isinstance(node, cst.FunctionDef):
                definitions.setdefault(node.name.value, []).append(node)
                for decorator in node.decorators:
                    registration = self._decorator_registration(decorator.decorator)
                    if registration is not None:
                        self._add(node, registration)
            elif isinstance(node, cst.Call):
                calls.append(node)
        for call in calls:
            found = self._call_registration(call)
            if found is None:
                continue
            function, registration = found
            if isinstance(function, cst.Lambda):
                self._add(function, registration)
            elif isinstance(function, cst.Name) and len(definitions.get(function.value, ())) == 1:
                (definition,) = definitions[function.value]
                # The name must be that very function where the registration reads it.
                if self._binds(function, definition):
                    self._add(definition, registration)

    def _binds(self, name: cst.Name, definition: cst.FunctionDef) -> bool:
        return self.facts.referents(name) == [definition]

    def _add(self, function: cst.FunctionDef | cst.Lambda, registration: str) -> None:
        if id(function) not in self.kernels:
            self.kernels[id(function)] = _analyse(Kernel(function, registration))

    def _decorator_registration(self, decorator: cst.BaseExpression) -> str | None:
        if isinstance(decorator, cst.Attribute) and decorator.attr.value == CUSTOM_OP_METHOD:
            # `@my_op.register_fake` on a custom_op object; `@torch.library.register_fake` needs the op.
            return None if self.facts.names(decorator) & set(FAKE_REGISTRATIONS) else CUSTOM_OP_METHOD
        if not isinstance(decorator, cst.Call):
            return None
        names = self.facts.names(decorator.func)
        for registration in FAKE_REGISTRATIONS:
            if registration in names:
                return registration.rsplit(".", 1)[-1]
        if LIBRARY_IMPL in names:
            first = call_argument(decorator, 0, "qualname")
            if _string(first) is not None:
                return "a Meta impl" if _is_meta(call_argument(decorator, 1, "types")) else None
            # The legacy form `impl(lib, name, dispatch_key)`.
            return "a Meta impl" if _is_meta(call_argument(decorator, 2, "dispatch_key")) else None
        return None

    def _call_registration(self, call: cst.Call) -> tuple[cst.BaseExpression, str] | None:
        """``register_fake("ns::op", fn)``, ``my_op.register_fake(fn)``, ``impl("ns::op", "Meta", fn)``,
        ``lib.impl("op", fn, "Meta")``: the kernel expression and how it is registered."""
        func = call.func
        names = self.facts.names(func)
        for registration in FAKE_REGISTRATIONS:
            if registration in names:
                kernel = call_argument(call, 1, "func")
                return (kernel, registration.rsplit(".", 1)[-1]) if kernel is not None else None
        if LIBRARY_IMPL in names:
            kernel = call_argument(call, 2, "func")
            if kernel is not None and _string(call_argument(call, 0, "qualname")) is not None:
                return (kernel, "a Meta impl") if _is_meta(call_argument(call, 1, "types")) else None
            return None
        if not isinstance(func, cst.Attribute):
            return None
        if func.attr.value == CUSTOM_OP_METHOD and len(call.args) == 1 and not call.args[0].keyword:
            if names & set(FAKE_REGISTRATIONS):
                return None
            return call.args[0].value, CUSTOM_OP_METHOD
        if func.attr.value == "impl" and self._library(func.value) is not None:
            kernel = call_argument(call, 1, "fn")
            key = call_argument(call, 2, "dispatch_key")
            if key is None and not any(arg.keyword and arg.keyword.value == "dispatch_key" for arg in call.args):
                library = self._library(func.value)
                key = call_argument(library, 2, "dispatch_key") if library is not None else None
            return (kernel, "a Meta impl") if kernel is not None and _is_meta(key) else None
        return None

    def _library(self, node: cst.BaseExpression) -> cst.Call | None:
        """The ``torch.library.Library(...)`` call ``node`` is, or a name bound once to."""
        if isinstance(node, cst.Name):
            value = self.facts.single_value(node)
            node = value if value is not None else node
        if isinstance(node, cst.Call) and LIBRARY_CLASS in self.facts.names(node.func):
            return node
        return None


def _walk(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    stack = [node]
    while stack:
        item = stack.pop()
        yield item
        stack.extend(reversed(item.children))


# -- inside one kernel --------------------------------------------------------------------------------------
def _parameters(function: cst.FunctionDef | cst.Lambda) -> list[cst.Param]:
    params = function.params
    return [*params.posonly_params, *params.params, *params.kwonly_params]


def _bound_names(node: cst.CSTNode) -> Iterator[str]:
    """Names an assignment target binds (``a``, ``a, *b``; attributes and subscripts bind none)."""
    if isinstance(node, cst.Name):
        yield node.value
    elif isinstance(node, (cst.Tuple, cst.List)):
        for element in node.elements:
            yield from _bound_names(element.value)
    elif isinstance(node, cst.StarredElement):
        yield from _bound_names(node.value)


def _assignments(
    function: cst.FunctionDef | cst.Lambda,
) -> tuple[dict[str, int], list[cst.Assign | cst.For | cst.CompFor]]:
    """How often each name is bound in the kernel (nested scopes aside), and its plain assignments and loops."""
    counts: dict[str, int] = {}
    assigns: list[cst.Assign | cst.For | cst.CompFor] = []
    for node in [function.body, *children(function.body)]:
        targets: list[cst.CSTNode] = []
        if isinstance(node, cst.Assign):
            targets = [target.target for target in node.targets]
            assigns.append(node)
        elif isinstance(node, (cst.AnnAssign, cst.AugAssign, cst.For, cst.CompFor, cst.NamedExpr)):
            targets = [node.target]
            if isinstance(node, (cst.For, cst.CompFor)):
                assigns.append(node)
        elif isinstance(node, cst.AsName):
            targets = [node.name]
        elif isinstance(node, (cst.Global, cst.Nonlocal)):
            targets = [item.name for item in node.names]
        for target in targets:
            for name in _bound_names(target):
                counts[name] = counts.get(name, 0) + 1
    return counts, assigns


def _analyse(kernel: Kernel) -> Kernel:
    counts, assigns = _assignments(kernel.function)
    tensors = set()
    for param in _parameters(kernel.function):
        annotation = param.annotation
        if annotation is not None:
            code = cst.Module([]).code_for_node(annotation.annotation)
            if not _TENSOR_ANNOTATION.fullmatch(code.strip()):
                continue
        if param.name.value not in counts:
            tensors.add(param.name.value)
    kernel.tensors = frozenset(tensors)
    # A name bound once to a size, in statement order (so `n = x.shape[0]; m = n * 2` makes both sizes).
    for assign in assigns:
        if isinstance(assign, (cst.For, cst.CompFor)):
            # `for s in x.shape` / `[int(s) for s in x.shape]`: each `s` is a size.
            loop_target = assign.target
            if (
                isinstance(loop_target, cst.Name)
                and counts.get(loop_target.value) == 1
                and is_shape(kernel, assign.iter)
            ):
                kernel.size_names.add(loop_target.value)
            continue
        if len(assign.targets) != 1:
            continue
        target = assign.targets[0].target
        if isinstance(target, cst.Name) and counts.get(target.value) == 1:
            if is_size(kernel, assign.value):
                kernel.size_names.add(target.value)
            elif is_shape(kernel, assign.value):
                kernel.shape_names.add(target.value)
        elif isinstance(target, (cst.Tuple, cst.List)) and is_shape(kernel, assign.value):
            for element in target.elements:
                names = list(_bound_names(element.value))
                if len(names) == 1 and counts.get(names[0]) == 1:
                    (kernel.shape_names if isinstance(element, cst.StarredElement) else kernel.size_names).add(names[0])
    return kernel


def is_tensor(kernel: Kernel, node: cst.BaseExpression) -> bool:
    """A tensor computed from a tensor parameter: ``x``, ``x[0]``, ``x.sum()``, ``(x > 0).sum()``."""
    if isinstance(node, cst.Name):
        return node.value in kernel.tensors
    if isinstance(node, cst.Subscript):
        return is_tensor(kernel, node.value)
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
        return node.func.attr.value in TENSOR_METHODS and is_tensor(kernel, node.func.value)
    if isinstance(node, cst.Comparison):
        return is_tensor(kernel, node.left)
    if isinstance(node, cst.BinaryOperation):
        return is_tensor(kernel, node.left) or is_tensor(kernel, node.right)
    return False


def is_shape(kernel: Kernel, node: cst.BaseExpression) -> bool:
    """The whole shape (or a slice of it) of a tensor parameter: ``x.shape``, ``x.size()``, ``x.shape[1:]``."""
    if isinstance(node, cst.Name):
        return node.value in kernel.shape_names
    if isinstance(node, cst.Attribute):
        return node.attr.value in SHAPE_ATTRIBUTES and is_tensor(kernel, node.value)
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and not node.args:
        return node.func.attr.value in ("size", "stride") and is_tensor(kernel, node.func.value)
    if isinstance(node, cst.Subscript) and len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Slice):
        return is_shape(kernel, node.value)
    return False


def is_size(kernel: Kernel, node: cst.BaseExpression) -> bool:
    """One size of a tensor parameter, or arithmetic on one: a SymInt under export with dynamic shapes."""
    if isinstance(node, cst.Name):
        return node.value in kernel.size_names
    if isinstance(node, cst.Subscript):
        return len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index) and is_shape(kernel, node.value)
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
        method = node.func.attr.value
        if method not in SIZE_METHODS or not is_tensor(kernel, node.func.value):
            return False
        return bool(node.args) if method in ("size", "stride") else not node.args
    if isinstance(node, cst.BinaryOperation):
        return is_size(kernel, node.left) or is_size(kernel, node.right)
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        return is_size(kernel, node.expression)
    return False


def kernel_index(context: Any) -> KernelIndex:
    """The module's kernels, computed once per file for all the rules (``context``: a PythonContext)."""
    return context.memo("fake-kernels", lambda: KernelIndex(context.facts()))
