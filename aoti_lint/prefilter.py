"""The second stage of the prefilter: tokens that must occur as identifiers in code, not in strings or comments.

The first stage (``Rule.could_match``) looks for bytes. Many files merely mention a name in a docstring or a
comment (torch's own sources mention ``aot_compile`` in 13 files; 4 use it in code), and the libcst parse with
name resolution that they would then pay costs ten times more than the ``ast`` parse that settles it here.
``ast`` compiles nothing and runs nothing.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Sequence
from typing import TypeVar

from aoti_lint.rules.base import PythonRule, Rule
from aoti_lint.source import DecodeError, SourceFile

RuleType = TypeVar("RuleType", bound=type[Rule])

# Fields of ast nodes that hold names: Name.id, Attribute.attr, alias.name / asname, ImportFrom.module, arg.arg,
# and the names of definitions. Dotted names (imports) are split into their parts.
_NAME_FIELDS = ("id", "attr", "name", "asname", "module", "arg")


# One entry: the runner asks about a file, then check_source asks again about the same text.
@functools.lru_cache(maxsize=1)
def code_identifiers(text: str) -> frozenset[str] | None:
    """Every identifier used in the module's code; None when ``ast`` cannot parse it."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    names: set[str] = set()
    for node in ast.walk(tree):
        for field in _NAME_FIELDS:
            value = getattr(node, field, None)
            if isinstance(value, str):
                names.update(value.split("."))
    return frozenset(names)


def refine(text: str, rules: Sequence[RuleType]) -> list[RuleType]:
    """The rules that can still fire once tokens found only in strings and comments are set aside.

    Only rules declaring ``identifier_triggers`` are refined; a file that ``ast`` cannot parse keeps them all
    (libcst may still parse it, or reports the syntax error).
    """
    if not any(rule.identifier_triggers for rule in rules):
        return list(rules)
    names = code_identifiers(text)
    if names is None:
        return list(rules)
    return [
        rule
        for rule in rules
        if not rule.identifier_triggers
        or any(all(token.decode("ascii") in names for token in group) for group in rule.triggers)
    ]


def needs_parse(source: SourceFile, rules: Sequence[type[Rule]]) -> bool:
    """Whether ``check_source`` would parse this file with libcst: some Python rule passes both stages."""
    python_rules = [rule for rule in rules if issubclass(rule, PythonRule) and rule.could_match(source.data)]
    if not python_rules:
        return False
    try:
        text = source.text
    except DecodeError:
        return False
    return bool(refine(text, python_rules))
