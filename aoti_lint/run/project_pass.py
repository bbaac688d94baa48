"""The project pass, across the files of a run: the migration planned per artifact flow (a compile and every load
of its package, in any file, migrate together or not at all), the flows settled before anything is written, and
the project rules, which see every file's project data.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from aoti_lint.diagnostics import FileError, Finding
from aoti_lint.read.files import Candidate
from aoti_lint.read.source import display_path
from aoti_lint.rules.base import ProjectRule, Rule
from aoti_lint.run.results import FLOW_SUMMARY, FileOutcome, ProjectPart
from aoti_lint.settings.run_options import FixOptions

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def plan_migrations(
    parts: Sequence[ProjectPart],
    cpp_loads: Any = dict,
    outside: Any = lambda name: None,
    reports: list[Any] | None = None,
    editable: set[str] | None = None,
) -> dict[str, Any]:
    """The migration planned per artifact flow over the files of a run (empty without deprecated calls).

    ``cpp_loads()`` gives, per `.so` file name, where C++ files of the run load it (read only when needed);
    ``outside(name)`` where a file
    of the project that is not Python names that `.so` (``OutsideMentions``); ``reports`` each flow
    (``migration_flow.FlowReport``); ``editable`` the files the run may edit (None: all of them), the others read
    only to see each flow whole.
    """
    summaries: list[Any] = [part.summaries[FLOW_SUMMARY] for part in parts if FLOW_SUMMARY in part.summaries]
    if not any(getattr(summary, "migrations", ()) for summary in summaries):
        return {}
    from aoti_lint.flows.migration_flow import plan_flows
    from aoti_lint.rules import CrossDeviceLoad

    enabled = {part.path: part.codes for part in parts}
    loaded_from_cpp = cpp_loads()

    def foreign(name: str) -> str | None:
        places = loaded_from_cpp.get(name)
        if places:
            return f"loaded from C++ at {places[0]}: migrate it to AOTIModelPackageLoader"
        place = outside(name)
        if place is not None:
            return f"{place} also names `{name}`, where the fix cannot follow it: update it with the flow by hand"
        return None

    return plan_flows(
        summaries,
        CrossDeviceLoad.check_load,
        foreign,
        enabled=lambda path, code: code in enabled[path],
        reports=reports,
        editable=editable,
    )


# A larger file (a log, a dataset) is not a consumer anyone maintains by hand.
MAX_MENTION_BYTES = 1_000_000
_NAME_BYTES = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-")


class OutsideMentions:
    """Where a file of the project that is neither Python nor C++ (a Makefile, a shell script, a model store's YAML
    or JSON, a CMake file, a Dockerfile) names an artifact's file: it would go on naming a `.so` nobody writes any
    more, so the flow that makes it is not migrated. The project's files (under ``settings.root``, its excludes and
    ignore files applied, whatever the run was given: pre-commit names only the staged ones) are read on the first
    question, once per run, each for the `.so` file names it holds (its bytes are not kept)."""

    def __init__(self, settings: Any, cwd: Path, in_project: Any = lambda: True) -> None:
        self._settings = settings
        self._cwd = cwd
        # Asked on the first question: for a run of files outside the project's root, the root's files are not
        # their project's, and are not read.
        self._in_project = in_project
        self._places: dict[bytes, str] | None = None
        self._read_files = False

    @property
    def consulted(self) -> bool:
        """Whether the run read the project's files for it: its findings then depend on them too."""
        return bool(self._places is not None and self._read_files)

    def __call__(self, name: str) -> str | None:
        return self._read().get(name.encode("utf-8", "surrogateescape"))

    def _read(self) -> dict[bytes, str]:
        if self._places is None:
            from aoti_lint.read.files import other_project_files
            from aoti_lint.run.disk import read_regular_file

            self._places = {}
            self._read_files = self._in_project()
            for candidate in other_project_files(self._settings) if self._read_files else ():
                try:
                    if candidate.path.stat().st_size > MAX_MENTION_BYTES:
                        continue
                    data = read_regular_file(candidate.path)
                except OSError:
                    continue
                if b".so" not in data or b"\0" in data[:8192]:
                    continue
                where = display_path(candidate.path, self._cwd)
                for name, row in _so_names(data):
                    self._places.setdefault(name, f"{where}:{row}")
        return self._places


def _so_names(data: bytes) -> list[tuple[bytes, int]]:
    """Each whole `.so` file name the bytes hold (`encoder.so` in `/srv/encoder.so`, not in `libencoder.so.1`), with
    its row: the name runs back from `.so` over the bytes a file name holds, and no name byte or version follows."""
    found = []
    at = data.find(b".so")
    while at != -1:
        end = at + 3
        after = data[end : end + 2]
        versioned = after[:1] == b"." and after[1:].isdigit()
        if not ((after and after[0] in _NAME_BYTES) or versioned):
            start = at
            while start > 0 and (data[start - 1] in _NAME_BYTES or data[start - 1] == 0x2E):  # `.` inside a name
                start -= 1
            if start < at:
                found.append((data[start:end], data.count(b"\n", 0, at) + 1))
        at = data.find(b".so", end)
    return found


def cpp_artifact_loads(candidates: Sequence[Candidate], cwd: Path) -> dict[str, list[str]]:
    """``file:row`` of each C/C++ construction of an AOTI runner from a literal `.so` path, by file name."""
    import posixpath

    found: dict[str, list[str]] = {}
    for candidate in candidates:
        if candidate.kind != "cpp":
            continue
        try:
            from aoti_lint.run.disk import read_regular_file

            data = read_regular_file(candidate.path)
            # Only the old runners read a bare `.so`; other C++ files are not parsed for the plan.
            if b"AOTIModelContainerRunner" not in data or b".so" not in data:
                continue
            from aoti_lint.flows.cpp_consumers import find_artifact_loads

            loads = find_artifact_loads(data)
        except Exception:  # unreadable or unparsable: the C++ rules report it; the plan sees no load there
            continue
        for load in loads:
            if load.path.endswith(".so"):
                where = f"{display_path(candidate.path, cwd)}:{load.start.row}"
                found.setdefault(posixpath.basename(load.path), []).append(where)
    return found


def settle_flows(outcomes: list[FileOutcome], flows: dict[str, Any], fix: FixOptions, recheck: Any) -> None:
    """Write the fixed files, but a flow's fix only if every file of it has it: a file that could not be
    fixed or written keeps the whole flow (its other files included) as it was."""
    from aoti_lint.run.disk import write_bytes

    where = {outcome.path: index for index, outcome in enumerate(outcomes)}
    members: dict[int, set[str]] = {}
    for path, flow in flows.items():
        for group in flow.allowed_groups(fix.unsafe) & flow.whole_groups:
            members.setdefault(group, set()).add(path)
    why: dict[str, str] = {}
    for outcome in outcomes:
        if outcome.fixed_data is not None and outcome.source_path is not None and fix.write:
            error = write_bytes(
                outcome.source_path, outcome.path, outcome.original_data or b"", outcome.fixed_data, dry_run=True
            )
            if error is not None:
                why[outcome.path] = error.message
    changed = True
    while changed:
        changed = False
        for group, paths in members.items():
            missing = [
                path
                for path in sorted(paths)
                if path in why or path not in where or group not in outcomes[where[path]].flow_groups
            ]
            if not missing:
                continue
            for path in paths - why.keys():
                if path in where and outcomes[where[path]].fixed_data is not None:
                    why[path] = f"fixes not written: its artifact flow could not be migrated in {missing[0]}"
                    changed = True
    refused = [where[path] for path in why if path in where and outcomes[where[path]].fixed_data is not None]
    if refused:
        for index, outcome in zip(refused, recheck(refused), strict=True):
            outcome.errors.append(FileError(outcome.path, why[outcomes[index].path]))
            outcomes[index] = outcome
    if not fix.write:
        return
    for outcome in outcomes:
        if outcome.fixed_data is not None and outcome.source_path is not None:
            error = write_bytes(outcome.source_path, outcome.path, outcome.original_data or b"", outcome.fixed_data)
            if error is not None:
                outcome.errors.append(error)
                outcome.fixed, outcome.fixed_text, outcome.fixed_data = 0, None, None


def check_project(rules: Sequence[type[Rule]], parts: Sequence[ProjectPart]) -> tuple[list[Finding], list[FileError]]:
    """The project pass: each project rule sees every file's summary; its findings go through the noqa
    comments and per-file-ignores of the file they are in."""
    findings: list[Finding] = []
    errors: list[FileError] = []
    by_path = {part.path: part for part in parts}
    for rule in rules:
        if not issubclass(rule, ProjectRule):
            continue
        summaries = [part.summaries[rule.summary_key] for part in parts if rule.summary_key in part.summaries]
        if not summaries:
            continue
        try:
            reported = rule.check_project(summaries)
        except Exception as exc:  # a bug in a rule must not stop the run
            import traceback

            errors.append(
                FileError(".", f"internal error in {rule.code}: {type(exc).__name__}: {exc}", traceback.format_exc())
            )
            continue
        for finding in reported:
            part = by_path.get(finding.path)
            if part is not None and rule.code in part.codes and not part.suppressions.suppresses(finding):
                findings.append(finding)
    flows = [part.summaries[FLOW_SUMMARY] for part in parts if FLOW_SUMMARY in part.summaries]
    for rule in rules:
        if not rule.reads_flows or not flows:
            continue
        for finding in rule.check_flows(flows):
            part = by_path.get(finding.path)
            if part is not None and rule.code in part.codes and not part.suppressions.suppresses(finding):
                findings.append(finding)
    return findings, errors
