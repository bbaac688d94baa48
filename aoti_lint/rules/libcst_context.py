"""The per-file state of the rules that read a module with libcst (AOTI001/AOTI002's references and the migration's
fix, the device-flow summary where the `ast` reading does not settle a module): the parse, its metadata, the
qualified names and facts computed once and shared."""

from __future__ import annotations

from aoti_lint.diagnostics import Finding, Fix, Position
from aoti_lint.settings.target_torch import DEFAULT_TARGET_TORCH

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any, TypeVar

    import libcst as cst
    from libcst.metadata import CodeRange, MetadataWrapper

    from aoti_lint.flows.migration_flow import FileFlow
    from aoti_lint.model.module_facts import ModuleFacts
    from aoti_lint.model.qualified_names import QualifiedNames
    from aoti_lint.read.source import SourceFile
    from aoti_lint.rules.base import Rule

    _T = TypeVar("_T")


class PythonContext:
    """Per-file state shared by the Python rules of one traversal."""

    def __init__(
        self,
        source: SourceFile,
        module: cst.Module,
        wrapper: MetadataWrapper,
        target_torch: tuple[int, int] = DEFAULT_TARGET_TORCH,
        text: str | None = None,
    ) -> None:
        self.source = source
        self.module = module
        # The text the module was parsed from, which is ``module.code`` (libcst round-trips exactly) without the
        # code generation that costs as much as a parse.
        self.text = module.code if text is None else text
        self.wrapper = wrapper
        self.target_torch = target_torch
        self.findings: list[Finding] = []
        # The project's migration plan for this file (aoti_lint.flows.migration_flow.FileFlow), if any.
        self.flow: FileFlow | None = None
        self._memo: dict[str, Any] = {}

    def memo(self, key: str, factory: Callable[[], _T]) -> _T:
        """A per-file value computed once and shared by the rules (e.g. the migration plan)."""
        if key not in self._memo:
            self._memo[key] = factory()
        value: _T = self._memo[key]
        return value

    def facts(self) -> ModuleFacts:
        """Names, parents and single assignments of this module (aoti_lint.model.module_facts.ModuleFacts)."""
        from aoti_lint.model.module_facts import ModuleFacts

        return self.memo("module-facts", lambda: ModuleFacts(self.wrapper, self.names()))

    def positions(self) -> Mapping[cst.CSTNode, CodeRange]:
        # libcst's PositionProvider's answers without its cost (aoti_lint.model.node_positions), shared with the facts
        return self.facts().positions

    def names(self) -> QualifiedNames:
        """The module's qualified names (``aoti_lint.model.qualified_names``), shared by the rules and the facts."""
        from aoti_lint.model.qualified_names import QualifiedNames

        return self.memo("qualified-names", lambda: QualifiedNames(self.wrapper, self.source.text))

    def qualified_names(self, node: cst.CSTNode) -> set[str]:
        """libcst's qualified names of the node, most of them without its scope analysis."""
        return self.names()(node)

    def may_resolve_to(self, node: cst.CSTNode, short_names: frozenset[str] | set[str]) -> bool:
        """Whether ``node`` can have a qualified name whose last part is in ``short_names`` (a syntactic test,
        ``QualifiedNames.may_name``), to make before ``qualified_names`` where libcst's scopes may be needed."""
        return self.names().may_name(node, short_names)

    def report(
        self,
        rule: Rule,
        node: cst.CSTNode,
        message: str,
        *,
        fix: Fix | None = None,
        data: object = None,
        end_node: cst.CSTNode | None = None,
    ) -> None:
        positions = self.positions()
        start = positions[node].start
        end = positions[end_node if end_node is not None else node].end
        finding = rule.make_finding(
            self.source.display_path,
            Position(start.line, start.column + 1),
            Position(end.line, end.column + 1),
            message,
            fix,
        )
        finding.data = data if data is not None else node
        self.findings.append(finding)
