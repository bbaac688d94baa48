"""The vocabulary every part of aoti-lint speaks: findings, fixes, edits, severities."""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass, field, replace


class Severity(enum.Enum):
    ERROR = "error"
    WARNING = "warning"
    NOTE = "note"


class Applicability(enum.Enum):
    """Ruff's fix safety classes."""

    SAFE = "safe"
    UNSAFE = "unsafe"
    DISPLAY_ONLY = "display-only"


@dataclass(frozen=True, order=True)
class Position:
    """A 1-based line and a 1-based column (in characters), as ruff reports them."""

    row: int
    column: int


@dataclass(frozen=True)
class Edit:
    """Replace the text between ``start`` and ``end`` (exclusive) with ``content``."""

    content: str
    start: Position
    end: Position


@dataclass(frozen=True)
class Fix:
    applicability: Applicability
    message: str
    edits: tuple[Edit, ...] = ()
    # Building the edits can cost a codemod run per site, and most runs only show that a fix exists: a rule may
    # leave ``build`` instead, called while the file's analysis is alive (``settled``); a run that shows no
    # edits leaves them ``deferred`` (never built; a later run that needs them lints the file again).
    build: Callable[[], tuple[Edit, ...]] | None = field(default=None, compare=False, repr=False)
    deferred: bool = False
    # Why an unsafe fix is unsafe: what it may change besides the finding's code (the concise report says it).
    reason: str = ""

    @property
    def title(self) -> str:
        """What the fix does, without the reason its message may end with (``migration_verdicts.fix_title``)."""
        return self.message.removesuffix(f" (unsafe: {self.reason})") if self.reason else self.message

    @property
    def has_edits(self) -> bool:
        return bool(self.edits) or self.deferred or self.build is not None

    def settled(self, build_edits: bool) -> Fix:
        """This fix without its builder: its edits built, or marked deferred."""
        if self.build is None:
            return self
        if build_edits:
            return replace(self, edits=self.build(), build=None)
        return replace(self, build=None, deferred=True)


@dataclass
class Finding:
    code: str
    message: str
    path: str
    start: Position
    end: Position
    severity: Severity = Severity.WARNING
    fix: Fix | None = None
    # The line whose noqa comment suppresses this finding; the first line by default.
    noqa_row: int | None = None
    # Notebook cell (1-based) when the file is a notebook; rows are then cell-relative.
    cell: int | None = None
    url: str | None = None
    # Rule-private payload, e.g. the node a fix starts from; never serialised.
    data: object = field(default=None, repr=False, compare=False)

    def sort_key(self) -> tuple:
        return (self.path, self.cell or 0, self.start.row, self.start.column, self.code)

    @property
    def fixable(self) -> bool:
        """Fixable by `--fix` (safe fixes)."""
        return self.fix_applies(unsafe=False)

    def fix_applies(self, unsafe: bool) -> bool:
        if self.fix is None or not self.fix.has_edits:
            return False
        if self.fix.applicability is Applicability.SAFE:
            return True
        return unsafe and self.fix.applicability is Applicability.UNSAFE


@dataclass(frozen=True)
class FileError:
    """A file that could not be linted (unreadable, an internal error in a rule, a failed write)."""

    path: str
    message: str
    # A traceback or other detail, shown with --verbose only.
    detail: str = ""
