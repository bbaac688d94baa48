"""The base of AOTI101-AOTI103, the first three checks of PyTorch's AOTI debugging guide, made static.

1. the load device type is the compile device type; 2. the inputs are on that device; 3. the input shapes are
the compile-time shapes, or within the declared dynamic dims. The analysis (``aoti_lint.rules.module_flow``)
summarises each module; the checks run over the summaries of all the files of a run, so a package written by
``export.py`` and loaded by ``serve.py`` is checked too. Each rule is in its own module:
``cross_device_load`` (AOTI101), ``input_device_mismatch`` (AOTI102), ``input_shape_mismatch`` (AOTI103).
"""

from __future__ import annotations

import bisect
import functools
import re
from collections.abc import Iterator, Sequence

from aoti_lint.diagnostics import Finding, Position, Severity
from aoti_lint.knowledge.device_flow import ARTIFACT_SUFFIXES, LOAD_TOKENS, SUMMARY_IDENTIFIERS, SUMMARY_TOKENS
from aoti_lint.rules.base import ProjectRule, defined_at

TYPE_CHECKING = False
if TYPE_CHECKING:  # the summary types load with the first summary: a clean file never needs them
    from typing import Any, ClassVar

    from aoti_lint.flows.flow_summary import CallArgument, FlowSummary, Link, Span
    from aoti_lint.screen.text_layout import Places


# Each pattern starts with a literal word, so that `re` skips from one occurrence of it to the next: an alternation
# (or a `\b`) first is tried at every position, ten times slower over torch's sources. A name's start is tested
# apart (``_WORD``, as `\b`): (pattern, whether its match must start a word, words one of which every match holds).
@functools.cache
def _summary_patterns() -> tuple[tuple[re.Pattern[str], bool, tuple[str, ...]], ...]:
    """An API name called or imported, or a string ending in an artifact suffix; compiled on first use."""
    names = "|".join(sorted(SUMMARY_IDENTIFIERS))
    return (
        *((re.compile(rf"{name}(?:\s|\\)*\("), True, (name,)) for name in sorted(SUMMARY_IDENTIFIERS)),  # called
        # imported, on one logical line or in parentheses: tried after each `import`, name by name to the line's end,
        # so not in a text that holds no name at all
        (
            re.compile(rf"import(?:\b(?:[^\n;]|\\\n)*?\b(?:{names})\b|\s*\([^)]*\b(?:{names})\b)"),
            True,
            tuple(sorted(SUMMARY_IDENTIFIERS)),
        ),
        *((re.compile(rf"{re.escape(suffix)}[\"']"), False, (suffix,)) for suffix in ARTIFACT_SUFFIXES),  # a path
    )


_WORD = re.compile(r"\w")


def _summary_matches(text: str) -> Iterator[tuple[int, int]]:
    """(index of the pattern, start) of each match of ``_summary_patterns``, pattern by pattern, that starts a word
    where it must."""
    for index, (pattern, word, needed) in enumerate(_summary_patterns()):
        if not any(needed_word in text for needed_word in needed):
            continue
        match = pattern.search(text)
        while match is not None:
            start = match.start()
            if not (word and start and _WORD.match(text, start - 1)):
                yield index, start
            match = pattern.search(text, start + 1)  # inside a longer word (`my_aot_load(`): the next one


# One entry: the three device-flow rules share one summary and ask about the same text in a row.
@functools.lru_cache(maxsize=1)
def _wanted_by_text(text: str) -> bool:
    """Whether ``_summary_patterns`` match, a definition of an API name aside: the summary's calls are calls, in code
    (torch's docstrings show calls of the API), and its paths are strings, not comments."""
    from aoti_lint.screen.text_layout import Places

    calls = len(SUMMARY_IDENTIFIERS)  # the first patterns: the names called; then the import; then the suffixes
    places: Places | None = None
    for index, start in _summary_matches(text):  # pattern by pattern: every site's before any `.so` string
        if index < calls and defined_at(text, start):
            continue
        if places is None:
            places = Places.of(text)
            if places is None:
                return True  # the strings cannot be told: any match counts
        if index <= calls:
            if places.in_code(start):
                return True
            continue
        string = places.string_at(start)
        if string is None:
            continue  # in a comment
        # A `.so` string is summarised wherever it is; a `.pt2` one only as a module constant's value.
        if ARTIFACT_SUFFIXES[index - calls - 1] == ".so" or _may_bind_module_constant(places, string):
            return True
    return False


# The statements in which a string cannot be a module-level constant's value: a compound statement's, whose body
# binds nothing at module level for ``code_index.module_string_suffixes`` (which reads ``Module.body`` only). Any
# other is parsed on its own.
_COMPOUND = re.compile(r"(?:def|class|async|if|for|while|try|with)(?!\w)|@")
_SKIPPED = re.compile(r"(?:\s|#[^\n]*(?![^\n]))*")
_LINE_END = re.compile(r"[ \t\f]*(?:#[^\r\n]*)?(?:\r?\n|\Z)")


def _may_bind_module_constant(places: Places, string: int) -> bool:
    """Whether the string literal of that index (``Places``) may be the value of a module-level constant (it may
    where the top-level statements cannot be told)."""
    statements = places.top_level_starts()
    if statements is None:
        return True
    start, end = places.openings[string], places.spans[string][1]
    return not _outside_module_bindings(places.text, statements, start, end)


def _outside_module_bindings(text: str, statements: list[int], start: int, end: int) -> bool:
    """Whether the literal at ``text[start:end]`` lies where no module-level assignment binds it to a name (what
    ``code_index.module_string_suffixes`` reads): in a compound statement (a definition, a decorator's, an `if`...),
    as a statement of its own (a docstring), or in statements whose own parse binds no such path."""
    at = bisect.bisect_right(statements, start) - 1
    statement = statements[at]
    skipped = _SKIPPED.match(text, statement)
    first = skipped.end() if skipped is not None else statement
    if first == start and _LINE_END.match(text, end) is not None:
        return True
    if first < start and _COMPOUND.match(text, first) is not None:
        return True
    import ast  # only for a text with a `.pt2` string: the text stage runs on every file that passes the bytes'

    try:
        # As many line ends before it as before the statement: a statement at the text's start parses alike.
        tree = ast.parse(text[statement : statements[at + 1]])
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return False
    for node in tree.body:
        targets = node.targets if type(node) is ast.Assign else [node.target] if type(node) is ast.AnnAssign else []
        value = getattr(node, "value", None)
        if value is None or type(value) is ast.IfExp or not any(type(target) is ast.Name for target in targets):
            continue
        for item in ast.walk(value):
            if type(item) is ast.Constant and type(item.value) is str and item.value.endswith(ARTIFACT_SUFFIXES):
                return False
    return True


class DeviceFlowRule(ProjectRule):
    """Shared by the three rules: one summary per file, findings only where a load is."""

    summary_key: ClassVar[str] = "device-flow"
    summary_triggers = SUMMARY_TOKENS
    triggers = LOAD_TOKENS
    severity = Severity.ERROR

    @classmethod
    def wants_summary_python(cls, text: str) -> bool:
        # The same, in the text: an API name called (not defined) or imported, or a string ending in an artifact
        # suffix.
        return _wanted_by_text(text)

    @classmethod
    def wants_summary_code(cls, code: Any) -> bool:
        # A summary holds compile and load sites (calls of the API, or of a name imported from it) and
        # artifact paths in module-level constants that other files may import. A relative import never
        # names the API (libcst resolves `from . import aot_compile` to `.aot_compile`).
        # Any string naming a `.so` counts too: the migration plan must see every reader of an artifact (a
        # path passed to a load helper, a file deleted or copied) before it rewrites the artifact's format.
        return cls._has_sites(code) or ".so" in code.string_suffixes

    @staticmethod
    def _has_sites(code: Any) -> bool:
        imported = {name for module, name in code.imported_names if not module.startswith(".")}
        imported |= {module.rsplit(".", 1)[-1] for module in code.imported_modules}  # `import a.f as g`: `g()`
        return bool((code.called | imported) & SUMMARY_IDENTIFIERS) or bool(
            code.module_string_suffixes & set(ARTIFACT_SUFFIXES)
        )

    @classmethod
    def check_project(cls, summaries: Sequence[FlowSummary]) -> list[Finding]:
        from aoti_lint.flows.flow_summary import link_loads

        links = link_loads(summaries)
        findings = []
        for summary in summaries:
            for index, load in enumerate(summary.loads):
                link = links.get((summary.path, index))
                message = cls.check_load(link) if link is not None else None
                if message is not None:
                    findings.append(cls.at(summary.path, load.span, message))
            for call in summary.calls:
                link = links.get((summary.path, call.load_index))
                message = cls.check_call(link, call.arguments) if link is not None else None
                if message is not None:
                    findings.append(cls.at(summary.path, call.span, message))
        return findings

    @classmethod
    def check_load(cls, link: Link) -> str | None:
        return None

    @classmethod
    def check_call(cls, link: Link, arguments: Sequence[CallArgument]) -> str | None:
        return None

    @classmethod
    def at(cls, path: str, span: Span, message: str) -> Finding:
        return cls.finding(path, Position(span.row, span.column), Position(span.end_row, span.end_column), message)
