"""AOTI303: ``torch.library.impl_abstract``, renamed ``register_fake`` in torch 2.4."""

from __future__ import annotations

import re

from aoti_lint.diagnostics import Applicability, Edit, Fix, Position
from aoti_lint.knowledge.custom_ops import IMPL_ABSTRACT, IMPL_ABSTRACT_KEYWORDS, REGISTER_FAKE, REGISTER_FAKE_SINCE
from aoti_lint.knowledge.references import PR_REGISTER_FAKE, REGISTER_FAKE_DOCS
from aoti_lint.lazy import cst
from aoti_lint.rules.base import Invalid, PythonRule, Valid

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

OLD = IMPL_ABSTRACT.rsplit(".", 1)[-1]
NEW = REGISTER_FAKE.rsplit(".", 1)[-1]
LIBRARY = IMPL_ABSTRACT.rsplit(".", 1)[0]
# A condition that asks which torch runs: `TORCH_VERSION_AT_LEAST_2_4`, `torch.__version__ >= ...`,
# `hasattr(torch.library, "register_fake")`.
_VERSION_CHECK = re.compile(rf"(?i)version|\bhasattr\(.*\b{NEW}\b")


class DeprecatedImplAbstract(PythonRule):
    """
    ## What it does
    Finds references to `torch.library.impl_abstract`, called or not, under any import form.

    ## Why is this bad?
    `impl_abstract` was renamed `torch.library.register_fake` in torch 2.4. In torch 2.13 it still works,
    as a thin wrapper, but each registration emits `FutureWarning: `torch.library.impl_abstract` was
    renamed to `torch.library.register_fake`. Please use that instead; we will remove
    `torch.library.impl_abstract` in a future version of PyTorch.` Code that registers its fake kernels
    with it will stop importing when the alias is removed.

    ## Fix safety
    The fix renames the reference (and the `from torch.library import impl_abstract` that binds it) to
    `register_fake`. It is safe: `impl_abstract(qualname, func=None, *, lib=None, _stacklevel=1)` only calls
    `register_fake(qualname, func, lib=lib, ...)`. It is offered only when `target-torch` is 2.4 or newer,
    and not when a call passes `qualname=` or `func=` by keyword (`register_fake` takes them positionally
    only), nor when the module already uses the name `register_fake` for something else, nor when the
    reference lies in a branch of a torch version gate: an `if`/`else` (or conditional expression) whose
    condition checks the torch version or whose other branch uses `register_fake`, or the `except` of a `try`
    that uses it. There `impl_abstract` is the fallback for old torch on purpose, and renaming it would make
    both branches the same; the message says so, and what to do (drop the gate once every supported torch
    has `register_fake`).
    """

    code = "AOTI303"
    name = "deprecated-impl-abstract"
    references = (REGISTER_FAKE_DOCS, PR_REGISTER_FAKE)
    summary = "`torch.library.impl_abstract` is deprecated; use `torch.library.register_fake`"
    fix_availability = "sometimes"
    triggers = ((b"impl_abstract",),)

    VALID = [
        Valid(
            """
            import torch

            @torch.library.register_fake("mylib::twice")
            def _(x):
                return x.new_empty(x.shape[0] * 2)
            """
        ),
        Valid(
            """
            class Registry:
                def impl_abstract(self, name):
                    return name

            Registry().impl_abstract("mylib::op")
            """
        ),
    ]
    INVALID = [
        Invalid(
            """
            import torch

            @torch.library.impl_abstract("mylib::twice")
            def _(x):
                return x.new_empty(x.shape[0] * 2)
            """,
            line=3,
            column=16,
            message_contains="register_fake",
            fixed="""
            import torch

            @torch.library.register_fake("mylib::twice")
            def _(x):
                return x.new_empty(x.shape[0] * 2)
            """,
        ),
        Invalid(
            """
            from torch.library import impl_abstract

            impl_abstract("mylib::a", lambda x: x.new_empty(x.shape))
            impl_abstract("mylib::b", lambda x: x.new_empty(x.shape))
            """,
            line=3,
            count=2,
            fixed="""
            from torch.library import register_fake

            register_fake("mylib::a", lambda x: x.new_empty(x.shape))
            register_fake("mylib::b", lambda x: x.new_empty(x.shape))
            """,
        ),
        Invalid(
            """
            from torch.library import impl_abstract as fake

            fake("mylib::a", func=lambda x: x.new_empty(x.shape))
            """,
            line=3,
            message_contains="by keyword",
        ),
        Invalid(
            """
            import torch.library as tl

            tl.impl_abstract("mylib::a", lambda x: x.new_empty(x.shape))
            """,
            line=3,
            message_contains="2.4",
            target_torch="2.3",
        ),
        Invalid(
            """
            import torch

            from mylib.utils import TORCH_VERSION_AT_LEAST_2_4

            if TORCH_VERSION_AT_LEAST_2_4:
                register = torch.library.register_fake
            else:
                register = torch.library.impl_abstract
            """,
            line=8,
            message_contains="version gate at line 5",
        ),
        Invalid(
            """
            try:
                from torch.library import register_fake
            except ImportError:
                from torch.library import impl_abstract as register_fake

            @register_fake("mylib::twice")
            def _(x):
                return x.new_empty(x.shape[0] * 2)
            """,
            line=6,
            message_contains="version gate at line 1",
        ),
    ]

    @classmethod
    def could_match_code(cls, code: Any) -> bool:
        return OLD in code.identifiers

    def __init__(self, context: Any) -> None:
        super().__init__(context)
        self._in_import = 0
        self._attribute_names: set[int] = set()
        self._keyword_calls: set[int] = set()
        self._aliases: list[Any] = []
        # `register_fake` already imported from torch.library (alias, its import's names), and other uses of it.
        self._new_imports: list[tuple[Any, Any]] = []
        self._other_new_names = 0

    def visit_Import(self, node: cst.Import) -> None:
        self._in_import += 1

    def leave_Import(self, node: cst.Import) -> None:
        self._in_import -= 1

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        self._in_import += 1
        module = node.module
        if module is None or node.relative or isinstance(node.names, cst.ImportStar):
            return
        if self.context.module.code_for_node(module) == LIBRARY:
            self._aliases += [alias for alias in node.names if alias.evaluated_name == OLD]
            self._new_imports += [
                (alias, node.names) for alias in node.names if alias.evaluated_name == NEW and alias.asname is None
            ]

    def leave_ImportFrom(self, node: cst.ImportFrom) -> None:
        self._in_import -= 1

    def visit_Call(self, node: cst.Call) -> None:
        if any(arg.keyword is not None and arg.keyword.value in IMPL_ABSTRACT_KEYWORDS for arg in node.args):
            self._keyword_calls.add(id(node.func))

    def visit_Attribute(self, node: cst.Attribute) -> None:
        self._attribute_names.add(id(node.attr))
        if not self._in_import and node.attr.value == OLD and IMPL_ABSTRACT in self.qualified_names(node):
            self.report(node.attr, self._message(), data=node)

    def visit_Name(self, node: cst.Name) -> None:
        if self._in_import or id(node) in self._attribute_names:
            return
        if node.value == NEW and REGISTER_FAKE not in self.qualified_names(node):
            self._other_new_names += 1
        if IMPL_ABSTRACT in self.qualified_names(node):
            self.report(node, self._message(), data=node)

    @staticmethod
    def _message() -> str:
        return f"`{IMPL_ABSTRACT}` is deprecated (a FutureWarning since torch 2.4); use `{REGISTER_FAKE}`"

    def _span(self, node: Any) -> tuple[Position, Position]:
        code_range = self.context.positions()[node]
        return (
            Position(code_range.start.line, code_range.start.column + 1),
            Position(code_range.end.line, code_range.end.column + 1),
        )

    def leave_Module(self, node: cst.Module) -> None:
        mine = [finding for finding in self.context.findings if finding.code == self.code]
        if not mine:
            return
        attributes = [f for f in mine if not isinstance(f.data, cst.Name)]
        bare = [f for f in mine if isinstance(f.data, cst.Name)]
        for finding in attributes:
            blocked = self._why_no_fix([finding])
            if blocked is None:
                edit = Edit(NEW, finding.start, finding.end)
                finding.fix = Fix(Applicability.SAFE, f"Use `{REGISTER_FAKE}`", (edit,))
            else:
                finding.message += f"; not fixed automatically: {blocked}"
        if not bare:
            return
        blocked = self._why_no_fix(bare)
        if blocked is None and not self._aliases:
            blocked = "the name is not bound by `from torch.library import impl_abstract` in this module"
        # The import is renamed with the uses: an import that is itself a version gate's fallback blocks them all.
        if blocked is None:
            blocked = next((gate for alias in self._aliases if (gate := self._version_gate(alias))), None)
        renames_uses = any(alias.asname is None for alias in self._aliases)
        edits: list[Edit] = []
        if blocked is None:
            edits, blocked = self._import_edits(renames_uses)
        if blocked is not None:
            for finding in bare:
                finding.message += f"; not fixed automatically: {blocked}"
            return
        # A bare `impl_abstract` is renamed together with the import that binds it: every such finding gets
        # the same edits, so the file is never left with uses and an import that disagree.
        if renames_uses:
            edits += [Edit(NEW, f.start, f.end) for f in bare if isinstance(f.data, cst.Name) and f.data.value == OLD]
        for finding in bare:
            finding.fix = Fix(Applicability.SAFE, f"Use `{REGISTER_FAKE}`", tuple(edits))

    def _import_edits(self, renames_uses: bool) -> tuple[list[Edit], str | None]:
        """Rename each ``impl_abstract`` import to ``register_fake``; where ``register_fake`` is already
        imported from torch.library beside it, drop the old name instead."""
        if not renames_uses:
            return [Edit(NEW, *self._span(alias.name)) for alias in self._aliases], None
        if not re.search(rf"\b{NEW}\b", self.context.source.text):
            return [Edit(NEW, *self._span(alias.name)) for alias in self._aliases], None
        if self._other_new_names or not self._new_imports:
            return [], f"the module already uses the name `{NEW}`"
        edits = []
        for alias in self._aliases:
            names = next((names for _, names in self._new_imports if any(a is alias for a in names)), None)
            if alias.asname is not None or names is None:
                return [], f"the module already imports `{NEW}` in a form the fix does not rewrite"
            names = list(names)
            index = next(i for i, item in enumerate(names) if item is alias)
            if index + 1 < len(names):
                start, end = self._span(alias.name)[0], self._span(names[index + 1].name)[0]
            else:
                previous = names[index - 1]
                start, end = (
                    self._span(previous.asname.name if previous.asname else previous.name)[1],
                    self._span(alias.name)[1],
                )
            edits.append(Edit("", start, end))
        return edits, None

    def _why_no_fix(self, findings: list[Any]) -> str | None:
        if self.context.target_torch < REGISTER_FAKE_SINCE:
            return f"`register_fake` needs torch {REGISTER_FAKE_SINCE[0]}.{REGISTER_FAKE_SINCE[1]}+ (target-torch)"
        if any(id(finding.data) in self._keyword_calls for finding in findings):
            return "a call passes `qualname=` or `func=` by keyword, which `register_fake` takes positionally only"
        return next((gate for finding in findings if (gate := self._version_gate(finding.data))), None)

    def _version_gate(self, node: Any) -> str | None:
        """Why ``node`` is the old-torch branch of a version gate, which a rename would make the same as the
        other branch; None when it is not in one."""
        facts = self.context.facts()
        child, parent = node, facts.parent(node)
        while parent is not None:
            other = self._other_branch(parent, child)
            if other is not None:
                code = self.context.module.code_for_node
                test = code(parent.test) if isinstance(parent, (cst.If, cst.IfExp)) else ""
                if re.search(rf"\b{NEW}\b", code(other)) or _VERSION_CHECK.search(test):
                    line = self.context.positions()[parent].start.line
                    return (
                        f"it is a branch of the torch version gate at line {line}, for torch without `{NEW}`: "
                        f"renaming it would make both branches the same; drop the gate once every torch you "
                        f"support has `{NEW}`"
                    )
            child, parent = parent, facts.parent(parent)
        return None

    @staticmethod
    def _other_branch(parent: Any, child: Any) -> Any:
        """The other branch of the ``if``, conditional expression or ``try`` whose branch ``child`` is (an
        empty module for an ``if`` without ``else``), or None when ``child`` is no branch of ``parent``."""
        if isinstance(parent, (cst.If, cst.IfExp)) and child is not parent.test:
            other = parent.orelse if child is parent.body else parent.body
            return cst.Module([]) if other is None else other
        if isinstance(parent, cst.Try) and any(child is handler for handler in parent.handlers):
            return parent.body
        return None
