"""aoti-lint validate on packages really compiled in this session (CPU), plus forged copies of them."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path

import pytest

from aoti_lint.runtime import validate
from tests.conftest import REPO
from tests.helpers import default_ctrl_c
from tests.runtime_helpers import rewrite_zip, with_metadata, with_native_library

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
    # Every run checks its inputs, and the package's own checks were read without torch.
    assert report["runs"][0]["env"] == {"AOTI_RUNTIME_CHECK_INPUTS": "1"}
    assert report["models"][0]["input_specs"] == [
        {"index": 0, "dtype": "float32", "device_type": "cpu", "sizes": {"0": [2, 64], "1": 10}}
    ]
    cases = {case["name"]: case for case in report["runs"][0]["state"]["cases"]}
    # batch has Dim(min=1, max=64); the example batch is 4. Edges are named by the input and dim the user sees.
    assert cases["the example inputs"]["shapes"] == [[4, 10]]
    edges = {name: (case["shapes"], case["status"]) for name, case in cases.items() if name.startswith("edge ")}
    # Export compiles Dim(min=1) as >= 2: the package's own check refuses batch 1, so that edge is not run.
    assert edges == {
        "edge input.shape[0]=1 (min)": ([[1, 10]], "skipped"),
        "edge input.shape[0]=64 (max)": ([[64, 10]], "ok"),
    }
    assert cases["the example inputs"]["status"] == "ok"
    [warning] = [f for f in report["findings"] if f["severity"] != "info"]
    assert warning["severity"] == "warning" and "dim 0 is 1, outside the package's range 2..64" in warning["message"]


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
def test_wrong_static_dim_is_refused_before_the_package_runs(aoti_packages, tmp_path):
    inputs = saved_inputs(tmp_path / "inputs.pt", "(torch.randn(4, 11),)")
    report = validate(aoti_packages["plain"], inputs=inputs, reference=aoti_packages["reference"], diagnose=True)
    assert not report.valid
    [error] = errors(report)
    assert error.stage == "inputs" and error.known_failures == ["input-dim-value"]
    assert "input 0 (`input`) dim 1 is 11, the package was compiled for 10 (a static dimension)" in error.message
    assert "Feed size 10 at dim 1" in error.fix
    # Refused before loading: nothing ran, so there is nothing for --diagnose to rerun.
    assert len(report.runs) == 1 and not report.runs[0].state.get("loaded")
    assert report.runs[0].state["cases"][0]["status"] == "refused"


@torch_test
def test_wrong_shape_on_a_static_package_exits_1_naming_the_dim(migration_packages, tmp_path, cli):
    # The case: the package does not check shapes unless AOTI_RUNTIME_CHECK_INPUTS=1 and would "run".
    inputs = saved_inputs(tmp_path / "inputs.pt", "(torch.randn(3, 10),)")
    result = cli("validate", str(migration_packages["other"]), "--inputs", str(inputs))
    assert result.returncode == 1, result.stdout + result.stderr
    assert "error[inputs]: the given inputs [[3, 10]]: input 0 dim 0 is 3, the package was compiled for 2" in (
        result.stdout
    )
    assert "VALID" not in result.stdout.replace("INVALID", "")


@torch_test
def test_batch_past_the_dynamic_max_exits_1(aoti_packages, tmp_path, cli):
    # Without AOTI_RUNTIME_CHECK_INPUTS the package runs batch 100 (> max 64) silently.
    inputs = saved_inputs(tmp_path / "big.pt", "(torch.randn(100, 10),)")
    result = cli("validate", str(aoti_packages["plain"]), "--inputs", str(inputs), "--output-format", "json")
    assert result.returncode == 1, result.stderr
    [error] = [f for f in json.loads(result.stdout)["findings"] if f["severity"] == "error"]
    assert error["message"].endswith("input 0 dim 0 is 100, outside the package's range 2..64 (a dynamic dimension)")
    assert error["known_failures"] == ["input-dim-range"]


@torch_test
def test_wrong_dtype_is_refused(aoti_packages, tmp_path):
    inputs = saved_inputs(tmp_path / "f64.pt", "(torch.randn(4, 10, dtype=torch.float64),)")
    [error] = errors(validate(aoti_packages["plain"], inputs=inputs))
    assert "input 0 is float64, the package was compiled for float32" in error.message
    assert error.known_failures == ["input-dtype"]


@torch_test
def test_what_the_static_check_misses_the_runtime_check_catches(aoti_packages, tmp_path):
    # Strides are not compared statically; the run has AOTI_RUNTIME_CHECK_INPUTS=1, so the package refuses them.
    inputs = saved_inputs(tmp_path / "t.pt", "(torch.randn(10, 4).t(),)")
    [error] = errors(validate(aoti_packages["plain"], inputs=inputs))
    assert "unmatched stride value" in error.message and "input-stride" in error.known_failures


@torch_test
def test_baseline_equal_to_its_faithful_migration(aoti_packages, migration_packages):
    # No inputs and no reference: inputs generated from the package's input checks, the same for both children.
    report = validate(aoti_packages["plain"], baseline=migration_packages["old_so"])
    assert report.valid, report.findings
    assert [run.name for run in report.runs] == ["baseline", "run"]
    assert all(run.env == {"AOTI_RUNTIME_CHECK_INPUTS": "1"} for run in report.runs)
    # The deprecated loader logged its banner; expected, not an error.
    assert "is being deprecated" in report.runs[0].stderr_tail
    [case] = report.runs[1].state["cases"]
    assert case["name"] == "inputs generated from the package's input checks (seed 0)"
    assert case["shapes"] == [[2, 10]] and case["differences"] == [
        {"output": 0, "shape": [2, 4], "max_abs": 0.0, "max_rel": 0.0}
    ]
    [info] = [f for f in report.findings if f.stage == "compare"]
    assert "equal to the baseline .so (largest differences: output 0 [2, 4]: max abs 0, max rel 0)" in info.message


@torch_test
def test_baseline_unequal_to_a_different_model(migration_packages, cli):
    result = cli("validate", str(migration_packages["other"]), "--baseline", str(migration_packages["old_so"]))
    assert result.returncode == 1, result.stdout + result.stderr
    [line] = [line for line in result.stdout.splitlines() if line.startswith("error[compare]")]
    assert "the outputs differ from the baseline .so (largest differences: output 0 [2, 4]: max abs" in line
    assert "Mismatched elements" in line
    max_abs = float(line.split("max abs ", 1)[1].split(",", 1)[0])
    assert max_abs > 0.1  # the weights differ by 1.0


def test_baseline_must_be_the_legacy_so(aoti_packages, cli):
    result = cli("validate", str(aoti_packages["plain"]), "--baseline", str(aoti_packages["reference"]))
    assert result.returncode == 2 and "--baseline takes the .so written by torch._export.aot_compile" in result.stderr
    two = cli("validate", str(aoti_packages["plain"]), str(aoti_packages["plain"]), "--baseline", "x.so")
    assert two.returncode == 2 and "give one package" in two.stderr


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


def test_not_a_package(tmp_path, cli):
    path = tmp_path / "model.pt2"
    path.write_text("not a zip")
    report = validate(path)
    assert not report.valid and report.verdict == "ERROR" and "not a .pt2 package" in report.error
    # Bad input, not a verdict on a package: one line naming the file, exit 2.
    result = cli("validate", str(path), "--no-run")
    assert result.returncode == 2
    [line] = result.stderr.splitlines()
    assert line.startswith(f"error: {path}: not a .pt2 package")


def test_package_without_the_model_aoti_load_package_loads(tmp_path):
    package = tmp_path / "other.pt2"
    with zipfile.ZipFile(package, "w") as archive:
        archive.writestr("other/data/aotinductor/encoder/x.wrapper_metadata.json", '{"AOTI_DEVICE_KEY": "cpu"}')
    [error] = errors(validate(package))
    assert "loads the model named `model`; this package holds `encoder`" in error.message


def without_torch(*args: str) -> subprocess.CompletedProcess:
    """aoti-lint run with -S: site-packages hidden, hence torch."""
    return subprocess.run(
        [sys.executable, "-S", *args], capture_output=True, text=True, env={"PYTHONPATH": str(REPO)}, timeout=120
    )


def test_without_torch_the_static_step_still_works(aoti_packages):
    # The run is refused with what is missing (not a verdict on the package); the package is still read.
    code = (
        "from aoti_lint.runtime import validate\n"
        f"report = validate({str(aoti_packages['debug'])!r})\n"
        "print([f.severity for f in report.findings]); print(report.verdict); print(report.error)\n"
    )
    result = without_torch("-c", code)
    assert result.returncode == 0, result.stderr
    severities, verdict, error = result.stdout.splitlines()
    assert severities == "['warning', 'warning', 'warning']" and verdict == "ERROR"
    assert error.startswith("running a package needs torch: pip install torch==2.13.0")


def test_without_torch_validate_exits_2_and_no_run_still_works(aoti_packages):
    result = without_torch("-m", "aoti_lint", "validate", str(aoti_packages["plain"]))
    assert result.returncode == 2, result.stdout + result.stderr
    assert "running a package needs torch: pip install torch==2.13.0" in result.stderr
    assert "INVALID" not in result.stdout
    no_run = without_torch("-m", "aoti_lint", "validate", str(aoti_packages["plain"]), "--no-run")
    assert no_run.returncode == 0 and no_run.stdout.endswith("VALID: 0 error(s), 0 warning(s)\n"), no_run.stderr
    # Nothing runs with --no-run: no native-code warning either.
    assert "native code" not in no_run.stderr


def test_usage_errors_exit_2(cli, tmp_path):
    missing = cli("validate", str(tmp_path / "missing.pt2"))
    assert missing.returncode == 2 and "missing.pt2: no such file" in missing.stderr
    result = cli("validate", "p.pt2", "--edges")
    assert result.returncode == 2 and "--edges needs --reference" in result.stderr
    assert cli("validate", "p.pt2", "--rtol", "1e-3").returncode == 2


def test_help_says_native_code_runs(cli):
    result = cli("validate", "--help")
    assert result.returncode == 0 and "runs its native code" in result.stdout


def test_the_native_code_warning_is_printed_when_it_runs(tmp_path, cli):
    # Printed on stderr before anything is read or run, whatever happens next.
    path = tmp_path / "model.pt2"
    path.write_text("not a zip")
    result = cli("validate", str(path))
    assert result.stderr.splitlines()[0] == (
        "aoti-lint validate: warning: validate runs native code from the package (its compiled .so) in child "
        "processes; validate only packages you trust"
    )


def test_input_checks_are_read_from_the_wrapper_without_torch(aoti_packages):
    from aoti_lint.runtime.package import input_specs

    [model] = validate(aoti_packages["plain"], run=False).models
    assert model["input_specs"] == [
        {"index": 0, "dtype": "float32", "device_type": "cpu", "sizes": {"0": [2, 64], "1": 10}}
    ]
    # A wrapper without checks (torch <= 2.6 wrote them only with debug_compile): nothing is assumed.
    assert input_specs("void run_impl() {}\n") == []


@torch_test
def test_several_packages_one_bad_exits_1_with_one_junit_failure(aoti_packages, tmp_path, cli):
    # The bad one claims CUDA: refused by the host check, after the good one really ran.
    forged = with_metadata(aoti_packages["plain"], tmp_path / "cuda.pt2", AOTI_DEVICE_KEY="cuda")
    result = cli("validate", str(aoti_packages["plain"]), str(forged), "--output-format", "junit")
    assert result.returncode == 1, result.stderr
    root = ET.fromstring(result.stdout)
    cases = root.findall("./testsuite/testcase")
    assert [case.get("name") for case in cases] == [str(aoti_packages["plain"]), str(forged)]
    assert root.get("tests") == "2" and root.get("failures") == "1" and root.get("errors") == "0"
    assert cases[0].find("failure") is None
    # On a CPU-only torch: the host check; on a CUDA machine the CPU .so fails to run as a CUDA package.
    assert cases[1].find("failure").get("message")


def test_several_packages_print_a_summary_line_each(aoti_packages, tmp_path, cli):
    evil = tmp_path / "evil.pt2"
    with zipfile.ZipFile(evil, "w") as archive:
        archive.writestr("evil/data/aotinductor/model/x.wrapper_metadata.json", '{"AOTI_DEVICE_KEY": "cpu"}')
        archive.writestr("../escaped.txt", "payload")
    broken = tmp_path / "broken.pt2"
    broken.write_text("not a zip")
    result = cli("validate", str(aoti_packages["plain"]), str(evil), "--no-run")
    assert result.returncode == 1
    assert result.stdout.splitlines()[-2:] == [
        f"{aoti_packages['plain']}: VALID: 0 error(s), 0 warning(s)",
        f"{evil}: INVALID: 1 error(s), 0 warning(s)",
    ]
    # A package that cannot be read is an error (exit 2), and the others are still validated.
    result = cli("validate", str(broken), str(aoti_packages["plain"]), "--no-run", "--output-format", "json")
    assert result.returncode == 2
    data = json.loads(result.stdout)
    assert [p["verdict"] for p in data["packages"]] == ["ERROR", "VALID"] and data["valid"] is False


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is dead; only its parent (init, once re-parented) has not reaped it yet.
    with open(f"/proc/{pid}/stat", encoding="utf-8") as handle:
        return handle.read().rsplit(")", 1)[1].split()[0] != "Z"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_CHILD_SUBREAPER is Linux only")
@torch_test
def test_a_process_that_leaves_the_session_does_not_outlive_validate(aoti_packages, tmp_path):
    # The package's native code forks, setsid()s out of the child's session and sleeps: validate kills it anyway.
    pid_file = tmp_path / "escaped.pid"
    escaping = with_native_library(
        aoti_packages["plain"],
        tmp_path / "escape.pt2",
        "#include <stdio.h>\n#include <unistd.h>\n"
        "__attribute__((constructor)) static void escape(void) {\n"
        "  if (fork() == 0) { setsid(); if (fork() == 0) {\n"
        f'    FILE *f = fopen("{pid_file}", "w"); fprintf(f, "%d", getpid()); fclose(f); sleep(600); }}\n'
        "    _exit(0); }\n"
        '  while (access("' + str(pid_file) + '", F_OK) != 0) usleep(10000);\n}\n',
        tmp_path,
    )
    report = validate(escaping, timeout=300)
    # The child ended (the .so is not an AOTI model) and validate returned, without waiting for the sleeper.
    assert report.runs[0].outcome == "failed"
    pid = int(pid_file.read_text())
    assert not _alive(pid)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc and PR_SET_CHILD_SUBREAPER are Linux only")
@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGKILL], ids=["ctrl-c", "kill-9"])
@torch_test
def test_stopping_validate_ends_the_child_and_removes_its_temporary_folder(aoti_packages, tmp_path, stop):
    """Ctrl-C: validate kills the child and cleans up, exit 130. kill -9: the reaper notices its parent died."""
    pid_file = tmp_path / "hang.pid"
    hanging = with_native_library(
        aoti_packages["plain"],
        tmp_path / "hang.pt2",
        "#include <stdio.h>\n#include <unistd.h>\n"
        "__attribute__((constructor)) static void hang(void) {\n"
        f'  FILE *f = fopen("{pid_file}", "w"); fprintf(f, "%d", getpid()); fclose(f); sleep(600);\n}}\n',
        tmp_path,
    )
    temp = tmp_path / "tmp"
    temp.mkdir()
    env = {**os.environ, "TMPDIR": str(temp)}
    process = subprocess.Popen(
        [sys.executable, "-m", "aoti_lint", "validate", str(hanging)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=default_ctrl_c,
    )
    deadline = time.monotonic() + 400
    while not pid_file.exists() or not pid_file.read_text():
        assert process.poll() is None and time.monotonic() < deadline, process.communicate()
        time.sleep(0.2)
    hung = int(pid_file.read_text())
    assert list(temp.iterdir())  # validate's private folder, where torch extracted the package
    process.send_signal(stop)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == (130 if stop == signal.SIGINT else -signal.SIGKILL), stderr
    # After kill -9 the cleanup is the reaper's, asynchronous: wait for it (bounded), then check.
    deadline = time.monotonic() + 60
    while (_alive(hung) or list(temp.iterdir())) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not _alive(hung)
    assert list(temp.iterdir()) == []


def test_a_zip_bomb_is_refused_without_inflating_it(tmp_path):
    # 300 MiB of zeros in a wrapper.cpp deflate to ~300 KB; the reader must not inflate them into memory.
    bomb = tmp_path / "bomb.pt2"
    with zipfile.ZipFile(bomb, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("bomb/data/aotinductor/model/x.wrapper_metadata.json", '{"AOTI_DEVICE_KEY": "cpu"}')
        with archive.open("bomb/data/aotinductor/model/x.wrapper.cpp", "w", force_zip64=True) as member:
            for _ in range(300):
                member.write(bytes(1 << 20))
    assert bomb.stat().st_size < 2 << 20
    # VmHWM is this process's own peak: ru_maxrss would carry the peak of the (large) pytest process that
    # forked it, which Linux keeps across exec.
    code = (
        "import re\n"
        "from aoti_lint.runtime.commands import validate_command\n"
        f"code = validate_command([{str(bomb)!r}, '--no-run'])\n"
        "peak = re.search(r'VmHWM:\\s*(\\d+)', open('/proc/self/status').read()).group(1)\n"
        "print(code, peak)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    code, max_rss_kib = map(int, result.stdout.splitlines()[-1].split())
    assert code == 2, result.stderr
    [line] = result.stderr.splitlines()
    assert "x.wrapper.cpp: 314572800 bytes, more than the 268435456 this reader accepts (a zip bomb?)" in line
    assert max_rss_kib < 200_000


def test_deeply_nested_metadata_is_a_one_line_error(aoti_packages, tmp_path, cli):
    nested = rewrite_zip(
        aoti_packages["plain"],
        tmp_path / "nested.pt2",
        lambda name, data: b"[" * 100_000 + b"]" * 100_000 if name.endswith("_metadata.json") else data,
    )
    result = cli("validate", str(nested), "--no-run")
    assert result.returncode == 2
    [line] = result.stderr.splitlines()
    assert line.startswith(f"error: {nested}: ") and line.endswith("unreadable metadata: nested too deeply")
    assert "Traceback" not in result.stdout + result.stderr


def test_package_metadata_is_printed_escaped(aoti_packages, tmp_path, cli):
    forged = with_metadata(
        aoti_packages["plain"], tmp_path / "evil.pt2", AOTI_PLATFORM="linux\n::error file=evil.py::X\x1b[2J"
    )
    result = cli("validate", str(forged), "--no-run")
    assert "\x1b" not in result.stdout and not any(line.startswith("::") for line in result.stdout.splitlines())
    assert "linux\\n::error file=evil.py::X\\x1b[2J/x86_64" in result.stdout
    junit = cli("validate", str(forged), "--no-run", "--output-format", "junit")
    ET.fromstring(junit.stdout)  # well-formed XML


# Also `torch`: it imports torch and compiles packages, so the fast suite (`-m "not torch"`) leaves it out.
@pytest.mark.torch
@pytest.mark.cuda
def test_cuda_package_on_this_gpu(tmp_path):
    """GPU only (scripts/gpu_check.sh): compile tiny CUDA packages and the legacy .so here; validate them with edges,
    input checks and --baseline."""
    pytest.importorskip("torch")
    import torch

    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA device")
    from tests.runtime_helpers import build_packages

    built = build_packages(tmp_path, device="cuda", debug=False, groups=("base", "migration"))
    report = validate(built["plain"], reference=built["reference"], edges=True)
    assert report.valid, report.findings
    assert report.models[0]["metadata"]["AOTI_DEVICE_KEY"] == "cuda"
    assert report.models[0]["input_specs"][0]["device_type"] == "cuda"
    assert report.host["compute_capabilities"][0] == report.models[0]["metadata"]["AOTI_COMPUTE_CAPABILITY"]
    out_of_range = validate(built["plain"], device_index=99)
    assert [f.stage for f in errors(out_of_range)] == ["host"] and "out of range" in errors(out_of_range)[0].message
    # Inputs saved on the CPU are moved to the package's device; a batch past the max is refused before loading.
    inputs = saved_inputs(tmp_path / "bad.pt", "(torch.randn(100, 10),)")
    failing = validate(built["plain"], inputs=inputs, reference=built["reference"], diagnose=True)
    [error] = errors(failing)
    assert error.known_failures == ["input-dim-range"] and not failing.runs[0].state.get("loaded")
    # The migration on CUDA: the legacy .so (aot_load on "cuda") against its faithful package, then another model.
    equal = validate(built["plain"], baseline=built["old_so"])
    assert equal.valid, equal.findings
    assert [run.name for run in equal.runs] == ["baseline", "run"]
    different = validate(built["other"], baseline=built["old_so"])
    assert any(f.stage == "compare" and "differ from the baseline .so" in f.message for f in errors(different))
