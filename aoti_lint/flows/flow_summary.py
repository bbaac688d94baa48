"""What one module tells about AOTI artifacts: where it compiles them, where it loads them, how it calls them.

Plain frozen dataclasses with no libcst nodes, so a summary crosses process boundaries and caches; the
project pass of the device-flow rules links loads to compiles across the files of a run with them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import PurePosixPath


@dataclass(frozen=True)
class Device:
    type: str
    index: int | None = None

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"


@dataclass(frozen=True)
class Span:
    """1-based row and column, as findings report them."""

    row: int
    column: int
    end_row: int
    end_column: int


@dataclass(frozen=True)
class DynamicDim:
    """A dimension declared dynamic, with its literal bounds (None: not given, or not a literal)."""

    index: int
    min: int | None = None
    max: int | None = None


@dataclass(frozen=True)
class ExampleInput:
    """One positional example input of a compile: its static shape and which dims are dynamic.

    ``dynamic`` is None when the dynamic-shape spec of this input is not known statically.
    """

    shape: tuple[int, ...] | None
    dynamic: tuple[DynamicDim, ...] | None = ()


@dataclass(frozen=True)
class CompileSite:
    span: Span
    device: Device | None
    # Normalised artifact path (package_path= or aot_inductor.output_path), None when not a constant.
    artifact: str | None
    # The flat positional example inputs, None when their structure is not known.
    inputs: tuple[ExampleInput, ...] | None
    # The qualified name of an imported constant holding the artifact path (``config.PACKAGE``).
    artifact_ref: str | None = None


@dataclass(frozen=True)
class LoadSite:
    span: Span
    api: str  # "aot_load", "aoti_load_package" or "load_package"
    # Index into the same summary's compiles when the loaded path is the value a compile returned.
    compile_index: int | None
    artifact: str | None
    # aot_load's device argument, or the device behind ``device_index=dev.index``.
    device: Device | None
    # A literal device_index= of the package loaders.
    device_index: int | None
    artifact_ref: str | None = None


@dataclass(frozen=True)
class CallArgument:
    text: str
    # Position among the flat positional inputs; None past an argument whose structure is unknown (it may
    # flatten to several inputs), for keyword arguments and for elements of containers.
    position: int | None
    device: Device | None
    shape: tuple[int, ...] | None


@dataclass(frozen=True)
class ModelCall:
    span: Span
    load_index: int
    arguments: tuple[CallArgument, ...]


@dataclass(frozen=True)
class MigrationSite:
    """A call of the deprecated API (``aot_compile``/``aot_load``) as the codemod judges it within its module.

    The project plan (``aoti_lint.flows.migration_flow``) groups these with the sites and constants of
    other files that share their artifact.
    """

    kind: str  # "compile" or "load"
    row: int  # where its finding is (the called name)
    column: int
    index: int  # into the summary's compiles or loads
    applicability: str  # the codemod's own verdict (an Applicability value) and why
    reason: str
    # The variable that holds the artifact path, when it is a name (a constant to rewrite where defined).
    path_name: str | None = None
    # A compile whose output path is a name: only rewriting that constant lets it migrate.
    path_blocked: bool = False
    # A load whose `.so` path is written at the call and rewritten there.
    rewrites_path: bool = False
    # A load of a path its module-level function receives: (function, parameter position, parameter name).
    param: tuple[str, int, str] | None = None
    # Its finding is switched off by a noqa comment: no fix may change it.
    suppressed: bool = False
    # The `.so` file name its path expression ends with ("m.so" in os.path.join(d, "m.so")), known even
    # when the directory is not.
    so_name: str | None = None
    # A load whose artifact no compile of its module writes: it migrates only in a flow with a migrated compile.
    needs_producer: bool = False


@dataclass(frozen=True)
class ConstantSite:
    """A module-level name bound once to a `.so` path: where it is written and what the fix makes of it."""

    name: str
    path: str
    span: Span  # the value expression
    replacement: str | None  # the expression with `.pt2` for `.so`; None when it cannot be rewritten


def module_function_parts(callee: str) -> tuple[tuple[str, ...], str] | None:
    """(module path, name) of a callee's qualified name that may be a function of a module of the run: a module path
    before the name, none of it a scope's own (`f.<locals>.x`, `<module>.CONFIG`: a module is imported by
    identifiers). None for any other: a local, a method of a local value, a name of this module."""
    module, _, name = callee.rpartition(".")
    parts = tuple(part for part in module.split(".") if part)
    if not parts or any("<" in part for part in parts):
        return None
    return parts, name


@dataclass(frozen=True)
class PathArgument:
    """A `.so` path passed to a function of the run (e.g. a load helper), and its `.pt2` rewrite."""

    callees: tuple[str, ...]  # qualified names of the called function
    position: int | None
    keyword: str | None
    path: str | None
    span: Span
    replacement: str | None
    so_name: str | None = None


@dataclass(frozen=True)
class FlowSummary:
    path: str  # display path
    directory: str  # the file's resolved directory, to prefer compile sites next to a load
    compiles: tuple[CompileSite, ...] = field(default=())
    loads: tuple[LoadSite, ...] = field(default=())
    calls: tuple[ModelCall, ...] = field(default=())
    # Module-level names bound once to an artifact path, for the files that import them.
    constants: tuple[tuple[str, str], ...] = field(default=())
    migrations: tuple[MigrationSite, ...] = field(default=())
    constant_sites: tuple[ConstantSite, ...] = field(default=())
    # (file name, row, column) of every string naming a `.so` file: a mention no site accounts for is a
    # reader of the artifact that a migration cannot follow.
    so_mentions: tuple[tuple[str, int, int], ...] = field(default=())
    path_arguments: tuple[PathArgument, ...] = field(default=())

    @property
    def module_parts(self) -> tuple[str, ...]:
        """The file's path as module name parts: ``pkg/config.py`` -> ("pkg", "config")."""
        parts = PurePosixPath(self.path.replace("\\", "/")).with_suffix("").parts
        return parts[:-1] if parts and parts[-1] == "__init__" else parts


@dataclass(frozen=True)
class Link:
    """A load site, and the compile site of the artifact it loads."""

    summary: FlowSummary
    load: LoadSite
    compiled_in: FlowSummary
    compile: CompileSite

    @property
    def compile_location(self) -> str:
        return f"{self.compiled_in.path}:{self.compile.span.row}"


def link_loads(summaries: Sequence[FlowSummary]) -> dict[tuple[str, int], Link]:
    """Each load whose artifact comes from one known compile, keyed by (file, load index).

    A load links to the compile whose returned path it receives, else to the compiles writing the same
    constant path: those in the same file first, then in the same directory, then anywhere in the run. Several
    candidates that disagree (device or example inputs) link to nothing.
    """
    artifact = ArtifactResolver(summaries)
    by_artifact: dict[str, list[tuple[FlowSummary, CompileSite]]] = {}
    for summary in summaries:
        for site in summary.compiles:
            path = artifact(site.artifact, site.artifact_ref)
            if path is not None:
                by_artifact.setdefault(path, []).append((summary, site))
    links: dict[tuple[str, int], Link] = {}
    for summary in summaries:
        for index, load in enumerate(summary.loads):
            if load.compile_index is not None:
                chosen = [(summary, summary.compiles[load.compile_index])]
            else:
                candidates = by_artifact.get(artifact(load.artifact, load.artifact_ref) or "", [])
                chosen = (
                    [c for c in candidates if c[0].path == summary.path]
                    or [c for c in candidates if c[0].directory == summary.directory]
                    or candidates
                )
            if chosen and len({(site.device, site.inputs) for _, site in chosen}) == 1:
                compiled_in, site = chosen[0]
                links[(summary.path, index)] = Link(summary, load, compiled_in, site)
    return links


class ArtifactResolver:
    """An artifact path, given directly or as an imported constant of another file of the run."""

    def __init__(self, summaries: Sequence[FlowSummary]) -> None:
        self.summaries = summaries

    def __call__(self, path: str | None, ref: str | None) -> str | None:
        if path is not None or ref is None:
            return path
        module, _, name = ref.rpartition(".")
        parts = tuple(part for part in module.split(".") if part)
        if not parts:
            return None
        owners = [summary for summary in self.summaries if summary.module_parts[-len(parts) :] == parts]
        return dict(owners[0].constants).get(name) if len(owners) == 1 else None
