"""torch._export.aot_load(path, device) -> torch._inductor.aoti_load_package(path[, device_index=N])."""

from __future__ import annotations

import libcst as cst

from aoti_lint.codemods.expressions import replace_suffix
from aoti_lint.codemods.layout import arrange, comments_of, keyword, with_comments
from aoti_lint.codemods.migration_plan import MigrationPlan


class MigrateAotLoad(cst.CSTTransformer):
    """Rewrites the load sites of ``plan`` whose reference node ids are in ``targets``."""

    def __init__(self, plan: MigrationPlan, targets: set[int], torch_name: str) -> None:
        super().__init__()
        self.plan = plan
        self.torch = torch_name
        self._by_call = {id(site.call): site for key, site in plan.loads.items() if key in targets}

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        site = self._by_call.get(id(original_node))
        if site is None:
            return updated_node
        # From the updated call: a compile nested in the path argument has been rewritten already.
        path = updated_node.args[list(original_node.args).index(site.arguments["so_path"])].value
        if site.path_literal is not None:
            path = replace_suffix(site.path_literal, ".so", ".pt2")
        args = [cst.Arg(path)]
        if site.device_index is not None:
            args.append(keyword("device_index", cst.Integer(str(site.device_index))))
        elif site.device_index_expr is not None:
            args.append(keyword("device_index", site.device_index_expr))
        func = cst.parse_expression(f"{self.torch}._inductor.aoti_load_package")
        # The path's comments stay with it; the device's go to device_index= (or to the path when dropped).
        groups: list[tuple[list[str], list[str]]] = [([], []) for _ in args]
        device = site.arguments.get("device")
        for arg, (lead, trail) in zip(original_node.args, comments_of(list(original_node.args)), strict=True):
            target = len(args) - 1 if arg is device else 0
            groups[target][0].extend(lead)
            groups[target][1].extend(trail)
        arranged = with_comments(arrange(list(original_node.args), args), groups)
        return updated_node.with_changes(func=func, args=arranged)
