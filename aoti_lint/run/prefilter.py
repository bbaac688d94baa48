"""The later stages of the prefilter: what the code says, not what its bytes mention.

A file pays for libcst only if some rule passes every stage, each cheaper than the next:
1. its bytes (``Rule.could_match``): what must literally appear for a finding (a debug variable's own name, a
   config key's own forms next to an Inductor token, ``aot_compile`` with ``_export``);
2. for Python, its text (``Rule.could_match_python``): a regular expression for the forms a finding takes (a
   debug variable's name with a literal value, not a read of it);
3. one ``ast`` parse, cached, and one walk (``code_index``), queried by ``Rule.could_match_code``: e.g. a literal
   setting of a debug key to an "on" value, a call of the API by its name or an imported one.

Many files merely mention a name in a docstring, a comment, or an unrelated module path (torch's own sources
hold ``aot_compile`` and ``_export`` together in 13 files; 1 refers to ``torch._export.aot_compile``). Parsing
such a file with libcst and resolving its names costs ten to a hundred times more than the ``ast`` parse that
settles it here. ``ast`` compiles nothing and runs nothing. Every stage must be sound: ``tests/test_fixtures.py``
runs each fixture and rule example through each stage and compares with the unfiltered analysis.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from aoti_lint.read.source import PYTHON_KINDS, DecodeError, SourceFile
from aoti_lint.rules.base import ProjectRule, PythonRule, Rule, rule_matches, summary_wanted
from aoti_lint.run.file_context import FileContext

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import TypeVar

    RuleType = TypeVar("RuleType", bound=type[Rule])


def _names_text(text: str) -> str:
    """The text with its names as CPython reads them (NFKC, a fullwidth `l`, U+FF4C, is `l`): the text stage passes what
    either spelling matches. The text itself where it is ASCII."""
    if text.isascii():
        return text
    import unicodedata

    return unicodedata.normalize("NFKC", text)


def refine(text: str, rules: Sequence[RuleType]) -> list[RuleType]:
    """The rules that can still fire once the code, not just the bytes, has been looked at: first the text
    (``could_match_python``), then, only for the rules left, the ``ast`` index (``could_match_code``)."""
    names = _names_text(text)
    rules = [
        rule
        for rule in rules
        if rule.could_match_python(text) or (names is not text and rule.could_match_python(names))
    ]
    if all(rule.could_match_code is Rule.could_match_code for rule in rules):
        return rules
    from aoti_lint.model.name_index import code_index  # imports ast: only once some file passes stage one

    index = code_index(text)
    if index is None:
        return rules
    return [rule for rule in rules if rule.could_match_code(index)]


def refine_summaries(text: str, rules: Sequence[RuleType]) -> list[RuleType]:
    """The project rules that still want the file's summary once its code has been looked at."""
    names = _names_text(text)
    rules = [
        rule
        for rule in rules
        if rule.wants_summary_python(text) or (names is not text and rule.wants_summary_python(names))  # type: ignore[attr-defined]
    ]
    if not rules:
        return rules
    from aoti_lint.model.name_index import code_index

    index = code_index(text)
    if index is None:
        return rules
    return [rule for rule in rules if rule.wants_summary_code(index)]  # type: ignore[attr-defined]


@dataclass(frozen=True)
class Wanted:
    """The rules that still need a Python file's libcst tree: rules to run, project rules to collect data for; and
    the project's modules the file imports, which its findings may depend on (``with_imported_modules``)."""

    rules: list[type[PythonRule]]
    project_rules: list[type[ProjectRule]]
    imported: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.rules or self.project_rules)


def by_bytes(data: bytes, context: FileContext) -> Wanted:
    """Stage one for a Python file: the rules whose tokens its bytes hold."""
    return Wanted(
        [rule for rule in context.rules if issubclass(rule, PythonRule) and rule_matches(rule, data)],
        [rule for rule in context.project_rules if summary_wanted(rule, data)],
    )


def by_code(text: str, wanted: Wanted) -> Wanted:
    """Stages two and three, for the rules left after stage one."""
    return Wanted(refine(text, wanted.rules), refine_summaries(text, wanted.project_rules))


def prefiltered(source: SourceFile, context: FileContext, first: Wanted | None = None) -> Wanted | None:
    """Every stage at once, for a Python file: the rules and project rules still wanting it, which
    ``engine.check_source`` takes instead of running the stages again. None for another kind of file, or
    bytes that do not decode (the engine reports them as a syntax error without libcst). ``first``: what
    ``by_bytes`` gave for these bytes and this context, when it is known."""
    if source.kind not in PYTHON_KINDS:
        return None
    wanted = by_bytes(source.prefilter_data, context) if first is None else first
    if not wanted and not context.reads(source.prefilter_data):
        return wanted
    try:
        text = source.text
    except DecodeError:
        return None
    return with_imported_modules(source, text, context, by_code(text, wanted) if wanted else wanted)


def with_imported_modules(source: SourceFile, text: str, context: FileContext, wanted: Wanted) -> Wanted:
    """A file that passes the screen and imports modules of the project: the rules its bytes pass with those
    modules' bytes beside them are wanted too (``te.aot_compile`` where another module binds ``te`` to
    ``torch._export``), whatever the later stages say of the file alone, and its findings depend on those
    modules (its cache entry and stamp hold theirs)."""
    from aoti_lint.read.project_modules import followed_imports, with_imports

    imported = tuple(followed_imports(str(source.path), text))
    if not imported:
        return wanted
    place(source, text)
    widened = by_bytes(with_imports(source.prefilter_data, list(imported)), context)
    return Wanted(
        [*wanted.rules, *(rule for rule in widened.rules if rule not in wanted.rules)],
        [*wanted.project_rules, *(rule for rule in widened.project_rules if rule not in wanted.project_rules)],
        imported,
    )


def needs_parsing(source: SourceFile, context: FileContext) -> bool:
    """Whether ``engine.check_source`` parses this file with libcst: some Python rule passes every stage, or
    some project rule still wants the file's data."""
    return bool(prefiltered(source, context))


def place(source: SourceFile, text: str) -> None:
    """Tell the text's semantic model which file it is, for the names it imports from the project's modules
    (``aoti_lint.model.project_names``)."""
    from aoti_lint.model.project_names import place as place_model
    from aoti_lint.model.semantic import model_of
    from aoti_lint.model.syntax_tree import parse

    tree = parse(text)
    if not isinstance(tree, BaseException):
        place_model(model_of(tree), str(source.path))
