"""``aoti-lint validate``: prove a package on this machine, or say why it fails here.

Steps: (1) read the package without torch (models, metadata, input checks, debug switches baked in); (2) check
this host against the package's metadata in a child process (device usable, device index, platform, machine, CPU
ISA, compute capability); (3) with ``baseline``, run the legacy ``.so`` in a child process; (4) compare the inputs
with the package's input checks and run the package on those it accepts in a child process, with
AOTI_RUNTIME_CHECK_INPUTS=1, so a crash or a hang becomes a result; (5) with ``diagnose``, rerun a CUDA failure
with the guide's staged switches. Each child runs below a reaper (reaper.py) that leaves none of its processes
behind, with its temporary folder (``TMPDIR``, where torch extracts the package) and working folder inside one
private ``mkdtemp`` folder (0700), removed at the end; archives with members that would land outside it are
refused before anything is loaded.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
import tempfile
import zipfile
from pathlib import Path

from aoti_lint.runtime.child_process import run_child
from aoti_lint.runtime.explain import match_text
from aoti_lint.runtime.package import ModelInfo, PackageError, read_package
from aoti_lint.runtime.validation_report import (
    ERROR,
    INFO,
    WARNING,
    ChildRun,
    ValidationReport,
)

DEFAULT_TIMEOUT = 300.0
PROBE_TIMEOUT = 120.0
# Every run of a package (or of a baseline .so) has the package check its inputs: validation is where that cost
# belongs, and what the static comparison misses (strides, related sizes) is still caught.
RUN_SWITCHES = {"AOTI_RUNTIME_CHECK_INPUTS": "1"}
# The guide's staged switches for --diagnose, read at run time, on top of RUN_SWITCHES.
DIAGNOSE_STAGES = (({"CUDA_LAUNCH_BLOCKING": "1", "PYTORCH_NO_CUDA_MEMORY_CACHING": "1"}, ("cuda",)),)
NEEDS_TORCH = (
    "running a package needs torch: pip install torch==2.13.0"
    " (the validate extra: pip install '.[validate]' in a checkout of aoti-lint)"
)
NATIVE_CODE_WARNING = (
    "warning: validate runs native code from the package (its compiled .so) in child processes; "
    "validate only packages you trust"
)


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
        probe = run_child({"mode": "probe", "device_type": device_type}, workdir, {}, PROBE_TIMEOUT, "host probe")
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
            old = run_child(
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
        first = run_child(request, workdir, RUN_SWITCHES, timeout, "run")
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
                stage = run_child(
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
