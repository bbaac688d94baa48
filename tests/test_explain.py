"""aoti-lint explain: every known failure is matched on a real error text.

Provenance of the texts: "run" = printed by torch 2.13.0+cpu here (the live test below reproduces the cheap ones);
"source" = the message as torch's code builds it, with a concrete value where the code interpolates one;
"log" = copied from a public log or issue.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from aoti_lint.knowledge.known_failures import KNOWN_FAILURES
from aoti_lint.runtime.explain import match_text
from tests.helpers import read_terminal

REAL_TEXTS = {
    # log (CI skip list in pytorch benchmarks; a public inference log)
    "triton-index-out-of-bounds": [
        "Assertion `index out of bounds: 0 <= tmp0 < 64` failed.",
        "unknown:0: unknown: block: [0,0,0], thread: [32,0,0] Assertion `index out of bounds: 0 <= tmp42 < 1024` "
        "failed.",
    ],
    # source: aten/src/ATen/cuda/CUDADevice.h
    "host-memory-pointer": [
        "RuntimeError: The specified pointer resides on host memory and is not registered with any CUDA device."
    ],
    # source: libtorch_cpu "Expected out tensor to have device "; the aoti-debug skill's example
    "out-tensor-device": ["RuntimeError: Expected out tensor to have device cuda:0, but got cpu instead"],
    # run: AOTI_RUNTIME_CHECK_INPUTS=1 with a meta tensor, float64, a transposed input, [4, 11], [100, 10], [0, 10]
    "input-device-type": ["RuntimeError: input_handles[0]: unmatched device type, expected: 00(cpu), but got: 14"],
    "input-dtype": ["Error: input_handles[0]: unmatched dtype, expected: 6(at::kFloat), but got: 7"],
    "input-stride": ["RuntimeError: input_handles[0]: unmatched stride value at 0, expected: 10, but got: 1"],
    "input-dim-value": ["RuntimeError: input_handles[0]: unmatched dim value at 1, expected: 10, but got: 11"],
    "input-dim-range": [
        "Error: input_handles[0]: dim value is too large at 0, expected to be <= 64, but got: 100",
        "RuntimeError: input_handles[0]: dim value is too small at 0, expected it to be >= 2, but got: 0",
    ],
    # source: torch 2.14.1 libtorch_cpu strings (validate_package_device)
    "package-device-unavailable": [
        "RuntimeError: Cannot load AOTInductor package for device 'cuda' because CUDA is not available in this "
        "process. Check that this host or container has GPU access, or compile/package the model for CPU."
    ],
    # run: aoti_load_package of a .so, and of a path where nothing is
    "not-a-package": [
        "RuntimeError: Failed to initialize zip archive: not a ZIP archive",
        "RuntimeError: Failed to initialize zip archive: file open failed",
        # run: torch._inductor.aoti_load_package() of the .so torch._export.aot_compile wrote (torch 2.13)
        "RuntimeError: Failed to initialize zip archive: failed finding central directory",
        "W1130 19:18:48.500000 10044 site-packages/torch/export/pt2_archive/_package.py:1121] Unable to load "
        "package. f must be a buffer or a file ending in .pt2. Instead got {/tmp/w14/pk/old.so}",
    ],
    # run: aoti_load_package of a package whose metadata says cuda, CPU torch
    "torch-without-cuda": ["AssertionError: Torch not compiled with CUDA enabled"],
    # run: the C++ loader on the same package
    "unsupported-device-key": ["RuntimeError: Unsupported device key found: cuda"],
    # run: aoti_load_package(cpu_package, device_index=0)
    "cpu-device-index": ["RuntimeError: Incorrect device passed to aoti_runner_cpu"],
    # log: the output of a from_blob call on device memory (public repository comment)
    "device-of-data": ["Specified device cuda:0 does not match device of data cuda:-2"],
    # source: torch/csrc/inductor/aoti_runtime/model_base.h, and the codegen assertion
    "mixed-device-constants": [
        "Mixed-device constants are only supported when the secondary device is CPU. Constant 'fc_weight' was "
        "compiled for a non-CPU device. Hint: This can happen if you compiled on GPU but are loading on CPU, which "
        "is not supported. In AOTI, you must compile and load on the same device type.",
        "AssertionError: Mixed-device constants are only supported when the secondary device is CPU. Model device "
        "is 'cpu', but constant 'w' is on device 'cuda:0'.",
    ],
    # run
    "outdated-pt2-warning": [
        "W1130 04:09:56.196000 9662 torch/_inductor/package/package.py:120] Loading outdated pt2 file. Please "
        "regenerate your package."
    ],
    # run: the compile API misused
    "not-exported-program": ["ValueError: Only ExportedProgram is supported"],
    "package-path-extension": [
        "AssertionError: Expect package path to be a file ending in .pt2, is None, or is a buffer. Instead got x.so"
    ],
    "output-path-config": [
        "RuntimeError: Please pass in a package path to aot_inductor_compile() instead of setting the "
        "aot_inductor.output_path config."
    ],
    # source: torch/_inductor/compile_fx.py
    "output-path-pt2": [
        "AssertionError: The output path for aot_compile should not have an extension with .pt2 this is for "
        "specifying the output path for the .so in AOTInductor. If you would like to package the AOTInductor "
        "generated files into a pt2, please call `torch._inductor.aoti_compile_and_package`."
    ],
    "printer-level-int": [
        "torch._inductor.exc.InductorError: ValueError: 3 is not a valid IntermediateValueDebuggingLevel"
    ],
    # source: the comment in torch/sparse/_triton_ops.py; log: c10's CUDA check message
    "cuda-illegal-memory-access": [
        "RuntimeError: Triton Error [CUDA]: an illegal memory access was encountered",
        "RuntimeError: CUDA error: an illegal memory access was encountered",
    ],
    "cuda-async-error": [
        "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might "
        "be incorrect.",
        "HIP kernel errors might be asynchronously reported at some other API call, so the stacktrace below might "
        "be incorrect.",
    ],
    # run: a nan_asserts package fed a NaN
    "nan-assert": ["RuntimeError: At least one NaN in arg2_1"],
    # source: c10/core/TensorImpl.cpp; log
    "symbolic-meta": ["RuntimeError: Cannot call sizes() on tensor with symbolic sizes/strides"],
    # run: a package whose .so misses a symbol / is an unrelated library / is not an ELF file
    "dlopen-failure": [
        "RuntimeError: Error in dlopen: /tmp/aotinductor_Jt7942/plain/data/aotinductor/model/"
        "czgphd2zq4frxbrv7w7vvcwvhbuwydtdsbvnvyhz42wziybab3nn.wrapper.so: undefined symbol: missing_symbol_xyz",
        "RuntimeError: Error in dlopen or dlsym: /tmp/aotinductor_iOMzOs/plain/data/aotinductor/model/x.wrapper.so: "
        "undefined symbol: AOTInductorModelContainerCreateWithDevice",
    ],
    # run: ctypes.CDLL of a library that is not there; torch's dlopen of a package whose .so needs another library
    "shared-library-not-found": [
        "OSError: libfoo.so: cannot open shared object file: No such file or directory",
        "RuntimeError: Error in dlopen: libcudart.so.12: cannot open shared object file: No such file or directory",
    ],
    # log
    "gpu-arch-mismatch": ["RuntimeError: CUDA error: no kernel image is available for execution on the device"],
    # run: faulthandler in a segfaulting process; validate's own line for a child killed by the signal
    "bare-segfault": ["Fatal Python error: Segmentation fault", "child process killed by SIGSEGV"],
}


def test_every_entry_has_real_texts():
    assert set(REAL_TEXTS) == {entry.id for entry in KNOWN_FAILURES}


@pytest.mark.parametrize("entry", KNOWN_FAILURES, ids=lambda entry: entry.id)
def test_entry_matches_its_real_texts(entry):
    for text in REAL_TEXTS[entry.id]:
        assert entry.id in [m.failure.id for m in match_text(text)], text
    assert entry.diagnosis and entry.checks and entry.fix and entry.source


def test_texts_match_only_their_own_entry():
    for entry_id, texts in REAL_TEXTS.items():
        for text in texts:
            assert [m.failure.id for m in match_text(text)] == [entry_id], text


def test_a_whole_log_lists_every_failure_in_log_order(cli, tmp_path):
    log = tmp_path / "run.log"
    log.write_text(
        "starting server\n"
        f"{REAL_TEXTS['outdated-pt2-warning'][0]}\n"
        "Traceback (most recent call last):\n"
        '  File "serve.py", line 3, in <module>\n'
        f"{REAL_TEXTS['cpu-device-index'][0]}\n"
    )
    result = cli("explain", str(log))
    assert result.returncode == 0
    assert result.stdout.index("outdated-pt2-warning") < result.stdout.index("cpu-device-index")
    assert f"{log}:2: outdated-pt2-warning" in result.stdout
    assert "Found statically by: AOTI101" in result.stdout

    as_json = json.loads(cli("explain", str(log), "--output-format", "json").stdout)
    assert [(m["id"], m["line"]) for m in as_json["matches"]] == [("outdated-pt2-warning", 2), ("cpu-device-index", 5)]
    assert as_json["matches"][1]["rules"] == ["AOTI101"]


def test_stdin_no_match_and_usage(cli, tmp_path):
    piped = cli("explain", stdin=REAL_TEXTS["triton-index-out-of-bounds"][1])
    assert piped.returncode == 0 and "<stdin>:1: triton-index-out-of-bounds" in piped.stdout
    assert "*.wrapper.cpp" in piped.stdout
    nothing = cli("explain", "-", stdin="all good\n")
    assert nothing.returncode == 1 and "no known AOTInductor failure found" in nothing.stdout
    missing = cli("explain", str(tmp_path / "nope.log"))
    assert missing.returncode == 2 and "nope.log" in missing.stderr


LIVE_ERRORS = textwrap.dedent(
    """
    import sys, torch
    package = sys.argv[1]
    ep = torch.export.export(torch.nn.ReLU(), (torch.randn(2),))
    attempts = [
        lambda: torch._inductor.aoti_compile_and_package(torch.nn.ReLU()),
        lambda: torch._inductor.aoti_compile_and_package(ep, package_path="model.so"),
        lambda: torch._inductor.aoti_compile_and_package(ep, inductor_configs={"aot_inductor.output_path": "m.so"}),
        lambda: torch._inductor.aoti_compile_and_package(
            ep, inductor_configs={"aot_inductor.debug_intermediate_value_printer": 3}
        ),
        lambda: torch._inductor.aoti_load_package(package, device_index=0),
    ]
    for attempt in attempts:
        try:
            attempt()
        except Exception as exc:
            print(f"{type(exc).__name__}: {exc}", file=sys.stderr)
    """
)


@pytest.mark.torch
def test_live_errors_from_torch_are_explained(aoti_packages, cli, tmp_path):
    produced = subprocess.run(
        [sys.executable, "-c", LIVE_ERRORS, str(aoti_packages["plain"])],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=600,
    )
    result = cli("explain", "--output-format", "json", stdin=produced.stderr)
    found = {m["id"] for m in json.loads(result.stdout)["matches"]}
    assert found == {
        "not-exported-program",
        "package-path-extension",
        "output-path-config",
        "printer-level-int",
        "outdated-pt2-warning",
        "cpu-device-index",
    }, produced.stderr


def test_no_file_and_a_terminal_on_stdin_prints_usage(tmp_path):
    """With a terminal on stdin and no file, explain must not wait silently for typed input."""
    import os
    import pty

    from tests.conftest import REPO

    pid, fd = pty.fork()
    if pid == 0:  # the child: stdin, stdout and stderr are the pty
        os.chdir(REPO)
        os.execv(sys.executable, [sys.executable, "-m", "aoti_lint", "explain"])
    output = read_terminal(fd)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 2, output
    assert b"usage: aoti-lint explain" in output and b"pipe one in" in output


def test_log_lines_are_echoed_escaped(cli):
    # (A \r or \n ends the line: the log is read line by line.)
    hostile = "RuntimeError: Incorrect device passed to aoti_runner_cpu \x1b[2J\u202e::error file=evil.py::X\x07"
    result = cli("explain", stdin=hostile + "\n")
    assert result.returncode == 0
    assert "\x1b" not in result.stdout and "\u202e" not in result.stdout and "\x07" not in result.stdout
    assert "aoti_runner_cpu \\x1b[2J\\u202e::error file=evil.py::X\\x07" in result.stdout
