"""The screen of AOTI301/AOTI302 for the statements of a module that can hold a kernel (``kernel_regions``):
whether a fake/meta kernel with a candidate construct may be among them, without resolving names.

``aoti_lint.model.kernels`` decides with names resolved by the semantic model, over the whole module; the text
stage parses only some statements of it, where names cannot be resolved. So the registrations and the number-making
calls are told by their spelling here, widened wherever a name is not known: the screen may keep a file the rules
then clear but never drops one they report (``tests/test_fixtures.py`` and ``tests/test_kernel_regions.py`` check
it). A kernel is any function decorated with ``@<x>.register_fake`` or with a call of a
``register_fake``/``impl_abstract``/``impl`` (by its last name, or the name it is imported under), and any function
name or lambda passed to such a call. Inside a kernel no name is resolved (which names hold a tensor parameter, a
size, a shape): that reading is the rules' own (``kernels.Kernel``).
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
)
from aoti_lint.model.kernels import Kernel, analyse, arguments, number, raises_only
from aoti_lint.model.syntax_tree import source_lines, walk

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


def _specialising_compare(kernel: Kernel, node: ast.Compare, text: str) -> bool:
    """As ``FakeKernelShapeBranch._specialises``: one size among number literals, not a plain size against 0
    and 1 only. A name assigned in the text may hold a number (a threshold constant): a superset of the names that
    rule follows to the number they are bound to."""
    operands = [node.left, *node.comparators]
    sizes = [operand for operand in operands if kernel.is_size(operand)]
    numbers = [
        number
        for number in (
            2.0 if type(operand) is ast.Name and _assigned(operand.id, text) else number(operand)
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
    def source_lines(self) -> list[str]:
        """The module's lines with their ends, for the kernels' reading."""
        return source_lines(self.text)

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
        if self._names(call.func) & (_REGISTRATIONS - {"impl"}) or any(_is_meta(value) for value in arguments(call)):
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
                kernels.extend(value for value in arguments(call) if type(value) is ast.Lambda)
        for name in self.registered_names():
            kernels.extend(definitions.get(name, ()))
        return kernels

    def registered_names(self) -> set[str]:
        """The names passed to a registering call: the functions of those names are kernels too."""
        return {
            value.id
            for call in self.calls
            if self.registers_kernel(call, decorator=False)
            for value in arguments(call)
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
        kernel = analyse(Kernel(function, ""), self.source_lines)  # type: ignore[arg-type]
        concrete = branch = False
        body = function.body  # type: ignore[attr-defined]
        for root in body if isinstance(body, list) else [body]:
            if isinstance(root, _SCOPES):
                continue
            for node in _own_nodes(root):
                kind = type(node)
                if kind is ast.Call:
                    concrete = concrete or self.concrete(kernel, node)
                elif kind is ast.IfExp or (kind is ast.If and not raises_only(node, self.source_lines)):
                    branch = branch or any(
                        type(item) is ast.Compare and _specialising_compare(kernel, item, self.text)
                        for item in _own_nodes(node.test)
                    )
                elif kind is ast.For or kind is ast.AsyncFor or kind is ast.comprehension:
                    branch = branch or self.size_range(kernel, node.iter)
                if concrete and branch:
                    return KernelCandidates(concrete, branch)
        return KernelCandidates(concrete, branch)

    def concrete(self, kernel: Kernel, call: ast.Call) -> bool:
        """As ``FakeKernelConcreteSize._defect``, any builtin or ``math`` name taken for a number-maker."""
        func = call.func
        if type(func) is ast.Attribute and not call.args and not call.keywords:
            if func.attr == "item" and kernel.is_size(func.value):
                return True
            return func.attr in DATA_METHODS and kernel.is_tensor(func.value)
        return self.makes_number(func) and any(kernel.is_size(value) for value in arguments(call))

    def makes_number(self, func: ast.AST) -> bool:
        """``int``/``float`` or a function of ``math``/``builtins``, under any name an import gives it."""
        if type(func) is ast.Name:
            return func.id in ("int", "float") or func.id in self.number_functions
        while type(func) is ast.Attribute:
            func = func.value
        return type(func) is ast.Name and func.id in self.number_modules

    def size_range(self, kernel: Kernel, iterable: ast.AST) -> bool:
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
        return any(kernel.is_size(value) for value in arguments(iterable))


@functools.lru_cache(maxsize=1)
def kernel_candidates(tree: ast.Module, text: str) -> KernelCandidates:
    """Whether some fake/meta kernel of the module could hold an AOTI301 or an AOTI302 finding."""
    return KernelScan(tree, text).judged()
