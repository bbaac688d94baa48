"""The ``ast`` stage of AOTI301/AOTI302: whether a module holds a fake/meta kernel with a candidate construct.

``aoti_lint.model.kernels`` decides on libcst with resolved names; this mirrors its conditions on the cached
``ast`` tree, widened wherever it cannot resolve a name, so that it may keep a file the rules then clear but
never drops one they report (``tests/test_fixtures.py`` checks it). A kernel is any function decorated with
``@<x>.register_fake`` or with a call of a ``register_fake``/``impl_abstract``/``impl`` (by its last name, or
the name it is imported under), and any function name or lambda passed to such a call. Inside a kernel the
rules' model needs no name resolution (which names hold a tensor parameter, a size, a shape), so it is
mirrored as it is (``_Kernel``): a ``range(group.size())`` in a kernel is no candidate, as for the rules.
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass

from aoti_lint.knowledge.custom_ops import (
    CUSTOM_OP_METHOD,
    DATA_METHODS,
    META_KEYS,
    SHAPE_ATTRIBUTES,
    SIZE_METHODS,
    TENSOR_ANNOTATION,
    TENSOR_METHODS,
)
from aoti_lint.model.syntax_tree import walk

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# The last names of the registering APIs (torch.library.register_fake/impl_abstract/impl, Library.impl).
_REGISTRATIONS = frozenset({"register_fake", "impl_abstract", "impl"})
# Modules whose functions turn a size into a Python number (builtins.int/float, math.*).
_NUMBER_MODULES = frozenset({"math", "builtins"})
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


@dataclass(frozen=True)
class KernelCandidates:
    """Whether some kernel of the module could hold an AOTI301 / an AOTI302 finding."""

    concrete: bool
    branch: bool


def _own_nodes(root: ast.AST) -> Iterable[Any]:
    """``root`` and everything under it, nested functions, lambdas and classes left out (as the rules do), the
    expression contexts too (no reading here asks for them)."""
    return walk(root, _SCOPES)


# Matched against ``ast.unparse`` of the annotation, which normalises spacing and drops parentheses and
# comments: it can only match more often than against libcst's own text of it (``fake_kernels``).
_TENSOR_ANNOTATION = re.compile(TENSOR_ANNOTATION)


def _single(index: ast.AST) -> ast.AST:
    """``x[i,]`` is one subscript element for libcst and a one-element tuple for ``ast``."""
    if type(index) is ast.Tuple and len(index.elts) == 1:
        return index.elts[0]
    return index


def _bound_names(target: ast.AST) -> list[str]:
    """As ``fake_kernels._bound_names``: ``a``, ``a, *b``; attributes and subscripts bind none."""
    if type(target) is ast.Name:
        return [target.id]
    if type(target) is ast.Tuple or type(target) is ast.List:
        return [name for element in target.elts for name in _bound_names(element)]
    if type(target) is ast.Starred:
        return _bound_names(target.value)
    return []


class _Kernel:
    """``fake_kernels.Kernel`` and its ``is_tensor``/``is_shape``/``is_size`` on ``ast``: which names hold a
    tensor parameter, a size, a whole shape. Each may only say yes more often than the libcst original: binds
    it does not count make more names single-assigned, and the sizes are taken to a fixed point rather than in
    one pass in statement order."""

    def __init__(self, function: ast.AST) -> None:
        counts: dict[str, int] = {}
        assigns: list[ast.Assign] = []
        body = function.body  # type: ignore[attr-defined]
        for root in body if isinstance(body, list) else [body]:
            if isinstance(root, _SCOPES):
                continue
            for node in _own_nodes(root):
                for name in self._binds(node, assigns):
                    counts[name] = counts.get(name, 0) + 1
        arguments = function.args  # type: ignore[attr-defined]
        self.tensors = {
            arg.arg
            for arg in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]
            if arg.arg not in counts
            and (arg.annotation is None or _TENSOR_ANNOTATION.fullmatch(ast.unparse(arg.annotation).strip()))
        }
        self.size_names: set[str] = set()
        self.shape_names: set[str] = set()
        grown = True
        while grown:
            before = len(self.size_names) + len(self.shape_names)
            for assign in assigns:
                self._learn(assign, counts)
            grown = len(self.size_names) + len(self.shape_names) > before

    @staticmethod
    def _binds(node: ast.AST, assigns: list[ast.Assign]) -> list[str]:
        """The names ``node`` binds as ``fake_kernels._assignments`` counts them (never more)."""
        kind = type(node)
        if kind is ast.Assign:
            assigns.append(node)  # type: ignore[arg-type]
            return [name for target in node.targets for name in _bound_names(target)]  # type: ignore[attr-defined]
        if kind in (ast.AnnAssign, ast.AugAssign, ast.For, ast.AsyncFor, ast.comprehension, ast.NamedExpr):
            if kind is ast.For or kind is ast.AsyncFor or kind is ast.comprehension:
                assigns.append(node)  # type: ignore[arg-type]  # a loop binds its target as `_learn` reads it
            return _bound_names(node.target)  # type: ignore[attr-defined]
        if kind is ast.alias:
            return [node.asname] if node.asname else []  # type: ignore[attr-defined]
        if kind is ast.withitem:
            return _bound_names(node.optional_vars) if node.optional_vars else []  # type: ignore[attr-defined]
        if kind is ast.ExceptHandler:
            return [node.name] if node.name else []  # type: ignore[attr-defined]
        if kind is ast.Global or kind is ast.Nonlocal:
            return list(node.names)  # type: ignore[attr-defined]
        return []

    def _learn(self, assign: ast.Assign, counts: dict[str, int]) -> None:
        if type(assign) is not ast.Assign:  # a loop: as `fake_kernels._analyse`, each element of a shape is a size
            target = assign.target  # type: ignore[attr-defined]
            if type(target) is ast.Name and counts.get(target.id) == 1 and self.is_shape(assign.iter):  # type: ignore[attr-defined]
                self.size_names.add(target.id)
            return
        if len(assign.targets) != 1:
            return
        target, value = assign.targets[0], assign.value
        if type(target) is ast.Name and counts.get(target.id) == 1:
            if self.is_size(value):
                self.size_names.add(target.id)
            elif self.is_shape(value):
                self.shape_names.add(target.id)
        elif (type(target) is ast.Tuple or type(target) is ast.List) and self.is_shape(value):
            for element in target.elts:
                names = _bound_names(element)
                if len(names) == 1 and counts.get(names[0]) == 1:
                    (self.shape_names if type(element) is ast.Starred else self.size_names).add(names[0])

    def is_tensor(self, node: ast.AST) -> bool:
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
        kind = type(node)
        if kind is ast.Name:
            return node.id in self.size_names  # type: ignore[attr-defined]
        if kind is ast.Subscript:
            # A tuple index too: `x.shape[(0, 1)]` is one libcst element (an Index); `x.shape[0, 1]`, two.
            index = _single(node.slice)  # type: ignore[attr-defined]
            return type(index) is not ast.Slice and self.is_shape(node.value)  # type: ignore[attr-defined]
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


def constant_arithmetic(operator: str, left: float, right: float) -> float | None:
    """``left operator right`` for a threshold written as arithmetic on literals (``1 << 20``), the same for both
    readings of a kernel; None where Python would fail, or the result would not be a size's scale."""
    if operator in ("<<", "**") and not (left == int(left) and right == int(right) and 0 <= right <= 64):
        return None
    if operator == "<<":
        return float(int(left) << int(right))
    if operator == "**":
        return float(left**right) if abs(left) <= 1 << 16 else None
    if operator == "//":
        return None if right == 0 else float(left // right)
    return float(left + right if operator == "+" else left - right if operator == "-" else left * right)


_AST_ARITHMETIC = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Pow: "**", ast.LShift: "<<", ast.FloorDiv: "//"}


def _number(node: ast.AST) -> float | None:
    """As ``fake_kernel_shape_branch._number``: an int or float literal (not a bool), its negation, or arithmetic
    on them."""
    if type(node) is ast.Constant and isinstance(node.value, (int, float)) and type(node.value) is not bool:
        return float(node.value)
    if type(node) is ast.UnaryOp and type(node.op) is ast.USub:
        inner = _number(node.operand)
        return None if inner is None else -inner
    if type(node) is ast.BinOp:
        left, right = _number(node.left), _number(node.right)
        operator = _AST_ARITHMETIC.get(type(node.op))
        return None if left is None or right is None or operator is None else constant_arithmetic(operator, left, right)
    return None


def _specialising_compare(kernel: _Kernel, node: ast.Compare, text: str) -> bool:
    """As ``FakeKernelShapeBranch._specialises``: one size among number literals, not a plain size against 0
    and 1 only. A name assigned in the text may hold a number (a threshold constant): a superset of the names that
    rule follows to the number they are bound to."""
    operands = [node.left, *node.comparators]
    sizes = [operand for operand in operands if kernel.is_size(operand)]
    numbers = [
        number
        for number in (
            2.0 if type(operand) is ast.Name and _assigned(operand.id, text) else _number(operand)
            for operand in operands
            if operand not in sizes
        )
        if number is not None
    ]
    if len(sizes) != 1 or len(numbers) != len(operands) - 1:
        return False
    plain = type(sizes[0]) not in (ast.BinOp, ast.UnaryOp)
    return not (plain and all(number in (0, 1) for number in numbers))


def _assigned(name: str, text: str) -> bool:
    """Whether the text holds `name = ...` at the start of a line (its value then the reading's to tell)."""
    return re.search(rf"^[ \t]*{re.escape(name)}[ \t]*(?::[^=\n]*)?=(?!=)", text, re.MULTILINE) is not None


def _is_meta(node: ast.AST) -> bool:
    """A superset of ``fake_kernels._is_meta``: a "Meta"/"meta" literal, or a list/tuple holding one."""
    if type(node) is ast.List or type(node) is ast.Tuple:
        return any(_is_meta(element) for element in node.elts)
    if type(node) is not ast.Constant:
        return False
    value = node.value
    return (value.decode("latin-1") if type(value) is bytes else value) in META_KEYS


def _arguments(call: ast.Call) -> list[ast.expr]:
    """The values of the arguments libcst's rules look at: positional and keyword, unpacking aside."""
    values = [arg for arg in call.args if type(arg) is not ast.Starred]
    return values + [keyword.value for keyword in call.keywords if keyword.arg is not None]


class KernelScan:
    def __init__(self, tree: ast.Module, text: str) -> None:
        self.text = text
        # Names imported under another name: `from torch.library import register_fake as rf`.
        # A name may be imported under the same alias twice (in branches): every original counts.
        self.aliases: dict[str, set[str]] = {}
        # Names of modules whose functions make numbers (`import math as m`), and names imported from them.
        self.number_modules: set[str] = set()
        self.number_functions: set[str] = set()
        # One walk: the functions and calls are judged once every import is known (``kernels``).
        self.functions: list[ast.FunctionDef | ast.AsyncFunctionDef] = []
        self.calls: list[ast.Call] = []
        for node in walk(tree):
            kind = type(node)
            if kind is ast.FunctionDef or kind is ast.AsyncFunctionDef:
                self.functions.append(node)  # type: ignore[arg-type]
            elif kind is ast.Call:
                self.calls.append(node)  # type: ignore[arg-type]
            elif type(node) is ast.Import:
                for alias in node.names:
                    if alias.name in _NUMBER_MODULES:
                        self.number_modules.add(alias.asname or alias.name)
            elif type(node) is ast.ImportFrom:
                for alias in node.names:
                    if alias.asname:
                        self.aliases.setdefault(alias.asname, set()).add(alias.name)
                    if node.module in _NUMBER_MODULES and not node.level:
                        self.number_functions.add(alias.asname or alias.name)

    @functools.cached_property
    def lines(self) -> list[str]:
        """The module's lines, split only for an `if` that raises (``raises_only``)."""
        return lines_of(self.text)

    def registers(self, callee: ast.AST) -> bool:
        return bool(self._names(callee) & _REGISTRATIONS)

    def _names(self, callee: ast.AST) -> set[str]:
        """The names a callee may stand for: its last attribute, or a name and what it may be imported as."""
        if type(callee) is ast.Attribute:
            return {callee.attr}
        if type(callee) is ast.Name:
            return {callee.id} | self.aliases.get(callee.id, set())
        return set()

    def registers_kernel(self, call: ast.Call, decorator: bool) -> bool:
        """Whether the call may register its function as a kernel. An ``impl`` registers a Meta kernel only
        with a Meta key among its own arguments, but for ``lib.impl(name, fn)``, which takes the key its
        Library was made with (not known here); as a decorator, only ``torch.library.impl`` counts."""
        if not self.registers(call.func):
            return False
        if self._names(call.func) & (_REGISTRATIONS - {"impl"}) or any(_is_meta(value) for value in _arguments(call)):
            return True
        if decorator or type(call.func) is not ast.Attribute:
            return False
        starred = any(type(arg) is ast.Starred for arg in call.args) or any(k.arg is None for k in call.keywords)
        explicit_key = len(call.args) >= 3 or any(keyword.arg == "dispatch_key" for keyword in call.keywords)
        return starred or not explicit_key

    def kernels(self) -> list[ast.AST]:
        definitions: dict[str, list[ast.AST]] = {}
        kernels: list[ast.AST] = []
        for function in self.functions:
            definitions.setdefault(function.name, []).append(function)
            for decorator in function.decorator_list:
                if (type(decorator) is ast.Attribute and decorator.attr == CUSTOM_OP_METHOD) or (
                    type(decorator) is ast.Call and self.registers_kernel(decorator, decorator=True)
                ):
                    kernels.append(function)
                    break
        for call in self.calls:
            if self.registers_kernel(call, decorator=False):
                kernels.extend(value for value in _arguments(call) if type(value) is ast.Lambda)
        for name in self.registered_names():
            kernels.extend(definitions.get(name, ()))
        return kernels

    def registered_names(self) -> set[str]:
        """The names passed to a registering call: the functions of those names are kernels too."""
        return {
            value.id
            for call in self.calls
            if self.registers_kernel(call, decorator=False)
            for value in _arguments(call)
            if type(value) is ast.Name
        }

    def registering_aliases(self) -> set[str]:
        """The names a registering name is imported under (``from torch.library import impl as i``)."""
        return {alias for alias, names in self.aliases.items() if names & _REGISTRATIONS}

    def judged(self) -> KernelCandidates:
        """Whether some kernel of the scanned tree could hold an AOTI301 or an AOTI302 finding."""
        concrete = branch = False
        for kernel in self.kernels():
            found = self.candidates(kernel)
            concrete, branch = concrete or found.concrete, branch or found.branch
            if concrete and branch:
                break
        return KernelCandidates(concrete, branch)

    def candidates(self, function: ast.AST) -> KernelCandidates:
        kernel = _Kernel(function)
        concrete = branch = False
        body = function.body  # type: ignore[attr-defined]
        for root in body if isinstance(body, list) else [body]:
            if isinstance(root, _SCOPES):
                continue
            for node in _own_nodes(root):
                kind = type(node)
                if kind is ast.Call:
                    concrete = concrete or self.concrete(kernel, node)
                elif kind is ast.IfExp or (kind is ast.If and not self.raises_only(node)):
                    branch = branch or any(
                        type(item) is ast.Compare and _specialising_compare(kernel, item, self.text)
                        for item in _own_nodes(node.test)
                    )
                elif kind is ast.For or kind is ast.AsyncFor or kind is ast.comprehension:
                    branch = branch or self.size_range(kernel, node.iter)
                if concrete and branch:
                    return KernelCandidates(concrete, branch)
        return KernelCandidates(concrete, branch)

    def concrete(self, kernel: _Kernel, call: ast.Call) -> bool:
        """As ``FakeKernelConcreteSize._defect``, any builtin or ``math`` name taken for a number-maker."""
        func = call.func
        if type(func) is ast.Attribute and not call.args and not call.keywords:
            if func.attr == "item" and kernel.is_size(func.value):
                return True
            return func.attr in DATA_METHODS and kernel.is_tensor(func.value)
        return self.makes_number(func) and any(kernel.is_size(value) for value in _arguments(call))

    def makes_number(self, func: ast.AST) -> bool:
        """``int``/``float`` or a function of ``math``/``builtins``, under any name an import gives it."""
        if type(func) is ast.Name:
            return func.id in ("int", "float") or func.id in self.number_functions
        while type(func) is ast.Attribute:
            func = func.value
        return type(func) is ast.Name and func.id in self.number_modules

    def size_range(self, kernel: _Kernel, iterable: ast.AST) -> bool:
        """A call that may be ``builtins.range`` (``range``, a name imported as it, ``x.range``) of something
        that may be a size."""
        if type(iterable) is not ast.Call:
            return False
        func = iterable.func
        if type(func) is ast.Name:
            if "range" not in self._names(func):
                return False
        elif not (type(func) is ast.Attribute and func.attr == "range"):
            return False
        return any(kernel.is_size(value) for value in _arguments(iterable))

    def raises_only(self, node: ast.If) -> bool:
        """The rule skips an ``if`` whose indented block only raises; a one-line ``if c: raise E`` is not
        one for libcst (a simple statement suite), so the block must start its own line."""
        if not node.body or not all(type(statement) is ast.Raise for statement in node.body):
            return False
        first = node.body[0]
        line = self.lines[first.lineno - 1] if first.lineno <= len(self.lines) else ""
        return not line.encode()[: first.col_offset].strip()


@functools.lru_cache(maxsize=1)
def kernel_candidates(tree: ast.Module, text: str) -> KernelCandidates:
    """Whether some fake/meta kernel of the module could hold an AOTI301 or an AOTI302 finding."""
    return KernelScan(tree, text).judged()


def lines_of(text: str) -> list[str]:
    """The lines as ast numbers them (not str.splitlines, which also splits at form feeds and other separators)."""
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
