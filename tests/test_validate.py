"""aoti-lint validate on packages really compiled in this session (CPU), plus forged copies of them."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from aoti_lint.runtime import validate
from tests.conftest import REPO
from tests.runtime_helpers import with_metadata, with_native_library

torch_test = pytest.mark.torch


def errors(report):
    return [f for f in report.findings if f.severity == "error"]


def saved_inputs(path: Path, code: str) -> Path:
    """Inputs written by torch.save in a child process (the test process does not import torch)."""
    script = f"import torch\ntorch.manual_seed(0)\ntorch.save({code}, {str(path)!r})\n"
    subprocess.run([sys.executable, "-c", script], check=True, timeout=300)
    return path


@torch_test
def test_valid_package_passes_with_edges(aoti_packages, cli):
    result = cli(
        "validate", str(aoti_packages["plain"]), "--reference", str(aoti_packages["reference"]), "--edges",
        "--output-format", "json",
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    report = json.loads(result.stdout)
    assert report["valid"] is True
    assert report["models"][0]["metadata"]["AOTI_DEVICE_KEY"] == "cpu"
    assert report["models"][0]["baked_in_debug"] == []
    assert report["host"]["device_available"] is True
    cases = {case["name"]: case for case in report["runs"][0]["state"]["cases"]}
    # batch has Dim(min=1, max=64); the example batch is 4.
    assert cases["the example inputs"]["shapes"] == [[4, 10]]
    edges = {name.split("=", 1)[1]: case["shapes"] for name, case in cases.items() if name.startswith("edge ")}
    assert edges == {"1 (min)": [[1, 10]], "64 (max)": [[64, 10]]}
    assert all(case["status"] == "ok" for case in cases.values())
    assert [f for f in report["findings"] if f["severity"] != "info"] == []


def test_debug_switches_are_read_from_the_package_without_torch(aoti_packages):
    # Static step only: works without torch (run=False), and flags what the debug build baked in.
    debug = validate(aoti_packages["debug"], run=False)
    flagged = {(s["config"], s["value"]) for s in debug.models[0]["baked_in_debug"]}
    assert flagged == {
        ("nan_asserts", "True"),
        ("aot_inductor.debug_intermediate_value_printer", '"3"'),
        ("aot_inductor.debug_compile", "True"),
    }
    assert [f.severity for f in debug.findings] == ["warning"] * 3
    assert debug.valid
    plain = validate(aoti_packages["plain"], run=False)
    assert plain.findings == [] and plain.models[0]["baked_in_debug"] == []


@torch_test
def test_metadata_claiming_cuda_fails_the_host_check(aoti_packages, tmp_path):
    forged = with_metadata(
        aoti_packages["plain"], tmp_path / "cuda.pt2", AOTI_DEVICE_KEY="cuda", AOTI_COMPUTE_CAPABILITY="90"
    )
    report = validate(forged, reference=aoti_packages["reference"])
    if report.host["cuda_build"]:
        pytest.skip("this torch has CUDA: the forged package is a CPU .so, not a CUDA package")
    assert not report.valid
    [error] = errors(report)
    assert error.stage == "host" and "CPU-only build" in error.message
    assert "torch-without-cuda" in error.known_failures
    assert report.runs == []  # nothing was loaded


@torch_test
def test_wrong_shape_is_reported_and_diagnosed(aoti_packages, tmp_path):
    inputs = saved_inputs(tmp_path / "inputs.pt", "(torch.randn(4, 11),)")
    report = validate(aoti_packages["plain"], inputs=inputs, reference=aoti_packages["reference"], diagnose=True)
    assert not report.valid
    assert report.runs[0].outcome == "failed"
    assert any(f.stage == "run" and "[[4, 11]]" in f.message for f in errors(report))
    [diagnosis] = [f for f in report.findings if f.stage == "diagnose"]
    assert "AOTI_RUNTIME_CHECK_INPUTS=1" in diagnosis.message
    assert "unmatched dim value at 1, expected: 10, but got: 11" in diagnosis.message
    assert diagnosis.known_failures == ["input-dim-value"]
    assert report.runs[1].env == {"AOTI_RUNTIME_CHECK_INPUTS": "1"}


@torch_test
def test_out_of_range_batch_accepted_by_the_package_is_caught_by_the_reference(aoti_packages, tmp_path):
    # Without AOTI_RUNTIME_CHECK_INPUTS the package runs batch 100 (> max 64) silently; the program's guard refuses.
    inputs = saved_inputs(tmp_path / "big.pt", "(torch.randn(100, 10),)")
    report = validate(aoti_packages["plain"], inputs=inputs, reference=aoti_packages["reference"])
    [error] = errors(report)
    assert "[[100, 10]]: the reference program failed" in error.message and "<= 64" in error.message


@torch_test
def test_outputs_that_differ_from_the_reference_are_reported(aoti_packages):
    report = validate(aoti_packages["plain"], reference=aoti_packages["other_reference"])
    [error] = errors(report)
    assert error.stage == "compare" and "the outputs differ from the reference program" in error.message
    assert "Mismatched elements" in error.message


@torch_test
def test_nan_in_the_outputs_is_reported(aoti_packages, tmp_path):
    inputs = saved_inputs(tmp_path / "nan.pt", "(torch.full((2, 10), float('nan')),)")
    report = validate(aoti_packages["plain"], inputs=inputs)
    [error] = errors(report)
    assert error.stage == "compare" and "NaN/Inf in the outputs (output 0: 8 NaN, 0 Inf)" in error.message


@torch_test
def test_nan_assert_baked_in_fires_and_is_explained(aoti_packages, tmp_path):
    inputs = saved_inputs(tmp_path / "nan.pt", "(torch.full((2, 10), float('nan')),)")
    report = validate(aoti_packages["debug"], inputs=inputs)
    [error] = errors(report)
    assert "At least one NaN in" in error.message
    assert error.known_failures == ["nan-assert"]
    # The printer-3 package printed its kernel launches; the run finished them all.
    assert report.runs[0].last_kernel is None


@torch_test
def test_crashing_package_is_reported_with_its_signal(aoti_packages, tmp_path):
    crashing = with_native_library(
        aoti_packages["plain"],
        tmp_path / "crash.pt2",
        "__attribute__((constructor)) static void crash(void) { *(volatile int *)0 = 1; }\n",
        tmp_path,
    )
    report = validate(crashing, reference=aoti_packages["reference"])
    assert report.runs[0].outcome == "crashed" and report.runs[0].signal == "SIGSEGV"
    [error] = errors(report)
    assert "crashed the process (SIGSEGV) while loading the package" in error.message
    assert "bare-segfault" in error.known_failures


@torch_test
def test_hanging_package_times_out(aoti_packages, tmp_path):
    hanging = with_native_library(
        aoti_packages["plain"],
        tmp_path / "hang.pt2",
        "#include <unistd.h>\n__attribute__((constructor)) static void hang(void) { sleep(600); }\n",
        tmp_path,
    )
    report = validate(hanging, timeout=12)
    assert report.runs[0].outcome == "timed out"
    [error] = errors(report)
    # On a busy machine the child may still be importing torch after 12 s; either way it must not hang the tool.
    assert "no result within 12 s while" in error.message


@torch_test
def test_device_index_on_a_cpu_package_is_refused_before_loading(aoti_packages):
    report = validate(aoti_packages["plain"], device_index=0)
    [error] = errors(report)
    assert error.stage == "host" and error.known_failures == ["cpu-device-index"]
    assert report.runs == []


@pytest.mark.parametrize(
    ("member", "reason"),
    [("../escaped.txt", "`..` path component"), ("/tmp/absolute.txt", "absolute path"), ("link", "symbolic link")],
)
def test_archive_members_escaping_the_extraction_folder_are_refused(tmp_path, member, reason):
    package = tmp_path / "evil.pt2"
    with zipfile.ZipFile(package, "w") as archive:
        archive.writestr("evil/data/aotinductor/model/x.wrapper_metadata.json", '{"AOTI_DEVICE_KEY": "cpu"}')
        info = zipfile.ZipInfo(member)
        if reason == "symbolic link":
            info.external_attr = 0o120777 << 16
        archive.writestr(info, "/etc/passwd" if reason == "symbolic link" else "payload")
    report = validate(package)
    [error] = errors(report)
    assert f"refused archive member `{member}` ({reason})" in error.message
    assert report.runs == [] and report.host is None


def test_not_a_package(tmp_path):
    path = tmp_path / "model.pt2"
    path.write_text("not a zip")
    report = validate(path)
    assert not report.valid and "not a .pt2 package" in errors(report)[0].message


def test_package_without_the_model_aoti_load_package_loads(tmp_path):
    package = tmp_path / "other.pt2"
    with zipfile.ZipFile(package, "w") as archive:
        archive.writestr("other/data/aotinductor/encoder/x.wrapper_metadata.json", '{"AOTI_DEVICE_KEY": "cpu"}')
    [error] = errors(validate(package))
    assert "loads the model named `model`; this package holds `encoder`" in error.message


def test_without_torch_the_static_step_still_works(aoti_packages):
    # -S hides site-packages, hence torch: the run is refused with what is missing, the package is still read.
    code = (
        "from aoti_lint.runtime import validate\n"
        f"report = validate({str(aoti_packages['debug'])!r})\n"
        "print([f.severity for f in report.findings]); print(report.findings[-1].message)\n"
    )
    result = subprocess.run(
        [sys.executable, "-S", "-c", code], capture_output=True, text=True, env={"PYTHONPATH": str(REPO)}, timeout=60
    )
    assert result.returncode == 0, result.stderr
    severities, message = result.stdout.splitlines()
    assert severities == "['warning', 'warning', 'warning', 'error']"
    assert "torch is not installed" in message


def test_usage_errors_exit_2(cli, tmp_path):
    missing = cli("validate", str(tmp_path / "missing.pt2"))
    assert missing.returncode == 2 and "missing.pt2: no such file" in missing.stderr
    result = cli("validate", "p.pt2", "--edges")
    assert result.returncode == 2 and "--edges needs --reference" in result.stderr
    assert cli("validate", "p.pt2", "--rtol", "1e-3").returncode == 2


def test_help_says_native_code_runs(cli):
    result = cli("validate", "--help")
    assert result.returncode == 0 and "runs its native code" in result.stdout


@pytest.mark.cuda
def test_cuda_package_on_this_gpu(tmp_path):
    """GPU only (scripts/gpu_check.sh): compile a tiny CUDA package here, validate it with edges and diagnose."""
    pytest.importorskip("torch")
    import torch

    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA device")
    from tests.runtime_helpers import build_packages

    build_packages(tmp_path, device="cuda", debug=False)
    report = validate(tmp_path / "plain.pt2", reference=tmp_path / "reference.pt2", edges=True)
    assert report.valid, report.findings
    assert report.models[0]["metadata"]["AOTI_DEVICE_KEY"] == "cuda"
    assert report.host["compute_capabilities"][0] == report.models[0]["metadata"]["AOTI_COMPUTE_CAPABILITY"]
    out_of_range = validate(tmp_path / "plain.pt2", device_index=99)
    assert [f.stage for f in errors(out_of_range)] == ["host"] and "out of range" in errors(out_of_range)[0].message
    inputs = saved_inputs(tmp_path / "bad.pt", "(torch.randn(100, 10),)")
    failing = validate(tmp_path / "plain.pt2", inputs=inputs, reference=tmp_path / "reference.pt2", diagnose=True)
    stages = [run.env for run in failing.runs]
    assert {"AOTI_RUNTIME_CHECK_INPUTS": "1"} in stages
    assert any("CUDA_LAUNCH_BLOCKING" in env for env in stages)
    assert any("input-dim-range" in f.known_failures for f in failing.findings)
