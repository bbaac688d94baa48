"""What one module tells about AOTI artifacts, as a :class:`~aoti_lint.flows.flow_summary.FlowSummary`:
compile sites, load sites and calls of loaded models, the `.so` paths it passes or binds, and the deprecated
calls with the codemod's verdicts. The evaluation below it (``evaluator``) knows values only when the code
makes them certain; anything else is unknown and never leads to a finding.
"""

from __future__ import annotations

import posixpath
from pathlib import Path

from aoti_lint.flows.flow_summary import (
    ConstantSite,
    FlowSummary,
    MigrationSite,
    PathArgument,
)
from aoti_lint.flows.sites import SiteReader
from aoti_lint.flows.values import (
    Loaded,
    path_of,
)
from aoti_lint.knowledge.device_flow import AOT_COMPILE_OLD, AOT_LOAD_OLD, ARTIFACT_SUFFIXES

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class ModuleFlow(SiteReader):
    """Summarises one module for the device-flow rules and the migration's project plan."""

    def summary(self) -> FlowSummary:
        compiles = tuple(self.compile_site(call) for call in self.compile_calls)
        loads = tuple(self.load_site(call) for call in self.load_calls)
        calls = []
        if loads:
            for call in self.calls:
                if isinstance(call.func, (self.cst.Name, self.cst.Attribute)):
                    loaded = self.eval(call.func)
                    if isinstance(loaded, Loaded):
                        calls.append(self.model_call(call, loaded.load_index))
        source_path = Path(self.context.source.path)
        return FlowSummary(
            path=self.context.source.display_path,
            directory=str(source_path.resolve().parent),
            compiles=compiles,
            loads=loads,
            calls=tuple(calls),
            constants=self.artifact_constants(),
            migrations=self.migration_sites(),
            constant_sites=self.constant_sites(),
            so_mentions=self.so_mentions(),
            path_arguments=self.path_arguments(),
        )

    def path_arguments(self) -> tuple[PathArgument, ...]:
        """`.so` paths passed to functions other than the AOTI ones: a helper of the run may load them."""
        if ".so" not in self.context.source.text:
            return ()
        from aoti_lint.codemods.expressions import replace_suffix

        found = []
        for call in self.calls:
            if id(call) in self.compile_index or id(call) in self.load_index:
                continue
            position = 0
            for arg in call.args:
                if arg.star:
                    break
                path = path_of(self.eval(arg.value))
                so_name = _so_name(arg.value)
                if (path is not None and path.endswith(".so")) or so_name is not None:
                    new = replace_suffix(arg.value, ".so", ".pt2")
                    found.append(
                        PathArgument(
                            tuple(sorted(self.names(call.func))),
                            None if arg.keyword else position,
                            arg.keyword.value if arg.keyword else None,
                            path if path is not None and path.endswith(".so") else None,
                            self.span(arg.value),
                            None if new is None else self.module.code_for_node(new),
                            so_name or posixpath.basename(path or ""),
                        )
                    )
                position += arg.keyword is None
        return tuple(found)

    def _parameter_of(self, node: Any) -> tuple[str, int, str] | None:
        """(function, position, name) when ``node`` is a parameter of a module-level function."""
        if not isinstance(node, self.cst.Name):
            return None
        param = self.facts.lone_parameter(node)
        if param is None:
            return None
        function = self._enclosing(param, self.cst.FunctionDef)
        if function is None or not isinstance(self.parent(function), self.cst.Module):
            return None
        positional = [*function.params.posonly_params, *function.params.params]
        index = next((i for i, p in enumerate(positional) if p is param), None)
        return (function.name.value, -1 if index is None else index, node.value)

    def so_mentions(self) -> tuple[tuple[str, int, int], ...]:
        """Where a string names a `.so` file (its base name), for the migration plan's escape check."""
        cst = self.cst
        found = []
        for node in self.facts.nodes(cst.SimpleString, cst.FormattedStringText):
            if isinstance(node, cst.SimpleString):
                value = node.evaluated_value
                text = value.strip() if isinstance(value, str) else ""
            else:
                text = node.value.strip()
            if text.endswith(".so") and "\n" not in text:
                position = self.positions[node].start
                found.append((posixpath.basename(text), position.line, position.column + 1))
        return tuple(found)

    def migration_sites(self) -> tuple[MigrationSite, ...]:
        """The deprecated calls with the codemod's own verdicts: the same plan the AOTI001/AOTI002 fixes use."""
        old = [call for call in self.compile_calls if AOT_COMPILE_OLD in self.names(call.func)]
        old += [call for call in self.load_calls if AOT_LOAD_OLD in self.names(call.func)]
        if not old:
            return ()
        from aoti_lint.codemods.migration_plan import MigrationPlan

        # The verdicts as if every path constant could be rewritten: whether it can is the project's question.
        context = self.context
        from aoti_lint.diagnostics import Finding, Position
        from aoti_lint.model.suppressions import parsed_suppressions

        plan = MigrationPlan(context.facts(), context.target_torch, lift_paths=True)
        suppressions = parsed_suppressions(context)
        sites = []
        for site in plan.sites:
            position = self.positions[site.reference].start
            if site.kind == "compile":
                index = self.compile_index.get(id(site.call))
                path = site.so_path
            else:
                index = self.load_index.get(id(site.call))
                path = site.arguments["so_path"].value if "so_path" in site.arguments else None
            if index is None:
                continue
            at = Position(position.line, position.column + 1)
            code = "AOTI001" if site.kind == "compile" else "AOTI002"
            suppressed = suppressions.suppresses(Finding(code, "", context.source.display_path, at, at))
            sites.append(
                MigrationSite(
                    kind=site.kind,
                    row=position.line,
                    column=position.column + 1,
                    index=index,
                    applicability=site.verdict.applicability.value,
                    reason=site.verdict.reason,
                    path_name=path.value if isinstance(path, self.cst.Name) else None,
                    path_blocked=site.path_blocked is not None,
                    rewrites_path=site.kind == "load" and site.path_literal is not None,
                    param=self._parameter_of(path) if site.kind == "load" else None,
                    suppressed=suppressed,
                    so_name=_so_name(path),
                    needs_producer=site.kind == "load" and site.needs_producer,
                )
            )
        return tuple(sites)

    def constant_sites(self) -> tuple[ConstantSite, ...]:
        """Module-level names bound once to a `.so` path, with the `.pt2` expression a migration writes there."""
        from aoti_lint.codemods.expressions import replace_suffix

        found = []
        for statement in self.module.body:
            if not isinstance(statement, self.cst.SimpleStatementLine):
                continue
            for small in statement.body:
                targets = [t.target for t in small.targets] if isinstance(small, self.cst.Assign) else []
                if isinstance(small, self.cst.AnnAssign) and small.value is not None:
                    targets = [small.target]
                for target in targets:
                    if not isinstance(target, self.cst.Name):
                        continue
                    path = path_of(self.eval(small.value))  # first: see artifact_constants
                    if path is None or not path.endswith(".so") or self.facts.references(target) is None:
                        continue
                    new = replace_suffix(small.value, ".so", ".pt2")
                    replacement = None if new is None else self.module.code_for_node(new)
                    found.append(ConstantSite(target.value, path, self.span(small.value), replacement))
        return tuple(found)

    def artifact_constants(self) -> tuple[tuple[str, str], ...]:
        """Module-level names bound once to a ``.pt2``/``.so`` path, which other files may import."""
        constants = []
        for statement in self.module.body:
            if not isinstance(statement, self.cst.SimpleStatementLine):
                continue
            for small in statement.body:
                targets = [t.target for t in small.targets] if isinstance(small, self.cst.Assign) else []
                if isinstance(small, self.cst.AnnAssign):
                    targets = [small.target]
                for target in targets:
                    if not isinstance(target, self.cst.Name):
                        continue
                    # The value first: whether other assignments reach the name's reads may take libcst's scope
                    # analysis of the module (a TypeVar's name in its own string), and most constants are no path.
                    path = path_of(self.eval(small.value))
                    if path is None or not path.endswith(ARTIFACT_SUFFIXES):
                        continue
                    if self.facts.references(target) is not None:
                        constants.append((target.value, path))
        return tuple(constants)


def _so_name(node: Any) -> str | None:
    """The `.so` file name a path expression ends with: "m.so", join(d, "m.so"), d / "m.so", f"{d}/m.so"."""
    if node is None:
        return None
    from aoti_lint.codemods.expressions import string_value, suffix_literal

    tail = suffix_literal(node)
    text = string_value(tail)
    if text is None and type(tail).__name__ == "FormattedString" and tail.parts:
        text = getattr(tail.parts[-1], "value", None)
    if isinstance(text, str) and text.strip().endswith(".so"):
        return posixpath.basename(text.strip())
    return None


def summarize(context: Any) -> FlowSummary:
    return ModuleFlow(context).summary()
