"""What a run is asked to do, as plain options: which fixes (``FixOptions``) and how it spends the machine
(``Execution``). Kept apart from the lint core that reads them, so that a run its memo answers
(``aoti_lint.run.unchanged_run``) is set up without importing the engine or the worker pool."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

# Below this much estimated work, starting workers (each imports libcst: half a second) costs more than it saves.
POOL_MIN_SECONDS = 1.0


@dataclass(frozen=True)
class FixOptions:
    apply: bool = False  # --fix, --fix-only, --diff
    unsafe: bool = False  # --unsafe-fixes
    write: bool = True  # False with --diff: compute, never write (the engine never writes; its callers do)
    # Build every fix's edits even when none is applied (the output format prints them).
    edits: bool = True

    @property
    def builds_edits(self) -> bool:
        """Whether the run builds its fixes' edits: to apply them, or because the output shows them."""
        return self.apply or self.edits


@dataclass(frozen=True)
class Execution:
    """How a run spends the machine: worker processes and the cache."""

    # None: one worker per core, or serial when pre-commit runs us (it parallelises hooks itself).
    jobs: int | None = 1
    # None: no cache.
    cache_dir: Path | None = None
    pool_min_seconds: float = POOL_MIN_SECONDS
