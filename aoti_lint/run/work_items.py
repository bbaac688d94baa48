"""The units of a run's work over many files, shared by the runner, the pool and the workers: a file past the cheap
tiers, what screening a file gives, and what the pace of the work is judged by."""

from __future__ import annotations

import os
from dataclasses import dataclass

from aoti_lint.diagnostics import FileError
from aoti_lint.read.files import Candidate
from aoti_lint.read.source import PYTHON_KINDS, SourceFile
from aoti_lint.run.file_context import FileContext
from aoti_lint.run.file_stats import rules_named
from aoti_lint.run.prefilter import Wanted, by_bytes, prefiltered
from aoti_lint.run.results import FileOutcome
from aoti_lint.settings.run_options import Execution, FixOptions

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import TypeVar

    Result = TypeVar("Result")


# The cost of linting a file with libcst on one core (parse, scope and qualified-name resolution, rules), as
# measured for the pool's threshold: most of it is per node, with a floor per module.
SECONDS_PER_FILE = 0.03


SECONDS_PER_BYTE = 10e-6


# The cost of the later prefilter stages (text, one `ast` parse and index) per byte of a file that passed the
# first, as measured on torch's sources. Past the pool's threshold they run in the workers as well.
STAGE_SECONDS_PER_BYTE = 0.3e-6


# A file past stage one this small has its later stages run here as soon as it is read, until workers run: they
# cost less than sending it to a worker (a few milliseconds), and a file they settle never goes to one.
INLINE_STAGE_BYTES = 32_000


# Once such work here adds up to this share of the pool's threshold, the tree holds enough files past stage one for
# workers to take the rest while this process reads on: their start is a fork, their imports this process's, and a
# file read from ``ast`` alone needs no libcst.
INLINE_SHARE = 0.25


# Past that share, the files still to read go to the workers in chunks of this many: each worker reads its files, runs
# stage one on them and every later stage on the few that pass it, and sends back their outcomes (``_Chunks``).
# Reading a large tree is most of its cost, and this spreads the reading itself over the workers.
CHUNK_FILES = 128


# How many files this process reads before it judges the pace of the rest by them (and again after each such batch
# until it chunks): few, since the workers start only once it has judged.
PACE_FILES = 8


# Files read here go through stage one this many at a time (``FileContext.reads_many``); the pace is judged after each
# such batch.
BATCH_FILES = PACE_FILES


# A file larger than this goes through stage one alone: a batch's files are held until it is screened.
BATCH_FILE_BYTES = 32_000


# The modules of the later prefilter stages and of the readings from ``ast`` (libcst aside): imported here before the
# workers start, so that each forked worker has them instead of importing them again.
LATER_STAGE_MODULES = (
    "aoti_lint.model.name_index",
    "aoti_lint.rules.kernel_prefilter",
    "aoti_lint.model.suppressions",
    "aoti_lint.rules.module_flow",
)


def available_cores() -> int:
    if hasattr(os, "process_cpu_count"):  # Python 3.13+: honours affinity and -X cpu_count
        return os.process_cpu_count() or 1
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0)) or 1
    return os.cpu_count() or 1


def jobs_of(execution: Execution) -> int:
    if execution.jobs is not None:
        return max(execution.jobs, 1)
    return 1 if os.environ.get("PRE_COMMIT") else available_cores()


@dataclass
class Pending:
    index: int
    source: SourceFile
    context: FileContext
    cache_key: str | None
    wanted: Wanted | None
    candidate: Candidate
    stamp: os.stat_result | None = None
    digest: str = ""
    # What stage one found (a Python file's): the later stages start from it wherever they run, without asking
    # every rule about the bytes again (a worker, then this process, then a worker read them otherwise).
    first: Wanted | None = None

    def later_stages(self) -> Wanted | None:
        """``item.wanted`` once found; else what every stage finds, from stage one's answer when it is known."""
        if self.wanted is None and self.first is not None:
            return prefiltered(self.source, self.context, self.first)
        return self.wanted


def context_rules_named(context: FileContext) -> str:
    """What a file's stamp holds of the rules it was linted with: its verdict holds for these alone."""
    return rules_named(context.rules, context.project_rules)


# What a worker gives for one file of a chunk: the read error, or the ``stat`` of what was read and one of
# - the file's outcome and the ``content_digest`` of its bytes (empty without a cache): it passed stage one, and the
#   worker ran every later stage on it too (a file too large to lint comes with no ``stat``);
# - its bytes and what stage one found in them (a Python file's): it passed stage one, and the rest is this process's
#   (a notebook, or a chunk read here);
# - the rules it was settled with (stamps).
Screened = tuple[
    "FileError | None", "os.stat_result | None", "bytes | None", str, "Wanted | None", "FileOutcome | None", str
]


def first_stage(kind: str, data: bytes, context: FileContext) -> Wanted | None:
    """What stage one found in the bytes of a file that passed it, for a Python file's later stages."""
    return by_bytes(data, context) if kind in PYTHON_KINDS else None


@dataclass(frozen=True)
class LaterStages:
    """What a worker needs to run the later stages of the files of a chunk that pass stage one, where it read them:
    their bytes then never travel (to this process and back to a worker), and no file waits for the chunk's return
    to start them. ``digests``: whether the run keeps a cache, whose keys hold the digest of the bytes."""

    fix: FixOptions
    digests: bool
