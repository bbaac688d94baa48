"""The edits of one flow's migration built call by call, not by generating the whole module again.

A fix shown or applied alone migrates its whole flow in the module (``migration.fix_for_site``). Generating the
module's code once per flow, then diffing it against the text, made a module's fixes quadratic in its deprecated
calls: a test file of 800 flows in 8,000 lines took about an hour. The rewrites of a flow change only its calls
(``MigrateAotCompile``, ``MigrateAotLoad``: ``leave_Call``), so each rewritten call's code, generated where it
stands (its block's indentation), replaces the old call's; the lines around are diffed as ``edits_between`` diffs
a whole module. Each fix then gives the text the whole module's migration gives, and the same edits, but where
that diff of the whole text was not minimal: a file with lone CR line ends (which it takes for one line), or a
changed line with identical copies after it at the end of the file (which it matched against a later copy).
Where a rewrite reaches past its calls (a two-step packaging drops a statement; a module binding no ``torch``
gets an import), or the code libcst generates for a call is not the text's, ``call_edits`` gives None and the
caller migrates the whole module.
"""

from __future__ import annotations

import libcst as cst
from libcst._nodes.internal import CodegenState  # the private base libcst's own code generation uses

from aoti_lint.fixes.edits import edits_between, line_starts, offset, position

TYPE_CHECKING = False
if TYPE_CHECKING:
    from aoti_lint.codemods.migration_plan import MigrationPlan
    from aoti_lint.diagnostics import Edit


def call_edits(
    plan: MigrationPlan, targets: set[int], text: str, rewrite: cst.CSTTransformer
) -> tuple[Edit, ...] | None:
    """The edits that migrate the sites ``targets`` (keys of ``plan.compiles`` / ``plan.loads``) of the module
    ``text`` holds, imports left as they are, each call rewritten by ``rewrite`` (the migration's transformers,
    which bind a name to torch); None where they cannot be made call by call (see the module)."""
    positions = plan.facts.positions
    if not positions.reproduces:
        return None
    sites = [plan.compiles.get(key) or plan.loads[key] for key in targets]
    if any(getattr(site, "statement", None) is not None for site in sites):
        return None
    calls = {id(site.call): site.call for site in sites}
    replaced: list[tuple[int, int, str]] = []
    for call in calls.values():
        indents, nested = _context(plan, call, calls)
        if nested:
            continue  # the outer call's rewrite holds this one's (a load of a compile)
        start, end = positions.offsets(call)
        if _code(plan.module, call, indents) != text[start:end]:
            return None
        new = call.visit(rewrite)
        if not isinstance(new, cst.CSTNode):
            return None
        replaced.append((start, end, _code(plan.module, new, indents)))
    return _line_edits(text, sorted(replaced))


def _context(plan: MigrationPlan, node: cst.CSTNode, calls: dict[int, cst.Call]) -> tuple[list[str], bool]:
    """The indentation of the blocks around ``node`` (outermost first), and whether another of ``calls`` holds it."""
    indents: list[str] = []
    nested = False
    parent = plan.parent(node)
    while parent is not None:
        nested = nested or id(parent) in calls
        if isinstance(parent, cst.IndentedBlock):
            indents.append(plan.module.default_indent if parent.indent is None else parent.indent)
        parent = plan.parent(parent)
    return indents[::-1], nested


def _code(module: cst.Module, node: cst.CSTNode, indents: list[str]) -> str:
    """The node's code as the module's generation writes it where the node stands: a continuation line of a call
    may take its block's indentation (libcst's ``indent`` flag), which ``Module.code_for_node`` leaves out."""
    state = CodegenState(default_indent=module.default_indent, default_newline=module.default_newline)
    for indent in indents:
        state.increase_indent(indent)
    node._codegen(state)
    return "".join(state.tokens)


def _line_edits(text: str, replaced: list[tuple[int, int, str]]) -> tuple[Edit, ...]:
    """Line-range edits (``edits_between``'s) for the replacements (start, end, code) of ``text``, sorted: each
    run of lines they touch is diffed on its own."""
    starts = line_starts(text)
    edits: list[Edit] = []
    index = 0
    while index < len(replaced):
        # The lines of one replacement, and of the next ones while they share a line or start on the next one
        # (adjacent changed lines make one edit, as in a diff of the whole text).
        first = _line_start(text, replaced[index][0], starts)
        last = index
        region_end = _line_end(text, replaced[last][1], starts)
        while last + 1 < len(replaced) and _line_start(text, replaced[last + 1][0], starts) <= region_end:
            last += 1
            region_end = max(region_end, _line_end(text, replaced[last][1], starts))
        before = text[first:region_end]
        after, cursor = [], first
        for start, end, code in replaced[index : last + 1]:
            after += [text[cursor:start], code]
            cursor = end
        after.append(text[cursor:region_end])
        for edit in edits_between(before, "".join(after)):
            edits.append(
                type(edit)(
                    edit.content,
                    position(text, first + offset(before, edit.start), starts),
                    position(text, first + offset(before, edit.end), starts),
                )
            )
        index = last + 1
    return tuple(edits)


def _line_start(text: str, index: int, starts: list[int]) -> int:
    return starts[position(text, index, starts).row - 1]


def _line_end(text: str, index: int, starts: list[int]) -> int:
    """Where the line holding the character before ``index`` ends, its line end included."""
    row = position(text, max(index - 1, 0), starts).row
    return starts[row] if row < len(starts) else len(text)
