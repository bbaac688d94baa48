"""The names a module's code uses, gathered in one ``ast`` walk (``code_index``) for the prefilter's third stage.

``ast`` compiles nothing and runs nothing. The rules query the index (``Rule.could_match_code``); the
prefilter (``aoti_lint.run.prefilter``) decides with it which rules still need libcst.
"""

from __future__ import annotations

import ast
import functools
from dataclasses import dataclass, field

from aoti_lint.model.syntax_tree import walk

_UNKNOWN = object()
NOT_A_LITERAL = _UNKNOWN  # what ``literal`` gives for anything else than a literal


def literal(node: ast.AST) -> object:
    """The value of a literal string, integer, bool or None, as libcst's rules read literals; ``_UNKNOWN``
    for anything else (bytes, floats, f-strings, negative numbers, names)."""
    if type(node) is ast.Constant:
        value = node.value
        if value is None or type(value) in (str, int, bool):
            return value
    return _UNKNOWN


def string(node: ast.AST | None) -> str | None:
    """The value of a string literal (adjacent ones joined), else None."""
    return node.value if type(node) is ast.Constant and type(node.value) is str else None


@dataclass(frozen=True)
class CodeIndex:
    """The names a module's code uses, gathered in one ``ast`` walk for every rule to query."""

    # (inner, outer) for each attribute access ``inner.outer`` where inner is a name or itself ``x.inner``.
    attribute_pairs: frozenset[tuple[str, str]]
    # Dotted names imported by ``import a.b [as c]``.
    imported_modules: frozenset[str]
    # (module, name) for each ``from module import name [as c]``; relative imports keep their dots.
    imported_names: frozenset[tuple[str, str]]
    # Every name and attribute the code spells (``x``, ``y`` in ``x.y``), and imported names.
    identifiers: frozenset[str] = frozenset()
    # The file suffixes string constants end with (".pt2", ".so", ...): artifact paths.
    string_suffixes: frozenset[str] = frozenset()
    # The last name of every callee as libcst names it (``f`` in ``f(...)``, ``a.b.f(...)``, and in ``f(x)(y)`` and
    # ``f[0](y)``: libcst names a call after its callee and a subscript after its value).
    called: frozenset[str] = frozenset()
    # The suffixes of string constants in module-level assignments to a name (``PACKAGE = "out/model.pt2"``),
    # conditional values aside.
    module_string_suffixes: frozenset[str] = frozenset()
    # Keyword argument names of every call (``options`` in ``torch.compile(m, options=...)``).
    keywords: frozenset[str] = frozenset()
    # Names written to: attributes (``nan_asserts`` in ``config.nan_asserts = True``) and subscripted
    # objects (``environ`` in ``os.environ["X"] = "1"``).
    assigned: frozenset[str] = frozenset()
    # Names bound by an absolute import (``torch`` for ``import torch.x``, ``c`` for ``from m import n as c``):
    # the only names libcst resolves to a qualified name outside the module. Relative imports resolve to
    # ``.x`` names, which match no API.
    import_bound: frozenset[str] = frozenset()
    # (key, value) of every literal setting, whatever object it is made on: a dict entry ``{"K": V}``, a
    # keyword ``f(K=V)``, a call of two positional literals ``f("K", V)`` and ``x["K"] = V``. Values are
    # literals (see ``literal``); a key with any other value is not recorded.
    literal_settings: frozenset[tuple[str, object]] = frozenset()
    # (root name, last attribute, value) of ``root.a.b = V`` with a literal V.
    attribute_writes: frozenset[tuple[str, str, object]] = frozenset()
    # Every last name a call may be named by: the callees', and those an import binds (``from m import f as g``
    # makes a call of ``g`` one of ``m.f``; ``import a.b as c`` one of ``a.b``).
    reached: frozenset[str] = frozenset()
    # The rows (first, last) of every string or bytes literal whose value holds a `#`: elsewhere, a `#` opens a
    # comment (``suppressions.indexed_suppressions``).
    hash_strings: tuple[tuple[int, int], ...] = ()
    # The tree and text themselves, for a stage that needs more than names (``kernel_prefilter``).
    tree: ast.Module | None = field(default=None, compare=False, repr=False)
    text: str = field(default="", compare=False, repr=False)


def _root(node: ast.AST) -> str | None:
    while type(node) is ast.Attribute:
        node = node.value
    return node.id if type(node) is ast.Name else None


# One entry: the runner asks about a file, then check_source asks again about the same text.
@functools.lru_cache(maxsize=1)
def code_index(text: str) -> CodeIndex | None:
    """None when ``ast`` cannot parse the text (libcst may still, or reports the syntax error)."""
    from aoti_lint.model.syntax_tree import parse

    tree = parse(text)
    if isinstance(tree, BaseException):
        return None
    pairs: set[tuple[str, str]] = set()
    modules: set[str] = set()
    names: set[tuple[str, str]] = set()
    identifiers: set[str] = set()
    suffixes: set[str] = set()
    called: set[str] = set()
    keywords: set[str] = set()
    assigned: set[str] = set()
    bound: set[str] = set()
    settings: set[tuple[str, object]] = set()
    writes: set[tuple[str, str, object]] = set()
    hash_strings: list[tuple[int, int]] = []
    # One pass, dispatching on the exact node type: this walk runs on every file that passes stage one, and
    # isinstance chains over every node cost more than the parse.
    Name, Attribute, Call, Constant, Assign = ast.Name, ast.Attribute, ast.Call, ast.Constant, ast.Assign
    for node in walk(tree):
        kind = type(node)
        if kind is Name:
            identifiers.add(node.id)  # type: ignore[attr-defined]
        elif kind is Attribute:
            attr = node.attr  # type: ignore[attr-defined]
            identifiers.add(attr)
            inner = node.value  # type: ignore[attr-defined]
            if type(inner) is Attribute:
                pairs.add((inner.attr, attr))
            elif type(inner) is Name:
                pairs.add((inner.id, attr))
        elif kind is Constant:
            value = node.value  # type: ignore[attr-defined]
            if type(value) is str:
                if "." in value[-8:]:
                    suffixes.add(value[value.rindex(".") :])
                if "#" in value:
                    hash_strings.append((node.lineno, node.end_lineno))  # type: ignore[attr-defined]
            elif type(value) is bytes and b"#" in value:
                hash_strings.append((node.lineno, node.end_lineno))  # type: ignore[attr-defined]
        elif kind is ast.JoinedStr:
            # Before 3.12 the parts of an f-string may carry positions of their own that are not theirs: the
            # f-string's rows stand for every `#` in its parts, a format spec's and a nested literal's too.
            if any(type(part) is Constant and "#" in str(part.value) for part in walk(node)):
                hash_strings.append((node.lineno, node.end_lineno))  # type: ignore[attr-defined]
        elif kind is Call:
            callee = node.func  # type: ignore[attr-defined]
            while type(callee) is Call or type(callee) is ast.Subscript:
                callee = callee.func if type(callee) is Call else callee.value  # type: ignore[union-attr]
            if type(callee) is Name:
                called.add(callee.id)
            elif type(callee) is Attribute:
                called.add(callee.attr)
            for keyword in node.keywords:  # type: ignore[attr-defined]
                if keyword.arg:
                    keywords.add(keyword.arg)
                    value = literal(keyword.value)
                    if value is not _UNKNOWN:
                        settings.add((keyword.arg, value))
            args = node.args  # type: ignore[attr-defined]
            if len(args) == 2:
                key, value = literal(args[0]), literal(args[1])
                if type(key) is str and value is not _UNKNOWN:
                    settings.add((key, value))
        elif kind is ast.Dict:
            for key_node, value_node in zip(node.keys, node.values, strict=True):  # type: ignore[attr-defined]
                key = literal(key_node) if key_node is not None else None
                if type(key) is str:
                    value = literal(value_node)
                    if value is not _UNKNOWN:
                        settings.add((key, value))
        elif kind is Assign or kind is ast.AugAssign or kind is ast.AnnAssign:
            value = literal(node.value) if node.value is not None else _UNKNOWN  # type: ignore[attr-defined]
            for target in node.targets if kind is Assign else [node.target]:  # type: ignore[attr-defined]
                if type(target) is ast.Subscript:
                    key = literal(target.slice)
                    if type(key) is str and value is not _UNKNOWN:
                        settings.add((key, value))
                    target = target.value
                if type(target) is Attribute:
                    assigned.add(target.attr)
                    root = _root(target)
                    if root is not None and value is not _UNKNOWN and kind is Assign:
                        writes.add((root, target.attr, value))
                elif type(target) is Name:
                    assigned.add(target.id)
        elif kind is ast.Import:
            for alias in node.names:  # type: ignore[attr-defined]
                modules.add(alias.name)
                bound.add(alias.asname or alias.name.split(".", 1)[0])
        elif kind is ast.ImportFrom:
            module = "." * node.level + (node.module or "")  # type: ignore[attr-defined]
            for alias in node.names:  # type: ignore[attr-defined]
                names.add((module, alias.name))
                identifiers.add(alias.name)
                if not node.level:  # type: ignore[attr-defined]
                    bound.add(alias.asname or alias.name)
    module_suffixes: set[str] = set()
    for statement in tree.body:
        if type(statement) is Assign:
            targets, bound_value = statement.targets, statement.value
        elif type(statement) is ast.AnnAssign and statement.value is not None:
            targets, bound_value = [statement.target], statement.value
        else:
            continue
        # A constant another module can import is `NAME = value`; a conditional value (`".pyd" if WIN else
        # ".so"`) is not evaluated to a path by the analysis (aoti_lint.rules.module_flow).
        if type(bound_value) is ast.IfExp or not any(type(target) is Name for target in targets):
            continue
        for item in walk(bound_value):
            if type(item) is Constant and type(item.value) is str and "." in item.value[-8:]:
                module_suffixes.add(item.value[item.value.rindex(".") :])
    return CodeIndex(
        frozenset(pairs),
        frozenset(modules),
        frozenset(names),
        frozenset(identifiers),
        frozenset(suffixes),
        frozenset(called),
        frozenset(module_suffixes),
        frozenset(keywords),
        frozenset(assigned),
        frozenset(bound),
        frozenset(settings),
        frozenset(writes),
        frozenset(called | {name for _, name in names} | {module.rsplit(".", 1)[-1] for module in modules}),
        tuple(hash_strings),
        tree,
        text,
    )
