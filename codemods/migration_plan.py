"""The rewrite of each deprecated call of one module, as libcst nodes: what the fix of each call writes.

What each fix does and how safe it is (its verdict, the compile a load is migrated with, whether a path is rewritten,
the device index) is the reading's (``aoti_lint.flows.sites.planned_rewrites``): here each planned call is found in
libcst's tree by where its callee starts, and the nodes its rewrite takes are picked out of the syntax. A call whose
syntax does not hold what the plan says gets no rewrite: its verdict is lowered, saying so (``CANNOT_WRITE``).
"""

from __future__ import annotations

import libcst as cst

from aoti_lint.codemods.expressions import bind, replace_suffix
from aoti_lint.codemods.options import analyse_options
from aoti_lint.codemods.rewrites import CompileRewrite, LoadRewrite
from aoti_lint.diagnostics import Applicability
from aoti_lint.fixes.module_facts import ModuleFacts
from aoti_lint.flows.migration_verdicts import CANNOT_WRITE, Verdict
from aoti_lint.knowledge.deprecated_api import AOT_COMPILE_KEYWORDS, AOT_COMPILE_PARAMETERS, AOT_LOAD_PARAMETERS

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from aoti_lint.flows.sites import PlannedRewrite


# A planned call libcst's tree holds nowhere the reading places it: the module's fixes are unavailable.
PLACED_ELSEWHERE = "libcst places a deprecated call elsewhere than Python does"


class MigrationPlan:
    """Every deprecated call of one module, with what its fix will write and how safe it is."""

    def __init__(
        self,
        facts: ModuleFacts,
        target_torch: tuple[int, int],
        flow: Any = None,
        path: str = "",
        planned: list[PlannedRewrite] | None = None,
    ) -> None:
        """``planned``: the reading's plan of this very text, where the check made it; else it is read here."""
        self.facts = facts
        self.module = facts.module
        self.target_torch = target_torch
        # The project plan's part for this file (``aoti_lint.flows.migration_flow.FileFlow``), if any.
        self.flow = flow
        if planned is None:
            planned = _planned(self.module.code, target_torch, path, flow)
        self.compiles: dict[int, CompileRewrite] = {}
        self.loads: dict[int, LoadRewrite] = {}
        # Every call site in the reading's order: the project plan (``flow``) names sites by this order.
        self.sites: list[CompileRewrite | LoadRewrite] = []
        self._collect(planned)
        # The edits that migrate one flow (its sites, and whether its path constants are rewritten too), shared by
        # every site's fix (``migration.fix_for_site``); each site's flow group, read once from the decisions.
        self.fixed_edits: dict[tuple[frozenset[int], bool], tuple[Any, ...]] = {}
        self.site_groups: tuple[dict[int, int], dict[int, list[int]]] | None = None
        self.decisions = flow.decisions(len(self.sites)) if flow is not None else None
        self.flow_applied = self.decisions is not None
        for site, decision in zip(self.sites, self.decisions, strict=True) if self.decisions is not None else ():
            if decision.path_by_constant and site.kind == "compile":
                site.package_path = site.so_path  # the constant it names is rewritten to the package path

    def parent(self, node: cst.CSTNode) -> cst.CSTNode | None:
        return self.facts.parent(node)

    def _collect(self, planned: list[PlannedRewrite]) -> None:
        positions = self.facts.positions
        calls: dict[tuple[int, int, int, int], cst.Call] = {}
        for node in self.facts.nodes(cst.Call):
            place = positions[node.func]
            calls[(place.start.line, place.start.column, place.end.line, place.end.column)] = node
        by_place: dict[tuple[int, int, int, int], CompileRewrite | LoadRewrite] = {}
        for rewrite in planned:
            call = calls.get(rewrite.at)
            if call is None:
                from aoti_lint.fixes.node_positions import NotReproduced

                raise NotReproduced(PLACED_ELSEWHERE)
            verdict = Verdict(rewrite.verdict.applicability, rewrite.verdict.reason)
            if rewrite.kind == "compile":
                arguments = bind(call, AOT_COMPILE_PARAMETERS, AOT_COMPILE_KEYWORDS)
                site: CompileRewrite | LoadRewrite = CompileRewrite(call, call.func, arguments or {}, verdict)
                self.compiles[id(call.func)] = site
            else:
                arguments = bind(call, AOT_LOAD_PARAMETERS, ())
                site = LoadRewrite(call, call.func, arguments or {}, verdict)
                self.loads[id(call.func)] = site
            self.sites.append(site)
            by_place[rewrite.at] = site
            # Read whatever the verdict: the project plan's decision, not the verdict, chooses what `--fix` migrates.
            if arguments is None:
                _cannot_write(site)
            elif isinstance(site, CompileRewrite):
                self._read_compile(site, rewrite, calls)
            else:
                self._read_load(site, rewrite)
        for rewrite in planned:
            if rewrite.producer is not None and rewrite.at in by_place and rewrite.producer in by_place:
                load, producer = by_place[rewrite.at], by_place[rewrite.producer]
                if isinstance(load, LoadRewrite) and isinstance(producer, CompileRewrite):
                    load.producer = producer
                    producer.consumers.append(load)

    def _read_compile(
        self, site: CompileRewrite, rewrite: PlannedRewrite, calls: dict[tuple[int, int, int, int], cst.Call]
    ) -> None:
        f = site.arguments["f"].value if "f" in site.arguments else None
        if rewrite.reuses_program:
            # `ep.module()`: compile the program `ep` exported here instead of exporting again.
            if not (isinstance(f, cst.Call) and isinstance(f.func, cst.Attribute)):
                _cannot_write(site)
                return
            site.reuse_program = f.func.value
        if "options" in site.arguments and not analyse_options(site, site.arguments["options"].value):
            _cannot_write(site)
            return
        if rewrite.package_call is not None:
            call = calls.get(rewrite.package_call)
            statement = self._statement_of(site.call)
            if call is None or statement is None or self._statement_of(call) is None or len(call.args) != 2:
                _cannot_write(site)
                return
            site.package_call, site.package_path, site.statement = call, call.args[0].value, statement
        elif not rewrite.rewrites_path:
            site.package_path = None
        elif site.package_path is None:
            _cannot_write(site)

    def _read_load(self, site: LoadRewrite, rewrite: PlannedRewrite) -> None:
        site.device_index = rewrite.device_index
        if rewrite.device_index_passed:
            site.device_index_expr = _index_expression(site.arguments["device"].value)
            if site.device_index_expr is None:
                _cannot_write(site)
        if rewrite.rewrites_path:
            site.path_literal = site.arguments["so_path"].value
            if replace_suffix(site.path_literal, ".so", ".pt2") is None:
                _cannot_write(site)

    def _statement_of(self, node: cst.CSTNode) -> cst.SimpleStatementLine | None:
        current: cst.CSTNode | None = node
        while current is not None and not isinstance(current, cst.SimpleStatementLine):
            current = self.parent(current)
        if current is not None and len(current.body) != 1:
            return None
        return current


def _planned(text: str, target_torch: tuple[int, int], path: str, flow: Any) -> list[PlannedRewrite]:
    from aoti_lint.flows.sites import planned_rewrites
    from aoti_lint.model.name_index import code_index

    index = code_index(text)  # the check's own tree where it read this text (``code_index`` keeps the last one)
    if index is None or index.tree is None:
        raise SyntaxError("Python cannot parse the module the codemod rewrites")
    return planned_rewrites(text, index.tree, target_torch, path, flow)


def _cannot_write(site: CompileRewrite | LoadRewrite) -> None:
    """The site's syntax does not hold what the plan says: no edits for it, nor for a flow it is part of."""
    site.cannot_write = True
    site.verdict.lower(Applicability.DISPLAY_ONLY, CANNOT_WRITE)


def _index_expression(device: cst.BaseExpression) -> cst.BaseExpression | None:
    """The index expression a device holds: `rank` in ``f"cuda:{rank}"`` or ``torch.device("cuda", rank)``."""
    if isinstance(device, cst.FormattedString) and len(device.parts) == 2:
        part = device.parts[1]
        return part.expression if isinstance(part, cst.FormattedStringExpression) else None
    if isinstance(device, cst.Call) and len(device.args) == 2:
        return device.args[1].value
    return None
