"""What AOTI001 and AOTI002 share: a reference, under any import form, to a deprecated function of ``torch._export``
(``aot_compile``, ``aot_load``), and the migration's fix attached to each call."""

from __future__ import annotations

import functools
import re

from aoti_lint.flows.migration_verdicts import deprecation
from aoti_lint.knowledge.deprecated_api import DeprecatedSymbol
from aoti_lint.lazy import cst
from aoti_lint.rules.base import PythonRule

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, ClassVar

# What stands between two tokens of one expression: blanks, a continuing backslash, a comment running to its line's
# end (bounded so: a banner of `#`s would make the match exponential), and, before the `.`, closing parentheses.
_GAP = r"(?:\s|\\|#[^\n]*(?![^\n]))*"
_CLOSING_GAP = r"(?:\s|\\|\)|#[^\n]*(?![^\n]))*"


@functools.cache
def _reference_patterns(parent: str, name: str) -> tuple[re.Pattern[str], ...]:
    """A superset of the text of every reference that resolves to ``parent.name``: the attribute written out,
    or an import statement naming the parent or the name (on its logical line, or in its parentheses)."""
    either = rf"(?<!\w)(?:{parent}|{name})(?!\w)"
    return (
        re.compile(rf"{parent}{_CLOSING_GAP}\.{_GAP}{name}(?!\w)"),
        # `getattr(torch._export, "aot_compile")`: the name as a string after the parent
        re.compile(rf"{parent}{_CLOSING_GAP},{_GAP}[rRuU]?[\"']{name}[\"']"),
        re.compile(rf"import(?!\w)(?:(?:[^\n;#]|\\\r?\n)*?{either}|\s*\((?:[^)#]|#[^\n]*(?![^\n]))*?{either})"),
    )


class _LookedUp:
    """A finding's data: a call the fix cannot rewrite, the function reached by another name: `getattr(module,
    "name")` looks it up, or ``alias`` holds it."""

    def __init__(self, call: Any, alias: str | None = None) -> None:
        self.call = call
        self.alias = alias


class DeprecatedReference(PythonRule):
    """Shared check: any reference (call or not) that resolves to ``symbol``, whatever the import form.

    Import statements are not reported on their own: the fix rewrites them with the uses.
    """

    symbol: ClassVar[DeprecatedSymbol]
    fix_availability = "sometimes"

    @classmethod
    def could_match_python(cls, text: str) -> bool:
        # The same, in the text (``_reference_patterns``): most of torch's files that hold both words import
        # something else from `torch._export`, or name the other `aot_compile`.
        module, name = cls.symbol.qualified_name.rsplit(".", 1)
        parent = module.rsplit(".", 1)[-1]
        if f"{parent}.{name}" in text:
            return True  # the common spelling, without compiling the patterns (a one-file run pays for that)
        return any(pattern.search(text) for pattern in _reference_patterns(parent, name))

    @classmethod
    def could_match_code(cls, code: Any) -> bool:
        # A reference resolves to `pkg.parent.name` only through `x.parent.name` / `parent.name`, or through
        # a name bound by an import of `...parent...` (`import pkg.parent as p`, `from pkg import parent`,
        # `from pkg.parent import name`).
        module, name = cls.symbol.qualified_name.rsplit(".", 1)
        parent = module.rsplit(".", 1)[-1]
        return (
            (parent, name) in code.attribute_pairs
            or ("getattr" in code.called and parent in code.identifiers)
            or any(parent in imported.split(".") for imported in code.imported_modules)
            or any(
                imported == parent or (imported == name and parent in source.split("."))
                for source, imported in code.imported_names
            )
        )

    def __init__(self, context: Any) -> None:
        super().__init__(context)
        self._in_import = 0
        self._reported_attr_names: set[int] = set()
        self._bound_names: set[int] = set()
        # Names bound by `name = <the function>` (an attribute or a `getattr` of it), to the value they hold.
        self._aliases: dict[str, Any] = {}

    def visit_Import(self, node: Any) -> None:
        self._in_import += 1

    def leave_Import(self, node: Any) -> None:
        self._in_import -= 1

    def visit_ImportFrom(self, node: Any) -> None:
        self._in_import += 1

    def leave_ImportFrom(self, node: Any) -> None:
        self._in_import -= 1

    # A name being bound is not a use of what it held before: the stub `def aot_compile(*args, **kwargs)` in a
    # compat module's `except ImportError:` (or `aot_load = None` there) shares the import's name, and libcst's
    # scopes give it the import's qualified name too.
    def visit_FunctionDef(self, node: Any) -> None:
        self._bound_names.add(id(node.name))

    def visit_ClassDef(self, node: Any) -> None:
        self._bound_names.add(id(node.name))

    def visit_Param(self, node: Any) -> None:
        self._bound_names.add(id(node.name))

    def visit_AssignTarget(self, node: Any) -> None:
        self._bound_names.add(id(node.target))

    def visit_AnnAssign(self, node: Any) -> None:
        self._bound_names.add(id(node.target))

    def visit_Call(self, node: Any) -> None:
        if self._in_import or not isinstance(node.func, cst.Name):
            return
        if node.func.value in self._aliases:
            # `compile(...)` after `compile = torch._export.aot_compile`: the call reads the one binding of the name
            bound = self._aliases[node.func.value]
            if self.context.facts().single_value(node.func) is bound:
                self.report(node.func, deprecation(self.symbol), data=_LookedUp(node, node.func.value))
            return
        # `getattr(torch._export, "aot_compile")`: the function looked up by its name
        if node.func.value != "getattr" or len(node.args) < 2:
            return
        if any(arg.keyword is not None or arg.star for arg in node.args[:2]):
            return
        looked_up = node.args[1].value
        if not isinstance(looked_up, cst.SimpleString) or looked_up.evaluated_value != self.symbol.short_name:
            return
        module = self.symbol.qualified_name.rsplit(".", 1)[0]
        if "builtins.getattr" in self.qualified_names(node.func) and module in self.qualified_names(node.args[0].value):
            self.report(node, deprecation(self.symbol), data=_LookedUp(node))
            self._remember_alias(node)

    def visit_Attribute(self, node: Any) -> None:
        if not self._in_import and self._resolves_to_symbol(node):
            self._reported_attr_names.add(id(node.attr))
            self._report(node)
            self._remember_alias(node)

    def _remember_alias(self, value: Any) -> None:
        """`name = <the function>`: a later call of ``name`` that reads this binding calls the function."""
        statement = self.context.facts().parent(value)
        if isinstance(statement, cst.Assign) and len(statement.targets) == 1:
            target = statement.targets[0].target
            if isinstance(target, cst.Name):
                self._aliases[target.value] = value

    def visit_Name(self, node: Any) -> None:
        if self._in_import or id(node) in self._reported_attr_names or id(node) in self._bound_names:
            return
        if self._resolves_to_symbol(node):
            self._report(node)

    def _resolves_to_symbol(self, node: Any) -> bool:
        # The spelling first: for a name bound other than by the module's imports, libcst's lookup resolves the
        # module's scopes, quadratic in the assignments to one name (10,000 `x = ...` lines took minutes).
        if not self.context.may_resolve_to(node, {self.symbol.short_name}):
            return False
        # The provider gives a set: a conditional import can bind one name to several targets. Any
        # deprecated target is a reason to report; whether the fix may rewrite is decided separately.
        return self.symbol.qualified_name in self.qualified_names(node)

    def _report(self, node: Any) -> None:
        from aoti_lint.flows.migration_verdicts import deprecation

        self.report(node, deprecation(self.symbol))

    @classmethod
    def tidy_after_fix(cls, text: str) -> str:
        """Once fixes are applied, drop imports of the old API that no fix alone could see were unused."""
        import libcst as cst

        from aoti_lint.codemods.migration import tidy_imports
        from aoti_lint.fixes.edits import with_last_line_end

        try:
            module = cst.parse_module(text)
        except cst.ParserSyntaxError:
            return text  # the engine refuses to write it anyway
        from aoti_lint.model.node_positions import gives_back

        if not gives_back(module.code, text):
            return text  # libcst does not give the text back: its code generation would edit lines no fix touched
        return with_last_line_end(tidy_imports(module).code, text)

    def leave_Module(self, node: Any) -> None:
        """Attach the migration's fix to each finding of this rule at a call the codemod understands."""
        mine = [f for f in self.context.findings if f.code == self.code]
        if not mine:
            return
        from aoti_lint.codemods.migration import fix_for_site
        from aoti_lint.codemods.migration_plan import MigrationPlan
        from aoti_lint.diagnostics import Applicability, Fix
        from aoti_lint.flows.migration_verdicts import looked_up, not_called, not_fixed

        context = self.context
        # With a project plan (``context.flow``), each call gets its artifact flow's verdict.
        plan = context.memo(
            "migration-plan", lambda: MigrationPlan(context.facts(), context.target_torch, context.flow)
        )
        for finding in mine:
            if isinstance(finding.data, _LookedUp):
                finding.fix = Fix(Applicability.DISPLAY_ONLY, looked_up(self.symbol, finding.data.alias))
                continue
            site = plan.site_for_reference(finding.data)
            if site is None:
                # A reference that is not called here (stored, passed on): its callers decide the arguments.
                finding.fix = Fix(Applicability.DISPLAY_ONLY, not_called(self.symbol))
                continue
            # A notebook's fix edits its own cell only: a flow across cells is migrated whole by `--fix`.
            whole_flow = context.source.kind != "jupyter"
            finding.fix = fix_for_site(plan, id(finding.data), context.source.text, whole_flow)
            if finding.fix.applicability is Applicability.DISPLAY_ONLY:
                finding.message += not_fixed(site.verdict.reason)
