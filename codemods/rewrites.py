"""The planned rewrite of one deprecated call: its libcst nodes, what the fix will write, and how safe it is.

Not to be confused with ``aoti_lint.flows.flow_summary.CompileSite``/``LoadSite``: those are plain facts
about a call (device, artifact, inputs) that cross processes; these hold libcst nodes and live in one module.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from aoti_lint.flows.migration_verdicts import Verdict


@dataclass
class CompileRewrite:
    call: cst.Call
    reference: cst.CSTNode
    arguments: dict[str, cst.Arg]
    verdict: Verdict
    # The `.so` path as a literal node, when the options name one.
    so_path: cst.BaseExpression | None = None
    package_path: cst.BaseExpression | None = None
    options: cst.BaseExpression | None = None  # what becomes inductor_configs=
    reuse_program: cst.BaseExpression | None = None  # `ep` when f is `ep.module()`
    consumers: list[LoadRewrite] = field(default_factory=list)
    # Two-step packaging: the statement holding `package_aoti(path, files)` and the call in it.
    package_call: cst.Call | None = None
    statement: cst.CSTNode | None = None
    # Comments trailing the options entries the fix removes: they move to the package path.
    removed_comments: list[str] = field(default_factory=list)
    # Its syntax does not hold what the reading planned (``migration_plan``): it is not rewritten.
    cannot_write: bool = False

    kind = "compile"


@dataclass
class LoadRewrite:
    call: cst.Call
    reference: cst.CSTNode
    arguments: dict[str, cst.Arg]
    verdict: Verdict
    producer: CompileRewrite | None = None
    device_index: int | None = None
    # ``rank`` in ``f"cuda:{rank}"`` / ``torch.device("cuda", rank)``: passed on as ``device_index=rank``.
    device_index_expr: cst.BaseExpression | None = None
    # A `.so` path written here (literal, join, Path, f-string), to be rewritten to its `.pt2`: a fix never
    # hands a `.so` to the package loader.
    path_literal: cst.BaseExpression | None = None
    # Its syntax does not hold what the reading planned (``migration_plan``): it is not rewritten.
    cannot_write: bool = False

    kind = "load"
