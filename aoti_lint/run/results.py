"""What linting gives, one result per level: ``CheckResult`` (one lint of one text), ``FileOutcome`` (one file after
its fixes, findings located for the report), and the project data a file gives the pass across files."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from aoti_lint.diagnostics import FileError, Finding
from aoti_lint.rules.base import ProjectRule, Rule

TYPE_CHECKING = False
if TYPE_CHECKING:
    from aoti_lint.model.suppressions import Suppressions
    from aoti_lint.read.source import SourceFile


# The fixes planned per artifact flow across the files of a run, and the project data that plan reads.
MIGRATION_CODES = frozenset({"AOTI001", "AOTI002"})


FLOW_SUMMARY = "device-flow"


@dataclass
class ProjectPart:
    """What one file gives the project pass (plain data): project data by ``ProjectRule.summary_key``, the
    project rules enabled for the file, and its noqa comments."""

    path: str
    summaries: dict[str, object]
    codes: frozenset[str]
    suppressions: Suppressions


@dataclass
class CheckResult:
    """One lint of one text (``check_source``): findings at the text's own positions, no fix applied."""

    findings: list[Finding] = field(default_factory=list)
    errors: list[FileError] = field(default_factory=list)
    parsed: bool = False
    project: ProjectPart | None = None
    # Why some fix could not be built (by reason), for a warning: the findings stand, so the exit code does too.
    notes: dict[str, FileError] = field(default_factory=dict)
    # The project's modules the text imports: its findings may depend on them (``prefilter.with_imported_modules``).
    depends_on: tuple[str, ...] = ()


@dataclass
class FileOutcome:
    """What processing one file produced (``process_source``): the findings after fixes, located for the
    report (notebook cells), and the fixed bytes; plain data, so a worker process can return it."""

    path: str
    findings: list[Finding] = field(default_factory=list)
    errors: list[FileError] = field(default_factory=list)
    fixed: int = 0
    # Set when fixes changed the text (and, without --diff, were written).
    original_text: str | None = None
    fixed_text: str | None = None
    fixed_data: bytes | None = None
    checked: bool = False
    project: ProjectPart | None = None
    # Fixes that could not be built (``CheckResult.notes``): warnings, not errors.
    notes: list[FileError] = field(default_factory=list)
    # Artifact flows (aoti_lint.flows.migration_flow) whose part in this file the fixed text migrates.
    flow_groups: frozenset[int] = frozenset()
    # What a fixed file is written over, when the run writes it after checking the whole flow.
    source_path: Path | None = None
    original_data: bytes | None = None
    # The project's modules the file imports or whose names it follows, which its findings depend on, and the
    # digest of their stamps (``file_stats.imports_stamp``, taken as the run settles the file; None: too recent to
    # cache).
    depends_on: tuple[str, ...] = ()
    imports_stamp: str | None = ""


def project_codes(rules: Iterable[type[Rule]]) -> frozenset[str]:
    return frozenset(
        rule.code for rule in rules if issubclass(rule, ProjectRule) or rule.code in MIGRATION_CODES or rule.reads_flows
    )


def internal_error(source: SourceFile, exc: Exception) -> FileError:
    """A bug in a rule, reported for the one file (traceback with --verbose); the run goes on."""
    import traceback

    return FileError(
        source.display_path,
        f"internal error while linting: {type(exc).__name__}: {exc}",
        detail=traceback.format_exc(),
    )
