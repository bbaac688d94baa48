"""AOTI303: ``torch.library.impl_abstract``, renamed ``register_fake`` in torch 2.4."""

from __future__ import annotations

import ast
import re

from aoti_lint.diagnostics import Applicability, Edit, Finding, Fix, Position
from aoti_lint.knowledge.custom_ops import IMPL_ABSTRACT, IMPL_ABSTRACT_KEYWORDS, REGISTER_FAKE, REGISTER_FAKE_SINCE
from aoti_lint.knowledge.references import PR_REGISTER_FAKE, REGISTER_FAKE_DOCS
from aoti_lint.rules.base import AstModule, AstReader, AstRule, Invalid, Valid

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

OLD = IMPL_ABSTRACT.rsplit(".", 1)[-1]
NEW = REGISTER_FAKE.rsplit(".", 1)[-1]
LIBRARY = IMPL_ABSTRACT.rsplit(".", 1)[0]
# A condition that asks which torch runs: `TORCH_VERSION_AT_LEAST_2_4`, `torch.__version__ >= ...`,
# `hasattr(torch.library, "register_fake")`.
_OLD = frozenset({OLD})
# The nodes that spell a name without a ``Name`` node (``_other_identifiers``).
_OTHER_IDENTIFIERS = (
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.ClassDef,
    ast.arg,
    ast.keyword,
    ast.ExceptHandler,
    ast.Global,
    ast.Nonlocal,
    ast.MatchAs,
    ast.MatchStar,
    ast.MatchMapping,
    ast.MatchClass,
)
_VERSION_CHECK = re.compile(rf"(?i)version|\bhasattr\(.*\b{NEW}\b")


class DeprecatedImplAbstract(AstRule):
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

    @classmethod
    def reader(cls, module: AstModule) -> AstReader:
        return _ImplAbstractReferences(cls, module)


class _ImplAbstractReferences(AstReader):
    """AOTI303 in one module: every reference the semantic model names ``torch.library.impl_abstract``, and the fix
    that renames it, or why there is none."""

    node_types = (ast.ImportFrom, ast.Call, ast.Attribute, ast.Name, *_OTHER_IDENTIFIERS)

    def __init__(self, rule: Any, module: AstModule) -> None:
        super().__init__(rule, module)
        self.model = module.model
        self.parents = module.parents
        # The callees of calls passing `qualname=` or `func=` by keyword.
        self.keyword_calls: set[int] = set()
        # `from torch.library import impl_abstract [as x]`; `register_fake` imported from torch.library without
        # `as` (with its statement's names); how often the name `register_fake` means something else.
        self.aliases: list[ast.alias] = []
        self.new_imports: list[tuple[ast.alias, list[ast.alias]]] = []
        self.other_new_names = 0
        # The references: an attribute (`torch.library.impl_abstract`) or a bare name (`impl_abstract`, `fake`).
        self.attributes: list[ast.Attribute] = []
        self.bare: list[ast.Name] = []

    def visit(self, node: ast.AST) -> None:
        kind = type(node)
        if kind is ast.ImportFrom:
            self._import_from(node)  # type: ignore[arg-type]
        elif kind is ast.Call:
            if any(keyword.arg in IMPL_ABSTRACT_KEYWORDS for keyword in node.keywords):  # type: ignore[attr-defined]
                self.keyword_calls.add(id(node.func))  # type: ignore[attr-defined]
        elif kind is ast.Attribute:
            if node.attr == OLD and IMPL_ABSTRACT in self.model.qualified_names(node):  # type: ignore[attr-defined]
                self.attributes.append(node)  # type: ignore[arg-type]
        elif kind is ast.Name:
            # Only a name that may be `impl_abstract` (or an import renaming it) is resolved.
            spelled = node.id  # type: ignore[attr-defined]
            may_be = spelled == NEW or self.model.may_be_named(spelled, _OLD)
            found = self.model.qualified_names(node) if may_be else set()
            if spelled == NEW and REGISTER_FAKE not in found:
                self.other_new_names += 1
            if IMPL_ABSTRACT in found:
                self.bare.append(node)  # type: ignore[arg-type]
        elif NEW in _other_identifiers(node):
            self.other_new_names += 1

    def findings(self) -> list[Finding]:
        return self._reported()

    def _import_from(self, node: ast.ImportFrom) -> None:
        if node.module != LIBRARY or node.level:
            return
        self.aliases += [alias for alias in node.names if alias.name == OLD]
        self.new_imports += [(alias, node.names) for alias in node.names if alias.name == NEW and alias.asname is None]

    def _reported(self) -> list[Finding]:
        message = f"`{IMPL_ABSTRACT}` is deprecated (a FutureWarning since torch 2.4); use `{REGISTER_FAKE}`"
        path, finding = self.module.path, self.rule.make_finding
        found = []
        for attribute in self.attributes:
            end = self.module.end(attribute)
            start = Position(end.row, end.column - len(OLD))
            blocked = self._why_no_fix([attribute])
            if blocked is None:
                fix = Fix(Applicability.SAFE, f"Use `{REGISTER_FAKE}`", (Edit(NEW, start, end),))
                found.append(finding(path, start, end, message, fix))
            else:
                found.append(finding(path, start, end, f"{message}; not fixed automatically: {blocked}"))
        if not self.bare:
            return found
        spans = [(self.module.start(name), self.module.end(name)) for name in self.bare]
        blocked = self._why_no_fix(self.bare)
        if blocked is None and not self.aliases:
            blocked = "the name is not bound by `from torch.library import impl_abstract` in this module"
        # The import is renamed with the uses: an import that is itself a version gate's fallback blocks them all.
        if blocked is None:
            blocked = next((gate for alias in self.aliases if (gate := self._version_gate(alias))), None)
        renames_uses = any(alias.asname is None for alias in self.aliases)
        edits: list[Edit] = []
        if blocked is None:
            edits, blocked = self._import_edits(renames_uses)
        if blocked is not None:
            unfixed = f"{message}; not fixed automatically: {blocked}"
            return found + [finding(path, start, end, unfixed) for start, end in spans]
        # A bare `impl_abstract` is renamed together with the import that binds it: every such finding gets the
        # same edits, so the file is never left with uses and an import that disagree.
        if renames_uses:
            edits += [
                Edit(NEW, start, end) for name, (start, end) in zip(self.bare, spans, strict=True) if name.id == OLD
            ]
        fix = Fix(Applicability.SAFE, f"Use `{REGISTER_FAKE}`", tuple(edits))
        found += [finding(path, start, end, message, fix) for start, end in spans]
        return found

    def _import_edits(self, renames_uses: bool) -> tuple[list[Edit], str | None]:
        """Rename each ``impl_abstract`` import to ``register_fake``; where ``register_fake`` is already
        imported from torch.library beside it, drop the old name instead."""
        renames = [Edit(NEW, self.module.start(alias), _after(self.module.start(alias), OLD)) for alias in self.aliases]
        if not renames_uses or not re.search(rf"\b{NEW}\b", self.module.text):
            return renames, None
        if self.other_new_names or not self.new_imports:
            return [], f"the module already uses the name `{NEW}`"
        edits = []
        for alias in self.aliases:
            names = next((names for _, names in self.new_imports if any(a is alias for a in names)), None)
            if alias.asname is not None or names is None:
                return [], f"the module already imports `{NEW}` in a form the fix does not rewrite"
            index = next(i for i, item in enumerate(names) if item is alias)
            if index + 1 < len(names):
                start, end = self.module.start(alias), self.module.start(names[index + 1])
            else:
                start, end = self.module.end(names[index - 1]), self.module.end(alias)
            edits.append(Edit("", start, end))
        return edits, None

    def _why_no_fix(self, nodes: Sequence[ast.AST]) -> str | None:
        if self.module.target_torch < REGISTER_FAKE_SINCE:
            return f"`register_fake` needs torch {REGISTER_FAKE_SINCE[0]}.{REGISTER_FAKE_SINCE[1]}+ (target-torch)"
        if any(id(node) in self.keyword_calls for node in nodes):
            return "a call passes `qualname=` or `func=` by keyword, which `register_fake` takes positionally only"
        return next((gate for node in nodes if (gate := self._version_gate(node))), None)

    def _version_gate(self, node: ast.AST) -> str | None:
        """Why ``node`` is the old-torch branch of a version gate, which a rename would make the same as the
        other branch; None when it is not in one."""
        child, parent = node, self.parents.get(node)
        while parent is not None:
            other = _other_branch(parent, child)
            if other is not None:
                test = self.module.segment(parent.test) if type(parent) in (ast.If, ast.IfExp) else ""  # type: ignore[attr-defined]
                if re.search(rf"\b{NEW}\b", self._text_of(other)) or _VERSION_CHECK.search(test):
                    return (
                        f"it is a branch of the torch version gate at line {parent.lineno}, for torch without "  # type: ignore[attr-defined]
                        f"`{NEW}`: renaming it would make both branches the same; drop the gate once every torch you "
                        f"support has `{NEW}`"
                    )
            child, parent = parent, self.parents.get(parent)
        return None

    def _text_of(self, nodes: list[ast.AST]) -> str:
        """The source from the first node's start to the last one's end (the comments between them too)."""
        if not nodes:
            return ""
        lines = self.module.lines
        first, last = nodes[0], nodes[-1]
        if first.lineno == last.end_lineno:  # type: ignore[attr-defined]
            return lines[first.lineno - 1].encode()[first.col_offset : last.end_col_offset].decode()  # type: ignore[attr-defined]
        head = lines[first.lineno - 1].encode()[first.col_offset :].decode()  # type: ignore[attr-defined]
        tail = lines[last.end_lineno - 1].encode()[: last.end_col_offset].decode()  # type: ignore[attr-defined]
        return head + "".join(lines[first.lineno : last.end_lineno - 1]) + tail  # type: ignore[attr-defined]


def _other_branch(parent: ast.AST, child: ast.AST) -> list[ast.AST] | None:
    """The other branch of the ``if``, conditional expression or ``try`` whose branch ``child`` is (empty for an
    ``if`` without ``else``), or None when ``child`` is no branch of ``parent``."""
    kind = type(parent)
    if kind is ast.If:
        if any(child is statement for statement in parent.body):  # type: ignore[attr-defined]
            return list(parent.orelse)  # type: ignore[attr-defined]
        if any(child is statement for statement in parent.orelse):  # type: ignore[attr-defined]
            return list(parent.body)  # type: ignore[attr-defined]
        return None
    if kind is ast.IfExp and child is not parent.test:  # type: ignore[attr-defined]
        return [parent.orelse if child is parent.body else parent.body]  # type: ignore[attr-defined]
    if kind in _TRIES and any(child is handler for handler in parent.handlers):  # type: ignore[attr-defined]
        return list(parent.body)  # type: ignore[attr-defined]
    return None


_TRIES = (ast.Try, getattr(ast, "TryStar", ast.Try))


def _after(start: Position, name: str) -> Position:
    return Position(start.row, start.column + len(name))


def _other_identifiers(node: ast.AST) -> list[str]:
    """The names a node spells that are no ``Name`` node: a def's or a class's, a parameter's, a keyword argument's,
    an ``except ... as``'s, ``global``/``nonlocal``'s, a pattern's."""
    kind = type(node)
    if kind in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
        return [node.name]  # type: ignore[attr-defined]
    if kind is ast.arg:
        return [node.arg]  # type: ignore[attr-defined]
    if kind is ast.keyword or kind is ast.ExceptHandler:
        name = node.arg if kind is ast.keyword else node.name  # type: ignore[attr-defined]
        return [name] if name else []
    if kind is ast.Global or kind is ast.Nonlocal:
        return list(node.names)  # type: ignore[attr-defined]
    if kind is ast.MatchAs or kind is ast.MatchStar:
        return [node.name] if node.name else []  # type: ignore[attr-defined]
    if kind is ast.MatchMapping:
        return [node.rest] if node.rest else []  # type: ignore[attr-defined]
    if kind is ast.MatchClass:
        return list(node.kwd_attrs)  # type: ignore[attr-defined]
    return []
