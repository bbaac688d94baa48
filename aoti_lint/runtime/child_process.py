"""Running one child process of ``aoti-lint validate`` (``child.py``) below its reaper (``reaper.py``): a crash,
a hang or an interrupt becomes a ``ChildRun``, and nothing the child started outlives it."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

from aoti_lint.runtime.explain import match_text
from aoti_lint.runtime.validation_report import ChildRun

CHILD = Path(__file__).with_name("child.py")
REAPER = Path(__file__).with_name("reaper.py")
# Seconds the reaper gets to kill and reap the child's processes before its whole session is killed.
REAPER_GRACE = 10.0
_KERNEL_LAUNCH = re.compile(r"\[ (before|after)_launch: (\S+) \]")


def run_child(request: dict, workdir: Path, env_switches: dict, timeout: float, name: str) -> ChildRun:
    slug = re.sub(r"[^A-Za-z0-9]+", "-", name).strip("-")
    result_path = workdir / f"{slug}.result.json"
    request_path = workdir / f"{slug}.request.json"
    request_path.write_text(json.dumps({**request, "result": str(result_path)}), encoding="utf-8")
    status_path = workdir / f"{slug}.status.json"
    env = {**os.environ, **env_switches, "TMPDIR": str(workdir / "tmp")}
    # The reaper runs the child in a session of its own and ends everything it started (even what left the
    # session), when the child ends, on a timeout or an interrupt.
    process = subprocess.Popen(
        [sys.executable, str(REAPER), str(status_path), str(workdir), sys.executable, str(CHILD), str(request_path)],
        cwd=workdir,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    timed_out = False
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        _stop(process)
        stdout, stderr = process.communicate()
    except BaseException:
        # Ctrl-C (KeyboardInterrupt) or any other way out: nothing of the child may outlive validate.
        _stop(process)
        raise
    try:
        state = json.loads(result_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        state = {"current": "starting", "cases": []}
    try:
        rc = json.loads(status_path.read_text(encoding="utf-8"))["returncode"]
    except (OSError, ValueError, KeyError, TypeError):
        # The reaper itself was stopped (timeout, interrupt): its own status is all there is.
        rc = process.returncode
    signal_name = None
    if timed_out:
        outcome = "timed out"
    elif rc is not None and rc < 0:
        outcome = "crashed"
        try:
            signal_name = signal.Signals(-rc).name
        except ValueError:
            signal_name = f"signal {-rc}"
    else:
        problems = [state.get(key) for key in ("error", "torch_error", "input_error")]
        statuses = {case["status"] for case in state.get("cases", [])} - {"ok", "skipped"}
        outcome = "failed" if rc != 0 or any(problems) or statuses - {"refused"} else "refused" if statuses else "ok"
    err_text = stderr.decode("utf-8", errors="replace")
    out_text = stdout.decode("utf-8", errors="replace")
    evidence = "\n".join(
        [err_text, state.get("error", "")]
        + [case.get("message", "") for case in state.get("cases", [])]
        + ([f"child process killed by {signal_name}"] if signal_name else [])
    )
    return ChildRun(
        name=name,
        env=dict(env_switches),
        outcome=outcome,
        returncode=rc,
        signal=signal_name,
        current=state.get("current", "starting"),
        state=state,
        stderr_tail=err_text[-4000:],
        last_kernel=_unfinished_kernel(out_text),
        known_failures=[m.failure.id for m in match_text(evidence)] if outcome != "ok" else [],
    )


def _stop(process: subprocess.Popen) -> None:
    """End the reaper and, through it, the child and everything below; SIGKILL the session if it does not exit."""
    with contextlib.suppress(ProcessLookupError):
        process.terminate()
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=REAPER_GRACE)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()


def _unfinished_kernel(stdout: str) -> str | None:
    started = None
    for when, kernel in _KERNEL_LAUNCH.findall(stdout):
        started = kernel if when == "before" else None
    return started
