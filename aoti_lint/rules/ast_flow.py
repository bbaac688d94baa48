"""AOTI001/AOTI002's findings and the device-flow summary of a module, read from ``ast`` without libcst, for the
modules whose deprecated calls this reading settles exactly as libcst's analysis does (``analysis.module_flow``
for the summary, ``codemods.migration_plan`` for the fixes' verdicts); None for any other, which libcst reads.

A module is settled here when
- its names are read by the semantic model (``aoti_lint.model.semantic``), as for libcst's reading;
- its AOTI calls are calls of the deprecated API alone (``aot_compile``/``aot_load``), or of
  ``torch._inductor.aot_compile`` alone (torch's own export helpers call it), or loads of the new API alone
  (``aoti_load_package``/``load_package``, as a migrated server makes them), by a name that resolves to one
  function only (or, for a load, to loaders only);
- what those calls are given are literals, parameters without a default, names bound once to such values or to
  a compile's result, tuples, lists and dicts of them, and `options` are a dict of literal keys other than the
  output path; a load's device is a string (or a name, an attribute);
- a load's path is a compile's result or a name, and a loaded model is called with no tensor the evaluator gives a
  device or shape (those are libcst's to read);
- a string naming a `.so` file is a comparison's operand or a statement of its own (a docstring), which no call or
  name receives, and none does in a module with deprecated calls; no module-level name is bound to an artifact path.

Deploy helpers mid-migration are such modules (``so = aot_compile(model, (x,))`` then ``return aot_load(so,
"cpu")``), and so is pre-commit's common case of one such file. Anything else the reading meets
(``NotSettled``) hands the whole module to libcst. ``tests/test_ast_flow.py`` compares the findings and the
summary with libcst's on every fixture and rule example and on generated modules.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

from aoti_lint.diagnostics import Applicability, Finding, Fix, Position
from aoti_lint.flows.ast_migration_plan import PlannedSite
from aoti_lint.flows.ast_module import NotSettled
from aoti_lint.flows.ast_sites import AstSites
from aoti_lint.flows.flow_summary import (
    FlowSummary,
    MigrationSite,
    ModelCall,
)
from aoti_lint.flows.migration_verdicts import (
    Verdict,
    by_hand,
    deprecation,
    fix_title,
    not_called,
    not_fixed,
    unsafe_reason,
)
from aoti_lint.flows.module_reader import last_parts
from aoti_lint.flows.values import (
    Loaded,
)
from aoti_lint.knowledge.deprecated_api import (
    AOT_COMPILE,
    AOT_LOAD,
    DeprecatedSymbol,
)
from aoti_lint.knowledge.device_flow import (
    AOT_COMPILE_INDUCTOR,
    COMPILE_AND_PACKAGE,
    OTHER_DEFAULT_DEVICE_SETTERS,
    PACKAGE_LOADERS,
    SET_DEFAULT_DEVICE,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


@dataclass(frozen=True)
class AstFlow:
    """What libcst's reading of the module gives AOTI001/AOTI002 and the device-flow rules."""

    # The findings of both rules, before noqa comments, their fixes' edits deferred.
    findings: tuple[Finding, ...]
    summary: FlowSummary


_SYMBOLS = (AOT_COMPILE, AOT_LOAD)
# Every call the module reader sorts into compiles, loads and default-device setters (``module_reader``).
_SITE_SHORT_NAMES = last_parts(
    COMPILE_AND_PACKAGE,
    AOT_COMPILE_INDUCTOR,
    {AOT_COMPILE.qualified_name, AOT_LOAD.qualified_name, SET_DEFAULT_DEVICE},
    PACKAGE_LOADERS,
    OTHER_DEFAULT_DEVICE_SETTERS,
)


def read_flow(
    path: Path, display_path: str, text: str, tree: ast.Module, target_torch: tuple[int, int], noqa: Any
) -> AstFlow | None:
    """The module's ``AstFlow``, or None where libcst must read it. ``noqa``: the text's ``Suppressions``."""
    try:
        return _Reader(text, tree, target_torch, str(path)).flow(path, display_path, noqa)
    except (NotSettled, RecursionError):
        return None


class _Reader(AstSites):
    """AOTI001/AOTI002's findings and the device-flow summary of one module, on what ``AstValues`` reads."""

    def flow(self, path: Path, display_path: str, noqa: Any) -> AstFlow:
        if ".so" in self.path:
            raise NotSettled  # a path built from `__file__` may name a `.so`: the plan's business
        self.sites_by_call: dict[int, PlannedSite] = {}
        compiles: list[PlannedSite] = []
        loads: list[PlannedSite] = []
        # Every call the module reader sorts into compiles, loads and default-device setters (``ModuleReader``).
        compile_calls: list[ast.Call] = []
        load_calls: list[ast.Call] = []
        for call in self.calls:
            if type(call.func) is ast.Call or not self.may_name(call.func, _SITE_SHORT_NAMES):
                continue
            names = self.names(call.func)
            if names & (COMPILE_AND_PACKAGE | AOT_COMPILE_INDUCTOR | {AOT_COMPILE.qualified_name}):
                compile_calls.append(call)
            elif names & ({AOT_LOAD.qualified_name} | PACKAGE_LOADERS.keys()):
                load_calls.append(call)
            elif names & ({SET_DEFAULT_DEVICE} | OTHER_DEFAULT_DEVICE_SETTERS):
                self.setter_calls.append(call)
            for symbol, found in ((AOT_COMPILE, compiles), (AOT_LOAD, loads)):
                if symbol.qualified_name in names:
                    if names != {symbol.qualified_name}:
                        raise NotSettled  # bound to something else too: the message quotes libcst's code
                    site = PlannedSite(
                        "compile" if symbol is AOT_COMPILE else "load", call, symbol, {}, Verdict(Applicability.SAFE)
                    )
                    self.sites_by_call[id(call)] = site
                    found.append(site)
                    break
        deprecated = bool(compiles or loads)
        if deprecated and self.setter_calls:
            raise NotSettled
        self.compile_index = {id(call): index for index, call in enumerate(compile_calls)}
        self.load_index = {id(call): index for index, call in enumerate(load_calls)}
        sites = [self.sites_by_call[id(call)] for call in self.calls if id(call) in self.sites_by_call]
        self.plan_sites(sites, compiles, loads)
        # What each finding's fix does in this file alone; the summary carries the project plan's verdicts.
        self.alone = self.plan_alone(sites)
        summary = FlowSummary(
            path=display_path,
            directory=str(path.resolve().parent),
            compiles=tuple(self.compile_site(call) for call in compile_calls),
            loads=tuple(self.load_site(call) for call in load_calls),
            calls=self._model_calls() if load_calls else (),
            constants=self.artifact_constants(),
            migrations=tuple(self._migration_site(site, noqa, display_path) for site in sites),
            constant_sites=self.constant_sites(),
            so_mentions=self.so_mentions(),
            path_arguments=self.path_arguments(),
        )
        return AstFlow(tuple(self._findings(display_path)), summary)

    def _model_calls(self) -> tuple[ModelCall, ...]:
        """The calls of a loaded model (``ModuleFlow.summary``)."""
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
        """``ModuleFlow._parameter_of``: (function, position, name) when ``node`` reads a parameter of a
        module-level function."""
        if type(node) is not ast.Name:
            return None
        parameter = self.lone_parameter(node)
        if parameter is None:
            return None
        arguments = self.parent(parameter)
        function = self.parent(arguments) if arguments is not None else None
        if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
            raise NotSettled  # a lambda's: libcst looks for the function around it
        if self.parent(function) is not self.tree:
            return None
        positional = [*function.args.posonlyargs, *function.args.args]
        position = next((i for i, p in enumerate(positional) if p is parameter), -1)
        return (function.name, position, node.id)

    def _findings(self, display_path: str) -> list[Finding]:
        """Every reference to the deprecated functions, called or not, as ``DeprecatedReference`` reports it."""
        from aoti_lint.rules import DeprecatedAotCompile, DeprecatedAotLoad

        rules = {AOT_COMPILE.qualified_name: DeprecatedAotCompile, AOT_LOAD.qualified_name: DeprecatedAotLoad}
        aliases = self.model.import_aliases
        # The `as` names of imports of a name spelled as the API's: another `as` name is named after what its
        # import names (`from torch._inductor import config as inductor_config`), never the API.
        short_names = {symbol.short_name for symbol in _SYMBOLS}
        api_aliases = {
            alias.asname
            for statement in self.nodes
            if type(statement) is ast.Import or type(statement) is ast.ImportFrom
            for alias in statement.names
            if alias.asname is not None and alias.name.rpartition(".")[2] in short_names
        }
        if self.model.follow is not None and (self.model.from_imported or self.model.module.star_imports):
            # A name imported from another module of the project may be the API whatever it is spelled:
            # ``DeprecatedReference``'s reading follows each one.
            raise NotSettled
        found: list[Finding] = []
        node: Any
        # `name = <the function>` then `name(...)`: ``DeprecatedReference.visit_Call`` follows the name with libcst
        called_aliases = {
            node.targets[0].id
            for node in self.nodes
            if type(node) is ast.Assign
            and len(node.targets) == 1
            and type(node.targets[0]) is ast.Name
            and type(node.value) in (ast.Attribute, ast.Name, ast.Call)
            and (
                _looks_up_the_api(node.value)
                if type(node.value) is ast.Call
                else self.may_name(node.value, short_names) and bool(self.names(node.value) & _QUALIFIED)
            )
        }
        if called_aliases and any(
            type(node) is ast.Call and type(node.func) is ast.Name and node.func.id in called_aliases
            for node in self.nodes
        ):
            raise NotSettled
        for node in self.nodes:
            kind = type(node)
            if kind is ast.Attribute:
                symbols = [symbol for symbol in _SYMBOLS if node.attr == symbol.short_name]
            elif kind is ast.Name:
                # A name libcst may resolve to the API: spelled as one of it, or the `as` name of an import of one.
                symbols = [symbol for symbol in _SYMBOLS if node.id == symbol.short_name or node.id in api_aliases]
            else:
                if kind in _NAME_HOLDERS and _binds_a_name(node, aliases):
                    raise NotSettled  # `global aot_load`, `except E as aot_load`: libcst may name it the API
                if kind is ast.Call and _looks_up_the_api(node):
                    raise NotSettled  # `getattr(torch._export, "aot_load")`: ``DeprecatedReference.visit_Call``
                continue
            if symbols:
                names = self.names(node)
                found += [
                    self._finding(rules[s.qualified_name], s, node, display_path)
                    for s in symbols
                    if s.qualified_name in names
                ]
        return found

    def _finding(self, rule: Any, symbol: DeprecatedSymbol, node: Any, display_path: str) -> Finding:
        span = self.span(node)
        message = deprecation(symbol)
        parent = self.parent(node)
        found = self.alone.get(id(parent)) if type(parent) is ast.Call and parent.func is node else None
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
        return Finding(
            code=rule.code,
            message=message,
            path=display_path,
            start=Position(span.row, span.column),
            end=Position(span.end_row, span.end_column),
            severity=rule.severity,
            fix=fix,
            url=rule.url(),
            data=node,
        )


# Nodes that hold a name libcst visits as a name node and ``ast`` as a string (``_binds_a_name``).
_NAME_HOLDERS = frozenset(
    {ast.Global, ast.Nonlocal, ast.ExceptHandler, ast.MatchAs, ast.MatchStar, ast.MatchMapping}
    | {getattr(ast, name) for name in ("TypeVar", "ParamSpec", "TypeVarTuple") if hasattr(ast, name)}
)
_SHORT_NAMES = frozenset(symbol.short_name for symbol in _SYMBOLS)
_QUALIFIED = frozenset(symbol.qualified_name for symbol in _SYMBOLS)


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


def _binds_a_name(node: Any, aliases: frozenset[str] | set[str]) -> bool:
    """Whether ``node`` spells a deprecated function's name (or an import's `as` name) where libcst holds a name
    node that ``ast`` does not: `global`/`nonlocal`, `except ... as`, a match capture."""
    names: list[str] = []
    kind = type(node)
    if kind is ast.Global or kind is ast.Nonlocal:
        names = list(node.names)
    elif kind in (ast.ExceptHandler, ast.MatchAs, ast.MatchStar):
        names = [node.name] if node.name else []
    elif kind is ast.MatchMapping:
        names = [node.rest] if node.rest else []
    else:  # a type parameter (Python 3.12)
        names = [node.name]
    return any(name in _SHORT_NAMES or name in aliases for name in names)
