"""One artifact flow's verdict: the members the plan grouped (``migration_flow.plan_flows``) and whether their fix may
migrate them together, or which member blocks it and why."""

from __future__ import annotations

import posixpath
from collections.abc import Callable
from dataclasses import dataclass

from aoti_lint.diagnostics import Applicability
from aoti_lint.flows.flow_summary import ConstantSite, Link, MigrationSite, PathArgument, Span
from aoti_lint.flows.migration_verdicts import NO_PRODUCER, RANK


@dataclass
class Member:
    """A compile, load, path constant or argument (or a compile that stays) of one artifact flow."""

    path: str
    kind: str  # "compile", "load", "constant", "argument" or "producer" (a compile that stays, writing a `.so`)
    row: int
    artifact: str | None = None
    site: MigrationSite | None = None
    ordinal: int = -1
    constant: ConstantSite | PathArgument | None = None
    link: Link | None = None
    returned_from: int | None = None  # a load of the path a compile of its own file returned
    span: Span | None = None  # the call, or the constant's value
    so_name: str | None = None  # the `.so` file name its path ends with

    @property
    def where(self) -> str:
        what = self.kind
        if isinstance(self.constant, ConstantSite):
            what = f"constant `{self.constant.name}`"
        elif isinstance(self.constant, PathArgument):
            what = "path argument"
        return f"{self.path}:{self.row} ({what})"


def decide(
    group: list[Member],
    foreign_loads: Callable[[str], str | None],
    cross_device: Callable[[Link], str | None],
    mentions: dict[str, list[tuple[str, int, int]]],
    editable: set[str] | None = None,
) -> tuple[Applicability, str]:
    """The applicability of one flow's fix, and why: the weakest of its members', or display-only for all."""
    blockers: list[str] = []  # "where: why"
    outside = sorted({member.path for member in group} - editable) if editable is not None else []
    if outside:  # pre-commit hands over the staged files: a fix must not leave the others half-migrated behind it
        files = ", ".join(outside)
        blockers.append(
            f"{files} {'is' if len(outside) == 1 else 'are'} not among the files given: include "
            f"{'it' if len(outside) == 1 else 'them'} in the run"
        )
    if any(member.kind == "compile" and not member.site.suppressed for member in group if member.site):
        for member in group:
            if member.site is not None and member.site.suppressed:
                blockers.append(f"{member.where}: its finding is suppressed, so no fix may change it")
    everyone_seen = group
    group = [member for member in group if member.site is None or not member.site.suppressed]
    if not any(member.site is not None for member in group):
        return Applicability.DISPLAY_ONLY, "its finding is suppressed"
    artifacts = {member.artifact for member in group if member.artifact and member.artifact.endswith(".so")}
    names = {posixpath.basename(path) for path in artifacts} | {m.so_name for m in everyone_seen if m.so_name}
    for name in sorted(names):
        stray = _stray_mention(name, everyone_seen, mentions)
        if stray is not None:
            blockers.append(f"{stray} also names `{name}`, where the fix cannot follow it")
    # A load reads what a compile wrote: without a compile this plan migrates, nothing proves a `.pt2` will be there.
    migrated_compile = any(member.kind == "compile" for member in group)
    orphans: list[str] = []  # loads whose producer no member is, said once for all of them
    for member in group:
        site = member.site
        if member.kind == "producer":
            blockers.append(f"{member.where}: a compile no fix migrates goes on writing this `.so` there")
            continue
        if member.constant is not None:
            if member.constant.replacement is None and not (
                member.kind == "argument" and _constant_in_group(member, group)
            ):
                blockers.append(f"{member.where}: its `.so` path cannot be rewritten to a `.pt2` path")
            continue
        assert site is not None
        if site.applicability == Applicability.DISPLAY_ONLY.value:
            blockers.append(f"{member.where}: {site.reason}")
            continue
        needs_constant = site.path_blocked or (
            member.kind == "load"
            and member.returned_from is None
            and not site.rewrites_path
            and member.artifact is not None
            and member.artifact.endswith(".so")
        )
        if needs_constant and not _constant_in_group(member, group):
            name = f"`{site.path_name}`" if site.path_name else "its path"
            blockers.append(f"{member.where}: {name} names the `.so` where this run cannot rewrite it")
        if member.kind == "load" and site.needs_producer and not migrated_compile:
            orphans.append(member.where)
        if member.kind == "load" and member.link is not None:
            problem = cross_device(member.link)
            if problem is not None:
                blockers.append(f"{member.where}: AOTI101 reports it ({problem}), and a fix would hide that")
    if not blockers and not orphans:
        # Files outside the run's Python (C++ runners, a Makefile, a manifest) are read only for a flow that would
        # otherwise migrate: a run whose every flow is blocked anyway depends on its own files alone.
        for name in sorted(names):
            where = foreign_loads(name)
            if where is not None:
                blockers.append(where)
    if orphans:
        if not blockers and len(orphans) == len(group):
            return Applicability.DISPLAY_ONLY, NO_PRODUCER  # loads of one artifact, all alike
        blockers.append(f"{', '.join(orphans)}: {NO_PRODUCER}")
    if blockers:
        if len(group) == 1:
            return Applicability.DISPLAY_ONLY, blockers[0].split(": ", 1)[-1]
        everyone = ", ".join(member.where for member in group)
        return (
            Applicability.DISPLAY_ONLY,
            f"its artifact flow ({everyone}) migrates whole or not at all: {'; '.join(blockers)}",
        )
    sites = [member.site for member in group if member.site is not None]
    value = min((Applicability(site.applicability) for site in sites), key=RANK.__getitem__)
    reasons = [site.reason for site in sites if Applicability(site.applicability) is value]
    reason = reasons[0] if reasons else ""
    if len({member.path for member in group}) > 1 and value is Applicability.SAFE:
        value = Applicability.UNSAFE
        reason = "the artifact becomes a `.pt2` package for every file of its flow"
    if len({member.path for member in group}) > 1 or any(member.site is None for member in group):
        others = ", ".join(member.where for member in group)
        reason = (
            f"{reason}; migrated with its whole flow: {others}" if reason else f"migrated with its whole flow: {others}"
        )
    return value, reason


def _stray_mention(name: str, group: list[Member], mentions: dict[str, list]) -> str | None:
    """A string naming the artifact's file outside every site and constant of its flow, as ``file:row``."""
    for path, row, column in mentions.get(name, ()):
        inside = any(
            member.path == path
            and member.span is not None
            and (member.span.row, member.span.column) <= (row, column) <= (member.span.end_row, member.span.end_column)
            for member in group
        )
        if not inside:
            return f"{path}:{row}"
    return None


def _constant_in_group(member: Member, group: list[Member]) -> bool:
    """Whether the `.so` path this site reads is a constant of the flow that gets rewritten."""
    return any(
        other.artifact == member.artifact and isinstance(other.constant, ConstantSite) and other.constant.replacement
        for other in group
    )
