"""Facts about one module that several rules and the codemod need: names, parents, single assignments.

Built once per file and shared through the rule context, each part on first use: qualified names
(``aoti_lint.model.imported_names``), libcst's scopes, and the nodes' positions, parents and visiting order
(``aoti_lint.model.node_positions``); imported only when a file is parsed.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping

import libcst as cst
from libcst.metadata import MetadataWrapper, Scope, ScopeProvider
from libcst.metadata.scope_provider import Assignment

from aoti_lint.model.imported_names import QualifiedNames
from aoti_lint.model.local_bindings import NOT_KNOWN, FunctionLocals, folds_names
from aoti_lint.model.node_positions import NodePositions

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


_WHITESPACE = frozenset(
    {cst.SimpleWhitespace, cst.ParenthesizedWhitespace, cst.TrailingWhitespace, cst.EmptyLine, cst.Comment, cst.Newline}
)


class ModuleFacts:
    """Each kind of metadata is resolved on first use: a rule that only asks for names pays for no scope."""

    def __init__(self, wrapper: MetadataWrapper, names: QualifiedNames | None = None) -> None:
        self.module = wrapper.module
        self._wrapper = wrapper
        self._names = names if names is not None else QualifiedNames(wrapper, wrapper.module.code)
        # (scope, name) -> {id(binding node): assignments}: finding a name's own assignment by scanning all
        # of that name's assignments is quadratic (20,000 `x = ...` lines took most of a minute).
        self._assignments_by_node: dict[tuple[int, str], dict[int, list]] = {}
        self._nodes_by_kind: dict[tuple[type, ...], tuple[cst.CSTNode, ...]] = {}

    def names(self, node: cst.CSTNode) -> set[str]:
        """The node's qualified names (``aoti_lint.model.imported_names.QualifiedNames``)."""
        return self._names(node)

    def may_be_function(self, name: str) -> bool:
        """Whether some def of the module has this name: if none does, no read of it is a function."""
        return self._names.may_be_function(name)

    def may_name(self, node: cst.CSTNode, short_names: frozenset[str] | set[str]) -> bool:
        """Whether the node's qualified names can end in one of ``short_names`` (``QualifiedNames.may_name``)."""
        return self._names.may_name(node, short_names)

    @functools.cached_property
    def scopes(self) -> Mapping[cst.CSTNode, Scope | None]:
        return self._wrapper.resolve(ScopeProvider)

    @property
    def positions(self) -> NodePositions:
        """Each node's range, libcst's ``PositionProvider``'s (``aoti_lint.model.node_positions``), built once for the
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

    def visits(self, kinds: frozenset[type[cst.CSTNode]]) -> list[tuple[bool, cst.CSTNode]] | None:
        """(True, node) as a libcst visitor would visit each node of these types, (False, node) as it would
        leave it: the code generation's events, without the visitor's rebuilding of every node on the way.
        None for a whitespace or comment type: five classes (``AsName``, ``Del``, ``ParamSlash``,
        ``TypeVarTuple``, ``ParamSpec``) emit a whitespace child before the child libcst visits first."""
        if kinds & _WHITESPACE:
            return None
        return [event for event in self.positions.events if type(event[1]) in kinds]

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

    def function_references(self, function: cst.FunctionDef) -> list[cst.Name] | None:
        """Every read of a function defined directly in the module and bound nowhere else, read from ``ast``
        (``local_bindings.FunctionLocals.function_references``); None where libcst's scopes must tell."""
        if self._locals is None:
            return None
        start = self.positions[function].start
        reads = self._locals.function_references(function.name.value, start.line, start.column)
        if reads is NOT_KNOWN:
            return None
        nodes = [self._name_at(read) for read in reads]  # type: ignore[attr-defined]
        if not all(node is not None and node.value == function.name.value for node in nodes):
            return None
        return nodes  # type: ignore[return-value]  # checked above

    def references(self, name: cst.Name) -> list[cst.CSTNode] | None:
        """Every read of the variable bound at ``name``; None when other assignments may reach them too."""
        if self._locals is not None:
            start = self.positions[name].start
            reads = self._locals.references(name.value, start.line, start.column)
            if reads is None:
                return None  # other bindings reach its reads too
            if reads is not NOT_KNOWN:
                nodes = [self._name_at(read) for read in reads]  # type: ignore[attr-defined]
                if all(node is not None and node.value == name.value for node in nodes):
                    return nodes  # type: ignore[return-value]  # checked above
        return self._references_from_scopes(name)

    def _references_from_scopes(self, name: cst.Name) -> list[cst.CSTNode] | None:
        scope = self.scopes.get(name)
        if scope is None:
            return None
        key = (id(scope), name.value)
        if key not in self._assignments_by_node:
            index: dict[int, list] = {}
            for assignment in scope.assignments[name.value]:
                index.setdefault(id(getattr(assignment, "node", None)), []).append(assignment)
            self._assignments_by_node[key] = index
        assignments = self._assignments_by_node[key].get(id(name), [])
        if len(assignments) != 1:
            return None
        nodes = []
        for access in assignments[0].references:
            if len(access.referents) != 1:
                return None
            nodes.append(access.node)
        return nodes

    def single_value(self, name: cst.Name) -> cst.BaseExpression | None:
        """The value of a variable read at ``name`` when exactly one plain assignment reaches it."""
        known = self._single_value_without_scopes(name)
        if known is not NOT_KNOWN:
            return known  # type: ignore[return-value]  # an expression or None
        return self._single_value_from_scopes(name)

    def _single_value_from_scopes(self, name: cst.Name) -> cst.BaseExpression | None:
        scope = self.scopes.get(name)
        if scope is None or name not in scope.accesses:
            return None
        accesses = [a for a in scope.accesses[name] if a.node is name]
        if len(accesses) != 1 or len(accesses[0].referents) != 1:
            return None
        (assignment,) = accesses[0].referents
        target = getattr(assignment, "node", None)
        parent = self.parent(target) if target is not None else None
        statement = self.parent(parent) if parent is not None else None
        if isinstance(statement, cst.Assign) and len(statement.targets) == 1:
            return statement.value
        statement = self.parent(target) if target is not None else None
        if isinstance(statement, cst.AnnAssign):
            return statement.value
        return None

    @functools.cached_property
    def _locals(self) -> FunctionLocals | None:
        from aoti_lint.model.syntax_tree import parse, source_lines

        text = self._names.text
        tree = parse(text)
        if isinstance(tree, BaseException) or folds_names(text):
            return None
        found = FunctionLocals(tree, source_lines(text))
        return None if found.opaque else found

    def _single_value_without_scopes(self, name: cst.Name) -> object:
        """``single_value``'s answer read from ``ast`` (``aoti_lint.model.local_bindings``) where the name is a local
        of the function it is read in, else ``NOT_KNOWN``."""
        if self._locals is None:
            return NOT_KNOWN
        start = self.positions[name].start
        answer = self._locals.single_assignment(name.value, start.line, start.column)
        if answer is NOT_KNOWN or answer is None:
            return answer
        target = self._name_at(answer)  # type: ignore[arg-type]  # a (line, column)
        assign_target = self.parent(target) if target is not None else None
        if isinstance(assign_target, cst.AnnAssign):
            return assign_target.value
        statement = self.parent(assign_target) if assign_target is not None else None
        if isinstance(statement, cst.Assign) and len(statement.targets) == 1:
            return statement.value
        return NOT_KNOWN

    def lone_parameter(self, name: cst.Name) -> cst.Param | None:
        """The parameter a read of ``name`` reads, when it is its function's only binding of the name (libcst's
        scope then holds that one assignment); None when it is not, or not known without libcst's scopes."""
        if self._locals is None:
            return self._lone_parameter_from_scopes(name)
        start = self.positions[name].start
        answer = self._locals.lone_parameter(name.value, start.line, start.column)
        if answer is NOT_KNOWN:
            return self._lone_parameter_from_scopes(name)
        if answer is None:
            return None
        parameter_name = self._name_at(answer)  # type: ignore[arg-type]  # a (line, column)
        parameter = self.parent(parameter_name) if parameter_name is not None else None
        return parameter if isinstance(parameter, cst.Param) else self._lone_parameter_from_scopes(name)

    def binds_only_a_module(self, name: str, module: str) -> bool:
        """Whether every binding of ``name`` in the module, in any scope, imports ``module``
        (``local_bindings.FunctionLocals.binds_only_a_module``); False where ``ast`` cannot read the text."""
        return self._locals is not None and self._locals.binds_only_a_module(name, module)

    def may_be_import(self, name: cst.Name) -> bool:
        """Whether libcst's scope of the read ``name`` may hold one import alone for it (False when its function
        binds the name only as a parameter or by plain assignments)."""
        if self._locals is None:
            return True
        start = self.positions[name].start
        return self._locals.may_be_import(name.value, start.line, start.column)

    def _lone_parameter_from_scopes(self, name: cst.Name) -> cst.Param | None:
        scope = self.scopes.get(name)
        assignments = list(scope[name.value]) if scope is not None else []
        if len(assignments) == 1 and isinstance(assignments[0], Assignment):
            node = assignments[0].node
            return node if isinstance(node, cst.Param) else None
        return None

    @functools.cached_property
    def _names_by_offset(self) -> dict[int, cst.Name]:
        offsets = self.positions.offsets
        return {offsets(node)[0]: node for node in self.nodes(cst.Name)}

    def _name_at(self, position: tuple[int, int]) -> cst.Name | None:
        """The name starting at libcst's (line, column): looked up by its offset, without building a position
        for every name of the module."""
        return self._names_by_offset.get(self.positions.offset_at(*position))

    def argument_of(self, node: cst.CSTNode) -> tuple[cst.Call, int, cst.Arg] | None:
        arg = self.parent(node)
        call = self.parent(arg) if isinstance(arg, cst.Arg) else None
        if isinstance(arg, cst.Arg) and isinstance(call, cst.Call):
            return call, list(call.args).index(arg), arg
        return None
