"""The intermediate process of ``aoti-lint validate``: runs one child and leaves no process of it behind.

Run as a script (``python reaper.py STATUS.json WORKDIR COMMAND...``) in a session of its own. A package's native
code can fork and ``setsid()`` out of the child's process group, so killing the group is not enough: on Linux this
process declares itself a child subreaper (``prctl(PR_SET_CHILD_SUBREAPER)``), so every orphan of the child is
re-parented here instead of to init. When the child ends, on SIGTERM from validate (timeout, Ctrl-C) or when
validate itself dies (``PR_SET_PDEATHSIG``), it kills every process left below it and reaps them; when validate
died, it also removes validate's WORKDIR. It writes the child's exit status to STATUS.json, because its own exit
code cannot carry a signal. Self-contained on purpose: it imports nothing from aoti_lint, and never torch.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import shutil
import signal
import subprocess
import sys
import time

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36


def _prctl(option: int, value: int) -> bool:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(option, value, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def descendants(root: int) -> list[int]:
    """Every live process below root, read from /proc (empty where /proc is missing)."""
    children: dict[int, list[int]] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                stat = handle.read()
        except OSError:
            continue
        # The command name (field 2) may hold spaces and parentheses: fields after the last ')' are fixed.
        fields = stat[stat.rfind(b")") + 2 :].split()
        if len(fields) > 1 and fields[0] != b"Z":
            children.setdefault(int(fields[1]), []).append(int(entry))
    found, stack = [], [root]
    while stack:
        for pid in children.get(stack.pop(), []):
            found.append(pid)
            stack.append(pid)
    return found


def kill_all_below(root: int) -> None:
    """SIGKILL every process below root and reap them, until none is left."""
    for _ in range(1000):
        for pid in descendants(root):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        try:
            while os.waitpid(-1, os.WNOHANG)[0] > 0:
                pass
        except ChildProcessError:
            if not descendants(root):
                return
        time.sleep(0.01)


def main(argv: list[str]) -> int:
    status_path, workdir, command = argv[1], argv[2], argv[3:]
    parent = os.getppid()
    _prctl(PR_SET_CHILD_SUBREAPER, 1)
    # When validate dies (kill -9 included), this process gets SIGTERM and cleans up as on a timeout.
    _prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    me = os.getpid()

    def stop(signum, frame):
        kill_all_below(me)
        if os.getppid() != parent:
            # validate died and cannot remove its temporary folder (the extracted package): do it for it.
            shutil.rmtree(workdir, ignore_errors=True)
        os._exit(128 + signum)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    if os.getppid() != parent:
        stop(signal.SIGTERM, None)
    child = subprocess.Popen(command)
    returncode = child.wait()
    # The child is gone; whatever it started is now ours (or still in its group): end it all.
    kill_all_below(me)
    partial = status_path + ".partial"
    with open(partial, "w", encoding="utf-8") as handle:
        json.dump({"returncode": returncode}, handle)
    os.replace(partial, status_path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
