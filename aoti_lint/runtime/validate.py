"""``aoti-lint validate``: prove a package on this machine, or say why it fails here.

Steps: (1) read the package without torch (models, metadata, debug switches baked in); (2) check this host
against the package's metadata in a child process (device usable, device index, platform, machine, CPU ISA,
compute capability); (3) run the package in a child process, so a crash or a hang becomes a result; (4) with
``diagnose``, rerun a failure with the guide's staged switches. Every child runs with its temporary folder
(``TMPDIR``, where torch extracts the package) and working folder inside one private ``mkdtemp`` folder (0700),
removed at the end; archives with members that would land outside it are refused before anything is loaded.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path

from aoti_lint.knowledge.known_failures import BY_ID
from aoti_lint.runtime.explain import Match, match_text, render_match
from aoti_lint.runtime.package import ModelInfo, PackageError, read_package

CHILD = Path(__file__).with_name("child.py")
DEFAULT_TIMEOUT = 300.0
PROBE_TIMEOUT = 120.0
ERROR, WARNING, INFO = "error", "warning", "info"
# The guide's staged switches, read at run time: each stage adds to the previous one.
DIAGNOSE_STAGES = (
    ({"AOTI_RUNTIME_CHECK_INPUTS": "1"}, ("cpu", "cuda", "xpu", "mps")),
    ({"CUDA_LAUNCH_BLOCKING": "1", "PYTORCH_NO_CUDA_MEMORY_CACHING": "1"}, ("cuda",)),
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

    @property
    def valid(self) -> bool:
        return not any(f.severity == ERROR for f in self.findings)

    def add(self, stage: str, severity: str, message: str, fix: str = "", known: list[str] | None = None) -> None:
        self.findings.append(Finding(stage, severity, message, fix, list(known or [])))

    def to_dict(self) -> dict:
        return {
            "package": self.package,
            "valid": self.valid,
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
    device_index: int = -1,
    rtol: float | None = None,
    atol: float | None = None,
    edges: bool = False,
    diagnose: bool = False,
    run: bool = True,
    timeout: float = DEFAULT_TIMEOUT,
) -> ValidationReport:
    """Validate an AOTInductor package on this machine. Runs native code from the package (in child processes).

    Raises ValueError for unusable arguments (missing files, ``edges`` without ``reference``, ...).
    """
    package = Path(package)
    for path in (package, inputs, reference):
        if path is not None and not Path(path).is_file():
            raise ValueError(f"{path}: no such file")
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
        report.add("package", ERROR, str(exc), "Pass the .pt2 written by torch._inductor.aoti_compile_and_package.")
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
        report.add(
            "host",
            ERROR,
            f"torch is not installed for {sys.executable}: the host check and the run need it",
            "pip install 'aoti-lint[validate]' (or the torch version that built the package); "
            "--no-run only reads the package",
        )
        return report

    device_type = next(m for m in info.models if m.name == "model").device_type
    workdir = Path(tempfile.mkdtemp(prefix="aoti-lint-validate-"))
    try:
        (workdir / "tmp").mkdir()
        probe = _run_child({"mode": "probe", "device_type": device_type}, workdir, {}, PROBE_TIMEOUT, "host probe")
        host = probe.state.get("host")
        if host is None:
            error = probe.state.get("torch_error") or f"{probe.outcome} while {probe.current}"
            report.add("host", ERROR, f"could not probe this host: {error}", "Check that `import torch` works.")
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
        }
        first = _run_child(request, workdir, {}, timeout, "run")
        _record_run(report, first, timeout)
        # Switches cannot help when torch or the inputs are unusable.
        rerun = not any(first.state.get(key) for key in ("torch_error", "input_error"))
        if diagnose and first.outcome != "ok" and rerun:
            env: dict[str, str] = {}
            for switches, device_types in DIAGNOSE_STAGES:
                if device_type not in device_types:
                    continue
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
    env = {**os.environ, **env_switches, "TMPDIR": str(workdir / "tmp")}
    # A session of its own, so a hang is ended with everything it started.
    process = subprocess.Popen(
        [sys.executable, str(CHILD), str(request_path)],
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
        os.killpg(process.pid, signal.SIGKILL)
        stdout, stderr = process.communicate()
    try:
        state = json.loads(result_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        state = {"current": "starting", "cases": []}
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
        problems += [case["status"] != "ok" for case in state.get("cases", [])]
        outcome = "failed" if rc != 0 or any(problems) else "ok"
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
    evidence = run.stderr_tail + "\n" + state.get("error", "")
    if run.outcome == "crashed":
        where = f"; the last kernel started was {run.last_kernel}" if run.last_kernel else ""
        known = _remember(report, evidence + f"\nchild process killed by {run.signal}")
        report.add(
            "run",
            ERROR,
            f"the package crashed the process ({run.signal}) while {run.current}{where}",
            "Rerun with --diagnose; follow the known failures below.",
            known,
        )
        _record_cases(report, state.get("cases", []))
        return
    if run.outcome == "timed out":
        report.add(
            "run",
            ERROR,
            f"no result within {timeout:g} s while {run.current} (a hang, or too slow)",
            "Rerun with a larger --timeout; with --diagnose to rerun with checks on.",
            _remember(report, evidence),
        )
        _record_cases(report, state.get("cases", []))
        return
    for key in ("torch_error", "input_error"):
        if state.get(key):
            report.add("run", ERROR, state[key])
    if state.get("error"):
        report.add(
            "run", ERROR, f"{run.current} failed: {_first_line(state['error'])}", "", _remember(report, evidence)
        )
    elif run.returncode != 0 and not state.get("torch_error"):
        report.add("run", ERROR, f"the child process exited with {run.returncode} while {run.current}")
    if state.get("edges_note"):
        report.add("run", INFO, state["edges_note"])
    _record_cases(report, state.get("cases", []))
    if state.get("loaded") and not state.get("cases") and run.outcome == "ok":
        report.add("run", INFO, "loaded; nothing to run: give --inputs or --reference to run the package")


def _record_cases(report: ValidationReport, cases: list[dict]) -> None:
    for case in cases:
        status, message = case["status"], case.get("message", "")
        if status == "error":
            report.add(
                "run", ERROR, f"{case['name']} {case['shapes']}: {_first_line(message)}", "", _remember(report, message)
            )
        elif status == "mismatch":
            report.add(
                "compare",
                ERROR,
                f"{case['name']} {case['shapes']}: the outputs differ from the reference program: {message}",
                "Rerun with --diagnose; if the inputs pass the checks, compare kernel by kernel with the printer.",
            )
        elif status == "nonfinite":
            if case.get("reference_nonfinite") == case.get("nonfinite"):
                report.add("compare", WARNING, f"{case['name']}: {message}; the reference program gives the same")
            else:
                report.add(
                    "compare",
                    ERROR,
                    f"{case['name']} {case['shapes']}: NaN/Inf in the outputs ({message})",
                    "Recompile with TORCHINDUCTOR_NAN_ASSERTS=1 to find the first kernel producing them.",
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
    for finding in report.findings:
        out.append(f"{finding.severity}[{finding.stage}]: {finding.message}")
        if finding.fix:
            out.append(f"  fix: {finding.fix}")
        for known in finding.known_failures:
            out.append(f"  known failure: {known} ({BY_ID[known].title})")
    if report.matches:
        out.append("")
        out.append("Known failures seen (the same text as `aoti-lint explain`):")
        out.extend(render_match(match, indent="  ") for match in report.matches.values())
    errors = sum(f.severity == ERROR for f in report.findings)
    warnings = sum(f.severity == WARNING for f in report.findings)
    verdict = "VALID" if report.valid else "INVALID"
    out.append(f"{verdict}: {errors} error(s), {warnings} warning(s)")
    return "\n".join(out) + "\n"
