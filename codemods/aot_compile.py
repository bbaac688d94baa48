"""torch._export.aot_compile(f, args, ...) -> torch._inductor.aoti_compile_and_package(torch.export.export(...))."""

from __future__ import annotations

import libcst as cst

from aoti_lint.codemods.layout import arrange, comments_of, keyword, with_comments
from aoti_lint.codemods.migration_plan import MigrationPlan
from aoti_lint.codemods.rewrites import CompileRewrite


class MigrateAotCompile(cst.CSTTransformer):
    """Rewrites the compile sites of ``plan`` whose reference node ids are in ``targets``."""

    def __init__(self, plan: MigrationPlan, targets: set[int], torch_name: str) -> None:
        super().__init__()
        self.plan = plan
        self.torch = torch_name
        self.sites = [site for key, site in plan.compiles.items() if key in targets]
        self._by_call = {id(site.call): site for site in self.sites if site.package_call is None}
        self._by_package_call = {id(site.package_call): site for site in self.sites if site.package_call is not None}
        self._removed_statements = {id(site.statement) for site in self.sites if site.statement is not None}

    def _code(self, node: cst.CSTNode) -> str:
        return self.plan.module.code_for_node(node)

    def _export(self, site: CompileRewrite) -> cst.BaseExpression:
        if site.reuse_program is not None:
            return site.reuse_program
        args = site.arguments
        parts = [self._code(args["f"].value), self._code(args["args"].value)]
        if "kwargs" in args:
            parts.append(self._code(args["kwargs"].value))
        if "dynamic_shapes" in args:
            parts.append("dynamic_shapes=" + self._code(args["dynamic_shapes"].value))
        return cst.parse_expression(
            f"{self.torch}.export.export({', '.join(parts)})", self.plan.module.config_for_parsing
        )

    def _compile_call(self, site: CompileRewrite, layout: cst.Call) -> cst.Call:
        args = [cst.Arg(self._export(site))]
        if site.package_path is not None:
            args.append(keyword("package_path", site.package_path))
        if site.options is not None:
            args.append(keyword("inductor_configs", site.options))
        func = cst.parse_expression(f"{self.torch}._inductor.aoti_compile_and_package")
        arranged = with_comments(arrange(list(site.call.args), args), self._comments(site, len(args)))
        return layout.with_changes(func=func, args=arranged)

    def _comments(self, site: CompileRewrite, count: int) -> list[tuple[list[str], list[str]]]:
        """The old arguments' comments, moved with what each argument became: the export call, the package
        path (with the comments of the removed `aot_inductor.output_path` entry) or the configs."""
        options_at = 1 if site.package_path is not None or site.options is None else count - 1
        names = {id(arg): name for name, arg in site.arguments.items()}
        groups: list[tuple[list[str], list[str]]] = [([], []) for _ in range(count)]
        for arg, (lead, trail) in zip(site.call.args, comments_of(list(site.call.args)), strict=True):
            target = options_at if names.get(id(arg)) == "options" and count > 1 else 0
            groups[target][0].extend(lead)
            groups[target][1].extend(trail)
        groups[options_at if count > 1 else 0][1].extend(site.removed_comments)
        return groups

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        site = self._by_call.get(id(original_node))
        if site is not None:
            return self._compile_call(site, updated_node)
        site = self._by_package_call.get(id(original_node))
        if site is not None:
            return self._compile_call(site, site.call).with_changes(
                whitespace_before_args=site.call.whitespace_before_args
            )
        return updated_node

    def leave_SimpleStatementLine(
        self, original_node: cst.SimpleStatementLine, updated_node: cst.SimpleStatementLine
    ) -> cst.SimpleStatementLine | cst.RemovalSentinel:
        if id(original_node) in self._removed_statements:
            return cst.RemovalSentinel.REMOVE
        return updated_node
