"""The one reading of what a module's names mean: scopes, bindings in order, imports as qualified names.

As ruff's ``SemanticModel`` and pyflakes' checker, on the standard library's ``ast``: one traversal in evaluation
order binds what each node introduces and resolves every read of a name to the bindings that may reach it.
Module and class bodies are visited in statement order; function and lambda bodies afterwards, so that they see
the bindings their enclosing scopes end with (as at call time). A binding replaces the earlier ones of its scope
only where it runs whenever they ran (the same branch or one around theirs): after ``try: import a as x`` /
``except ImportError: x = None`` both reach a read, after ``x = 1`` / ``x = 2`` only the second does.

What a read names (``qualified_names``): an import's module path plus the attributes read off it
(``torch._export.aot_load``; relative imports keep their dots, ``.aoti.compile``), a builtin as ``builtins.X``,
anything the module binds otherwise by where it is bound (``CONFIG``, ``Runner.path``, ``main.<locals>.so``). A
name bound by no scope is a builtin or nothing. Callees name a call, values a subscript (``f(x)`` is read as ``f``).
Everything is answered from the tree alone: the linter never imports the code it reads.
"""

from __future__ import annotations

import ast
import builtins
import functools
import itertools
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field

from aoti_lint.model.syntax_tree import child_fields

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

MODULE, CLASS, FUNCTION, LAMBDA, COMPREHENSION = "module", "class", "function", "lambda", "comprehension"

# How a binding binds. A plain assignment is `name = value` or `name: T = value` with a single target.
IMPORT, FROM_IMPORT, DEFINITION, CLASS_DEFINITION = "import", "from-import", "definition", "class"
ASSIGNMENT, OTHER_ASSIGNMENT, ARGUMENT, LOOP_VARIABLE = "assignment", "other-assignment", "argument", "loop"
WITH_VARIABLE, EXCEPTION, WALRUS, PATTERN, TYPE_PARAMETER = "with", "exception", "walrus", "pattern", "type-parameter"
IMPORTS = frozenset({IMPORT, FROM_IMPORT})

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
_TYPE_PARAMETERS = tuple(getattr(ast, name) for name in ("TypeVar", "ParamSpec", "TypeVarTuple") if hasattr(ast, name))


@dataclass(eq=False)
class Binding:
    """One binding of a name: what binds it, where, and what a read of it names."""

    name: str
    kind: str
    scope: Scope
    # The node that binds: the Name stored to, the import's alias, the def or class, the argument, the handler.
    node: ast.AST
    # The statement (or comprehension, or argument list) the binding belongs to.
    statement: ast.AST | None
    # What a read of the binding names: the imported path, or where the module binds it.
    qualified_name: str
    # The branches the binding runs in, from its scope's body down (see ``SemanticModel``).
    branch: tuple[int, ...]
    # Every read the binding may reach.
    references: list[ast.Name] = field(default_factory=list)

    @property
    def value(self) -> ast.expr | None:
        """The value a plain assignment gives the name, else None."""
        statement = self.statement
        if self.kind == ASSIGNMENT and isinstance(statement, ast.Assign | ast.AnnAssign):
            return statement.value
        return None


@dataclass(eq=False)
class Scope:
    """A module, class, function, lambda or comprehension scope and the bindings made in it."""

    kind: str
    node: ast.AST
    parent: Scope | None
    # What a name bound here is called outside (libcst's naming: `C.`, `f.<locals>.`).
    prefix: str
    # name -> the bindings that may reach the point the traversal has come to (at the end: those the scope ends with)
    live: dict[str, list[Binding]] = field(default_factory=dict)
    # name -> every binding of the scope, in order
    bindings: dict[str, list[Binding]] = field(default_factory=dict)
    # Names a function or lambda binds anywhere in its own body (local throughout it, as Python decides).
    local_names: frozenset[str] = frozenset()
    declared_global: frozenset[str] = frozenset()
    declared_nonlocal: frozenset[str] = frozenset()
    # The modules of its `from m import *` statements.
    star_imports: list[str] = field(default_factory=list)


class SemanticModel:
    """The scopes and bindings of one module, and the bindings each read of a name may reach."""

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
        self._names_at: dict[tuple[int, int], ast.AST] = {}  # a Name, an argument, a def or a class
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

    # -- questions ----------------------------------------------------------------------------------------------

    def bindings_of(self, name: ast.AST) -> tuple[Binding, ...] | None:
        """The bindings a read may reach (empty when none: a builtin, or unbound), or the binding a store makes;
        None when unknown (a star import may bind it) or the node is no name the model saw."""
        binding = self._binds.get(id(name))
        if binding is not None:
            return (binding,)
        return self._reads.get(id(name))

    def binding_made_by(self, node: ast.AST) -> Binding | None:
        """The binding a Name stored to, an import alias, a def, a class or an argument makes."""
        return self._binds.get(id(node))

    def scope_of(self, name: ast.Name) -> Scope | None:
        """The scope a name is read or stored in."""
        return self._scope_of_name.get(id(name))

    def name_at(self, line: int, column: int) -> ast.AST | None:
        """The Name node (or argument, def, class) starting at ``line`` and ``column`` (ast's: a byte offset in the
        line's UTF-8)."""
        return self._names_at.get((line, column))

    def qualified_names(self, node: ast.AST) -> set[str]:
        """What a name or an attribute chain on one names: the qualified names of every binding that may reach its
        first name, with the attributes after it. A call is named by its callee and a subscript by its value,
        within a chain too: ``Path(p).parent`` is ``pathlib.Path.parent``, how the value readings tell a path's
        methods."""
        parts = []
        while True:
            kind = type(node)
            if kind is ast.Attribute:
                parts.append(node.attr)  # type: ignore[attr-defined]
                node = node.value  # type: ignore[attr-defined]
            elif kind is ast.Call:
                node = node.func  # type: ignore[attr-defined]
            elif kind is ast.Subscript:
                node = node.value  # type: ignore[attr-defined]
            else:
                break
        if type(node) is not ast.Name:
            return set()
        return self.names_of(node, parts[::-1])

    def names_of(self, head: ast.AST, tail: list[str], *, across_modules: bool = True) -> set[str]:
        """The qualified names of ``head.tail[0].tail[1]...``, ``head`` a name (or an argument, a def, a class). A
        name imported from a module of the project is what that module binds it to (``project_names``), once the
        model knows its file's ``path``; ``across_modules=False``: as this module alone names it."""
        bindings = self.bindings_of(head)
        if bindings is None and across_modules and self.follow is not None:
            # Bound by nothing but star imports: the last of them whose module binds it.
            name = ".".join([getattr(head, "id", ""), *tail])
            for star in reversed(self.module.star_imports):
                found = self.follow(f"{star}{name}" if star.endswith(".") else f"{star}.{name}")
                if found is not None:
                    return found
        if not bindings:  # unbound here, or bound by nothing the model can see
            name = getattr(head, "id", "")
            return {".".join(["builtins", name, *tail])} if hasattr(builtins, name) else set()
        if tail:  # `torch = None` in an `except ImportError:`: None has no attributes to read
            bindings = tuple(b for b in bindings if not _is_none(b.value))
        names: set[str] = set()
        for binding in bindings:
            name = _joined(binding, tail)
            if across_modules and self.follow is not None and binding.kind in IMPORTS:
                followed = self.follow(name)
                if followed is not None:
                    names |= followed
                    continue
            names.add(name)
        return names

    def may_name(self, node: ast.AST, short_names: frozenset[str] | set[str]) -> bool:
        """Whether the node's qualified names can end in one of ``short_names``: a test of its spelling, to make
        before asking for its names. A call is named by its callee, a subscript by its value; a name keeps its own
        unless an ``as`` import renamed it."""
        while isinstance(node, ast.Call | ast.Subscript):
            node = node.func if isinstance(node, ast.Call) else node.value
        if type(node) is ast.Attribute:
            return node.attr in short_names
        return type(node) is ast.Name and self.may_be_named(node.id, short_names)

    def may_be_named(self, name: str, short_names: frozenset[str] | set[str]) -> bool:
        """Whether a name read can have a qualified name ending in one of ``short_names``: it is one, or an import
        renamed it, or (once the model knows its file) it is imported from a module the project may hold."""
        return (
            name in short_names or name in self.import_aliases or (self.path is not None and name in self.from_imported)
        )

    def only_binding(self, read: ast.AST) -> Binding | None:
        """The one binding a read may reach, or None (none, several, or unknown)."""
        found = self.bindings_of(read)
        return found[0] if found is not None and len(found) == 1 else None

    def references(self, binding: Binding) -> list[ast.Name] | None:
        """Every read of the binding when it is the only binding each of them may reach, else None."""
        if any(len(self._reads.get(id(read)) or ()) != 1 for read in binding.references):
            return None
        return list(binding.references)

    def may_be_import(self, read: ast.AST) -> bool:
        """Whether an import may be what a read reaches (or it is not known)."""
        found = self.bindings_of(read)
        return not found or any(binding.kind in IMPORTS for binding in found)

    def binds_only_a_module(self, name: str, module: str) -> bool:
        """Whether every binding of ``name``, in every scope, is a plain import of ``module`` (``import torch``,
        ``import torch.fx``), and no star import may bind it."""
        bindings = [binding for scope in self.scopes for binding in scope.bindings.get(name, ())]
        if any(scope.star_imports for scope in self.scopes):
            return False
        return all(
            binding.kind == IMPORT
            and (
                binding.node.name.partition(".")[0] == module  # type: ignore[attr-defined]
                if binding.node.asname is None  # type: ignore[attr-defined]
                else binding.node.name == module  # type: ignore[attr-defined]
            )
            for binding in bindings
        )

    def module_bindings(self, name: str) -> list[Binding]:
        """The module scope's bindings of a name, in order."""
        return self.module.bindings.get(name, [])

    # -- the traversal ------------------------------------------------------------------------------------------

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
        elif kind in _FUNCTIONS:
            self.functions.add(node.name)
            self._visit_function_header(node, scope)
            self._bind(node.name, DEFINITION, node, node, scope)
        elif kind is ast.ClassDef:
            for part in (*node.decorator_list, *node.bases, *node.keywords):
                self._visit(part, scope)
            inner = self._new_scope(CLASS, node, scope, f"{_outer_prefix(scope)}{node.name}.")
            self._visit_body(node.body, inner)
            self._bind(node.name, CLASS_DEFINITION, node, node, scope)
        elif kind is ast.Delete:
            for target in node.targets:
                if type(target) is ast.Name:
                    self._names_at[(target.lineno, target.col_offset)] = target
                    self._scope_of_name[id(target)] = scope
                    self._forget(target.id, scope)
                else:
                    self._visit(target, scope)
        elif kind is ast.Global or kind is ast.Nonlocal:
            pass  # read before the body (``_declarations``)
        else:
            self._visit(node, scope)

    def _visit_function_header(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda, scope: Scope) -> None:
        """Decorators, defaults and annotations run where the function is defined; the body later."""
        arguments = node.args
        parts: list[ast.AST] = [*arguments.defaults, *(d for d in arguments.kw_defaults if d is not None)]
        if not isinstance(node, ast.Lambda):
            parts = [*node.decorator_list, *parts]
            for argument in _arguments(arguments):
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
            LAMBDA if isinstance(node, ast.Lambda) else FUNCTION, node, scope, f"{_outer_prefix(scope)}{name}.<locals>."
        )
        globals_, nonlocals, local_names = _declarations(body)
        inner.declared_global, inner.declared_nonlocal = frozenset(globals_), frozenset(nonlocals)
        arguments = list(_arguments(node.args))
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
        for node in _walk_pattern(pattern):
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
            if kind in _COMPREHENSIONS:
                self._visit_comprehension(node, scope)
                continue
            if kind is ast.NamedExpr:
                self._visit(node.value, scope)  # type: ignore[attr-defined]
                target = _walrus_scope(scope)
                self._bind(node.target.id, WALRUS, node.target, node, target)  # type: ignore[attr-defined]
                continue
            if kind in _FUNCTIONS or kind is ast.ClassDef or kind in _STATEMENTS_OF_THEIR_OWN:
                self._visit_statement(node, scope)
                continue
            if kind is ast.Attribute:
                stack.append(node.value)  # type: ignore[attr-defined]
                continue
            names = child_fields(kind)
            found: list[ast.AST] = []
            for name in names:
                value = getattr(node, name, None)
                if type(value) is list:
                    found.extend(item for item in value if isinstance(item, ast.AST))
                elif isinstance(value, ast.AST):
                    found.append(value)
            stack.extend(reversed(found))

    def _visit_comprehension(self, node: ast.AST, scope: Scope) -> None:
        generators: list[ast.comprehension] = node.generators  # type: ignore[attr-defined]
        self._visit(generators[0].iter, scope)  # the first iterable is evaluated outside
        inner = self._new_scope(COMPREHENSION, node, scope, _outer_prefix(scope))
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
            target = _enclosing_binder(scope, name) or scope
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
            self._names_at[(node.lineno, node.col_offset)] = node  # type: ignore[attr-defined]
            self._scope_of_name[id(node)] = scope
        return binding

    def _forget(self, name: str, scope: Scope) -> None:
        """`del name`: the bindings it runs after no longer reach a read."""
        branch, depth = self._branch, len(self._branch)
        scope.live[name] = [b for b in scope.live.get(name, ()) if b.branch[:depth] != branch]

    def _read(self, node: ast.Name, scope: Scope) -> None:
        self._names_at[(node.lineno, node.col_offset)] = node
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


def _joined(binding: Binding, tail: list[str]) -> str:
    return ".".join([binding.qualified_name, *tail]) if tail else binding.qualified_name


def _is_none(value: ast.expr | None) -> bool:
    return type(value) is ast.Constant and value.value is None


def _outer_prefix(scope: Scope) -> str:
    return scope.prefix


def _walrus_scope(scope: Scope) -> Scope:
    """A walrus in a comprehension binds in the nearest scope that is none."""
    while scope.kind == COMPREHENSION and scope.parent is not None:
        scope = scope.parent
    return scope


def _enclosing_binder(scope: Scope, name: str) -> Scope | None:
    current = scope.parent
    while current is not None:
        if current.kind in (FUNCTION, LAMBDA) and name in current.local_names:
            return current
        current = current.parent
    return None


def _arguments(arguments: ast.arguments) -> Iterator[ast.arg]:
    yield from arguments.posonlyargs
    yield from arguments.args
    if arguments.vararg is not None:
        yield arguments.vararg
    yield from arguments.kwonlyargs
    if arguments.kwarg is not None:
        yield arguments.kwarg


def _walk_pattern(pattern: ast.AST) -> Iterator[ast.AST]:
    stack = [pattern]
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, ast.pattern):
            for name in child_fields(type(node)):
                value = getattr(node, name, None)
                if type(value) is list:
                    stack.extend(item for item in value if isinstance(item, ast.pattern))
                elif isinstance(value, ast.pattern):
                    stack.append(value)


def _declarations(body: list[ast.AST]) -> tuple[set[str], set[str], set[str]]:
    """A function body's `global` and `nonlocal` names and the names it binds, nested scopes aside (a walrus in a
    comprehension binds here)."""
    globals_: set[str] = set()
    nonlocals: set[str] = set()
    bound: set[str] = set()
    stack = list(body)
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind is ast.Name:
            if type(node.ctx) is not ast.Load:  # type: ignore[attr-defined]
                bound.add(node.id)  # type: ignore[attr-defined]
            continue
        if kind is ast.Global:
            globals_.update(node.names)  # type: ignore[attr-defined]
        elif kind is ast.Nonlocal:
            nonlocals.update(node.names)  # type: ignore[attr-defined]
        elif kind in _FUNCTIONS or kind is ast.ClassDef:
            bound.add(node.name)  # type: ignore[attr-defined]
            stack.extend(node.decorator_list)  # type: ignore[attr-defined]
            if kind is not ast.ClassDef:
                stack.extend(_defaults(node.args))  # type: ignore[attr-defined]
            else:
                stack.extend([*node.bases, *node.keywords])  # type: ignore[attr-defined]
            continue
        elif kind is ast.Lambda:
            stack.extend(_defaults(node.args))  # type: ignore[attr-defined]
            continue
        elif kind in _COMPREHENSIONS:
            bound.update(item.target.id for item in ast.walk(node) if type(item) is ast.NamedExpr)
            stack.append(node.generators[0].iter)  # type: ignore[attr-defined]
            continue
        elif kind is ast.Import or kind is ast.ImportFrom:
            for alias in node.names:  # type: ignore[attr-defined]
                if alias.name != "*":
                    bound.add(alias.asname or alias.name.partition(".")[0])
            continue
        elif kind is ast.ExceptHandler or kind in (ast.MatchAs, ast.MatchStar):
            if node.name:  # type: ignore[attr-defined]
                bound.add(node.name)  # type: ignore[attr-defined]
        elif kind is ast.MatchMapping and node.rest:  # type: ignore[attr-defined]
            bound.add(node.rest)  # type: ignore[attr-defined]
        for name in child_fields(kind):
            value = getattr(node, name, None)
            if type(value) is list:
                stack.extend(item for item in value if isinstance(item, ast.AST))
            elif isinstance(value, ast.AST):
                stack.append(value)
    return globals_, nonlocals, bound


def _defaults(arguments: ast.arguments) -> list[ast.AST]:
    return [*arguments.defaults, *(d for d in arguments.kw_defaults if d is not None)]


@functools.lru_cache(maxsize=2)
def model_of(tree: ast.Module) -> SemanticModel:
    """The model of a tree, built once however many readers ask (the tree of one text is shared: ``parse``)."""
    return SemanticModel(tree)
