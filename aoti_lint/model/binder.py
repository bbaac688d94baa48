"""The traversal that fills a module's scopes (``aoti_lint.model.semantic``): it binds what each node introduces, in
evaluation order, and records the bindings each read of a name may reach."""

from __future__ import annotations

import ast
import itertools
from collections import deque

from aoti_lint.model.bindings import (
    ARGUMENT,
    ASSIGNMENT,
    CLASS,
    CLASS_DEFINITION,
    COMPREHENSION,
    COMPREHENSIONS,
    DEFINITION,
    EXCEPTION,
    FROM_IMPORT,
    FUNCTION,
    FUNCTIONS,
    IMPORT,
    LAMBDA,
    LOOP_VARIABLE,
    MODULE,
    OTHER_ASSIGNMENT,
    PATTERN,
    WALRUS,
    WITH_VARIABLE,
    Binding,
    Scope,
    arguments_of,
    declarations,
    enclosing_binder,
    walk_pattern,
    walrus_scope,
)
from aoti_lint.model.syntax_tree import children

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any


class Binder:
    """Scopes and bindings of one module, filled on creation."""

    def __init__(self, tree: ast.Module) -> None:
        self.tree = tree
        # The module's file, and what a name imported from another module of the project stands for there
        # (``project_names.place``): None until the model is told.
        self.path: str | None = None
        self.follow: Callable[[str], set[str] | None] | None = None
        self.module = Scope(MODULE, tree, None, "")
        self.scopes: list[Scope] = [self.module]
        # id(Name) -> the bindings a read may reach (empty: none; None: unknown, a star import may bind it)
        self._reads: dict[int, tuple[Binding, ...] | None] = {}
        # id(Name, alias, def, argument...) -> the binding it makes
        self._binds: dict[int, Binding] = {}
        # (line, byte column) -> the Name node starting there
        self._scope_of_name: dict[int, Scope] = {}
        self.functions: set[str] = set()
        self.import_aliases: set[str] = set()
        # Every name a `from` import binds, at any depth: one may name what another module binds it to.
        self.from_imported: set[str] = set()
        self._branch: tuple[int, ...] = ()
        # Every read and binding in the order made, for a loop's body to be read again (``_again``).
        self._read_log: list[tuple[ast.Name, Scope]] = []
        self._bind_log: list[Binding] = []
        self._branch_ids = itertools.count(1)
        self._deferred: deque[tuple[ast.AST, Scope]] = deque()
        self._visit_body(tree.body, self.module)
        while self._deferred:
            node, scope = self._deferred.popleft()
            self._visit_deferred(node, scope)

    def _visit_body(self, body: list[ast.stmt], scope: Scope) -> None:
        for statement in body:
            self._visit_statement(statement, scope)

    def _branch_of(self, body: list[ast.stmt], scope: Scope) -> None:
        """Visit a body that may or may not run."""
        outer = self._branch
        self._branch = (*outer, next(self._branch_ids))
        self._visit_body(body, scope)
        self._branch = outer

    def _visit_statement(self, node: Any, scope: Scope) -> None:
        kind = type(node)
        if kind is ast.Assign:
            self._visit(node.value, scope)
            plain = len(node.targets) == 1 and type(node.targets[0]) is ast.Name
            for target in node.targets:
                self._bind_target(target, ASSIGNMENT if plain else OTHER_ASSIGNMENT, node, scope)
        elif kind is ast.AnnAssign:
            self._visit(node.annotation, scope)
            if node.value is not None:
                self._visit(node.value, scope)
                self._bind_target(node.target, ASSIGNMENT, node, scope)
            elif type(node.target) is not ast.Name:
                self._visit(node.target, scope)
        elif kind is ast.AugAssign:
            target = node.target
            if type(target) is ast.Name:
                self._read(target, scope)
            else:
                self._visit(target, scope)
            self._visit(node.value, scope)
            if type(target) is ast.Name:
                self._bind(target.id, OTHER_ASSIGNMENT, target, node, scope, record=False)
        elif kind is ast.For or kind is ast.AsyncFor:
            self._visit(node.iter, scope)
            outer = self._branch
            self._branch = (*outer, next(self._branch_ids))
            reads, binds = len(self._read_log), len(self._bind_log)
            self._bind_target(node.target, LOOP_VARIABLE, node, scope)
            self._visit_body(node.body, scope)
            self._again(reads, binds)
            self._branch = outer
            self._branch_of(node.orelse, scope)
        elif kind is ast.While:
            reads, binds = len(self._read_log), len(self._bind_log)
            self._visit(node.test, scope)
            self._branch_of(node.body, scope)
            self._again(reads, binds)
            self._branch_of(node.orelse, scope)
        elif kind is ast.If:
            self._visit(node.test, scope)
            self._branch_of(node.body, scope)
            self._branch_of(node.orelse, scope)
        elif kind is ast.With or kind is ast.AsyncWith:
            for item in node.items:
                self._visit(item.context_expr, scope)
                if item.optional_vars is not None:
                    self._bind_target(item.optional_vars, WITH_VARIABLE, node, scope)
            self._visit_body(node.body, scope)
        elif kind is ast.Try or kind.__name__ == "TryStar":
            outer = self._branch
            self._branch = (*outer, next(self._branch_ids))
            self._visit_body(node.body, scope)
            self._visit_body(node.orelse, scope)
            self._branch = outer
            for handler in node.handlers:
                self._branch = (*outer, next(self._branch_ids))
                if handler.type is not None:
                    self._visit(handler.type, scope)
                if handler.name:
                    binding = self._bind(handler.name, EXCEPTION, handler, handler, scope, record=False)
                self._visit_body(handler.body, scope)
                if handler.name:  # Python deletes the name when the handler ends
                    scope.live[handler.name] = [b for b in scope.live.get(handler.name, []) if b is not binding]
                self._branch = outer
            self._visit_body(node.finalbody, scope)
        elif kind is ast.Match:
            self._visit(node.subject, scope)
            for case in node.cases:
                outer = self._branch
                self._branch = (*outer, next(self._branch_ids))
                self._visit_pattern(case.pattern, scope)
                if case.guard is not None:
                    self._visit(case.guard, scope)
                self._visit_body(case.body, scope)
                self._branch = outer
        elif kind is ast.Import:
            for alias in node.names:
                if alias.asname is not None:
                    self.import_aliases.add(alias.asname)
                    self._bind(alias.asname, IMPORT, alias, node, scope, alias.name, record=False)
                else:
                    first = alias.name.partition(".")[0]
                    self._bind(first, IMPORT, alias, node, scope, first, record=False)
        elif kind is ast.ImportFrom:
            module = "." * node.level + (node.module or "")
            for alias in node.names:
                if alias.name == "*":
                    scope.star_imports.append(module)
                    continue
                if alias.asname is not None:
                    self.import_aliases.add(alias.asname)
                self.from_imported.add(alias.asname or alias.name)
                qualified = f"{module}{alias.name}" if module.endswith(".") else f"{module}.{alias.name}"
                self._bind(alias.asname or alias.name, FROM_IMPORT, alias, node, scope, qualified, record=False)
        elif kind in FUNCTIONS:
            self.functions.add(node.name)
            self._visit_function_header(node, scope)
            self._bind(node.name, DEFINITION, node, node, scope)
        elif kind is ast.ClassDef:
            for part in (*node.decorator_list, *node.bases, *node.keywords):
                self._visit(part, scope)
            inner = self._new_scope(CLASS, node, scope, f"{scope.prefix}{node.name}.")
            self._visit_body(node.body, inner)
            self._bind(node.name, CLASS_DEFINITION, node, node, scope)
        elif kind is ast.Delete:
            for target in node.targets:
                if type(target) is ast.Name:
                    self._scope_of_name[id(target)] = scope
                    self._forget(target.id, scope)
                else:
                    self._visit(target, scope)
        elif kind is ast.Global or kind is ast.Nonlocal:
            pass  # read before the body (``declarations``)
        else:
            self._visit(node, scope)

    def _visit_function_header(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda, scope: Scope) -> None:
        """Decorators, defaults and annotations run where the function is defined; the body later."""
        arguments = node.args
        parts: list[ast.AST] = [*arguments.defaults, *(d for d in arguments.kw_defaults if d is not None)]
        if not isinstance(node, ast.Lambda):
            parts = [*node.decorator_list, *parts]
            for argument in arguments_of(arguments):
                if argument.annotation is not None:
                    parts.append(argument.annotation)
            if node.returns is not None:
                parts.append(node.returns)
        for part in parts:
            self._visit(part, scope)
        self._deferred.append((node, scope))

    def _visit_deferred(self, node: Any, scope: Scope) -> None:
        name = "<lambda>" if isinstance(node, ast.Lambda) else node.name
        body = [node.body] if isinstance(node, ast.Lambda) else node.body
        inner = self._new_scope(
            LAMBDA if isinstance(node, ast.Lambda) else FUNCTION, node, scope, f"{scope.prefix}{name}.<locals>."
        )
        globals_, nonlocals, local_names = declarations(body)
        inner.declared_global, inner.declared_nonlocal = frozenset(globals_), frozenset(nonlocals)
        arguments = list(arguments_of(node.args))
        inner.local_names = frozenset((local_names | {a.arg for a in arguments}) - globals_ - nonlocals)
        outer = self._branch
        self._branch = ()
        for argument in arguments:
            self._bind(argument.arg, ARGUMENT, argument, node.args, inner)
        if isinstance(node, ast.Lambda):
            self._visit(node.body, inner)
        else:
            self._visit_body(body, inner)  # type: ignore[arg-type]
        self._branch = outer

    def _new_scope(self, kind: str, node: ast.AST, parent: Scope, prefix: str) -> Scope:
        scope = Scope(kind, node, parent, prefix)
        self.scopes.append(scope)
        return scope

    def _visit_pattern(self, pattern: ast.AST, scope: Scope) -> None:
        for node in walk_pattern(pattern):
            kind = type(node)
            name = node.rest if kind is ast.MatchMapping else getattr(node, "name", None)  # type: ignore[attr-defined]
            if name and kind in (ast.MatchAs, ast.MatchStar, ast.MatchMapping):
                self._bind(name, PATTERN, node, pattern, scope, record=False)
            elif kind is ast.MatchValue or kind is ast.MatchSingleton:
                self._visit(node, scope)
            elif kind is ast.MatchClass:
                self._visit(node.cls, scope)  # type: ignore[attr-defined]
            elif kind is ast.MatchMapping:
                for key in node.keys:  # type: ignore[attr-defined]
                    self._visit(key, scope)

    def _visit(self, root: ast.AST, scope: Scope) -> None:
        """An expression (or a simple statement), in evaluation order."""
        stack: list[ast.AST] = [root]
        while stack:
            node = stack.pop()
            kind = type(node)
            if kind is ast.Name:
                if type(node.ctx) is ast.Store:  # type: ignore[attr-defined]
                    self._bind(node.id, OTHER_ASSIGNMENT, node, None, scope)  # type: ignore[attr-defined]
                else:
                    self._read(node, scope)  # type: ignore[arg-type]
                continue
            if kind is ast.Lambda:
                self._visit_function_header(node, scope)  # type: ignore[arg-type]
                continue
            if kind in COMPREHENSIONS:
                self._visit_comprehension(node, scope)
                continue
            if kind is ast.NamedExpr:
                self._visit(node.value, scope)  # type: ignore[attr-defined]
                target = walrus_scope(scope)
                self._bind(node.target.id, WALRUS, node.target, node, target)  # type: ignore[attr-defined]
                continue
            if kind in FUNCTIONS or kind is ast.ClassDef or kind in _STATEMENTS_OF_THEIR_OWN:
                self._visit_statement(node, scope)
                continue
            if kind is ast.Attribute:
                stack.append(node.value)  # type: ignore[attr-defined]
                continue
            stack.extend(reversed(children(node)))

    def _visit_comprehension(self, node: ast.AST, scope: Scope) -> None:
        generators: list[ast.comprehension] = node.generators  # type: ignore[attr-defined]
        self._visit(generators[0].iter, scope)  # the first iterable is evaluated outside
        inner = self._new_scope(COMPREHENSION, node, scope, scope.prefix)
        for index, generator in enumerate(generators):
            if index:
                self._visit(generator.iter, inner)
            self._bind_target(generator.target, LOOP_VARIABLE, generator, inner)
            for condition in generator.ifs:
                self._visit(condition, inner)
        if isinstance(node, ast.DictComp):
            self._visit(node.key, inner)
            self._visit(node.value, inner)
        else:
            self._visit(node.elt, inner)  # type: ignore[attr-defined]

    def _bind_target(self, target: ast.AST, kind: str, statement: ast.AST, scope: Scope) -> None:
        if type(target) is ast.Name:
            self._bind(target.id, kind, target, statement, scope)
        elif isinstance(target, ast.Tuple | ast.List):
            for element in target.elts:
                self._bind_target(element, OTHER_ASSIGNMENT if kind == ASSIGNMENT else kind, statement, scope)
        elif type(target) is ast.Starred:
            self._bind_target(target.value, OTHER_ASSIGNMENT if kind == ASSIGNMENT else kind, statement, scope)
        else:
            self._visit(target, scope)  # an attribute or a subscript: its value is read

    def _bind(
        self,
        name: str,
        kind: str,
        node: ast.AST,
        statement: ast.AST | None,
        scope: Scope,
        qualified: str | None = None,
        *,
        record: bool = True,
    ) -> Binding:
        target = scope
        if name in scope.declared_global:
            target = self.module
        elif name in scope.declared_nonlocal:
            target = enclosing_binder(scope, name) or scope
        if qualified is None:
            # A module's variable is named apart from any import path: `os = fake` makes `os.environ` no environ.
            local = target.kind == MODULE and kind not in (DEFINITION, CLASS_DEFINITION)
            qualified = f"<module>.{name}" if local else f"{target.prefix}{name}"
        binding = Binding(name, kind, target, node, statement, qualified, self._branch if target is scope else ())
        target.bindings.setdefault(name, []).append(binding)
        self._bind_log.append(binding)
        if target is scope:
            branch, depth = self._branch, len(self._branch)
            kept = [b for b in scope.live.get(name, ()) if b.branch[:depth] != branch]
            kept.append(binding)
            scope.live[name] = kept
        else:  # bound from a function: it may or may not have run
            target.live.setdefault(name, []).append(binding)
        self._binds[id(node)] = binding
        if record:  # where a reader may ask about it: a name stored to, an argument, a def or a class
            self._scope_of_name[id(node)] = scope
        return binding

    def _forget(self, name: str, scope: Scope) -> None:
        """`del name`: the bindings it runs after no longer reach a read."""
        branch, depth = self._branch, len(self._branch)
        scope.live[name] = [b for b in scope.live.get(name, ()) if b.branch[:depth] != branch]

    def _read(self, node: ast.Name, scope: Scope) -> None:
        self._scope_of_name[id(node)] = scope
        found = self._lookup(node.id, scope)
        self._read_log.append((node, scope))
        self._reads[id(node)] = found
        if found:
            for binding in found:
                binding.references.append(node)

    def _again(self, reads: int, binds: int) -> None:
        """A loop's body runs again: what it binds may reach the reads of it that come before."""
        made = {id(binding) for binding in self._bind_log[binds:]}
        if not made:
            return
        for node, scope in self._read_log[reads:]:
            found = self._reads.get(id(node))
            if found is None:
                continue
            later = [b for b in self._lookup(node.id, scope) or () if id(b) in made and b not in found]
            if later:
                self._reads[id(node)] = (*found, *later)
                for binding in later:
                    binding.references.append(node)

    def _lookup(self, name: str, scope: Scope) -> tuple[Binding, ...] | None:
        current: Scope | None = scope
        stars = False
        while current is not None:
            if current.kind == CLASS and current is not scope:
                current = current.parent  # a class's names are not seen by the scopes inside it
                continue
            if name in current.declared_global:
                current = self.module
                continue
            live = current.live.get(name)
            if live:
                return tuple(live)
            if name in current.local_names:
                return ()  # a local not bound yet: Python does not look outside
            stars = stars or bool(current.star_imports)
            current = current.parent
        return None if stars else ()


# Statements an expression walk may meet (a simple statement given to ``_visit``) whose names bind.


_STATEMENTS_OF_THEIR_OWN = frozenset({ast.Import, ast.ImportFrom, ast.Assign, ast.AnnAssign, ast.AugAssign})
