"""What a rule is: one small class holding its code, its documentation, its examples and its check.

As in Fixit, the examples (``VALID``/``INVALID``) sit beside the check, run as tests and feed the docs page.
As in ruff, the docs use the sections "What it does / Why is this bad? / Example / Use instead / Fix safety /
References". Rule modules read Python from ``ast``; libcst is the fix layer's (``aoti_lint.fixes``, ``codemods``),
so listing rules, prefiltering and printing docs stay instant.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass

from aoti_lint.diagnostics import Finding, Fix, Position, Severity
from aoti_lint.knowledge.references import Reference
from aoti_lint.read.source import PYTHON_KINDS
from aoti_lint.settings.target_torch import DEFAULT_TARGET_TORCH, DEFAULT_TARGET_TORCH_TEXT

TYPE_CHECKING = False
if TYPE_CHECKING:
    import ast
    from typing import Any, ClassVar

    from aoti_lint.model.name_index import CodeIndex
    from aoti_lint.model.semantic import SemanticModel
    from aoti_lint.read.source import SourceFile

DOCS_URL = "https://github.com/aoti-lint/aoti-lint/blob/main/docs/rules/{code}.md"


# Substrings shared by many trigger tokens: a file without one (nine in ten) is settled by one scan for it, not
# one per token under it. Each scan of the bytes costs about the same whatever the token: 33 tokens under
# 6 anchors and 6 tokens of their own cost 12 scans, not 33. The first look at
# the bytes (``file_context``'s screen) asks for the anchors, then for the tokens under the anchors found; the
# rules' own tests (``tokens_match``) then never search for a token whose anchor is absent.
SCREEN_ANCHORS = (b"aot", b"AOT", b"TORCH", b"Meta", b"meta", b".so")
_ANCHOR_OF: dict[bytes, bytes | None] = {}

# Which tokens the bytes last asked about hold: the rules' trigger groups share most tokens (`aot_load` is in
# ten groups), and each absent token costs a scan of the whole file; stage one asks about every file read.
_scanned: list[Any] = [b"", {}]


def _dedent(text: str) -> str:
    import textwrap  # for the rules' examples and pages only: a lint run need not import it

    return textwrap.dedent(text)


def holds(data: bytes, token: bytes) -> bool:
    """``token in data``, searched once per token for the same bytes, and not at all when an anchor the token
    holds is absent (``SCREEN_ANCHORS``)."""
    if _scanned[0] is not data:
        _scanned[:] = [data, {}]
    found: dict[bytes, bool] = _scanned[1]
    present = found.get(token)
    if present is None:
        if token in _ANCHOR_OF:
            anchor = _ANCHOR_OF[token]
        else:
            anchor = _ANCHOR_OF[token] = next((a for a in SCREEN_ANCHORS if a in token and a != token), None)
        present = found[token] = (anchor is None or holds(data, anchor)) and token in data
    return present


def remember(data: bytes, found: dict[bytes, bool]) -> None:
    """Which of some tokens the bytes hold, as searched for elsewhere (the screen's anchors), for ``holds``."""
    if _scanned[0] is not data:
        _scanned[:] = [data, {}]
    _scanned[1].update(found)


def tokens_match(groups: tuple[tuple[bytes, ...], ...], data: bytes) -> bool:
    """Whether, for at least one group, every token of the group occurs in ``data``."""
    return any(all(holds(data, token) for token in group) for group in groups)


# What each rule's test of the bytes last gave, for the bytes last asked about: stage one asks about each file up
# to three times (the screen, whether any rule matches, which ones), and a rule's own test may run a dozen
# regular expressions (AOTI202's key forms), each time over the whole of the bytes.
_matched: list[Any] = [b"", {}]


def rule_matches(rule: type[Rule], data: bytes) -> bool:
    """``rule.could_match(data)``, asked once per rule for the same bytes."""
    if _matched[0] is not data:
        _matched[:] = [data, {}]
    found: dict[Any, bool] = _matched[1]
    matched = found.get(rule)
    if matched is None:
        matched = found[rule] = rule.could_match(data)
    return matched


def summary_wanted(rule: type[ProjectRule], data: bytes) -> bool:
    """``rule.wants_summary(data)``, asked once per project rule for the same bytes."""
    if _matched[0] is not data:
        _matched[:] = [data, {}]
    found: dict[Any, bool] = _matched[1]
    key = (rule, "summary")
    wanted = found.get(key)
    if wanted is None:
        wanted = found[key] = rule.wants_summary(data)
    return wanted


def remember_verdicts(data: bytes, matched: dict[type[Rule], bool], wanted: dict[type[ProjectRule], bool]) -> None:
    """What the rules' tests of the bytes give, as found elsewhere (the compiled screen of ``file_context``), for
    ``rule_matches`` and ``summary_wanted``."""
    if _matched[0] is not data:
        _matched[:] = [data, {}]
    found: dict[Any, bool] = _matched[1]
    found.update(matched)
    found.update(((rule, "summary"), verdict) for rule, verdict in wanted.items())


# A name written after `def`/`class` on its line: defined there, not called (torch defines the API it exports).
_DEFINING = re.compile(r"(?:^|(?<=\W))(?:def|class)[ \t]+$")


def defined_at(text: str, start: int) -> bool:
    """Whether the name starting at ``start`` follows `def` or `class` on its line (a text stage's test)."""
    return _DEFINING.search(text, text.rfind("\n", 0, start) + 1, start) is not None


@dataclass(frozen=True)
class Valid:
    """Code on which the rule must stay silent."""

    code: str
    filename: str = "example.py"

    @property
    def source(self) -> str:
        return _dedent(self.code).lstrip("\n")


@dataclass(frozen=True)
class Invalid:
    """Code on which the rule must report, optionally with where, what, and the fixed result."""

    code: str
    line: int | None = None
    column: int | None = None
    message_contains: str | None = None
    count: int = 1
    # The whole file after ``--fix --unsafe-fixes``; None when the finding has no automatic fix.
    fixed: str | None = None
    filename: str = "example.py"
    # The `target-torch` the example is linted and fixed with.
    target_torch: str = DEFAULT_TARGET_TORCH_TEXT

    @property
    def source(self) -> str:
        return _dedent(self.code).lstrip("\n")

    @property
    def fixed_source(self) -> str | None:
        return None if self.fixed is None else _dedent(self.fixed).lstrip("\n")


class Rule:
    """Base of every rule. Subclasses set the class attributes and implement a check."""

    code: ClassVar[str]
    name: ClassVar[str]
    summary: ClassVar[str]
    severity: ClassVar[Severity] = Severity.WARNING
    # "never", "sometimes" or "always", as ruff's `rule` command prints it.
    fix_availability: ClassVar[str] = "never"
    # File kinds the rule reads (see aoti_lint.read.source.FileKind).
    file_kinds: ClassVar[frozenset[str]] = frozenset({"python"})
    # Prefilter: the file can only trigger the rule if, for at least one group, every token of the group
    # occurs in its bytes. Must be sound: a test runs every example and fixture through it.
    triggers: ClassVar[tuple[tuple[bytes, ...], ...]] = ()
    # For a rule whose ``could_match`` is its own: tokens one of which every bytes it matches hold, each a part of
    # some token of every group of ``triggers``. Stage one's screen looks for them before asking the rule.
    screen_tokens: ClassVar[tuple[bytes, ...]] = ()
    VALID: ClassVar[list[Valid]] = []
    INVALID: ClassVar[list[Invalid]] = []
    # Rendered as the docs' References section (``explanation``); data in ``knowledge/references.py``.
    references: ClassVar[tuple[Reference, ...]] = ()

    # The docstring holds "What it does", "Why is this bad?", optional "Known problems", "Fix safety",
    # "References" as Markdown sections; Example / Use instead come from the first INVALID example.

    # Whether the rule also reads the run's artifact flows (the device-flow summaries of every file, as the migration
    # plan does): ``check_flows`` gets them in the project pass.
    reads_flows: ClassVar[bool] = False

    @classmethod
    def url(cls) -> str:
        return DOCS_URL.format(code=cls.code)

    @classmethod
    def make_finding(cls, path: str, start: Position, end: Position, message: str, fix: Fix | None = None) -> Finding:
        """The rule's finding at ``path`` from ``start`` to ``end``."""
        return Finding(
            code=cls.code,
            message=message,
            path=path,
            start=start,
            end=end,
            severity=cls.severity,
            fix=fix,
            url=cls.url(),
        )

    @classmethod
    def check_flows(cls, summaries: Sequence[Any]) -> list[Finding]:
        """The findings across files of a rule that ``reads_flows``: ``summaries`` are every file's
        ``flows.flow_summary.FlowSummary``; each finding then passes its file's noqa comments and
        per-file-ignores."""
        return []

    @classmethod
    def could_match(cls, data: bytes) -> bool:
        return tokens_match(cls.triggers, data)

    @classmethod
    def tidy_after_fix(cls, text: str) -> str:
        """Called once after this rule's fixes were applied to a file; returns the tidied text."""
        return text

    @classmethod
    def could_match_python(cls, text: str) -> bool:
        """Between the two stages, for Python code only (``text``, decoded): a test cheaper than ``ast``, e.g. a
        regular expression for the forms a finding needs, where those of other file kinds keep ``triggers``
        broad. Must be sound, as ``triggers``."""
        return True

    @classmethod
    def could_match_code(cls, code: CodeIndex) -> bool:
        """Second prefilter stage, for files that pass ``could_match``: given the names the code uses (see
        ``aoti_lint.model.name_index.CodeIndex``), whether the rule can fire. Must be sound, as ``triggers``."""
        return True

    @classmethod
    def explanation(cls) -> str:
        text = _dedent(cls.__doc__ or "").strip()
        if cls.references:  # the last section, from the knowledge tables: each page is named in one place
            text += "\n\n## References\n" + "\n".join(f"- {reference.markdown()}" for reference in cls.references)
        return text


class PythonRule(Rule):
    """A rule over one Python module (a ``.py`` file or a notebook's cells), read from its ``ast``: an ``AstRule``,
    or AOTI001/AOTI002, whose findings come with the device-flow summary from one reading (``rules.module_flow``)."""

    file_kinds = PYTHON_KINDS


class AstModule:
    """One Python module as the ``AstRule``s read it: its ``ast`` index (``code``: the tree, the text), where it is
    shown (``path``), the torch the project targets, and what every rule asks of it, computed once: the semantic
    model of its names (``aoti_lint.model.semantic``) and its lines."""

    def __init__(self, code: CodeIndex, path: str, target_torch: tuple[int, int] = DEFAULT_TARGET_TORCH) -> None:
        self.code, self.path, self.target_torch = code, path, target_torch
        self.tree: ast.Module = code.tree  # type: ignore[assignment]
        self.text = code.text
        # Each node's parent, filled by the checker's traversal (``rules.checker``) before the node is visited.
        self.parents: dict[ast.AST, ast.AST] = {}

    @functools.cached_property
    def model(self) -> SemanticModel:
        from aoti_lint.model.semantic import model_of

        return model_of(self.tree)

    @functools.cached_property
    def lines(self) -> list[str]:
        """The text's lines with their ends, as ``ast`` numbers them (``syntax_tree.source_lines``)."""
        from aoti_lint.model.syntax_tree import source_lines

        return source_lines(self.text)

    def position(self, row: int, byte_column: int) -> Position:
        """Where ``ast``'s row and column (UTF-8 bytes into the line) lie, the column counted in characters."""
        return Position(row, len(self.lines[row - 1].encode()[:byte_column].decode(errors="replace")) + 1)

    def start(self, node: Any) -> Position:
        return self.position(node.lineno, node.col_offset)

    def end(self, node: Any) -> Position:
        return self.position(node.end_lineno, node.end_col_offset)

    def segment(self, node: ast.AST) -> str:
        """The source text of a node."""
        from aoti_lint.model.syntax_tree import source_segment

        return source_segment(self.lines, node)


class AstReader:
    """What one ``AstRule`` reads of one module: the checker (``aoti_lint.rules.checker``) calls ``visit`` for each
    node of the types in ``node_types``, in source order, then ``findings``."""

    node_types: ClassVar[tuple[type[ast.AST], ...]] = ()

    def __init__(self, rule: type[AstRule], module: AstModule) -> None:
        self.rule, self.module = rule, module
        self.found: list[Finding] = []

    def visit(self, node: ast.AST) -> None:
        """Read one node; its parents are known (``module.parents``)."""

    def findings(self) -> list[Finding]:
        """The findings, once every node is read."""
        return self.found


class AstRule(PythonRule):
    """A rule read from the module's ``ast`` tree and semantic model alone, in every run whatever it shows: every
    ``AstRule`` a file wants is answered in one traversal (``aoti_lint.rules.checker``); no file is parsed with
    libcst in a run that shows no fix edits. Its fixes leave their edits to a
    ``build`` of the fix layer (``aoti_lint.fixes``), called only by a run that applies or shows them."""

    @classmethod
    def reader(cls, module: AstModule) -> AstReader:
        """What reads the module for this rule."""
        raise NotImplementedError

    @classmethod
    def finding_at(
        cls, node: Any, module: AstModule, message: str, fix: Fix | None = None, width: int | None = None
    ) -> Finding:
        """The rule's finding over an ``ast`` node of the module (its first ``width`` characters, or all of it), its
        columns counted in characters."""
        start = module.start(node)
        end = module.end(node) if width is None else Position(start.row, start.column + width)
        return cls.make_finding(module.path, start, end, message, fix)


class ProjectRule(Rule):
    """A rule over all the files of one run, e.g. a load in one file of an artifact compiled in another.

    Per file whose bytes pass ``summary_triggers``, ``summarize`` turns the parsed module into a summary: plain
    picklable data, no libcst nodes, so it crosses worker processes and caches. Rules with the same
    ``summary_key`` share one summary per file. Once every file is processed, ``check_project`` gets all the
    summaries and returns findings, which then pass each file's noqa comments and per-file-ignores like any
    other. ``triggers`` keeps its meaning: a file can hold a finding of the rule only if it passes them.
    """

    summary_key: ClassVar[str]
    summary_triggers: ClassVar[tuple[tuple[bytes, ...], ...]] = ()

    @classmethod
    def wants_summary(cls, data: bytes) -> bool:
        return tokens_match(cls.summary_triggers, data)

    @classmethod
    def wants_summary_python(cls, text: str) -> bool:
        """Between ``wants_summary`` and ``wants_summary_code``: a test of the Python text cheaper than ``ast``;
        must be sound."""
        return True

    @classmethod
    def wants_summary_code(cls, code: CodeIndex) -> bool:
        """Second stage of ``wants_summary``, over the names the code uses; must be sound."""
        return True

    @classmethod
    def check_project(cls, summaries: Sequence[Any]) -> list[Finding]:
        raise NotImplementedError

    @classmethod
    def finding(cls, path: str, start: Position, end: Position, message: str) -> Finding:
        return cls.make_finding(path, start, end, message)


class TextRule(Rule):
    """A rule over a line-based file (shell, Dockerfile, YAML, .env): ``check`` reads the decoded text.

    The engine filters the findings through the file's trailing ``# noqa`` comments.
    """

    @classmethod
    def check(cls, source: SourceFile) -> list[Finding]:
        raise NotImplementedError

    @classmethod
    def finding(
        cls, source: SourceFile, start: Position, end: Position, message: str, fix: Fix | None = None
    ) -> Finding:
        return cls.make_finding(source.display_path, start, end, message, fix)
