"""A function's local names, read from ``ast``: the single assignment libcst's scopes would give a read, in the
plain cases, without resolving the scopes of the whole module.

``ModuleFacts.single_value`` asks what value a name read holds. libcst answers from its scope analysis of the
module, which costs five times the parse; in a deployment script the names asked about are mostly a function's
parameters (``aot_compile(model, (x,))``) or a local set once (``so = aot_compile(...)``, then
``aot_load(so)``). Those two cases are answered here, as libcst answers them:

- a read of a parameter of the function it is in: libcst's referents include the parameter, so there is no
  single assigned value;
- a read after a function's bindings of the name, all plain ``name = value`` (or ``name: T = value``, which
  libcst counts alike): the one that ends before it, or none when several do (``x = a`` then ``x = b``);
- in a function inside no other, a read of a name the function does not bind and the module never assigns
  with ``=`` (an import, a def, a class, a builtin): no assigned value either.

- a read directly in the module's scope (a script, a notebook's cells) of a name every binding of which is a
  plain ``name = value`` or an import there: the binding before it when there is one only (libcst drops the
  later ones in the same scope), else none. A script assigning one name again and again (``so = ...`` per model,
  ``import torch`` per cell) is read without libcst's scope analysis, quadratic in such bindings.

``lone_parameter``, ``may_be_import`` and ``references`` answer the reader's other questions about such names
in the same cases; ``references`` also for a module constant bound nowhere else, or bound several times as above
(None once a read sees it and another binding). Anything else (a name bound
twice or in another way anywhere in the function, a ``global``/``nonlocal`` name, a read in a nested scope or
an f-string, before its assignment, a name a string may mention as an annotation) is ``NOT_KNOWN``: libcst's
scopes decide. ``tests/test_local_bindings.py`` compares every answer with libcst's.
"""

from __future__ import annotations

import ast
import bisect
import functools
import keyword
import re
import unicodedata
from dataclasses import dataclass, field

from aoti_lint.model.syntax_tree import child_fields, walk

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import cast

    from aoti_lint.model.imported_names import FunctionImports
else:

    def cast(kind: object, value: object) -> object:
        return value


NOT_KNOWN = object()
_SEEN_BY_FUNCTIONS = object()  # a name some function reads (``_module_level_reads``)

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
# Nodes whose body is a scope of its own: a read inside one is not the enclosing function's direct read.
_SCOPES: tuple[type[ast.AST], ...] = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_SCOPES += (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
_WORD = re.compile(r"\w+")
# Where libcst parses a string as code, with a superset of its tests: an annotation, a subscript of a name (a typing
# generic), the arguments of TypeVar, NewType and cast (libcst checks their qualified names; an `as` name may be one).
_HINT_CALLS = frozenset({"TypeVar", "NewType", "cast"})
# What such a string holds when it is surely one plain expression: a type, a dotted name, a subscript of them.
_PLAIN_HINT = re.compile(r"[\w\s.,\[\]()|*'\"-]*")
# Nor is a read inside an f-string: before Python 3.12, ast may place it wrongly.
_NOT_DIRECT = (*_SCOPES, ast.JoinedStr)
# A plain assignment: `name = value`, or `name: T = value` (libcst counts either binding once its statement ends).
_Assignment = ast.Assign | ast.AnnAssign
# The node types ``FunctionLocals._other_bindings`` reads: the walk asks it about these alone (most nodes are none).
_OTHER_BINDINGS: frozenset[type] = frozenset(
    {
        ast.ImportFrom,
        ast.alias,
        ast.MatchClass,
        ast.Global,
        ast.Nonlocal,
        ast.arg,
        ast.Subscript,
        ast.Call,
        ast.AnnAssign,
        ast.ExceptHandler,
        ast.ClassDef,
        ast.MatchAs,
        ast.MatchStar,
        ast.MatchMapping,
        *(kind for name in ("TypeVar", "ParamSpec", "TypeVarTuple", "TypeAlias") if (kind := getattr(ast, name, None))),
    }
)
_NOT_DIRECT_KINDS = frozenset(_NOT_DIRECT)


# Statements binding names otherwise than by a plain assignment, whose bindings ``_other_assignment`` places.
_OTHER_ASSIGNMENTS = frozenset(
    {ast.For, ast.AsyncFor, ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Import, ast.ImportFrom}
)


def _other_assignment(node: ast.stmt, function: _Function) -> None:
    """Where the names a statement of the function's own body binds take effect for libcst's order of bindings and
    reads: a `for` target's right after the target (libcst counts one there, before the iterable and the body); an
    assignment's or an import's after the statement (libcst counts one when it leaves it: `a, b = f(a)` reads an
    older `a`). A plain assignment is recorded as such (``_walk``); `import a.b`, which libcst names `a.b`, not."""
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        point = (node.end_lineno or 0, node.end_col_offset or 0)
        for alias in node.names:
            if alias.asname is not None or ("." not in alias.name and alias.name != "*"):
                function.taking_effect.setdefault(alias.asname or alias.name, []).append(point)
        return
    end: ast.AST = node
    if isinstance(node, (ast.For, ast.AsyncFor)):
        targets: list[ast.expr] = [node.target]
        end = node.target
    elif isinstance(node, ast.Assign):
        targets = node.targets
    elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
        targets = [node.target]
    else:
        return
    if isinstance(node, (ast.Assign, ast.AnnAssign)) and _plain_target(node) is not None:
        return
    point = (getattr(end, "end_lineno", 0) or 0, getattr(end, "end_col_offset", 0) or 0)
    for target in targets:
        for name in walk(target):
            if type(name) is ast.Name and type(name.ctx) is ast.Store:
                function.taking_effect.setdefault(name.id, []).append(point)


def _plain_target(node: _Assignment) -> ast.Name | None:
    """The one name a plain assignment binds: ``name = value`` or ``name: T = value``; None for any other."""
    if isinstance(node, ast.AnnAssign):
        return node.target if node.value is not None and isinstance(node.target, ast.Name) else None
    target = node.targets[0] if len(node.targets) == 1 else None
    return target if isinstance(target, ast.Name) else None


def _target(node: _Assignment) -> ast.Name:
    """The name of an assignment ``_plain_target`` recorded."""
    return node.target if isinstance(node, ast.AnnAssign) else node.targets[0]  # type: ignore[return-value]


def _plain_hint(value: str) -> bool:
    """Whether a string libcst may parse as code is one plain expression for it: no binding, no walrus, no
    assignment (each of which its scope analysis counts). Parsed with ``ast`` only when it holds more than names,
    dots, brackets and commas; what ``ast`` cannot parse counts as not plain."""
    if _PLAIN_HINT.fullmatch(value) and not any(keyword.iskeyword(word) for word in _WORD.findall(value)):
        return True
    try:
        tree = ast.parse(value)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return (
        len(tree.body) == 1
        and isinstance(tree.body[0], ast.Expr)
        and not any(isinstance(node, (ast.NamedExpr, ast.Lambda, *_SCOPES)) for node in walk(tree))
    )


def folds_names(text: str) -> bool:
    """Whether some word of the text is not its own NFKC form, which ``ast`` gives identifiers and libcst does not
    (U+FF58, the fullwidth x, is ``x`` to one and another name to the other): a superset of the identifiers,
    strings and comments included. ``ast``'s names of such a text are not libcst's."""
    return not text.isascii() and any(unicodedata.normalize("NFKC", word) != word for word in _WORD.findall(text))


@dataclass
class _Function:
    parameters: dict[str, list[ast.arg]] = field(default_factory=dict)
    declared: set[str] = field(default_factory=set)  # named by `global` or `nonlocal` anywhere inside
    # name -> its bindings anywhere inside (nested scopes too); a plain `name = value` of the function's own
    # body as its ast.Assign (or ast.AnnAssign), any other binding as None.
    bindings: dict[str, list[_Assignment | None]] = field(default_factory=dict)
    # name -> its reads anywhere inside, each with whether it is one of the function's own body
    reads: dict[str, list[tuple[ast.Name, bool]]] = field(default_factory=dict)
    # name -> where each of some of its other bindings of the function's own body takes effect for libcst (ast's
    # line and byte column): a `for` target's end, a tuple or augmented assignment's end (``_other_assignment``)
    taking_effect: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    _ordered: dict[str, _InOrder] = field(default_factory=dict)

    def ordered(self, name: str) -> _InOrder:
        """The name's bindings in the order of the text, all plain assignments of this function's own body."""
        found = self._ordered.get(name)
        if found is None:
            found = self._ordered[name] = _in_text_order(
                [(*_span(binding), binding) for binding in self.bindings[name] if binding is not None]
            )
        return found


# Statements that hold others: a read in one may run after a binding written below it (a loop), or not at all.
_COMPOUND_NAMES = ("If", "For", "AsyncFor", "While", "Try", "TryStar", "With", "AsyncWith", "Match", "FunctionDef")
_COMPOUND = tuple(
    getattr(ast, name) for name in (*_COMPOUND_NAMES, "AsyncFunctionDef", "ClassDef") if hasattr(ast, name)
)

# Bindings in the order of the text: where each starts, where each ends (ast's line and byte column), and each's
# assignment (None for an import).
_InOrder = tuple[list[tuple[int, int]], list[tuple[int, int]], list[_Assignment | None]]


def _in_text_order(bindings: list[tuple[tuple[int, int], tuple[int, int], _Assignment | None]]) -> _InOrder:
    """``bindings`` (start, end, assignment) sorted by where they start. They do not overlap: each is a statement,
    or an import's name."""
    bindings = sorted(bindings, key=lambda binding: binding[0])
    return [start for start, _, _ in bindings], [end for _, end, _ in bindings], [it for _, _, it in bindings]


def _span(node: ast.stmt | ast.alias) -> tuple[tuple[int, int], tuple[int, int]]:
    """Where a statement (or an import's name) starts and ends: ast's line and byte column."""
    return (node.lineno, node.col_offset), (node.end_lineno or 0, node.end_col_offset or 0)


class FunctionLocals:
    """The reads of names in functions' own bodies, and what each function binds, from one walk of the tree."""

    def __init__(self, tree: ast.Module, lines: list[str]) -> None:
        self._lines = lines
        self._tree = tree
        # (line, column in characters) of a Name read directly in a function's body -> (name node, function,
        # whether the function is inside no other)
        self._reads: dict[tuple[int, int], tuple[ast.Name, _Function, bool]] = {}
        # The same for the reads in f-strings directly in a function's body, by the position ast gives them (before
        # Python 3.12, a later read of the same text gets the first one's): only ``lone_parameter`` asks, whose
        # answer depends on the name and the function alone.
        self._formatted_at: dict[tuple[int, int], tuple[ast.Name, _Function, bool]] = {}
        # The whole module: how often each name is bound anywhere, the names stored to (as by `x = ...`)
        # outside functions, named by `global`/`nonlocal`, read inside f-strings; every read of each name
        # with whether it is inside a function; plain `name = value` statements at module level.
        self._bound_anywhere: dict[str, int] = {}
        # name -> (module, `as` name) of each import binding it anywhere (`import a.b` binds `a`); the module is
        # "" for `from m import name`.
        self._imports: dict[str, list[tuple[str, str | None]]] = {}
        self._from_aliases: set[int] = set()
        self._stored_outside_functions: set[str] = set()
        self._declared_anywhere: set[str] = set()
        self._formatted_reads: set[str] = set()
        self._all_reads: dict[str, list[tuple[ast.Name, bool]]] = {}
        self._module_targets: dict[tuple[int, int], _Assignment] = {}
        # (line, column) of the `def` (or `async`) of a function defined directly in the module's scope -> it
        self._module_functions: dict[tuple[int, int], ast.FunctionDef | ast.AsyncFunctionDef] = {}
        self._strings: list[str] = []
        self._string_words: set[str] | None = None
        self._hint_words: set[str] | None = None
        self._own_imports: list[FunctionImports] | None = None
        # First parts of dotted imports (`import a.b`): libcst takes a read of `a` in `a.b` for one of `a.b`.
        self._dotted: set[str] = set()
        # (line, column) of the target of a plain `name = value` of a function's own body -> (it, function)
        self._targets: dict[tuple[int, int], tuple[_Assignment, _Function]] = {}
        # (line, column) of a Name read directly in the module's own scope (no function, class, lambda,
        # comprehension or f-string around it) -> the name node
        self._module_reads: dict[tuple[int, int], ast.Name] = {}
        # name -> its bindings directly in the module's own scope that are a plain `name = value` (the
        # ast.Assign or ast.AnnAssign) or an import (None), with where each starts and ends (ast's line and byte column)
        self._module_bindings: dict[str, list[tuple[tuple[int, int], tuple[int, int], _Assignment | None]]] = {}
        # Names a class pattern's keyword spells (`case P(x=1)`): libcst reads each as an access of the name.
        self._pattern_keywords: set[str] = set()
        # Names a plain `name = value` (or `name: T = value`) binds anywhere, in any scope; the names of every
        # function's and lambda's parameters.
        self._plain_anywhere: set[str] = set()
        self._parameters_anywhere: set[str] = set()
        self._ordered: dict[str, _InOrder] = {}
        self._reads_in_order: dict[str, object] = {}
        # Where libcst may parse a string as code (``_HINT_CALLS``): an annotation, a subscript's index, a call's
        # arguments.
        self._hint_roots: list[ast.AST] = []
        # The arguments of calls of a name and the indices of subscripts of one, by the name: libcst parses their
        # strings when it resolves the name to TypeVar, NewType, cast or a generic of typing's.
        self._named_calls: list[tuple[str, tuple[ast.expr, ...]]] = []
        self._named_subscripts: list[tuple[str, ast.expr]] = []
        self._walk(tree)
        # A name libcst may resolve to TypeVar, NewType or cast: an `as` name; to a generic of typing's: one a
        # `from` import binds (`List`) too.
        aliases = {name for name, imports in self._imports.items() if any(alias for _, alias in imports)}
        generics = aliases | {name for name, imports in self._imports.items() if any(not m for m, _ in imports)}
        self._hint_roots.extend(part for name, parts in self._named_calls if name in aliases for part in parts)
        self._hint_roots.extend(index for name, index in self._named_subscripts if name in generics)
        self.opaque = not all(
            _plain_hint(node.value)
            for root in self._hint_roots
            for node in walk(root)
            if type(node) is ast.Constant and isinstance(node.value, str)
        )
        """Whether libcst's scopes may see the names otherwise than ``ast`` (these answers then stand for none): a
        string libcst parses as code is more than one plain expression (``x: "import x" = 1`` binds ``x`` for it;
        a walrus or an assignment there moves its order)."""

    def single_assignment(self, name: str, line: int, column: int) -> object:
        """For a read of ``name`` at (line, column in characters): None when libcst finds no single assignment
        for it, the (line, column) of the target of its single plain assignment, or ``NOT_KNOWN``."""
        read = self._reads.get((line, column))
        if name not in self._plain_anywhere:
            return None  # libcst's single value is a plain assignment's, and the module holds none of the name
        if read is None:
            return self._module_assignment(name, line, column)
        if read[0].id != name:
            return NOT_KNOWN
        node, function, outermost = read
        if name in function.declared or name in self._dotted:
            return NOT_KNOWN
        if name in function.parameters:
            return None
        bindings = function.bindings.get(name, [])
        if not bindings and outermost:
            # A global (or builtin, imported, def'd) name: libcst's value is an assignment's only when the
            # module may assign the name with `=` (or a function may, through `global`).
            if name in self._stored_outside_functions or name in self._declared_anywhere:
                return NOT_KNOWN
            return None
        if not bindings:
            return NOT_KNOWN
        if any(binding is None for binding in bindings):
            return self._no_plain_binding_before(function, name, node)
        # libcst's referents are the function's own assignments of the name that end before the read, by the
        # order of the text (`x = f(x)` reads an older x); with none, the enclosing scope's.
        starts, ends, assignments = function.ordered(name)
        at = (node.lineno, node.col_offset)
        index = bisect.bisect_right(ends, at)  # the assignments ending at or before the read
        if index == 0 or (index < len(starts) and starts[index] <= at):
            return NOT_KNOWN  # none before it, or the read is inside one (a walrus there moves libcst's order)
        if index > 1:
            return None  # several assignments reach the read
        target = _target(cast("_Assignment", assignments[0]))
        return (target.lineno, self._column(target))

    @staticmethod
    def _no_plain_binding_before(function: _Function, name: str, node: ast.Name) -> object:
        """A read of a name the function binds otherwise than by a plain assignment (a `for` target, a tuple's
        part, `+=`): libcst's referents are the function's bindings whose assignment took effect before the read,
        none of them a plain one, so it finds no single value (None); ``NOT_KNOWN`` when the function also assigns
        it plainly, or none of its bindings is known to take effect before the read (libcst then reads the
        enclosing scope's)."""
        if any(binding is not None for binding in function.bindings[name]):
            return NOT_KNOWN
        at = (node.lineno, node.col_offset)
        return None if any(point <= at for point in function.taking_effect.get(name, ())) else NOT_KNOWN

    def _module_assignment(self, name: str, line: int, column: int) -> object:
        """``single_assignment`` of a read directly in the module's scope, of a name every binding of which is a
        plain assignment or an import there: libcst's referents are the bindings before the read (by the end of
        their statement), so a single one is the read's only when it is the only one before it. A script or a
        notebook that assigns one name again and again (`so = aot_compile(...)` in every cell) is answered
        here; libcst's scope analysis of it is quadratic in the assignments."""
        node = self._module_reads.get((line, column))
        if node is None or node.id != name or not self._bound_only_at_module_level(name):
            return NOT_KNOWN
        before = self._bindings_before(name, (node.lineno, node.col_offset))
        if before is None:
            return NOT_KNOWN
        if before == 0:
            return None  # read before any binding
        if before != 1:
            return self._last_in_straight_line(name, node, before)
        first = self._in_order(name)[2][0]
        if first is None:
            return None  # an import: no assigned value
        target = _target(first)
        return (target.lineno, self._column(target))

    def _last_in_straight_line(self, name: str, node: ast.Name, before: int) -> object:
        """A read in a simple statement of the module's body after several bindings of ``name``, the last of them
        a plain assignment that is itself a statement of the module's body: nothing runs between the two that can
        bind the name (every binding of it is one of these), so the read takes that assignment's value. A script
        that assigns `so` for every model (`so = aot_compile(...)`, then `aot_load(so, ...)`) is read so; libcst's
        scopes give no single value there, and its loads would lose their compiles."""
        last = self._in_order(name)[2][before - 1]
        if last is None or id(last) not in self._top_level_statements:
            return None
        at = (node.lineno, node.col_offset)
        starts, ends = self._simple_top_level_spans
        index = bisect.bisect_right(starts, at)
        if index == 0 or not at < ends[index - 1]:
            return None  # inside a compound statement (a loop may run a later binding first), or a function
        target = _target(last)
        return (target.lineno, self._column(target))

    @functools.cached_property
    def _top_level_statements(self) -> set[int]:
        return {id(statement) for statement in self._tree.body}

    @functools.cached_property
    def _simple_top_level_spans(self) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
        """Where each statement of the module's body that holds no other statement starts and ends."""
        simple = [statement for statement in self._tree.body if not isinstance(statement, _COMPOUND)]
        spans = [_span(statement) for statement in simple]
        return [start for start, _ in spans], [end for _, end in spans]

    def _bound_only_at_module_level(self, name: str) -> bool:
        """Whether every binding of ``name`` is a plain assignment or an import directly in the module's scope
        (none in another scope or way, by `global`, or maybe by `from m import *`), and no dotted import binds it
        (libcst names `a` in `a.b` after `import a.b`)."""
        if name in self._declared_anywhere or name in self._dotted or "*" in self._bound_anywhere:
            return False
        return len(self._module_bindings.get(name, ())) == self._bound_anywhere.get(name, 0)

    def _in_order(self, name: str) -> _InOrder:
        """The module-level bindings of ``name`` in the order of the text (``_in_text_order``)."""
        found = self._ordered.get(name)
        if found is None:
            found = self._ordered[name] = _in_text_order(self._module_bindings.get(name, []))
        return found

    def _bindings_before(self, name: str, at: tuple[int, int]) -> int | None:
        """How many module-level bindings of ``name`` end before ``at`` (ast's line and byte column); None when
        ``at`` lies inside one, where libcst orders the read by a count of the assignment-like nodes it has left
        (a walrus, an assignment in a string it reads as a type), not by where the statement ends."""
        starts, ends, _ = self._in_order(name)
        index = bisect.bisect_right(starts, at)  # the bindings starting at or before the read
        if index and at < ends[index - 1]:
            return None
        return index

    def lone_parameter(self, name: str, line: int, column: int) -> object:
        """For a read of ``name`` at (line, column): the (line, column) of the parameter it reads when that is
        the function's only binding of the name (libcst's scope then holds that one assignment), else
        ``NOT_KNOWN``."""
        if name not in self._parameters_anywhere:
            return None  # no function or lambda of the module has a parameter of the name
        read = self._reads.get((line, column)) or self._formatted_at.get((line, column))
        if read is None:
            # Read directly in the module's scope, which holds no parameter (a lambda's are its own).
            module_read = self._module_reads.get((line, column))
            return None if module_read is not None and module_read.id == name else NOT_KNOWN
        if read[0].id != name:
            return NOT_KNOWN
        _, function, outermost = read
        if name in function.declared:
            return NOT_KNOWN
        parameters = function.parameters.get(name, [])
        bindings = function.bindings.get(name)
        if bindings:
            # A binding of the function's own (a plain assignment, or one known to be of its body): libcst's scope
            # holds it, no parameter; with the parameter too, more than one assignment.
            own = any(binding is not None for binding in bindings) or name in function.taking_effect
            return None if own else NOT_KNOWN
        if not parameters and outermost:
            return None  # resolved in the module's scope (classes are skipped), where no parameter is
        if len(parameters) != 1:
            return NOT_KNOWN
        return (parameters[0].lineno, self._column(parameters[0]))

    def may_be_import(self, name: str, line: int, column: int) -> bool:
        """Whether the name read at (line, column) may resolve to an import alone (libcst's scope holding one
        ``ImportAssignment``): not when the function binds it only as a parameter or by plain assignments."""
        read = self._reads.get((line, column))
        if read is None:
            return self._module_may_be_import(name, line, column)
        if read[0].id != name:
            return True
        function = read[1]
        if name in function.declared:
            return True
        if name in function.parameters:
            return False
        bindings = function.bindings.get(name, [])
        return not bindings or any(binding is None for binding in bindings)

    def _module_may_be_import(self, name: str, line: int, column: int) -> bool:
        """``may_be_import`` of a read directly in the module's scope: libcst's scope holds every binding of the
        module's own; known when they are all plain assignments or imports there."""
        node = self._module_reads.get((line, column))
        if node is None or node.id != name or not self._bound_only_at_module_level(name):
            return True
        bindings = self._module_bindings.get(name, [])
        return len(bindings) == 1 and bindings[0][2] is None

    def references(self, name: str, line: int, column: int) -> object:
        """For the target of a plain ``name = value`` at (line, column): the (line, column) of each read of
        that assignment, as libcst's ``Assignment.references`` (the reads after the statement), when every
        read of the name in the function is one of its own body; else ``NOT_KNOWN``."""
        if self._mentioned_in_strings(name) or name in self._pattern_keywords:
            return NOT_KNOWN  # libcst reads string annotations and class patterns' keywords as references too
        module_level = self._module_targets.get((line, column))
        if module_level is not None:
            return self._module_references(name, module_level)
        target = self._targets.get((line, column))
        if target is None or _target(target[0]).id != name:
            return NOT_KNOWN
        assign, function = target
        if function.bindings.get(name) != [assign] or name in function.parameters:
            return NOT_KNOWN
        if name in function.declared or name in self._dotted:
            return NOT_KNOWN
        reads = function.reads.get(name, [])
        if not all(direct for _, direct in reads):
            return NOT_KNOWN
        start, end = _span(assign)
        if any(start <= (node.lineno, node.col_offset) < end for node, _ in reads) and any(
            isinstance(node, ast.NamedExpr) for node in walk(assign)
        ):
            return NOT_KNOWN  # a walrus moves libcst's order: a read after it in the statement reads this one too
        return [(node.lineno, self._column(node)) for node, _ in reads if (node.lineno, node.col_offset) >= end]

    def function_references(self, name: str, line: int, column: int) -> object:
        """For a function defined at (line, column) directly in the module's scope and bound nowhere else: the
        (line, column) of each read of it, as libcst's ``Assignment.references`` of the definition (every read in
        a function, every other read after the statement); else ``NOT_KNOWN``."""
        function = self._module_functions.get((line, column))
        if function is None or function.name != name:
            return NOT_KNOWN
        # A docstring naming the function is no reference; a string libcst parses as code may be (``opaque``
        # already covers one that is more than a plain expression).
        if self._mentioned_in_hints(name) or name in self._pattern_keywords:
            return NOT_KNOWN
        if name in self._declared_anywhere or name in self._dotted or name in self._formatted_reads:
            return NOT_KNOWN
        # Bound again only by functions' own imports of the name (`from .impl import f` in `def f`): their reads of
        # it after the import are theirs; one before it, directly in the function, is still the module's.
        shadowing = [own for own in self._function_imports() if name in own.imports]
        if self._bound_anywhere.get(name) != 1 + len(shadowing):
            return NOT_KNOWN
        if any(a is not b and a.body[0] <= b.body[0] < a.body[1] for a in shadowing for b in shadowing):
            return NOT_KNOWN  # one inside another: which import a read sees is libcst's to tell
        _, end = _span(function)
        found = []
        for node, in_function in self._all_reads.get(name, []):
            at = (node.lineno, node.col_offset)
            around = next((own for own in shadowing if own.body[0] <= at < own.body[1]), None)
            if around is not None:
                if at >= around.imports[name][1]:
                    continue
                if any(first <= at < last for first, last in around.inner):
                    return NOT_KNOWN  # in a scope inside, before the import
            if in_function or at >= end:
                found.append((node.lineno, self._column(node)))
            else:
                return NOT_KNOWN  # read before the definition ends, outside functions (a decorator's, a default's)
        return found

    def _module_references(self, name: str, assign: _Assignment) -> object:
        """The reads of a module-level ``name = value`` bound nowhere else: every read in a function, and every
        other read after the statement (libcst drops the ones before it in the same scope)."""
        if _target(assign).id != name:
            return NOT_KNOWN
        if name in self._declared_anywhere or name in self._dotted or name in self._formatted_reads:
            return NOT_KNOWN
        if self._bound_anywhere.get(name) != 1:
            return self._references_among_bindings(name, assign)
        _, end = _span(assign)
        found = []
        for node, in_function in self._all_reads.get(name, []):
            if in_function or (node.lineno, node.col_offset) >= end:
                found.append((node.lineno, self._column(node)))
            else:
                # Before the statement outside functions: the module's scope drops it, a class's or a
                # comprehension's keeps it; not told apart here.
                return NOT_KNOWN
        return found

    def _references_among_bindings(self, name: str, assign: _Assignment) -> object:
        """``references`` of one of several module-level bindings of ``name``, all plain assignments or imports
        there: None (libcst's answer when a read of it has other referents too) once a read sees it and another
        binding, else the reads after it. A read in a function, class, lambda or comprehension sees every
        binding; one directly in the module's scope sees those before it (``_module_assignment``)."""
        if not self._bound_only_at_module_level(name):
            return NOT_KNOWN
        known = self._module_level_reads(name)
        if known is None:
            return NOT_KNOWN
        if known is _SEEN_BY_FUNCTIONS:
            return None  # a function's scope sees every binding of the module
        positions, places = cast("tuple[list[tuple[int, int]], list[tuple[int, int]]]", known)
        _, ends, _ = self._in_order(name)
        _, end = _span(assign)
        before = bisect.bisect_left(ends, end)  # the bindings ending before this one
        after = ends[before + 1] if before + 1 < len(ends) else None
        first = bisect.bisect_left(positions, end)  # the first read after this binding
        last = bisect.bisect_left(positions, after) if after is not None else len(positions)
        if first < len(positions) and (before or last < len(positions)):
            return None  # a read sees this binding and another one
        return places[first:last]

    def _module_level_reads(self, name: str) -> object:
        """The reads of ``name``, all directly in the module's scope, in the order of the text: where each is as
        ast gives it, and as libcst does (line and column); ``_SEEN_BY_FUNCTIONS`` when some read is in a
        function; None when some read is in a class body, a lambda or a comprehension (libcst reads some of
        their parts, bases, defaults, the first iterator, in the module's scope, the rest in their own) or
        inside a binding of the name (``_bindings_before``)."""
        if name in self._reads_in_order:
            return self._reads_in_order[name]
        found: list[tuple[tuple[int, int], tuple[int, int]]] = []
        answer: object = found
        for node, in_function in self._all_reads.get(name, []):
            at, where = (node.lineno, node.col_offset), (node.lineno, self._column(node))
            if in_function:
                answer = _SEEN_BY_FUNCTIONS if answer is found else answer
            elif self._module_reads.get(where) is not node or self._bindings_before(name, at) is None:
                answer = None
                break
            else:
                found.append((at, where))
        if answer is found:
            found.sort()
            answer = ([at for at, _ in found], [where for _, where in found])
        self._reads_in_order[name] = answer
        return answer

    def binds_only_a_module(self, name: str, module: str) -> bool:
        """Whether every binding of ``name`` anywhere in the module, in any scope, is an import of ``module``
        (``import torch``, ``import torch.x``, ``import torch as name``): then the name means that module
        wherever it is read. Not after a star import, which may bind any name."""
        imports = self._imports.get(name, [])
        if "*" in self._bound_anywhere or len(imports) != self._bound_anywhere.get(name, 0):
            return False
        return all(
            (dotted.split(".")[0] == module) if alias is None else (dotted == module) for dotted, alias in imports
        )

    def _function_imports(self) -> list[FunctionImports]:
        if self._own_imports is None:
            from aoti_lint.model.imported_names import function_imports

            self._own_imports = function_imports(self._tree)
        return self._own_imports

    def _mentioned_in_hints(self, name: str) -> bool:
        """Whether a string where libcst may parse code (``_hint_roots``) spells the name."""
        if self._hint_words is None:
            self._hint_words = {
                word
                for root in self._hint_roots
                for node in walk(root)
                if type(node) is ast.Constant and isinstance(node.value, str)
                for word in _WORD.findall(node.value)
            }
        return name in self._hint_words

    def _mentioned_in_strings(self, name: str) -> bool:
        if self._string_words is None:
            self._string_words = {word for text in self._strings for word in _WORD.findall(text)}
        return name in self._string_words

    def _column(self, node: ast.expr | ast.arg) -> int:
        line = self._lines[node.lineno - 1]
        if line.isascii():
            return node.col_offset
        return len(line.encode()[: node.col_offset].decode(errors="replace"))

    def _walk(self, tree: ast.Module) -> None:
        # (node, the function whose body it is directly in, the functions it is inside of, whether it is
        # directly in the module's scope, inside an f-string)
        stack: list[tuple[ast.AST, _Function | None, tuple[_Function, ...], bool, _Function | bool]] = [
            (tree, None, (), True, False)
        ]
        while stack:
            node, direct, inside, at_module, formatted = stack.pop()
            kind = type(node)
            if type(node) is ast.Name:
                if type(node.ctx) is ast.Load:
                    if direct is not None:
                        self._reads[(node.lineno, self._column(node))] = (node, direct, len(inside) == 1)
                    elif isinstance(formatted, _Function):
                        self._formatted_at[(node.lineno, self._column(node))] = (node, formatted, len(inside) == 1)
                    elif at_module and not formatted:
                        self._module_reads[(node.lineno, self._column(node))] = node
                    for function in inside:
                        function.reads.setdefault(node.id, []).append((node, function is direct))
                    self._all_reads.setdefault(node.id, []).append((node, bool(inside)))
                    if formatted:
                        self._formatted_reads.add(node.id)
                else:
                    self._bind(inside, node.id, None)
                    if not inside:
                        self._stored_outside_functions.add(node.id)
                continue
            if type(node) is ast.Constant:
                if isinstance(node.value, str):
                    self._strings.append(node.value)
                continue
            if type(node) is ast.FunctionDef or type(node) is ast.AsyncFunctionDef:
                self._bind(inside, node.name, None)
                if at_module and not inside:
                    self._module_functions[(node.lineno, self._column(node))] = node  # type: ignore[arg-type]
                function = _Function()
                arguments = node.args
                for argument in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs):
                    function.parameters.setdefault(argument.arg, []).append(argument)
                for rest in (arguments.vararg, arguments.kwarg):
                    if rest is not None:
                        function.parameters.setdefault(rest.arg, []).append(rest)
                for name in function.parameters:
                    self._bind(inside, name, None)
                self._parameters_anywhere.update(function.parameters)
                # Decorators, defaults and annotations are read outside the function: not its direct reads.
                if node.returns is not None:
                    self._hint_roots.append(node.returns)
                for child in (*node.decorator_list, arguments, *([node.returns] if node.returns else [])):
                    stack.append((child, None, inside, at_module, formatted))
                for statement in node.body:
                    stack.append((statement, function, (*inside, function), False, formatted))
                for type_parameter in getattr(node, "type_params", ()):
                    stack.append((type_parameter, None, inside, False, formatted))
                continue
            if type(node) is ast.Assign or type(node) is ast.AnnAssign:
                target = _plain_target(node)
                if target is not None:
                    self._plain_anywhere.add(target.id)
            if (type(node) is ast.Assign or type(node) is ast.AnnAssign) and (direct is not None or at_module):
                target = _plain_target(node)
                if target is not None:
                    position = (target.lineno, self._column(target))
                    if direct is not None:
                        self._targets[position] = (node, direct)
                    else:
                        self._module_targets[position] = node
                        self._stored_outside_functions.add(target.id)
                        if at_module:
                            self._module_bindings.setdefault(target.id, []).append((*_span(node), node))
                    self._count(target.id)
                    for function in inside:
                        function.bindings.setdefault(target.id, []).append(node if function is direct else None)
                    stack.append((cast("ast.expr", node.value), direct, inside, at_module, formatted))
                    if isinstance(node, ast.AnnAssign):  # libcst reads an annotation's names where it stands
                        stack.append((node.annotation, direct, inside, at_module, formatted))
                        self._hint_roots.append(node.annotation)
                    continue
            if direct is not None and kind in _OTHER_ASSIGNMENTS:
                _other_assignment(node, direct)  # type: ignore[arg-type]
            if kind in _OTHER_BINDINGS:
                self._other_bindings(node, inside, at_module)
            not_direct = kind in _NOT_DIRECT_KINDS
            child_direct = None if not_direct else direct
            child_at_module = at_module and not not_direct
            # In an f-string: the function whose body holds it directly, else True (a scope inside it, or none).
            child_formatted: _Function | bool
            if kind is ast.JoinedStr:
                child_formatted = formatted or (direct if direct is not None else True)
            else:
                child_formatted = True if formatted and not_direct else formatted
            for name in child_fields(kind):
                value = getattr(node, name, None)
                if type(value) is list:
                    for item in value:
                        if isinstance(item, ast.AST):
                            stack.append((item, child_direct, inside, child_at_module, child_formatted))
                elif isinstance(value, ast.AST):
                    stack.append((value, child_direct, inside, child_at_module, child_formatted))

    def _other_bindings(self, node: ast.AST, inside: tuple[_Function, ...], at_module: bool) -> None:
        """Bindings that are not a Name target: imports, `except ... as`, classes, lambdas' and match's names."""
        if isinstance(node, ast.ImportFrom):
            # `from m import torch` binds what m holds under that name: no import of a module `torch`.
            self._from_aliases.update(id(alias) for alias in node.names)
        elif isinstance(node, ast.alias):
            if "." in node.name and node.asname is None:
                self._dotted.add(node.name.split(".")[0])
            bound = node.asname or node.name.split(".")[0]
            module = "" if id(node) in self._from_aliases else node.name
            self._imports.setdefault(bound, []).append((module, node.asname))
            self._bind(inside, bound, None)
            if at_module:
                self._module_bindings.setdefault(bound, []).append((*_span(node), None))
        elif isinstance(node, ast.MatchClass):
            self._pattern_keywords.update(node.kwd_attrs)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            self._declared_anywhere.update(node.names)
            for function in inside:
                function.declared.update(node.names)
        elif isinstance(node, ast.arg):  # a lambda's (a function's own are taken with the function)
            self._bind(inside, node.arg, None)
            self._parameters_anywhere.add(node.arg)
            if node.annotation is not None:
                self._hint_roots.append(node.annotation)
        elif isinstance(node, ast.Subscript):
            if isinstance(node.value, ast.Name):
                self._named_subscripts.append((node.value.id, node.slice))
        elif isinstance(node, ast.Call):
            callee = node.func
            spelled = callee.attr if isinstance(callee, ast.Attribute) else getattr(callee, "id", None)
            arguments = (*node.args, *(item.value for item in node.keywords))
            if spelled in _HINT_CALLS:
                self._hint_roots.extend(arguments)
            elif isinstance(callee, ast.Name) and arguments:
                self._named_calls.append((callee.id, arguments))
        elif isinstance(node, ast.AnnAssign):  # one that binds no plain name (`x: int`, `a.b: int = 1`)
            self._hint_roots.append(node.annotation)
        elif isinstance(node, (ast.ExceptHandler, ast.ClassDef, ast.MatchAs, ast.MatchStar)):
            if node.name is not None:
                self._bind(inside, node.name, None)
        elif isinstance(node, ast.MatchMapping):
            if node.rest is not None:
                self._bind(inside, node.rest, None)
        elif type(node).__name__ in ("TypeVar", "ParamSpec", "TypeVarTuple", "TypeAlias"):
            name = getattr(node, "name", None)
            self._bind(inside, name if isinstance(name, str) else "", None)
            self._hint_roots.extend(
                part for part in (getattr(node, "bound", None), getattr(node, "value", None)) if part is not None
            )

    def _bind(self, inside: tuple[_Function, ...], name: str, assign: _Assignment | None) -> None:
        self._count(name)
        for function in inside:
            function.bindings.setdefault(name, []).append(assign)

    def _count(self, name: str) -> None:
        self._bound_anywhere[name] = self._bound_anywhere.get(name, 0) + 1
