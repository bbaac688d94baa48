"""The migration planned per artifact flow: a compile, every load of its artifact and every constant naming
its path, in every file of the run, migrate together or not at all.

Works on the plain per-file summaries (``flow_summary``), after every file was read and before any is fixed.
The result, one ``FileFlow`` per file, tells the codemod of each file what each of its deprecated calls may
do (the same verdict for every member of a flow) and which path constants to rewrite.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

from aoti_lint.diagnostics import Applicability
from aoti_lint.flows.flow_decision import Member, decide
from aoti_lint.flows.flow_summary import (
    ConstantSite,
    FlowSummary,
    Link,
    MigrationSite,
    Span,
    link_loads,
    module_function_parts,
)
from aoti_lint.flows.migration_verdicts import NO_PRODUCER


@dataclass(frozen=True)
class SiteDecision:
    """What the fix of one deprecated call may do: its flow's applicability and why."""

    group: int
    applicability: Applicability
    reason: str
    # The artifact path is a name whose constant the flow rewrites where it is defined.
    path_by_constant: bool = False


@dataclass(frozen=True)
class ConstantRewrite:
    group: int
    name: str
    span: Span
    replacement: str


@dataclass
class FileFlow:
    """The plan for one file: a decision per deprecated call (document order) and the constants to rewrite."""

    path: str
    sites: tuple[SiteDecision, ...]
    constants: tuple[ConstantRewrite, ...] = ()
    group_applicability: dict[int, Applicability] = field(default_factory=dict)
    # The groups whose fix has been applied to the text the codemod now reads.
    applied_groups: frozenset[int] = frozenset()
    # Whether the plan tells this file something its own analysis does not (another verdict or reason, a
    # constant to rewrite): only then does a run without fixes read the file again.
    changed: bool = True
    # Groups that are written in every file or none: those with a compile, a constant or a helper argument
    # (loads of an artifact made outside the run stand alone).
    whole_groups: frozenset[int] = frozenset()

    def decisions(self, count: int) -> tuple[SiteDecision, ...] | None:
        """The decisions for a text with ``count`` deprecated calls; None when the text is not the planned one."""
        remaining = tuple(d for d in self.sites if d.group not in self.applied_groups)
        return remaining if count == len(remaining) else None

    def allowed_groups(self, unsafe: bool) -> frozenset[int]:
        allowed = {Applicability.SAFE, Applicability.UNSAFE} if unsafe else {Applicability.SAFE}
        return frozenset(group for group, value in self.group_applicability.items() if value in allowed)

    def fingerprint(self) -> str:
        """The same text for the same plan in every process (a cache key part: sets and dicts sorted). Group
        numbers are the run's, shifted by flows in other files: they are renumbered in their order here, so an
        edit elsewhere that adds or removes a flow leaves the key of an unchanged plan as it was."""
        order: dict[int, int] = {}
        for group in [*(d.group for d in self.sites), *(c.group for c in self.constants), *self.group_applicability]:
            order.setdefault(group, len(order))
        for group in sorted({*self.applied_groups, *self.whole_groups} - order.keys()):
            order[group] = len(order)
        return repr(
            (
                self.path,
                tuple(replace(d, group=order[d.group]) for d in self.sites),
                tuple(replace(c, group=order[c.group]) for c in self.constants),
                sorted((order[group], value.value) for group, value in self.group_applicability.items()),
                sorted(order[group] for group in self.applied_groups),
                self.changed,
                sorted(order[group] for group in self.whole_groups),
            )
        )

    def after(self, groups: frozenset[int]) -> FileFlow:
        return FileFlow(
            self.path,
            self.sites,
            self.constants,
            self.group_applicability,
            self.applied_groups | groups,
            self.changed,
            self.whole_groups,
        )


@dataclass(frozen=True)
class FlowMember:
    """One member of an artifact flow as ``aoti-lint flows`` shows it."""

    path: str
    row: int
    role: str  # "compile", "load", "constant", "argument" or "producer" (a compile no fix migrates)
    name: str  # the constant's name; "" for the others
    artifact: str | None  # the path it writes, holds or reads, or the `.so` file name its path ends with


@dataclass(frozen=True)
class FlowReport:
    """One artifact flow: its members and the verdict its deprecated calls share."""

    members: tuple[FlowMember, ...]
    applicability: str  # an Applicability value: "display-only" when blocked
    reason: str


class _Groups:
    def __init__(self, size: int) -> None:
        self.parent = list(range(size))

    def find(self, item: int) -> int:
        while self.parent[item] != item:
            self.parent[item] = self.parent[self.parent[item]]
            item = self.parent[item]
        return item

    def union(self, a: int, b: int) -> None:
        self.parent[self.find(a)] = self.find(b)


def plan_flows(
    summaries: Sequence[FlowSummary],
    cross_device: Callable[[Link], str | None] = lambda link: None,
    foreign_loads: Callable[[str], str | None] = lambda path: None,
    enabled: Callable[[str, str], bool] = lambda path, code: True,
    reports: list[FlowReport] | None = None,
    editable: set[str] | None = None,
) -> dict[str, FileFlow]:
    """One plan per file with deprecated calls or path constants of a flow that has deprecated calls.

    ``cross_device`` tells why a linked load is reported by AOTI101 (such a load gets no fix);
    ``foreign_loads(file name)`` where a `.so` of that name is read outside Python (a C++ runner), which the
    fix cannot migrate; ``enabled(file, code)`` whether AOTI001/AOTI002 report in that file (else, as under a noqa
    comment, no fix may change its calls); ``reports`` a ``FlowReport`` per flow with deprecated calls;
    ``editable`` the files the run may edit (None: every file), a flow with a member elsewhere not being migrated.
    """
    from aoti_lint.flows.flow_summary import ArtifactResolver

    resolve = ArtifactResolver(summaries)
    links = link_loads(summaries)
    members: list[Member] = []
    by_artifact: dict[str, list[int]] = {}
    mentions: dict[str, list[tuple[str, int, int]]] = {}
    for summary in summaries:
        for name, row, column in summary.so_mentions:
            mentions.setdefault(name, []).append((summary.path, row, column))
    for summary in summaries:
        first = len(members)
        for ordinal, site in enumerate(summary.migrations):
            code = "AOTI001" if site.kind == "compile" else "AOTI002"
            if site.suppressed or not enabled(summary.path, code):
                site = replace(site, suppressed=True)
            if site.kind == "compile":
                flow_site = summary.compiles[site.index]
                artifact = resolve(flow_site.artifact, flow_site.artifact_ref)
                member = Member(
                    summary.path,
                    "compile",
                    site.row,
                    artifact,
                    site,
                    ordinal,
                    span=flow_site.span,
                    so_name=site.so_name,
                )
            else:
                load = summary.loads[site.index]
                artifact = resolve(load.artifact, load.artifact_ref)
                member = Member(
                    summary.path, "load", site.row, artifact, site, ordinal, span=load.span, so_name=site.so_name
                )
                member.link = links.get((summary.path, site.index))
                member.returned_from = load.compile_index
            members.append(member)
        # A compile no fix migrates (torch._inductor.aot_compile, which is not deprecated, or a suppressed one) goes on
        # writing its `.so`: a flow it writes cannot become a `.pt2` package.
        migrated = {site.index for site in summary.migrations if site.kind == "compile" and not site.suppressed}
        for index, compile_site in enumerate(summary.compiles):
            written = resolve(compile_site.artifact, compile_site.artifact_ref)
            if index not in migrated and written is not None and written.endswith(".so"):
                members.append(
                    Member(
                        summary.path,
                        "producer",
                        compile_site.span.row,
                        written,
                        span=compile_site.span,
                        so_name=posixpath.basename(written),
                    )
                )
        for constant in summary.constant_sites:
            members.append(
                Member(
                    summary.path,
                    "constant",
                    constant.span.row,
                    constant.path,
                    constant=constant,
                    span=constant.span,
                    so_name=posixpath.basename(constant.path),
                )
            )
        for index in range(first, len(members)):
            artifact = members[index].artifact
            if artifact is not None:
                by_artifact.setdefault(artifact, []).append(index)
    if not any(member.site is not None for member in members):
        return {}
    # A load of a path a module-level function receives reads whatever its callers in the run pass.
    helpers: dict[tuple[str, str], list[tuple[int, int, str]]] = {}
    module_of = {summary.path: summary.module_parts for summary in summaries}
    for index, member in enumerate(members):
        if member.site is not None and member.site.param is not None:
            function, position, name = member.site.param
            helpers.setdefault((member.path, function), []).append((index, position, name))
    joined: list[tuple[int, int]] = []
    for summary in summaries:
        for argument in summary.path_arguments:
            for (path, function), loads in helpers.items():
                if not any(_names_function(callee, module_of[path], function) for callee in argument.callees):
                    continue
                for load_member, position, name in loads:
                    if argument.position == position or argument.keyword == name:
                        members.append(
                            Member(
                                summary.path,
                                "argument",
                                argument.span.row,
                                argument.path,
                                constant=argument,
                                span=argument.span,
                                so_name=argument.so_name,
                            )
                        )
                        if argument.path is not None:
                            by_artifact.setdefault(argument.path, []).append(len(members) - 1)
                        joined.append((load_member, len(members) - 1))
    groups = _Groups(len(members))
    for a, b in joined:
        groups.union(a, b)
    # The same `.so` file name, where a directory is unknown, may be the same artifact: it migrates with it.
    by_name: dict[str, int] = {}
    for index, member in enumerate(members):
        if member.so_name:
            groups.union(index, by_name.setdefault(member.so_name, index))
    for indices in by_artifact.values():
        for index in indices[1:]:
            groups.union(indices[0], index)
    compile_members = {
        (member.path, member.site.index): index
        for index, member in enumerate(members)
        if member.site is not None and member.kind == "compile"
    }
    for index, member in enumerate(members):
        if member.returned_from is not None and (member.path, member.returned_from) in compile_members:
            groups.union(index, compile_members[(member.path, member.returned_from)])
        if member.link is not None and member.site is not None:
            key = (member.link.compiled_in.path, member.link.compiled_in.compiles.index(member.link.compile))
            if key in compile_members:
                groups.union(index, compile_members[key])

    by_group: dict[int, list[int]] = {}
    for index in range(len(members)):
        by_group.setdefault(groups.find(index), []).append(index)
    whole: set[int] = set()
    decisions: dict[int, SiteDecision] = {}
    rewrites: dict[int, ConstantRewrite] = {}
    applicability: dict[int, Applicability] = {}
    for group, indices in by_group.items():
        group_members = [members[index] for index in indices]
        if not any(member.site is not None for member in group_members):
            continue
        if any(member.kind != "load" for member in group_members):
            whole.add(group)
        value, reason = decide(group_members, foreign_loads, cross_device, mentions, editable)
        if reports is not None:
            reports.append(FlowReport(tuple(map(_shown, group_members)), value.value, reason))
        applicability[group] = value
        movable = value is not Applicability.DISPLAY_ONLY
        for index, member in zip(indices, group_members, strict=True):
            if member.site is not None and member.site.suppressed:
                decisions[index] = SiteDecision(-1, Applicability.DISPLAY_ONLY, "its finding is suppressed")
            elif member.site is not None:
                by_constant = movable and member.site.path_blocked
                decisions[index] = SiteDecision(group, value, reason, by_constant)
            elif member.constant is not None and member.constant.replacement is not None and movable:
                name = member.constant.name if isinstance(member.constant, ConstantSite) else ""
                rewrites[index] = ConstantRewrite(group, name, member.constant.span, member.constant.replacement)

    plans: dict[str, FileFlow] = {}
    for summary in summaries:
        own = [index for index, member in enumerate(members) if member.path == summary.path]
        sites = tuple(decisions[index] for index in own if index in decisions)
        constants = tuple(rewrites[index] for index in own if index in rewrites)
        if not sites and not constants:
            continue
        used = {decision.group for decision in sites} | {rewrite.group for rewrite in constants}
        used.discard(-1)
        changed = bool(constants) or any(
            _tells_more(members[index].site, decisions[index]) for index in own if index in decisions
        )
        plans[summary.path] = FileFlow(
            summary.path,
            sites,
            constants,
            {group: applicability[group] for group in used},
            changed=changed,
            whole_groups=frozenset(used & whole),
        )
    return plans


def _shown(member: Member) -> FlowMember:
    name = member.constant.name if isinstance(member.constant, ConstantSite) else ""
    return FlowMember(member.path, member.row, member.kind, name, member.artifact or member.so_name)


def _tells_more(site: MigrationSite | None, decision: SiteDecision) -> bool:
    """Whether the plan tells a site something its own verdict does not (only sites get decisions)."""
    assert site is not None
    value, reason = site.applicability, site.reason
    if site.needs_producer and value != Applicability.DISPLAY_ONLY.value:
        value, reason = Applicability.DISPLAY_ONLY.value, NO_PRODUCER  # what the file's own reading says alone
    return site.path_blocked or (
        not site.suppressed and (decision.applicability.value != value or decision.reason != reason)
    )


def _names_function(callee: str, module_parts: tuple[str, ...], function: str) -> bool:
    """Whether the qualified name ``callee`` is ``function`` of the module at ``module_parts``."""
    found = module_function_parts(callee)
    if found is None:
        return False
    parts, name = found
    return name == function and module_parts[-len(parts) :] == parts
