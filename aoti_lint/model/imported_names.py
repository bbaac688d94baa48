"""libcst's qualified names for most nodes a rule asks about, read from ``ast`` without its scope analysis.

A rule asks libcst's ``QualifiedNameProvider`` what ``os.environ`` or ``aot_compile`` names. Its first answer
resolves the scopes of the whole module: on torch's 1,500-line distributed test helper that was two thirds of
the file's lint time, for two settings that matter. Yet almost every name a rule asks about is bound once, by
the module itself: an import, a def, a module constant (ruff's semantic model gets far on this fact too).
Such a name means the same in every scope, since libcst collects all of a scope's bindings whatever their
order, but for one case: a module-level read before the binding, which is checked by position.

``ImportedNames`` reads those bindings from the ``ast`` tree; ``QualifiedNames`` gives libcst's answer from
them (a plain ``import torch`` repeated inside a function changes nothing), and from a function's own imports
(``FunctionImports``: a name that only one import of the function binds, read directly in its body after that
import, as torch's ``aoti_load_package`` imports ``load_package``). It asks libcst's scopes only for the rest: a
name bound anywhere else (a parameter, an assignment in a def, a function's import read elsewhere or bound again,
a star import). A node libcst names nothing (an attribute's last part, a keyword's name, a name
inside an import statement) is left to libcst too. ``tests/test_imported_names.py`` compares the two on every
node of the fixtures and rule examples.
"""

from __future__ import annotations

import ast
import builtins
import functools
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from aoti_lint.model.syntax_tree import child_fields, children, walk

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    import libcst as cst
    from libcst.metadata import MetadataWrapper

    from aoti_lint.model.node_positions import NodePositions

# An import statement as libcst's ImportAssignment reads it: the module it imports from ("" for `import`,
# with leading dots when relative) and every alias of the statement as (dotted name, as-name or None).
_Statement = tuple[str, tuple[tuple[str, str | None], ...]]
# `as NAME` anywhere (imports, but also with/except: a superset is fine), across a line continuation.
AS_ALIAS = re.compile(r"\bas[\s\\]+([^\W\d]\w*)")

_SCOPES = frozenset({ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda})


def _subclasses(base: type) -> frozenset[type]:
    found: set[type] = {base}
    subclass: type
    for subclass in base.__subclasses__():
        found |= _subclasses(subclass)
    return frozenset(found)


# Every statement type, to tell a statement by its exact type (cheaper than isinstance, on every node).
_STATEMENTS = _subclasses(ast.stmt)
# Scopes of their own whose bindings never reach the module's: comprehensions; a walrus binds outside the
# comprehension it sits in, so its target counts as shadowed wherever it is.
_INNER_SCOPES = frozenset({ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp, ast.NamedExpr})
# Bindings by a plain name field: `except E as e`, match captures, Python 3.12's type parameters.
_OTHER_BINDINGS = frozenset(
    {ast.ExceptHandler, ast.MatchAs, ast.MatchStar, ast.MatchMapping}
    | {getattr(ast, name) for name in ("TypeVar", "ParamSpec", "TypeVarTuple") if hasattr(ast, name)}
)


def _dotted_prefixes(name: str) -> Iterator[str]:
    """``a.b.c``, ``a.b``, ``a``: the names ``import a.b.c`` binds, longest first (libcst's _gen_dotted_names)."""
    while name:
        yield name
        name = name.rpartition(".")[0]


def _qualified_for_import(statement: _Statement, full_name: str) -> set[str]:
    """libcst's ``ImportAssignment.get_qualified_names_for``, on strings: it tries every alias of the
    statement, not only the one that bound the name."""
    module, aliases = statement
    results = set()
    for name, asname in aliases:
        for real_name in _dotted_prefixes(name):
            as_name = real_name
            if module.endswith("."):
                real_name = f"{module}{real_name}"
            elif module:
                real_name = f"{module}.{real_name}"
            if asname is not None:
                as_name = asname
            if full_name.startswith(as_name):
                remaining = full_name.split(as_name, 1)[1]
                if remaining and not remaining.startswith("."):
                    continue
                remaining = remaining.lstrip(".")
                results.add(f"{real_name}.{remaining}" if remaining else real_name)
                break
    return results


@dataclass(frozen=True)
class ImportedNames:
    """What the module's own statements bind, and which names something else binds."""

    # Every dotted name a module-level import binds (``a``, ``a.b`` for ``import a.b``), with its statements.
    imports: dict[str, list[_Statement]]
    # Names bound at module level by anything but an import (``x = ...``, ``def f``, ``for x in``): libcst
    # names them after themselves.
    locals: frozenset[str]
    # First parts of names bound otherwise: a parameter, a name inside a def or class, an import inside one
    # (but a plain `import x` the module makes too), a `global`, a comprehension's variable, or both an import
    # and an assignment of the module.
    shadowed: frozenset[str]
    # Names spelled where libcst's scope analysis names no node: an attribute's last part (``environ`` in
    # ``os.environ``), a keyword argument's name (``min`` in ``Dim("b", min=2)``).
    unnamed_spellings: frozenset[str]
    # The name of every def in the module, at any depth.
    functions: frozenset[str] = frozenset()
    # Every `as` name of an import, at any depth: the only names whose qualified names end otherwise.
    import_aliases: frozenset[str] = frozenset()

    def names_of(self, dotted: str, bare: bool) -> set[str] | None:
        """libcst's qualified names for a name (``bare``) or an attribute chain spelled ``dotted``; None where
        they are not known from the module's statements, or libcst may name no node so spelled (a bare name
        spelled as an attribute's last part or a keyword somewhere)."""
        if bare and dotted in self.unnamed_spellings:
            return None
        return self.qualified(dotted)

    def qualified(self, full_name: str) -> set[str] | None:
        """libcst's qualified names for a node spelled ``full_name`` in a place its scope analysis visits;
        None when the name's first part is bound other than by the module's own statements."""
        root = full_name.partition(".")[0]
        if root in self.shadowed:
            return None
        for prefix in _dotted_prefixes(full_name):
            if prefix in self.locals:
                return {full_name}
            statements = self.imports.get(prefix)
            if statements:
                return {name for statement in statements for name in _qualified_for_import(statement, full_name)}
        # Not bound in the module: a builtin by its first part (`dict.fromkeys` is `builtins.dict`), else nothing.
        return {f"builtins.{root}"} if hasattr(builtins, root) else set()


def read(tree: ast.Module) -> ImportedNames | None:
    """The module's bindings; None when a star import leaves any name's binding unknown."""
    imports: dict[str, list[_Statement]] = {}
    local_names: set[str] = set()
    shadowed: set[str] = set()
    unnamed: set[str] = set()
    functions: set[str] = set()
    import_aliases: set[str] = set()
    # libcst orders a module-level read after the module-level bindings before it (an import further down
    # does not count): where each name is first read at module level, and where its bindings end.
    first_read: dict[str, tuple[int, int]] = {}
    binding_ends: dict[str, list[tuple[int, int]]] = {}
    statements_of: dict[str, set[_Statement]] = {}
    # `import torch` (or `import torch.fx`) names `torch.x` as `torch.x` in any scope that sees it. A function
    # importing it again changes nothing when the module does too: whether every import of a root inside a
    # def or class is of that plain form, and which roots the module binds otherwise (`from`, `as`).
    nested: dict[str, bool] = {}
    aliased: set[str] = set()
    Name, Attribute, Import, ImportFrom = ast.Name, ast.Attribute, ast.Import, ast.ImportFrom

    def bind(name: str, end: tuple[int, int]) -> None:
        binding_ends.setdefault(name, []).append(end)

    # (node, whether it binds in the module's scope, whether it may read there, the end of its statement): a
    # def's name is bound at module level and its decorators, defaults and annotations are read there, its
    # body does neither. Elsewhere (a lambda, a comprehension) a read may count as the module's.
    stack: list[tuple[ast.AST, bool, bool, tuple[int, int]]] = [(tree, True, True, (0, 0))]
    while stack:
        node, top, reads, end = stack.pop()
        kind = type(node)
        if kind in _STATEMENTS:
            end = (node.end_lineno or 0, node.end_col_offset or 0)  # type: ignore[attr-defined]
        if kind is Name:
            name = node.id  # type: ignore[attr-defined]
            context = type(node.ctx)  # type: ignore[attr-defined]
            if context is ast.Load:
                if reads:
                    position = (node.lineno, node.col_offset)  # type: ignore[attr-defined]
                    first_read[name] = min(first_read.get(name, position), position)
            elif top and context is ast.Store:
                local_names.add(name)
                bind(name, end)
            else:
                shadowed.add(name)
            continue
        if kind is Attribute:
            unnamed.add(node.attr)  # type: ignore[attr-defined]
        elif kind is Import or kind is ImportFrom:
            module = "." * node.level + (node.module or "") if kind is ImportFrom else ""  # type: ignore[attr-defined]
            aliases = tuple((alias.name, alias.asname) for alias in node.names)  # type: ignore[attr-defined]
            if any(name == "*" for name, _ in aliases):
                return None
            statement = (module, aliases)
            import_aliases.update(asname for _, asname in aliases if asname is not None)
            for name, asname in aliases:
                bound = [asname] if asname is not None else ([name] if module else list(_dotted_prefixes(name)))
                for dotted in bound:
                    root = dotted.partition(".")[0]
                    plain = not module and asname is None
                    if top:
                        # The same statement again (`import torch` in every cell of a notebook) adds no name:
                        # each read would try them all.
                        same = imports.setdefault(dotted, [])
                        if statement not in same:
                            same.append(statement)
                        statements_of.setdefault(root, set()).add(statement)
                        bind(root, end)
                        if not plain:
                            aliased.add(root)
                    else:
                        nested[root] = nested.get(root, True) and plain
            continue
        elif kind is ast.keyword:
            if node.arg:  # type: ignore[attr-defined]
                unnamed.add(node.arg)  # type: ignore[attr-defined]
        elif kind in _SCOPES:
            if kind is ast.FunctionDef or kind is ast.AsyncFunctionDef:
                functions.add(node.name)  # type: ignore[attr-defined]
            if kind is not ast.Lambda:
                if top:
                    local_names.add(node.name)  # type: ignore[attr-defined]
                    bind(node.name, end)  # type: ignore[attr-defined]
                else:
                    shadowed.add(node.name)  # type: ignore[attr-defined]
                stack.extend((item, False, False, end) for item in node.body)  # type: ignore[attr-defined]
            top = False
        elif kind in _INNER_SCOPES:
            top = False
        elif kind is ast.arg:
            shadowed.add(node.arg)  # type: ignore[attr-defined]
        elif kind is ast.Global or kind is ast.Nonlocal:
            shadowed.update(node.names)  # type: ignore[attr-defined]
        elif kind is ast.AnnAssign and node.value is None:  # type: ignore[attr-defined]
            if type(node.target) is Name:  # type: ignore[attr-defined]
                shadowed.add(node.target.id)  # type: ignore[attr-defined]
        elif kind in _OTHER_BINDINGS:
            name = getattr(node, "rest" if kind is ast.MatchMapping else "name", None)
            if name:
                shadowed.add(name)
        if kind not in _SCOPES or kind is ast.Lambda:
            stack.extend([(item, top, reads, end) for item in children(node)])
            continue
        for field in child_fields(kind):
            if field == "body":
                continue  # pushed above, as the scope's own
            value = getattr(node, field, None)
            if type(value) is list:
                stack.extend((item, top, reads, end) for item in value if isinstance(item, ast.AST))
            elif isinstance(value, ast.AST):
                stack.append((value, top, reads, end))
    shadowed.update(local_names & statements_of.keys())
    for root, plain in nested.items():
        if not plain or root not in statements_of or root in aliased:
            shadowed.add(root)
    for name, read_at in first_read.items():
        ends = binding_ends.get(name)
        if ends is None:
            continue  # a builtin or nothing: no binding for the order to hide
        # Read after every binding: all of them reach it. After the first: enough when all bind alike.
        alike = name in local_names or len(statements_of.get(name, ())) == 1 or name not in aliased
        if read_at <= (min(ends) if alike else max(ends)):
            shadowed.add(name)
    return ImportedNames(
        imports,
        frozenset(local_names - shadowed),
        frozenset(shadowed),
        frozenset(unnamed),
        frozenset(functions),
        frozenset(import_aliases),
    )


_Span = tuple[tuple[int, int], tuple[int, int]]
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


@dataclass(frozen=True)
class FunctionImports:
    """A function's own names that an import inside it binds and nothing else there does: libcst names a read of
    one directly in the function's body after that import (``QualifiedNames``)."""

    body: _Span  # from its first statement to its end: ast's (line, byte column)
    # name -> the import statement, and where it ends: libcst names no read before it
    imports: dict[str, tuple[_Statement, tuple[int, int]]]
    # The spans of the scopes inside it (definitions whole, lambdas, comprehensions): a read there is another
    # scope's, or evaluated in its own (a decorator, a default), and left to libcst.
    inner: tuple[_Span, ...]


def may_be_named(node: ast.AST, short_names: frozenset[str] | set[str], aliases: frozenset[str]) -> bool:
    """``QualifiedNames.may_name`` on an ``ast`` node: whether libcst's qualified names of it can end in one of
    ``short_names``, ``aliases`` being the imports' `as` names (``ImportedNames.import_aliases``)."""
    while isinstance(node, ast.Call | ast.Subscript):
        node = node.func if isinstance(node, ast.Call) else node.value
    if type(node) is ast.Attribute:
        return node.attr in short_names
    if type(node) is not ast.Name:
        return False
    return node.id in short_names or node.id in aliases


def function_imports(tree: ast.Module) -> list[FunctionImports]:
    """The ``FunctionImports`` of every function that has some."""
    found = (_own_imports(node) for node in walk(tree) if isinstance(node, _FUNCTIONS) and node.body)
    return [imports for imports in found if imports is not None]


def function_import_names(functions: Sequence[FunctionImports], at: tuple[int, int], dotted: str) -> set[str] | None:
    """libcst's qualified names of a read spelled ``dotted`` at ``at`` (ast's line and byte column) when it sits
    directly in the body of one of ``functions``, after the import of that function that alone binds its first
    part; None for any other read."""
    around = [function for function in functions if function.body[0] <= at < function.body[1]]
    if not around:
        return None
    function = max(around, key=lambda candidate: candidate.body[0])  # the innermost
    if any(first <= at < last for first, last in function.inner):
        return None
    imported = function.imports.get(dotted.partition(".")[0])
    if imported is None or at < imported[1]:
        return None  # no such import, or a read before it
    return _qualified_for_import(imported[0], dotted)


def _own_imports(function: ast.FunctionDef | ast.AsyncFunctionDef) -> FunctionImports | None:
    counts: dict[str, int] = {}
    imported: dict[str, tuple[_Statement, tuple[int, int]]] = {}
    declared: set[str] = set()  # global, nonlocal, or bound by a walrus in a scope inside
    inner: list[_Span] = []
    arguments = function.args
    bound = [argument.arg for argument in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs)]
    bound += [rest.arg for rest in (arguments.vararg, arguments.kwarg) if rest is not None]
    stack: list[ast.AST] = list(function.body)
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind in _FUNCTIONS or kind is ast.ClassDef or kind is ast.Lambda:
            inner.append(_span_of(item))
            if kind is not ast.Lambda:
                bound.append(item.name)  # type: ignore[attr-defined]
            # What it evaluates in this scope (decorators, defaults, bases) may bind by a walrus.
            body = getattr(item, "body", ())
            body = body if isinstance(body, list) else [body]  # a lambda's expression
            for part in children(item):
                if part not in body:
                    declared |= _walrus_targets(part)
            continue
        if kind in _COMPREHENSIONS:
            inner.append(_span_of(item))
            declared |= _walrus_targets(item)  # a walrus there binds in this function
            continue
        if kind is ast.Name:
            if type(item.ctx) is not ast.Load:  # type: ignore[attr-defined]
                bound.append(item.id)  # type: ignore[attr-defined]
            continue
        if kind is ast.Import or kind is ast.ImportFrom:
            level = getattr(item, "level", 0) or 0
            module = "." * level + (getattr(item, "module", None) or "") if kind is ast.ImportFrom else ""
            aliases = tuple((alias.name, alias.asname) for alias in item.names)  # type: ignore[attr-defined]
            for name, asname in aliases:
                name = asname or (name if module else name.partition(".")[0])
                bound.append(name)
                imported[name] = ((module, aliases), _span_of(item)[1])
            continue
        if kind is ast.Global or kind is ast.Nonlocal:
            declared.update(item.names)  # type: ignore[attr-defined]
        elif kind is ast.NamedExpr:
            bound.append(item.target.id)  # type: ignore[attr-defined]
        elif kind in _OTHER_BINDINGS:
            name = getattr(item, "rest" if kind is ast.MatchMapping else "name", None)
            if name:
                bound.append(name)
        stack.extend(children(item))
    for name in bound:
        counts[name] = counts.get(name, 0) + 1
    # Bound once, by an import, and neither declared global or nonlocal nor bound by a walrus in a scope inside.
    once = {name: statement for name, statement in imported.items() if counts[name] == 1 and name not in declared}
    if not once:
        return None
    first = function.body[0]
    return FunctionImports(((first.lineno, first.col_offset), _span_of(function)[1]), once, tuple(inner))


def _span_of(node: ast.AST) -> _Span:
    """Where a node starts (a definition at its first decorator's `@`) and ends: ast's line and byte column."""
    start = min(
        [(node.lineno, node.col_offset)]  # type: ignore[attr-defined]
        + [(d.lineno, d.col_offset - 1) for d in getattr(node, "decorator_list", ())]
    )
    return start, (node.end_lineno or 0, node.end_col_offset or 0)  # type: ignore[attr-defined]


def _walrus_targets(node: ast.AST) -> set[str]:
    return {item.target.id for item in walk(node) if isinstance(item, ast.NamedExpr)}


def dotted_name(node: cst.CSTNode) -> str | None:
    """``a.b.c`` for a libcst name or attribute chain (a call by its callee, as libcst names it); else None."""
    kind = type(node).__name__
    if kind == "Call":
        return dotted_name(node.func)  # type: ignore[attr-defined]
    parts = []
    while kind == "Attribute":
        parts.append(node.attr.value)  # type: ignore[attr-defined]
        node = node.value  # type: ignore[attr-defined]
        kind = type(node).__name__
    if kind != "Name":
        return None
    parts.append(node.value)  # type: ignore[attr-defined]
    return ".".join(reversed(parts))


def unnamed_parts(module: cst.Module) -> set[int]:
    """The ids of the nodes libcst's scope analysis does not visit (and so names nothing) among those a
    statement holds: everything inside an import statement, the name of a def or a class. Found by walking
    statements only, never expressions."""
    import libcst as cst

    ids: set[int] = set()
    stack: list[Any] = list(module.body)
    while stack:
        statement = stack.pop()
        if isinstance(statement, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            for small in statement.body:
                if isinstance(small, (cst.Import, cst.ImportFrom)):
                    ids.update(_expression_ids(small))
            continue
        if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
            ids.add(id(statement.name))
        for field in ("body", "orelse", "handlers", "finalbody", "cases"):
            value = getattr(statement, field, None)
            if isinstance(value, Sequence):
                stack.extend(value)
            elif isinstance(value, cst.IndentedBlock):
                stack.extend(value.body)
            elif value is not None:
                stack.append(value)  # a one-line suite, `else`, `finally`, `elif`, handler or case
    return ids


def _expression_ids(statement: cst.CSTNode) -> Iterator[int]:
    stack = [statement]
    while stack:
        node = stack.pop()
        yield id(node)
        stack.extend(node.children)


class QualifiedNames:
    """libcst's ``QualifiedNameProvider`` for one module: libcst's scopes are resolved (for the whole module)
    only for a node ``ImportedNames`` cannot answer."""

    def __init__(self, wrapper: MetadataWrapper, text: str) -> None:
        from aoti_lint.model.syntax_tree import parse

        self._wrapper = wrapper
        self._text = text
        self._aliases: frozenset[str] | None = None
        tree = parse(text)
        self._tree = None if isinstance(tree, BaseException) else tree
        self._imported = None if self._tree is None else read(self._tree)
        self._unnamed_parts: set[int] | None = None
        self._scopes: Any = None
        self._function_imports: list[FunctionImports] | None = None
        self._lines: list[str] | None = None

    @property
    def text(self) -> str:
        """The module's source text."""
        return self._text

    @functools.cached_property
    def positions(self) -> NodePositions:
        """Each node's range (``aoti_lint.model.node_positions``), shared with ``dataflow.ModuleFacts``."""
        from aoti_lint.model.node_positions import NodePositions

        return NodePositions(self._wrapper.module, self._text)

    def __call__(self, node: cst.CSTNode) -> set[str]:
        names = self._from_imports(node)
        if names is not None:
            return names
        # What libcst's QualifiedNameProvider gives, without its pass over every node of the module: the
        # scope its analysis recorded for the node names it (no scope recorded, no name).
        if self._scopes is None:
            from libcst.metadata import ScopeProvider

            self._scopes = self._wrapper.resolve(ScopeProvider)
        scope = self._scopes.get(node)
        return set() if scope is None else {name.name for name in scope.get_qualified_names_for(node)}

    def may_name(self, node: cst.CSTNode, short_names: frozenset[str] | set[str]) -> bool:
        """Whether ``node`` can have a qualified name whose last part is in ``short_names``: a syntactic test
        to make before asking for names that only libcst's scope analysis may give.

        libcst names an attribute after its last part, a call after its callee and a subscript after its
        value (``f(x)(y)`` is named as ``f``); a name keeps its own unless an ``as`` import renamed it.
        """
        kind = type(node).__name__
        while kind == "Call" or kind == "Subscript":
            node = node.func if kind == "Call" else node.value  # type: ignore[attr-defined]
            kind = type(node).__name__
        if kind == "Attribute":
            return node.attr.value in short_names  # type: ignore[attr-defined]
        if kind != "Name":
            return False
        name = node.value  # type: ignore[attr-defined]
        if name in short_names:
            return True
        if self._aliases is None:
            # The imports' own `as` names when ast read them; else any `as NAME` of the text (a superset).
            imported = self._imported
            self._aliases = imported.import_aliases if imported is not None else frozenset(AS_ALIAS.findall(self._text))
        return name in self._aliases

    def may_be_function(self, name: str) -> bool:
        """Whether some def of the module has this name (so that a read of it may be that function)."""
        return self._imported is None or name in self._imported.functions

    def _from_imports(self, node: cst.CSTNode) -> set[str] | None:
        imported = self._imported
        if imported is None:
            return None
        dotted = dotted_name(node)
        if dotted is None:
            return None
        if self._unnamed_parts is None:
            self._unnamed_parts = unnamed_parts(self._wrapper.module)
        if id(node) in self._unnamed_parts:
            return None
        bare = type(node).__name__ == "Name"
        names = imported.names_of(dotted, bare=bare)
        if names is None and not (bare and dotted in imported.unnamed_spellings):
            return self._from_function_imports(node, dotted)
        return names

    def _from_function_imports(self, node: cst.CSTNode, dotted: str) -> set[str] | None:
        """The names of a read directly in a function's body of a name only an import of that function binds
        (``FunctionImports``); None for any other."""
        if self._function_imports is None:
            self._function_imports = function_imports(self._tree) if self._tree is not None else []
        if not self._function_imports:
            return None
        start = self.positions[node].start
        if self._lines is None:
            from aoti_lint.model.syntax_tree import source_lines

            self._lines = source_lines(self._text)
        line = self._lines[start.line - 1] if start.line <= len(self._lines) else ""
        at = (start.line, len(line[: start.column].encode()))  # ast's byte column
        return function_import_names(self._function_imports, at, dotted)
