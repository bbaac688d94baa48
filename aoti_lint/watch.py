"""``--watch``, as ruff's: run, then run again whenever a file the run reads, or the configuration, changes. The
files are polled (their size and modification time) rather than watched through the system: no dependency, the
same on every platform."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from aoti_lint.settings.config import Settings

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

# Between two looks at the files: a change shows within this, and a look costs one stat per file.
POLL_SECONDS = 0.5
_CLEAR = "\x1b[2J\x1b[H"


def snapshot(paths: list[Path], settings: Settings) -> dict[str, tuple[int, int]]:
    """Each file a run reads (``files.discover``), and the configuration file, with its size and modification time."""
    from aoti_lint.read.files import Candidate, discover

    seen: dict[str, tuple[int, int]] = {}
    watched = [item.where for item in discover(paths, settings) if isinstance(item, Candidate)]
    if settings.config_path is not None:
        watched.append(str(settings.config_path))
    for where in watched:
        try:
            info = os.stat(where)
        except OSError:
            continue
        seen[where] = (info.st_size, info.st_mtime_ns)
    return seen


def watch(paths: list[Path], settings: Callable[[], Settings], run: Callable[[], int]) -> int:
    """``run`` now and after each change until interrupted (Ctrl-C: exit 0, as the end of a watch is no error);
    ``settings``: the run's settings, read again before each look, so that an edited configuration counts."""
    terminal = sys.stdout.isatty()
    message = "Starting linter in watch mode..."
    try:
        while True:
            before = snapshot(paths, settings())
            if terminal:
                sys.stdout.write(_CLEAR)
            print(f"[{time.strftime('%H:%M:%S')}] {message}", flush=True)
            run()
            sys.stdout.flush()
            while snapshot(paths, settings()) == before:
                time.sleep(POLL_SECONDS)
            message = "File change detected..."
    except KeyboardInterrupt:
        return 0
