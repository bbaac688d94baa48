"""What binds a name, where, and what a read of it names: the semantic model's plain data (``Binding``, ``Scope``),
the kinds of bindings, and the readings of a function's body the traversal asks for (``declarations``)."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass, field

from aoti_lint.model.syntax_tree import children, walk

MODULE, CLASS, FUNCTION, LAMBDA, COMPREHENSION = "module", "class", "function", "lambda", "comprehension"

# How a binding binds. A plain assignment is `name = value` or `name: T = value` with a single target.
IMPORT, FROM_IMPORT, DEFINITION, CLASS_DEFINITION = "import", "from-import", "definition", "class"
ASSIGNMENT, OTHER_ASSIGNMENT, ARGUMENT, LOOP_VARIABLE = "assignment", "other-assignment", "argument", "loop"
WITH_VARIABLE, EXCEPTION, WALRUS, PATTERN = "with", "exception", "walrus", "pattern"
IMPORTS = frozenset({IMPORT, FROM_IMPORT})

FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


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


def joined(binding: Binding, tail: list[str]) -> str:
    return ".".join([binding.qualified_name, *tail]) if tail else binding.qualified_name


def is_none(value: ast.expr | None) -> bool:
    return type(value) is ast.Constant and value.value is None


def walrus_scope(scope: Scope) -> Scope:
    """A walrus in a comprehension binds in the nearest scope that is none."""
    while scope.kind == COMPREHENSION and scope.parent is not None:
        scope = scope.parent
    return scope


def enclosing_binder(scope: Scope, name: str) -> Scope | None:
    current = scope.parent
    while current is not None:
        if current.kind in (FUNCTION, LAMBDA) and name in current.local_names:
            return current
        current = current.parent
    return None


def arguments_of(arguments: ast.arguments) -> Iterator[ast.arg]:
    yield from arguments.posonlyargs
    yield from arguments.args
    if arguments.vararg is not None:
        yield arguments.vararg
    yield from arguments.kwonlyargs
    if arguments.kwarg is not None:
        yield arguments.kwarg


def walk_pattern(pattern: ast.AST) -> Iterator[ast.AST]:
    stack = [pattern]
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, ast.pattern):
            stack.extend(child for child in children(node) if isinstance(child, ast.pattern))


def declarations(body: list[ast.AST]) -> tuple[set[str], set[str], set[str]]:
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
        elif kind in FUNCTIONS or kind is ast.ClassDef:
            bound.add(node.name)  # type: ignore[attr-defined]
            stack.extend(node.decorator_list)  # type: ignore[attr-defined]
            if kind is not ast.ClassDef:
                stack.extend(defaults_of(node.args))  # type: ignore[attr-defined]
            else:
                stack.extend([*node.bases, *node.keywords])  # type: ignore[attr-defined]
            continue
        elif kind is ast.Lambda:
            stack.extend(defaults_of(node.args))  # type: ignore[attr-defined]
            continue
        elif kind in COMPREHENSIONS:
            bound.update(item.target.id for item in walk(node) if type(item) is ast.NamedExpr)
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
        stack.extend(children(node))
    return globals_, nonlocals, bound


def defaults_of(arguments: ast.arguments) -> list[ast.AST]:
    return [*arguments.defaults, *(d for d in arguments.kw_defaults if d is not None)]
