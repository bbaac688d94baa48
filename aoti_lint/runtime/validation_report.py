"""What ``aoti-lint validate`` found about one package, and its text, summary and JUnit renderings."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import asdict, dataclass, field

from aoti_lint.knowledge.known_failures import BY_ID
from aoti_lint.runtime.escape import printable
from aoti_lint.runtime.explain import Match, render_match

ERROR, WARNING, INFO = "error", "warning", "info"


@dataclass
class ValidationFinding:
    """One verdict of validate on a package (severities: error, warning, info), not a lint finding."""

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
    findings: list[ValidationFinding] = field(default_factory=list)
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
        self.findings.append(ValidationFinding(stage, severity, message, fix, list(known or [])))

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
