"""Facts about one module that several rules and the codemod need: names, parents, single assignments.

Built once per file and shared through the rule context, each part on first use: qualified names
and bindings (``aoti_lint.fixes.qualified_names``, asking ``aoti_lint.model.semantic``), and the nodes' positions,
parents and visiting order
(``aoti_lint.fixes.node_positions``); imported only when a file is parsed.
"""

from __future__ import annotations

import ast
import functools

import libcst as cst
from libcst.metadata import MetadataWrapper

from aoti_lint.fixes.node_positions import NodePositions
from aoti_lint.fixes.qualified_names import QualifiedNames
from aoti_lint.model.bindings import ARGUMENT, ASSIGNMENT, IMPORTS, Binding

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import TypeVar

    _Node = TypeVar("_Node", bound=cst.CSTNode)


def parent_map(module: cst.Module) -> dict[cst.CSTNode, cst.CSTNode]:
    """Every node's parent, as libcst's ``ParentNodeProvider`` gives it, recorded by the code generation that
    places the nodes (``NodePositions``) instead of a visitor traversal (tests/test_parent_map.py compares the
    two)."""
    positions = NodePositions(module)
    return {node: parent for node in positions if (parent := positions.parent(node)) is not None}


class ModuleFacts:
    """Each kind of metadata is resolved on first use: a rule that only asks for names pays for no scope."""

    def __init__(self, wrapper: MetadataWrapper, names: QualifiedNames | None = None) -> None:
        self.module = wrapper.module
        self._wrapper = wrapper
        self._names = names if names is not None else QualifiedNames(wrapper, wrapper.module.code)
        self._nodes_by_kind: dict[tuple[type, ...], tuple[cst.CSTNode, ...]] = {}

    def names(self, node: cst.CSTNode, *, across_modules: bool = True) -> set[str]:
        """The node's qualified names (``aoti_lint.fixes.qualified_names.QualifiedNames``); ``across_modules=False``:
        as this module alone names them."""
        return self._names(node, across_modules=across_modules)

    def may_be_function(self, name: str) -> bool:
        """Whether some def of the module has this name: if none does, no read of it is a function."""
        return self._names.may_be_function(name)

    def may_name(self, node: cst.CSTNode, short_names: frozenset[str] | set[str]) -> bool:
        """Whether the node's qualified names can end in one of ``short_names`` (``QualifiedNames.may_name``)."""
        return self._names.may_name(node, short_names)

    @property
    def positions(self) -> NodePositions:
        """Each node's range, libcst's ``PositionProvider``'s (``aoti_lint.fixes.node_positions``), built once for the
        module's names and facts."""
        return self._names.positions

    def parent(self, node: cst.CSTNode) -> cst.CSTNode | None:
        return self.positions.parent(node)

    def nodes(self, *kinds: type[_Node]) -> tuple[_Node, ...]:
        """The module's nodes of exactly these types, in the order their code comes (the order a libcst visitor
        meets them but for whitespace, see ``visits``), shared by every question, where each visitor pass costs
        as much as the parse."""
        if kinds not in self._nodes_by_kind:
            found = tuple(node for entering, node in self.positions.events if entering and type(node) in kinds)
            self._nodes_by_kind[kinds] = found  # shared by every caller: not to be changed
        return self._nodes_by_kind[kinds]  # type: ignore[return-value]  # filtered by type above

    def assigned_name(self, call: cst.Call) -> tuple[cst.Name, cst.CSTNode] | None:
        """The simple name a call's result is assigned to, and the statement, when it is ``name = call``."""
        parent = self.parent(call)
        if (
            isinstance(parent, cst.Assign)
            and len(parent.targets) == 1
            and isinstance(parent.targets[0].target, cst.Name)
        ):
            return parent.targets[0].target, parent
        if isinstance(parent, cst.AnnAssign) and isinstance(parent.target, cst.Name) and parent.value is call:
            return parent.target, parent
        return None

    # -- bindings, as the semantic model reads them (``aoti_lint.model.semantic``) --------------------------------

    def _binding(self, name: cst.Name) -> Binding | None:
        """The one binding a read (or a store, an argument, a def's name) reaches."""
        model, node = self._names.model, self._names.ast_name(name)
        return None if model is None or node is None else model.only_binding(node)

    def _cst(self, node: ast.AST) -> cst.CSTNode | None:
        """The libcst node of an ``ast`` Name, argument, def or class."""
        offset = self.positions.offset_at(*self._names.char_position(node))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            return self._definitions_by_offset.get(offset)
        return self._names_by_offset.get(offset)

    def _reads(self, binding: Binding | None) -> list[cst.Name] | None:
        model = self._names.model
        reads = None if binding is None or model is None else model.references(binding)
        if reads is None:
            return None
        nodes = [self._cst(read) for read in reads]
        if not all(isinstance(node, cst.Name) and node.value == binding.name for node in nodes):  # type: ignore[union-attr]
            return None  # a name libcst spells otherwise (NFKC) or places elsewhere
        return nodes  # type: ignore[return-value]  # checked above

    def references(self, name: cst.Name) -> list[cst.CSTNode] | None:
        """Every read of the variable bound at ``name``; None when other bindings may reach them too."""
        return self._reads(self._binding(name))  # type: ignore[return-value]

    def sibling_reads(self, name: cst.Name) -> list[cst.Name] | None:
        """Every read of the one binding the read ``name`` reaches (``name`` among them), when each of them
        reaches it alone; else None."""
        return self._reads(self._binding(name))

    def referents(self, name: cst.Name) -> list[cst.CSTNode] | None:
        """What binds each binding a read may reach (the def, the class, the stored name, the parameter's name);
        None when not known."""
        model, node = self._names.model, self._names.ast_name(name)
        found = None if model is None or node is None else model.bindings_of(node)
        if found is None:
            return None
        nodes = [self._cst(binding.node) for binding in found if not isinstance(binding.node, ast.alias)]
        return None if any(node is None for node in nodes) else nodes  # type: ignore[return-value]

    def imported_alone(self, name: cst.Name) -> bool:
        """Whether the one binding a read reaches is an import."""
        binding = self._binding(name)
        return binding is not None and binding.kind in IMPORTS

    def single_value(self, name: cst.Name) -> cst.BaseExpression | None:
        """The value of a variable read at ``name`` when exactly one plain assignment reaches it."""
        binding = self._binding(name)
        if binding is None or binding.kind != ASSIGNMENT:
            return None
        target = self._cst(binding.node)
        parent = self.parent(target) if target is not None else None
        if isinstance(parent, cst.AnnAssign):
            return parent.value
        statement = self.parent(parent) if parent is not None else None
        if isinstance(statement, cst.Assign) and len(statement.targets) == 1:
            return statement.value
        return None

    def lone_parameter(self, name: cst.Name) -> cst.Param | None:
        """The parameter a read of ``name`` reads, when it is the one binding the read reaches."""
        binding = self._binding(name)
        if binding is None or binding.kind != ARGUMENT:
            return None
        parameter_name = self._cst(binding.node)
        parameter = self.parent(parameter_name) if parameter_name is not None else None
        return parameter if isinstance(parameter, cst.Param) else None

    def binds_only_a_module(self, name: str, module: str) -> bool:
        """Whether every binding of ``name`` in the module, in any scope, imports ``module``."""
        model = self._names.model
        return model is not None and model.binds_only_a_module(name, module)

    def may_be_import(self, name: cst.Name) -> bool:
        """Whether an import may be what the read ``name`` reaches (True when not known)."""
        model, node = self._names.model, self._names.ast_name(name)
        return model is None or node is None or model.may_be_import(node)

    @functools.cached_property
    def _definitions_by_offset(self) -> dict[int, cst.CSTNode]:
        offsets = self.positions.offsets
        return {offsets(node)[0]: node for node in self.nodes(cst.FunctionDef, cst.ClassDef)}

    @functools.cached_property
    def _names_by_offset(self) -> dict[int, cst.Name]:
        offsets = self.positions.offsets
        return {offsets(node)[0]: node for node in self.nodes(cst.Name)}

    def argument_of(self, node: cst.CSTNode) -> tuple[cst.Call, int, cst.Arg] | None:
        arg = self.parent(node)
        call = self.parent(arg) if isinstance(arg, cst.Arg) else None
        if isinstance(arg, cst.Arg) and isinstance(call, cst.Call):
            return call, list(call.args).index(arg), arg
        return None
