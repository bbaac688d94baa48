"""The second stage of the prefilter: what the code says, not what its bytes mention.

The first stage (``Rule.could_match``) looks for bytes. Many files merely mention a name in a docstring, a
comment, or an unrelated module path (torch's own sources hold ``aot_compile`` and ``_export`` together in 13
files; 1 refers to ``torch._export.aot_compile``). Parsing such a file with libcst and resolving its names
costs ten to a hundred times more than the ``ast`` parse that settles it here. ``ast`` compiles nothing and
runs nothing.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeVar

from aoti_lint.rules.base import PythonRule, Rule
from aoti_lint.source import DecodeError, SourceFile

RuleType = TypeVar("RuleType", bound=type[Rule])


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
    # The last name of every callee (``f`` in ``f(...)`` and ``a.b.f(...)``).
    called: frozenset[str] = frozenset()
    # The suffixes of string constants in module-level assignments (``PACKAGE = "out/model.pt2"``).
    module_string_suffixes: frozenset[str] = frozenset()
    # Keyword argument names of every call (``options`` in ``torch.compile(m, options=...)``).
    keywords: frozenset[str] = frozenset()
    # Names written to: attributes (``nan_asserts`` in ``config.nan_asserts = True``) and subscripted
    # objects (``environ`` in ``os.environ["X"] = "1"``).
    assigned: frozenset[str] = frozenset()


# One entry: the runner asks about a file, then check_source asks again about the same text.
@functools.lru_cache(maxsize=1)
def code_index(text: str) -> CodeIndex | None:
    """None when ``ast`` cannot parse the text (libcst may still, or reports the syntax error)."""
    from aoti_lint.pyast import parse

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
    for node in ast.walk(tree):
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                if isinstance(target, ast.Subscript):
                    target = target.value
                if isinstance(target, ast.Attribute):
                    assigned.add(target.attr)
                elif isinstance(target, ast.Name):
                    assigned.add(target.id)
        if isinstance(node, ast.Call):
            keywords.update(keyword.arg for keyword in node.keywords if keyword.arg)
            callee = node.func
            if isinstance(callee, ast.Name):
                called.add(callee.id)
            elif isinstance(callee, ast.Attribute):
                called.add(callee.attr)
        if isinstance(node, ast.Name):
            identifiers.add(node.id)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and "." in node.value[-8:]:
            suffixes.add(node.value[node.value.rindex(".") :])
        if isinstance(node, ast.Attribute):
            identifiers.add(node.attr)
            inner = node.value
            if isinstance(inner, ast.Attribute):
                pairs.add((inner.attr, node.attr))
            elif isinstance(inner, ast.Name):
                pairs.add((inner.id, node.attr))
        elif isinstance(node, ast.Import):
            modules.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            module = "." * node.level + (node.module or "")
            names.update((module, alias.name) for alias in node.names)
            identifiers.update(alias.name for alias in node.names)
    module_suffixes = {
        item.value[item.value.rindex(".") :]
        for statement in tree.body
        if isinstance(statement, (ast.Assign, ast.AnnAssign))
        for item in ast.walk(statement)
        if isinstance(item, ast.Constant) and isinstance(item.value, str) and "." in item.value[-8:]
    }
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
    )


def refine(text: str, rules: Sequence[RuleType]) -> list[RuleType]:
    """The rules that can still fire once the code, not just the bytes, has been looked at."""
    if all(rule.could_match_code is Rule.could_match_code for rule in rules):
        return list(rules)
    index = code_index(text)
    if index is None:
        return list(rules)
    return [rule for rule in rules if rule.could_match_code(index)]


def refine_summaries(text: str, rules: Sequence[RuleType]) -> list[RuleType]:
    """The project rules that still want the file's summary once its code has been looked at."""
    index = code_index(text)
    if index is None:
        return list(rules)
    return [rule for rule in rules if rule.wants_summary_code(index)]


def needs_parse(source: SourceFile, rules: Sequence[type[Rule]], summary_rules: Sequence[type[Rule]] = ()) -> bool:
    """Whether ``check_source`` would parse this file with libcst: some Python rule passes both stages, or
    some project rule wants the file's summary."""
    python_rules = [rule for rule in rules if issubclass(rule, PythonRule) and rule.could_match(source.prefilter_data)]
    summaries = [rule for rule in summary_rules if rule.wants_summary(source.prefilter_data)]
    if not python_rules and not summaries:
        return False
    try:
        text = source.text
    except DecodeError:
        return False
    return bool(refine(text, python_rules)) or bool(refine_summaries(text, summaries))
