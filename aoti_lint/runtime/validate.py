"""``aoti-lint validate``: prove a package on this machine, or say why it fails here.

Steps: (1) read the package without torch (models, metadata, debug switches baked in); (2) check this host
against the package's metadata in a child process (device usable, device index, platform, machine, CPU ISA,
compute capability); (3) run the package in a child process, so a crash or a hang becomes a result; (4) with
``diagnose``, rerun a failure with the guide's staged switches. Every child runs with its temporary folder
(``TMPDIR``, where torch extracts the package) and working folder inside one private ``mkdtemp`` folder (0700),
removed at the end; archives with members that would land outside it are refused before anything is loaded.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
import zipfile
from dataclasses import asdict, dataclass, field
from pathlib import Path

from aoti_lint.knowledge.known_failures import BY_ID
from aoti_lint.runtime.escape import printable
from aoti_lint.runtime.explain import Match, match_text, render_match
from aoti_lint.runtime.package import ModelInfo, PackageError, read_package

CHILD = Path(__file__).with_name("child.py")
REAPER = Path(__file__).with_name("reaper.py")
# Seconds the reaper gets to kill and reap the child's processes before its whole session is killed.
REAPER_GRACE = 10.0
DEFAULT_TIMEOUT = 300.0
PROBE_TIMEOUT = 120.0
ERROR, WARNING, INFO = "error", "warning", "info"
# Every run of a package (or of a baseline .so) has the package check its inputs: validation is where that cost
# belongs, and what the static comparison misses (strides, related sizes) is still caught.
RUN_SWITCHES = {"AOTI_RUNTIME_CHECK_INPUTS": "1"}
# The guide's staged switches for --diagnose, read at run time, on top of RUN_SWITCHES.
DIAGNOSE_STAGES = (({"CUDA_LAUNCH_BLOCKING": "1", "PYTORCH_NO_CUDA_MEMORY_CACHING": "1"}, ("cuda",)),)
NEEDS_TORCH = "running a package needs torch: pip install 'aoti-lint[validate]'"
NATIVE_CODE_WARNING = (
    "warning: validate runs native code from the package (its compiled .so) in child processes; "
    "validate only packages you trust"
)
_KERNEL_LAUNCH = re.compile(r"\[ (before|after)_launch: (\S+) \]")


@dataclass
class Finding:
    stage: str
    severity: str
    message: str
    fix: str = ""
    known_failures: list[str] = field(default_factory=list)


@dataclass
class ChildRun:
    name: str
    # Switches set for this run on top of the caller's environment.
    env: dict[str, str]
    outcome: str  # ok | failed | crashed | timed out
    returncode: int | None
    signal: str | None
    # The step the child was at when it stopped.
    current: str
    state: dict
    stderr_tail: str
    # With a printer-instrumented package: the kernel that started last and never finished.
    last_kernel: str | None
    known_failures: list[str]


@dataclass
class ValidationReport:
    package: str
    models: list[dict] = field(default_factory=list)
    host: dict | None = None
    findings: list[Finding] = field(default_factory=list)
    runs: list[ChildRun] = field(default_factory=list)
    # First matching line of each known failure seen in the runs, for the explanation at the end.
    matches: dict[str, Match] = field(default_factory=dict)
    # Why the package could not be validated at all (unreadable file, no torch here): not a verdict on it.
    error: str | None = None

    @property
    def valid(self) -> bool:
        return self.error is None and not any(f.severity == ERROR for f in self.findings)

    @property
    def verdict(self) -> str:
        return "ERROR" if self.error else "VALID" if self.valid else "INVALID"

    def add(self, stage: str, severity: str, message: str, fix: str = "", known: list[str] | None = None) -> None:
        self.findings.append(Finding(stage, severity, message, fix, list(known or [])))

    def to_dict(self) -> dict:
        return {
            "package": self.package,
            "valid": self.valid,
            "verdict": self.verdict,
            "error": self.error,
            "models": self.models,
            "host": self.host,
            "findings": [asdict(f) for f in self.findings],
            "runs": [asdict(r) for r in self.runs],
            "known_failures": [m.to_dict() for m in self.matches.values()],
        }


def validate(
    package: str | os.PathLike,
    *,
    inputs: str | os.PathLike | None = None,
    reference: str | os.PathLike | None = None,
    baseline: str | os.PathLike | None = None,
    device_index: int = -1,
    rtol: float | None = None,
    atol: float | None = None,
    edges: bool = False,
    diagnose: bool = False,
    run: bool = True,
    timeout: float = DEFAULT_TIMEOUT,
    seed: int = 0,
) -> ValidationReport:
    """Validate an AOTInductor package on this machine. Runs native code from the package (in child processes).

    With ``baseline`` (the ``.so`` of the deprecated ``torch._export.aot_compile``), the legacy artifact runs in a
    child of its own (``torch._export.aot_load``) on the same inputs, and the package's outputs are compared with
    its outputs. Without ``inputs`` or ``reference``, inputs are generated from the package's input checks with
    ``seed``. Raises ValueError for unusable arguments (missing files, ``edges`` without ``reference``, ...); a
    package that cannot be read, or a host without torch, sets ``report.error``.
    """
    package = Path(package)
    for path in (inputs, reference, baseline):
        if path is not None and not Path(path).is_file():
            raise ValueError(f"{path}: no such file")
    if baseline is not None and zipfile.is_zipfile(baseline):
        raise ValueError(f"{baseline}: --baseline takes the .so written by torch._export.aot_compile, not an archive")
    if (rtol is None) != (atol is None):
        raise ValueError("rtol and atol must be given together")
    if edges and reference is None:
        raise ValueError("edges needs a reference program: the dynamic ranges come from it")
    if device_index < -1:
        raise ValueError(f"device index must be -1 (the default device) or >= 0, got {device_index}")

    report = ValidationReport(package=str(package))
    try:
        info = read_package(package)
    except PackageError as exc:
        report.error = str(exc)
        return report
    report.models = [_model_summary(model) for model in info.models]
    for member, reason in info.unsafe_members:
        report.add(
            "package",
            ERROR,
            f"refused archive member `{member}` ({reason}): it would be extracted outside the extraction folder",
            "Do not load this file; rebuild the package with torch._inductor.aoti_compile_and_package.",
        )
    if info.unsafe_members:
        return report
    if not info.models:
        report.add("package", ERROR, "no AOTInductor model in the archive (no data/aotinductor/<model>/ entries)")
        return report
    for model in info.models:
        _static_findings(report, model)
    if not any(model.name == "model" for model in info.models):
        names = ", ".join(f"`{model.name}`" for model in info.models)
        report.add(
            "package",
            ERROR,
            f"aoti_load_package loads the model named `model`; this package holds {names}",
            "Load it with torch._inductor.package.load_package(path, model_name=...); validate runs `model` only.",
        )
    if not run or not report.valid:
        return report
    if importlib.util.find_spec("torch") is None:
        report.error = f"{NEEDS_TORCH} (torch is not installed for {sys.executable}; --no-run only reads the package)"
        return report

    model_info = next(m for m in info.models if m.name == "model")
    device_type = model_info.device_type
    workdir = Path(tempfile.mkdtemp(prefix="aoti-lint-validate-"))
    try:
        (workdir / "tmp").mkdir()
        probe = _run_child({"mode": "probe", "device_type": device_type}, workdir, {}, PROBE_TIMEOUT, "host probe")
        host = probe.state.get("host")
        if host is None:
            error = probe.state.get("torch_error") or f"{probe.outcome} while {probe.current}"
            report.error = f"could not probe this host: {error} (check that `import torch` works)"
            return report
        report.host = host
        for model in info.models:
            _host_findings(report, model, host, device_index)
        if not report.valid:
            report.add("run", INFO, "not run: the package cannot work on this host (see above)")
            return report
        request = {
            "mode": "run",
            "package": str(package.resolve()),
            "device_type": device_type,
            "device_index": device_index,
            "inputs": str(Path(inputs).resolve()) if inputs else None,
            "reference": str(Path(reference).resolve()) if reference else None,
            "edges": edges,
            "rtol": rtol,
            "atol": atol,
            "seed": seed,
            "input_specs": [spec.to_dict() for spec in model_info.input_specs],
        }
        if baseline is not None:
            baseline_file = workdir / "baseline.pt"
            old = _run_child(
                {
                    **request,
                    "mode": "baseline",
                    "baseline": str(Path(baseline).resolve()),
                    "baseline_file": str(baseline_file),
                },
                workdir,
                RUN_SWITCHES,
                timeout,
                "baseline",
            )
            _record_run(report, old, timeout)
            if not baseline_file.is_file():
                if old.outcome == "ok":
                    report.add("baseline", INFO, "nothing to compare: no input could be run")
                return report
            request["baseline_file"] = str(baseline_file)
        first = _run_child(request, workdir, RUN_SWITCHES, timeout, "run")
        _record_run(report, first, timeout)
        # Switches cannot help when torch or the inputs are unusable, or when the inputs were refused unrun.
        rerun = not any(first.state.get(key) for key in ("torch_error", "input_error")) and not any(
            case["status"] == "refused" for case in first.state.get("cases", [])
        )
        if diagnose and first.outcome != "ok" and rerun:
            env: dict[str, str] = dict(RUN_SWITCHES)
            stages = [switches for switches, device_types in DIAGNOSE_STAGES if device_type in device_types]
            if not stages:
                report.add(
                    "diagnose",
                    INFO,
                    f"nothing to rerun on {device_type}: every run already checks its inputs "
                    "(AOTI_RUNTIME_CHECK_INPUTS=1)",
                )
            for switches in stages:
                env = {**env, **switches}
                stage = _run_child(
                    request, workdir, env, timeout, "diagnose " + " ".join(f"{k}={v}" for k, v in env.items())
                )
                _record_diagnosis(report, stage)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return report


def _model_summary(model: ModelInfo) -> dict:
    return {
        "name": model.name,
        "metadata": model.metadata,
        "metadata_member": model.metadata_member,
        "members": model.members,
        "input_specs": [spec.to_dict() for spec in model.input_specs],
        "baked_in_debug": [
            {
                "config": s.marker.config_key,
                "value": s.marker.value,
                "env_var": s.marker.env_var,
                "member": s.member,
                "line": s.line,
            }
            for s in model.switches
        ],
    }


def _static_findings(report: ValidationReport, model: ModelInfo) -> None:
    if not model.device_type:
        report.add(
            "package",
            ERROR,
            f"model `{model.name}` has no AOTI_DEVICE_KEY in its metadata: the loader refuses it "
            "('No device information found.')",
            "Rebuild the package with torch >= 2.6 (aoti_compile_and_package records the device).",
        )
    for switch in model.switches:
        marker = switch.marker
        report.add(
            "package",
            WARNING,
            f"model `{model.name}` was compiled with {marker.config_key}={marker.value} ({marker.env_var}), baked "
            f"into the package ({switch.member}:{switch.line}): {marker.cost}",
            f"Rebuild without it before shipping (found statically by {', '.join(marker.rules)}).",
        )


def _host_findings(report: ValidationReport, model: ModelInfo, host: dict, device_index: int) -> None:
    device_type = model.device_type
    md = model.metadata
    recompile = "Recompile the package on the target machine, or load it where it was compiled."
    if device_type == "cpu":
        if device_index != -1:
            report.add(
                "host",
                ERROR,
                f"device index {device_index} given for a CPU package: CPU packages take none "
                "(torch raises 'Incorrect device passed to aoti_runner_cpu')",
                "Omit the device index (-1) for CPU packages.",
                ["cpu-device-index"],
            )
    elif device_type:
        if device_type == "cuda" and not host["cuda_build"] and not host["hip_build"]:
            report.add(
                "host",
                ERROR,
                f"the package was compiled for cuda but torch {host['torch']} here is a CPU-only build "
                "(loading fails with 'Torch not compiled with CUDA enabled')",
                "Load it with a CUDA build of torch on a machine with a GPU, or compile the package for CPU.",
                ["torch-without-cuda", "package-device-unavailable"],
            )
        elif not host["device_module"]:
            report.add(
                "host",
                ERROR,
                f"the package was compiled for `{device_type}`, which torch {host['torch']} does not know",
                "Load it with a torch build for that device, or compile the package for this host's device.",
                ["unsupported-device-key"],
            )
        elif not host["device_available"]:
            detail = f": {host['device_error']}" if host.get("device_error") else ""
            report.add(
                "host",
                ERROR,
                f"the package was compiled for {device_type} but no {device_type} device is usable here{detail}",
                "Load it where the device is visible (check the container's GPU access and "
                "CUDA_VISIBLE_DEVICES), or compile the package for CPU.",
                ["package-device-unavailable"],
            )
        elif device_index >= host["device_count"]:
            report.add(
                "host",
                ERROR,
                f"device index {device_index} is out of range: {host['device_count']} {device_type} device(s) here",
                f"Use a device index below {host['device_count']}.",
            )
    for key, host_key in (("AOTI_PLATFORM", "platform"), ("AOTI_MACHINE", "machine")):
        if md.get(key) and md[key] != host[host_key]:
            report.add(
                "host",
                ERROR,
                f"the package was compiled on {key}={md[key]}, this host is {host[host_key]}: its .so cannot load",
                recompile,
                ["dlopen-failure"],
            )
    required = md.get("AOTI_CPU_ISA", "").lower().split()
    host_flags = host.get("cpu_isa_flags")
    if (
        host_flags is not None
        and required
        and required != ["invalid_vec_isa"]
        and md.get("AOTI_MACHINE")
        in (
            None,
            host["machine"],
        )
    ):
        missing = [flag for flag in required if flag not in host_flags]
        if missing:
            report.add(
                "host",
                ERROR,
                f"the package was compiled for CPU ISA {md['AOTI_CPU_ISA']}; this CPU lacks {' '.join(missing)} "
                "(illegal instruction at run time)",
                recompile,
            )
    _compute_capability_findings(report, md, host, device_index)


def _compute_capability_findings(report: ValidationReport, md: dict, host: dict, device_index: int) -> None:
    compiled = md.get("AOTI_COMPUTE_CAPABILITY", "")
    capabilities = host.get("compute_capabilities") or []
    if md.get("AOTI_DEVICE_KEY") != "cuda" or not compiled or not capabilities:
        return
    index = max(device_index, 0)
    if index >= len(capabilities) or capabilities[index] == compiled:
        return
    here = capabilities[index]
    fix = "Recompile the package on this GPU model (AOTI compiles kernels for the GPU it runs on)."
    if compiled.isdigit() and here.isdigit() and int(here) // 10 == int(compiled) // 10 and int(here) > int(compiled):
        report.add(
            "host",
            WARNING,
            f"the package was compiled for compute capability {compiled}, device {index} here is {here}: same "
            "major version, it may run but is not what it was tuned for",
            fix,
        )
        return
    report.add(
        "host",
        ERROR,
        f"the package was compiled for compute capability {compiled}, device {index} here is {here}: its kernels "
        "will not load",
        fix,
        ["gpu-arch-mismatch"],
    )


def _run_child(request: dict, workdir: Path, env_switches: dict, timeout: float, name: str) -> ChildRun:
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


def _remember(report: ValidationReport, text: str) -> list[str]:
    found = match_text(text)
    for match in found:
        report.matches.setdefault(match.failure.id, match)
    return [m.failure.id for m in found]


def _first_line(text: str) -> str:
    return next((line for line in text.strip().splitlines() if line.strip()), "")


def _record_run(report: ValidationReport, run: ChildRun, timeout: float) -> None:
    report.runs.append(run)
    state = run.state
    stage = "baseline" if run.name == "baseline" else "run"
    subject = "the baseline .so" if stage == "baseline" else "the package"
    evidence = run.stderr_tail + "\n" + state.get("error", "")
    if run.outcome == "crashed":
        where = f"; the last kernel started was {run.last_kernel}" if run.last_kernel else ""
        known = _remember(report, evidence + f"\nchild process killed by {run.signal}")
        report.add(
            stage,
            ERROR,
            f"{subject} crashed the process ({run.signal}) while {run.current}{where}",
            "Rerun with --diagnose; follow the known failures below.",
            known,
        )
        _record_cases(report, state.get("cases", []), stage)
        return
    if run.outcome == "timed out":
        report.add(
            stage,
            ERROR,
            f"no result within {timeout:g} s while {run.current} (a hang, or too slow)",
            "Rerun with a larger --timeout; with --diagnose to rerun with checks on.",
            _remember(report, evidence),
        )
        _record_cases(report, state.get("cases", []), stage)
        return
    for key in ("torch_error", "input_error"):
        if state.get(key):
            report.add(stage, ERROR, state[key])
    if state.get("error"):
        report.add(
            stage, ERROR, f"{run.current} failed: {_first_line(state['error'])}", "", _remember(report, evidence)
        )
    elif run.returncode != 0 and not state.get("torch_error"):
        report.add(stage, ERROR, f"the child process exited with {run.returncode} while {run.current}")
    if state.get("edges_note"):
        report.add(stage, INFO, state["edges_note"])
    _record_cases(report, state.get("cases", []), stage)
    if state.get("loaded") and not state.get("cases") and run.outcome == "ok":
        report.add(stage, INFO, "loaded; nothing to run: give --inputs or --reference to run the package")


def _mismatch_summary(message: str) -> str:
    """assert_close's counts ("Mismatched elements: 8 / 8 (100.0%)"), or its first line."""
    counts = [line.strip() for line in message.splitlines() if line.strip().startswith("Mismatched elements")]
    return "; ".join(counts) or _first_line(message)


def _differences_text(case: dict) -> str:
    return "; ".join(
        f"output {d['output']} {d['shape']}: max abs {d['max_abs']:.3g}, max rel {d['max_rel']:.3g}"
        for d in case.get("differences", [])
    )


def _record_cases(report: ValidationReport, cases: list[dict], stage: str = "run") -> None:
    for case in cases:
        status, message = case["status"], case.get("message", "")
        where = f"{case['name']} {case['shapes']}"
        if status == "refused":
            for problem in case.get("problems", []):
                known = [problem["known"]] if problem.get("known") else []
                report.add("inputs", ERROR, f"{where}: {problem['message']}", problem.get("fix", ""), known)
        elif status == "skipped":
            report.add(
                "inputs",
                WARNING,
                f"{case['name']}: not run, the package's input checks refuse it: {message}",
                "With AOTI_RUNTIME_CHECK_INPUTS=1 in production this size fails; without it, it runs unchecked.",
            )
        elif status == "error":
            report.add(stage, ERROR, f"{where}: {_first_line(message)}", "", _remember(report, message))
        elif status == "mismatch":
            report.add(
                "compare",
                ERROR,
                f"{where}: the outputs differ from the reference program: {message}",
                "Rerun with --diagnose; if the inputs pass the checks, compare kernel by kernel with the printer.",
            )
        elif status == "baseline mismatch":
            report.add(
                "compare",
                ERROR,
                f"{where}: the outputs differ from the baseline .so (largest differences: {_differences_text(case)}): "
                f"{_mismatch_summary(message)}",
                "The migrated package does not compute what production serves: compare the exported program with "
                "the model the .so was compiled from (weights, eval mode, dynamic shapes, inductor options).",
            )
        elif status == "nonfinite":
            if case.get("reference_nonfinite") == case.get("nonfinite"):
                report.add("compare", WARNING, f"{case['name']}: {message}; the reference program gives the same")
            else:
                report.add(
                    "compare",
                    ERROR,
                    f"{where}: NaN/Inf in the outputs ({message})",
                    "Recompile with TORCHINDUCTOR_NAN_ASSERTS=1 to find the first kernel producing them.",
                )
        if status in ("ok", "nonfinite") and case.get("differences"):
            report.add(
                "compare", INFO, f"{where}: equal to the baseline .so (largest differences: {_differences_text(case)})"
            )


def _record_diagnosis(report: ValidationReport, run: ChildRun) -> None:
    report.runs.append(run)
    switches = " ".join(f"{k}={v}" for k, v in run.env.items())
    if run.outcome == "ok":
        report.add("diagnose", INFO, f"with {switches}: the run passed (the failure depends on timing or memory)")
        return
    state = run.state
    shown = [f"{c['name']}: {_first_line(c['message'])}" for c in state.get("cases", []) if c["status"] != "ok"]
    if run.outcome in ("crashed", "timed out"):
        shown.insert(0, f"{run.outcome} ({run.signal or 'timeout'}) while {run.current}")
    elif state.get("error"):
        shown.insert(0, f"{run.current} failed: {_first_line(state['error'])}")
    text = "\n".join([run.stderr_tail, *shown, *([f"child process killed by {run.signal}"] if run.signal else [])])
    report.add("diagnose", INFO, f"with {switches}: " + "; ".join(shown), "", _remember(report, text))


def render_text(report: ValidationReport) -> str:
    out = [f"aoti-lint validate {report.package}"]
    for model in report.models:
        md = model["metadata"]
        out.append(
            f"  model `{model['name']}`: device {md.get('AOTI_DEVICE_KEY') or '?'}, "
            f"{md.get('AOTI_PLATFORM', '?')}/{md.get('AOTI_MACHINE', '?')}, CPU ISA {md.get('AOTI_CPU_ISA') or '-'}, "
            f"compute capability {md.get('AOTI_COMPUTE_CAPABILITY') or '-'}"
        )
        for spec in model.get("input_specs", []):
            out.append(f"    input {spec['index']}: {_spec_text(spec)}")
    if report.host:
        host = report.host
        build = (
            f"CUDA {host['cuda_build']}"
            if host["cuda_build"]
            else f"HIP {host['hip_build']}"
            if host["hip_build"]
            else "CPU-only"
        )
        devices = (
            f"{host['device_count']} {host['device_type']} device(s) usable"
            if host["device_available"]
            else f"no {host['device_type']} device usable"
        )
        out.append(f"  host: torch {host['torch']} ({build}), {host['platform']}/{host['machine']}, {devices}")
    for run in report.runs:
        out.append(f"  {run.name}: {run.outcome}" + (f" ({run.signal})" if run.signal else ""))
        for case in run.state.get("cases", []):
            out.append(f"    {case['name']} {case['shapes']}: {case['status']}")
    if report.error:
        out.append(f"error: {report.error}")
    for finding in report.findings:
        out.append(f"{finding.severity}[{finding.stage}]: {finding.message}")
        if finding.fix:
            out.append(f"  fix: {finding.fix}")
        for known in finding.known_failures:
            out.append(f"  known failure: {known} ({BY_ID[known].title})")
    # Metadata, member names and the children's messages come from the package: one line each, escaped.
    out = [printable(line) for line in out]
    if report.matches:
        out.append("")
        out.append("Known failures seen (the same text as `aoti-lint explain`):")
        out.extend(render_match(match, indent="  ") for match in report.matches.values())
    out.append(_verdict_line(report))
    return "\n".join(out) + "\n"


def _spec_text(spec: dict) -> str:
    dims = []
    for _, size in sorted(spec["sizes"].items(), key=lambda item: int(item[0])):
        if isinstance(size, list):
            dims.append(f"{'' if size[0] is None else size[0]}..{'' if size[1] is None else size[1]}")
        else:
            dims.append(str(size))
    return f"{spec.get('dtype') or '?'} [{', '.join(dims)}] on {spec.get('device_type') or '?'}"


def _verdict_line(report: ValidationReport) -> str:
    if report.error:
        return "ERROR: not validated (see the error above)"
    errors = sum(f.severity == ERROR for f in report.findings)
    warnings = sum(f.severity == WARNING for f in report.findings)
    return f"{report.verdict}: {errors} error(s), {warnings} warning(s)"


def render_summary(reports: list[ValidationReport]) -> str:
    """One line per package, for a run over several packages."""
    return "".join(printable(f"{report.package}: {_verdict_line(report)}") + "\n" for report in reports)


def render_junit(reports: list[ValidationReport]) -> str:
    """One test case per package: a failure when invalid, an error when it could not be validated."""
    failures = sum(not r.valid and r.error is None for r in reports)
    errors = sum(r.error is not None for r in reports)
    root = ET.Element(
        "testsuites", name="aoti-lint validate", tests=str(len(reports)), failures=str(failures), errors=str(errors)
    )
    suite = ET.SubElement(
        root,
        "testsuite",
        name="aoti-lint validate",
        tests=str(len(reports)),
        failures=str(failures),
        errors=str(errors),
        disabled="0",
    )
    for report in reports:
        case = ET.SubElement(suite, "testcase", name=printable(report.package), classname="aoti-lint.validate")
        problems = [f for f in report.findings if f.severity == ERROR]
        if report.error:
            element = ET.SubElement(case, "error", message=printable(report.error))
            element.text = printable(report.error)
        elif problems:
            element = ET.SubElement(case, "failure", message=printable(problems[0].message))
            element.text = "\n".join(
                printable(f"{f.stage}: {f.message}") + (f"\n  fix: {printable(f.fix)}" if f.fix else "")
                for f in problems
            )
        warnings = [f for f in report.findings if f.severity == WARNING]
        if warnings:
            ET.SubElement(case, "system-out").text = "\n".join(
                printable(f"warning[{f.stage}]: {f.message}") for f in warnings
            )
    ET.indent(root, space="    ")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
