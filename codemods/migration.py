"""The migration off torch._export.aot_compile / aot_load, as used by ``aoti-lint --fix`` and libcst's tool.

``python -m libcst.tool codemod aoti_lint.codemods.migrate_aoti.MigrateAotiCommand PATH [--unsafe]``

libcst's codemod framework (``libcst.codemod``, which imports ``libcst.matchers``: about a second) is imported
only by that command (``codemods.migrate_aoti``) and by the few fixes that add an import: a lint run never pays it.
"""

from __future__ import annotations

import re

import libcst as cst
from libcst.metadata import MetadataWrapper

from aoti_lint.codemods.aot_compile import MigrateAotCompile
from aoti_lint.codemods.aot_load import MigrateAotLoad
from aoti_lint.codemods.expressions import bound_as, torch_binding
from aoti_lint.codemods.migration_plan import MigrationPlan
from aoti_lint.diagnostics import Applicability
from aoti_lint.fixes.module_facts import ModuleFacts
from aoti_lint.fixes.parse import libcst_module
from aoti_lint.fixes.unused_imports import RemoveImports, bound_name, statement_nodes, without_blank_openings
from aoti_lint.flows.migration_verdicts import CANNOT_WRITE

# Modules with more deprecated calls than this get per-site fixes without import tidying (see fix_for_site).
TIDY_PER_SITE_UP_TO = 8


class _Chain(cst.CSTTransformer):
    """One traversal for several transformers: each sees the original node, so node identity holds."""

    def __init__(self, *transformers: cst.CSTTransformer) -> None:
        super().__init__()
        self.transformers = transformers

    def on_leave(self, original_node, updated_node):
        for transformer in self.transformers:
            method = getattr(transformer, f"leave_{type(original_node).__name__}", None)
            if method is not None:
                updated_node = method(original_node, updated_node)
                if not isinstance(updated_node, cst.CSTNode):
                    return updated_node
        return updated_node


def _old_imports(module: cst.Module) -> list[tuple[str, str | None, str | None]]:
    """(module, obj, asname) of every import of the deprecated API."""
    found: list[tuple[str, str | None, str | None]] = []
    for node in statement_nodes(module):
        if isinstance(node, cst.ImportFrom):
            source = cst.helpers.get_full_name_for_node(node.module) if node.module else None
            if node.relative or isinstance(node.names, cst.ImportStar):
                continue
            for alias in node.names:
                name = cst.helpers.get_full_name_for_node(alias.name)
                if source is not None and (source, name) in (
                    ("torch._export", "aot_compile"),
                    ("torch._export", "aot_load"),
                    ("torch", "_export"),
                ):
                    found.append((source, name, bound_as(alias)))
        elif isinstance(node, cst.Import):
            for alias in node.names:
                if cst.helpers.get_full_name_for_node(alias.name) == "torch._export" and bound_as(alias):
                    found.append(("torch._export", None, bound_as(alias)))
    return found


class _DropBareExportImport(cst.CSTTransformer):
    """``import torch._export`` binds ``torch``: once ``torch._export`` is unused, keep only ``import torch``."""

    def __init__(self, keep_torch: bool) -> None:
        super().__init__()
        self.keep_torch = keep_torch

    def leave_Import(self, original_node: cst.Import, updated_node: cst.Import):
        names = [
            alias
            for alias in updated_node.names
            if not (alias.asname is None and cst.helpers.get_full_name_for_node(alias.name) == "torch._export")
        ]
        if len(names) == len(updated_node.names):
            return updated_node
        if self.keep_torch:
            self.keep_torch = False
            names.append(cst.ImportAlias(name=cst.Name("torch")))
        if not names:
            return cst.RemovalSentinel.REMOVE
        names[-1] = names[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        return updated_node.with_changes(names=names)


def migrate(plan: MigrationPlan, targets: set[int], tidy: bool = True) -> str:
    """The module's code with the given sites (keys of plan.compiles / plan.loads) migrated.

    ``tidy=False`` leaves the old imports for one tidying pass after all of a file's fixes: tidying per site
    made fixing quadratic in the number of sites.
    """
    module = plan.module
    binding = torch_binding(module)
    new = module.visit(_rewrite(plan, targets, binding or "torch"))
    if binding is None:
        new = _add_torch_import(new)
    return tidy_imports(new).code if tidy else new.code


def _rewrite(plan: MigrationPlan, targets: set[int], torch_name: str) -> cst.CSTTransformer:
    """The transformers of the migration of ``targets``, in one traversal; the new calls name torch ``torch_name``."""
    return _Chain(MigrateAotCompile(plan, targets, torch_name), MigrateAotLoad(plan, targets, torch_name))


def _is_old_import(statement: cst.CSTNode) -> bool:
    return isinstance(statement, cst.SimpleStatementLine) and bool(_old_imports(cst.Module(body=[statement])))


def _add_torch_import(module: cst.Module) -> cst.Module:
    """``import torch`` where the old import stood (taking over its blank lines), else at the top."""
    body = list(module.body)
    for index, statement in enumerate(body):
        if _is_old_import(statement):
            new_import = cst.parse_statement("import torch\n", module.config_for_parsing)
            body[index : index + 1] = [
                new_import.with_changes(leading_lines=statement.leading_lines),
                statement.with_changes(leading_lines=()),
            ]
            return module.with_changes(body=body)
    from libcst.codemod import CodemodContext
    from libcst.codemod.visitors import AddImportsVisitor

    context = CodemodContext()
    AddImportsVisitor.add_needed_import(context, "torch")
    return AddImportsVisitor(context).transform_module(module)


def tidy_text(text: str) -> str:
    """``tidy_imports`` of a text, as it stands once the fixes are applied: the text itself where libcst does not
    parse it (the engine refuses to write it anyway) or does not give it back as written (its code generation would
    edit lines no fix touched)."""
    from aoti_lint.fixes.edits import with_last_line_end
    from aoti_lint.fixes.node_positions import gives_back

    try:
        module = libcst_module(text)
    except cst.ParserSyntaxError:
        return text
    if not gives_back(module.code, text):
        return text
    return with_last_line_end(tidy_imports(module).code, text)


def tidy_imports(module: cst.Module) -> cst.Module:
    """Remove imports of the deprecated API that nothing uses any more; keep aliases still in use."""
    original = module
    code = module.code
    body = _code_without_imports(code)
    # A name still written somewhere keeps its import: skip libcst's (costly) scope check for it.
    unused = [e for e in _old_imports(module) if not re.search(rf"(?<![.\w]){re.escape(bound_name(e))}\b", body)]
    if unused:
        module = module.visit(RemoveImports(set(unused)))
        code = module.code
        body = _code_without_imports(code)
    bare = re.search(r"^\s*import[^#\n]*\btorch\._export\b(?!\s+as)", code, flags=re.MULTILINE)
    if bare and not re.search(r"\btorch\._export\b", body):
        only_binding = torch_binding(module) == "torch" and not _has_plain_torch_import(code)
        module = module.visit(_DropBareExportImport(keep_torch=only_binding))
    return without_blank_openings(original, module)  # a block whose first line was the import: no blank opening


def _code_without_imports(code: str) -> str:
    """The code minus its import statements, roughly: enough to tell whether a name is still written."""
    return re.sub(
        r"^[ \t]*(?:from[ \t]+\S+[ \t]+import[ \t]*\([^)]*\)|(?:from[ \t]+\S+[ \t]+)?import[ \t][^\n]*)",
        "",
        code,
        flags=re.MULTILINE,
    )


def _has_plain_torch_import(code: str) -> bool:
    return bool(re.search(r"^\s*import torch\s*(#.*)?$", code, flags=re.MULTILINE))


def _writable(plan: MigrationPlan, targets: set[int]) -> None:
    """Refuses a flow whose member the codemod cannot write: migrating the rest would break the program."""
    from aoti_lint.fixes.node_positions import NotReproduced

    for site in plan.sites:
        if id(site.reference) in targets and site.cannot_write:
            raise NotReproduced(CANNOT_WRITE)


def selected_sites(plan: MigrationPlan, unsafe: bool) -> set[int]:
    allowed = {Applicability.SAFE, Applicability.UNSAFE} if unsafe else {Applicability.SAFE}
    sites = {**plan.compiles, **plan.loads}
    return {key for key, site in sites.items() if site.verdict.applicability in allowed}


def fix_for_site(plan: MigrationPlan, key: int, original_code: str, whole_flow: bool = True):
    """The lint fix of one site: its applicability, a title, and the edits that migrate its flow in this module
    (``whole_flow``), or the site alone where edits cannot reach past it (a notebook's fix stays in its cell)."""
    from aoti_lint.diagnostics import Fix
    from aoti_lint.fixes.edits import edits_between, with_last_line_end
    from aoti_lint.flows.migration_verdicts import by_hand, fix_title, unsafe_reason

    site = plan.compiles.get(key) or plan.loads.get(key)
    verdict = site.verdict
    if verdict.applicability is Applicability.DISPLAY_ONLY:
        return Fix(Applicability.DISPLAY_ONLY, by_hand(verdict.reason))
    title = fix_title(site.kind, verdict)
    # A fix shown alone (json, SARIF, an editor) also drops the imports it leaves unused; past a few sites that
    # costs a scope analysis per site, so the imports are left to the one tidying pass after all the fixes.
    tidy = len(plan.sites) <= TIDY_PER_SITE_UP_TO

    # Built only when the run applies or prints edits (Fix.settled): a check run just says a fix exists. The edits
    # migrate the site's whole flow in this module, as `--fix` does (its calls and path constants): a compile's
    # fix shown alone (json, SARIF, an editor) that left its loader on the old API would hand it a package.
    # The sites of one flow share one set of edits: a module with many calls builds each flow once.
    def _flow_edits() -> tuple:
        if not whole_flow:
            targets, constants = {key}, False
        elif plan.flow is None:
            targets, constants = _linked_sites(plan, key), False
        else:
            group = _group_of(plan, key)
            targets = _group_sites(plan, group)
            # The constants' spans are the planned text's: once `--fix` migrated other flows of the file, they may
            # have moved, and the fix shown for what is left leaves its constants to the message.
            constants = not plan.flow.applied_groups and any(c.group == group for c in plan.flow.constants)
        cached = frozenset(targets), constants
        _writable(plan, targets)
        if cached not in plan.fixed_edits:
            edits = None
            binding = torch_binding(plan.module)
            if not tidy and not constants and binding is not None:
                # Past a few sites, call by call: one module generation and diff per flow is quadratic. (Without
                # a name bound to torch the migration adds an import: the whole module is migrated.)
                from aoti_lint.codemods import site_edits

                edits = site_edits.call_edits(plan, targets, original_code, _rewrite(plan, targets, binding))
            if edits is None:
                if constants:
                    # Its path constants are rewritten first, then the module is read again (as `--fix` does).
                    text = migrate_flows(original_code, plan.flow, frozenset({group}), plan.target_torch, tidy)[0]
                else:
                    text = with_last_line_end(migrate(plan, targets, tidy=tidy), original_code)
                edits = tuple(edits_between(original_code, text))
            plan.fixed_edits[cached] = edits
        return plan.fixed_edits[cached]

    return Fix(verdict.applicability, title, build=_flow_edits, reason=unsafe_reason(verdict))


def _group_of(plan: MigrationPlan, key: int) -> int:
    """The project plan's flow group of the site ``key``."""
    return _groups(plan)[0][key]


def _group_sites(plan: MigrationPlan, group: int) -> set[int]:
    """The sites of this module in the project plan's flow group ``group`` that its fix migrates."""
    return set(_groups(plan)[1].get(group, ()))


def _groups(plan: MigrationPlan) -> tuple[dict[int, int], dict[int, list[int]]]:
    """Each site's group, and each group's sites that its fix migrates; read once per plan (a fix per site asking
    about every site was quadratic too)."""
    if plan.site_groups is None:
        group_of: dict[int, int] = {}
        members: dict[int, list[int]] = {}
        for site, decision in zip(plan.sites, plan.decisions, strict=True):
            group_of[id(site.reference)] = decision.group
            if decision.applicability is not Applicability.DISPLAY_ONLY:
                members.setdefault(decision.group, []).append(id(site.reference))
        plan.site_groups = group_of, members
    return plan.site_groups


def _linked_sites(plan: MigrationPlan, key: int) -> set[int]:
    """Without a project plan, the sites that migrate with ``key``: the compile that produced its artifact and
    every load of that artifact in the module."""
    site = plan.compiles.get(key) or plan.loads[key]
    producer = site if site.kind == "compile" else site.producer
    members = [site] if producer is None else [producer, *producer.consumers]
    _writable(plan, {id(member.reference) for member in members})
    return {key} | {
        id(member.reference) for member in members if member.verdict.applicability is not Applicability.DISPLAY_ONLY
    }


def migrate_flows(
    text: str, flow, groups: frozenset[int], target_torch: tuple[int, int], tidy: bool = True, path: str = ""
) -> tuple[str, int]:
    """One file's part of whole flows (``aoti_lint.flows.migration_flow``): its deprecated calls and path
    constants of ``groups`` migrated in one pass, imports tidied once (unless not ``tidy``). Returns the text and
    the calls migrated.
    """
    from aoti_lint.diagnostics import Edit, Position
    from aoti_lint.fixes.edits import apply_edits, with_last_line_end

    edits = [
        Edit(
            rewrite.replacement,
            Position(rewrite.span.row, rewrite.span.column),
            Position(rewrite.span.end_row, rewrite.span.end_column),
        )
        for rewrite in flow.constants
        if rewrite.group in groups
    ]
    # The constants first: a string in an assignment of its own changes no other row, so the plan's sites
    # (named by their order) are where the plan saw them.
    text = apply_edits(text, edits) if edits else text
    module = libcst_module(text)
    from aoti_lint.fixes.node_positions import NotReproduced, gives_back

    if not gives_back(module.code, text):  # its code generation would rewrite lines no fix touches
        raise NotReproduced("libcst does not give this file back as written")
    # The module was parsed here and nothing else holds it: the wrapper need not copy it.
    plan = MigrationPlan(ModuleFacts(MetadataWrapper(module, unsafe_skip_copy=True)), target_torch, flow, path)
    if not plan.flow_applied:
        raise ValueError("the file is not the one the migration was planned on")
    targets = {
        id(site.reference)
        for site, decision in zip(plan.sites, plan.decisions, strict=True)
        if decision.group in groups and decision.applicability is not Applicability.DISPLAY_ONLY
    }
    _writable(plan, targets)
    if not targets:
        return text, 0
    return with_last_line_end(migrate(plan, targets, tidy=tidy), text), len(targets)
