"""AOTI001/AOTI002's findings and the device-flow summary of a module, in one reading (``flows.sites`` and the
layers under it): every reference to the deprecated API (an attribute or a name that resolves to it, across the
project's modules too; `getattr(torch._export, "aot_load")`; a call of a name bound to it), each call's fix with its
verdict (of the file alone, or as the run's migration plan decided for its flow), and the summary the project pass
reads (compiles, loads, calls of loaded models, artifact constants, `.so` mentions and the deprecated calls'
verdicts). The fixes' edits are the codemod's (``run.fix_edits``)."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

from aoti_lint.diagnostics import Applicability, Finding, Fix, Position
from aoti_lint.flows.flow_summary import (
    FlowSummary,
    MigrationSite,
    ModelCall,
)
from aoti_lint.flows.migration_verdicts import (
    by_hand,
    deprecation,
    fix_title,
    looked_up,
    not_called,
    not_fixed,
    unsafe_reason,
)
from aoti_lint.flows.site_plan import PlannedSite
from aoti_lint.flows.sites import SiteReader
from aoti_lint.flows.values import (
    Loaded,
)
from aoti_lint.knowledge.deprecated_api import (
    AOT_COMPILE,
    AOT_LOAD,
    DeprecatedSymbol,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from aoti_lint.flows.migration_flow import FileFlow


@dataclass(frozen=True)
class ModuleFlow:
    """What the module gives AOTI001/AOTI002 and the device-flow rules."""

    # The findings of both rules, before noqa comments, their fixes' edits deferred.
    findings: tuple[Finding, ...]
    summary: FlowSummary


_SYMBOLS = (AOT_COMPILE, AOT_LOAD)


def read_flow(
    path: Path,
    display_path: str,
    text: str,
    tree: ast.Module,
    target_torch: tuple[int, int],
    noqa: Any,
    plan: FileFlow | None = None,
) -> ModuleFlow:
    """The module's ``ModuleFlow``. ``noqa``: the text's ``Suppressions``; ``plan``: the run's migration plan for the
    file, whose decisions are the fixes' verdicts."""
    return _Reader(text, tree, target_torch, str(path)).flow(path, display_path, noqa, plan)


class _Reader(SiteReader):
    """AOTI001/AOTI002's findings and the device-flow summary of one module, on what ``ModuleEvaluator`` reads."""

    def flow(self, path: Path, display_path: str, noqa: Any, plan: FileFlow | None = None) -> ModuleFlow:
        sites = self.read_sites(plan)
        summary = FlowSummary(
            path=display_path,
            directory=str(path.resolve().parent),
            compiles=tuple(self.compile_site(call) for call in self.compile_calls),
            loads=tuple(self.load_site(call) for call in self.load_calls),
            calls=self._model_calls() if self.load_calls else (),
            constants=self.artifact_constants(),
            migrations=tuple(self._migration_site(site, noqa, display_path) for site in sites),
            constant_sites=self.constant_sites(),
            so_mentions=self.so_mentions(),
            path_arguments=self.path_arguments(),
        )
        self.rewrites = tuple(self.rewrite(site) for site in self.planned)
        return ModuleFlow(tuple(self._findings(display_path)), summary)

    def _model_calls(self) -> tuple[ModelCall, ...]:
        """The calls of a loaded model."""
        found = []
        for call in self.calls:
            if type(call.func) in (ast.Name, ast.Attribute):
                loaded = self.eval(call.func)
                if isinstance(loaded, Loaded):
                    found.append(self.model_call(call, loaded.load_index))
        return tuple(found)

    # -- the summary's migration sites and the rules' findings ---------------------------------------------

    def _migration_site(self, site: PlannedSite, noqa: Any, display_path: str) -> MigrationSite:
        row, column = self._at(site.call.func)
        index = (self.compile_index if site.kind == "compile" else self.load_index)[id(site.call)]
        path = site.arguments.get("so_path") if site.kind == "load" else site.so_path
        code = "AOTI001" if site.kind == "compile" else "AOTI002"
        at = Position(row, column + 1)
        return MigrationSite(
            kind=site.kind,
            row=row,
            column=column + 1,
            index=index,
            applicability=site.verdict.applicability.value,
            reason=site.verdict.reason,
            path_name=path.id if type(path) is ast.Name else None,
            path_blocked=site.path_blocked is not None,
            rewrites_path=site.path_literal is not None,
            param=self._parameter_of(path) if site.kind == "load" else None,
            suppressed=noqa.suppresses(Finding(code, "", display_path, at, at)),
            so_name=self.so_name(path),
            needs_producer=site.needs_producer,
        )

    def _parameter_of(self, node: ast.expr | None) -> tuple[str, int, str] | None:
        """(function, position, name) when ``node`` reads a parameter of a
        module-level function."""
        if type(node) is not ast.Name:
            return None
        parameter = self.lone_parameter(node)
        if parameter is None:
            return None
        arguments = self.parent(parameter)
        function = self.parent(arguments) if arguments is not None else None
        if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef) or self.parent(function) is not self.tree:
            return None
        positional = [*function.args.posonlyargs, *function.args.args]
        position = next((i for i, p in enumerate(positional) if p is parameter), -1)
        return (function.name, position, node.id)

    def _findings(self, display_path: str) -> list[Finding]:
        """Every reference to the deprecated functions, called or not, whatever the import form: an attribute or a
        name that resolves to one, `getattr(torch._export, "aot_load")`, and a call of a name bound to either."""
        from aoti_lint.rules import DeprecatedAotCompile, DeprecatedAotLoad

        rules = {AOT_COMPILE.qualified_name: DeprecatedAotCompile, AOT_LOAD.qualified_name: DeprecatedAotLoad}
        found: list[Finding] = []
        # `name = <the function>`: the value each such name is bound to, and the function it holds.
        aliases: dict[str, tuple[ast.expr, DeprecatedSymbol]] = {}
        node: Any
        for node in self.nodes:
            kind = type(node)
            if kind is ast.Attribute or kind is ast.Name:
                if kind is ast.Name and type(node.ctx) is not ast.Load:
                    continue  # a name being bound is no use of what it held before (a compat module's stub)
                if not self.may_name(node, _SHORT_NAMES):
                    continue
                names = self.names(node)
                for symbol in _SYMBOLS:
                    if symbol.qualified_name in names:
                        found.append(self._finding(rules[symbol.qualified_name], symbol, node, display_path))
                        self._remember_alias(node, symbol, aliases)
            elif kind is ast.Call and _looks_up_the_api(node):
                symbol = AOT_COMPILE if node.args[1].value == AOT_COMPILE.short_name else AOT_LOAD
                module = symbol.qualified_name.rpartition(".")[0]
                if "builtins.getattr" in self.names(node.func) and module in self.names(node.args[0]):
                    fix = Fix(Applicability.DISPLAY_ONLY, looked_up(symbol))
                    found.append(self._finding(rules[symbol.qualified_name], symbol, node, display_path, fix))
                    self._remember_alias(node, symbol, aliases)
        if aliases:
            for node in self.calls:
                func = node.func
                if type(func) is ast.Name and func.id in aliases:
                    value, symbol = aliases[func.id]
                    if self.single_value(func) is value:
                        fix = Fix(Applicability.DISPLAY_ONLY, looked_up(symbol, func.id))
                        found.append(self._finding(rules[symbol.qualified_name], symbol, func, display_path, fix))
        return found

    def _remember_alias(
        self, value: ast.expr, symbol: DeprecatedSymbol, aliases: dict[str, tuple[ast.expr, DeprecatedSymbol]]
    ) -> None:
        """`name = <the function>`: a later call of ``name`` that reads this binding calls the function."""
        statement = self.parent(value)
        if type(statement) is ast.Assign and statement.value is value and len(statement.targets) == 1:
            target = statement.targets[0]
            if type(target) is ast.Name:
                aliases[target.id] = (value, symbol)

    def _finding(
        self, rule: Any, symbol: DeprecatedSymbol, node: Any, display_path: str, fix: Fix | None = None
    ) -> Finding:
        span = self.span(node)
        message = deprecation(symbol)
        if fix is None:
            parent = self.parent(node)
            found = self.alone.get(id(parent)) if type(parent) is ast.Call and parent.func is node else None
            fix, message = self._site_fix(symbol, found, message)
        return Finding(
            code=rule.code,
            message=message,
            path=display_path,
            start=Position(span.row, span.column),
            end=Position(span.end_row, span.end_column),
            severity=rule.severity,
            fix=fix,
            url=rule.url(),
            data=self.rewrites,  # what the codemod writes for this module's calls (``run.fix_edits``)
        )

    @staticmethod
    def _site_fix(symbol: DeprecatedSymbol, found: PlannedSite | None, message: str) -> tuple[Fix, str]:
        """The fix of a reference (and its message): not called here, or its call's verdict."""
        if found is None:
            fix = Fix(Applicability.DISPLAY_ONLY, not_called(symbol))
        else:
            verdict = found.verdict
            if verdict.applicability is Applicability.DISPLAY_ONLY:
                fix = Fix(Applicability.DISPLAY_ONLY, by_hand(verdict.reason))
                message += not_fixed(verdict.reason)
            else:
                fix = Fix(
                    verdict.applicability,
                    fix_title(found.kind, verdict),
                    deferred=True,
                    reason=unsafe_reason(verdict),
                )
        return fix, message


_SHORT_NAMES = frozenset(symbol.short_name for symbol in _SYMBOLS)


def _looks_up_the_api(call: ast.Call) -> bool:
    """Whether ``call`` is `getattr(x, "aot_compile")` (or `"aot_load"`)."""
    func, args = call.func, call.args
    return (
        type(func) is ast.Name
        and func.id == "getattr"
        and len(args) >= 2
        and type(args[1]) is ast.Constant
        and args[1].value in _SHORT_NAMES
    )
