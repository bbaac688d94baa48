"""A module libcst parsed, as the codemod reads it: its nodes in code order, each node's position and parent.

All three come from one code generation (``aoti_lint.fixes.node_positions``), made on first use; what the code
means (names, values, verdicts) is the reading's (``aoti_lint.flows.sites.planned_rewrites``).
"""

from __future__ import annotations

import functools

import libcst as cst
from libcst.metadata import MetadataWrapper

from aoti_lint.fixes.node_positions import NodePositions

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
    """The nodes, positions and parents of one module."""

    def __init__(self, wrapper: MetadataWrapper, text: str | None = None) -> None:
        """``text``: what libcst parsed; the positions raise ``NotReproduced`` when libcst does not give it back."""
        self.module = wrapper.module
        self._text = text
        self._nodes_by_kind: dict[tuple[type, ...], tuple[cst.CSTNode, ...]] = {}

    @functools.cached_property
    def positions(self) -> NodePositions:
        """Each node's range, libcst's ``PositionProvider``'s (``aoti_lint.fixes.node_positions``)."""
        return NodePositions(self.module, self._text)

    def parent(self, node: cst.CSTNode) -> cst.CSTNode | None:
        return self.positions.parent(node)

    def nodes(self, *kinds: type[_Node]) -> tuple[_Node, ...]:
        """The module's nodes of exactly these types, in the order their code comes (the order a libcst visitor
        meets them), shared by every question."""
        if kinds not in self._nodes_by_kind:
            found = tuple(node for entering, node in self.positions.events if entering and type(node) in kinds)
            self._nodes_by_kind[kinds] = found  # shared by every caller: not to be changed
        return self._nodes_by_kind[kinds]  # type: ignore[return-value]  # filtered by type above
