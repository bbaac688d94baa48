"""Known AOTInductor failures, as data: what the error text looks like, what it means, what to check, the fix.

Read by ``aoti-lint explain`` (matches a log against every entry) and by ``aoti-lint validate`` (matches what a
failing child process printed). Patterns are matched against real error texts, one line at a time; the tests
hold one real text per entry, taken from torch's sources or from a run. Facts and the guide's routing come from
``shared/reference/aoti-api.md`` (PyTorch's ``aoti-debug`` skill and its ``triton-index-out-of-bounds.md``).
"""

from __future__ import annotations

from aoti_lint.knowledge.input_check_failures import INPUT_CHECK_FAILURES
from aoti_lint.knowledge.known_failure import KnownFailure

# The guide's fixed first step for any AOTI error, reused by entries whose cause is not pinned down by the text.
FIRST_CHECKS = (
    "Compile device type == load device type: a CUDA package loads only on CUDA (any cuda:N), a CPU package only "
    "on CPU (`aoti-lint validate PKG.pt2` checks this against the package's AOTI_DEVICE_KEY).",
    "The inputs are on the device the package was compiled for.",
    "The input shapes equal the compile-time shapes or satisfy the dynamic-shape constraints; rerun with "
    "AOTI_RUNTIME_CHECK_INPUTS=1 to have the package check device type, dtype, sizes and strides.",
)

# The guide's procedure for illegal memory accesses, shared by the entries that lead to it.
IMA_PROCEDURE = (
    "Sanity checks: rerun with AOTI_RUNTIME_CHECK_INPUTS=1 (read at run time) and recompile with "
    "TORCHINDUCTOR_NAN_ASSERTS=1 (baked in at compile time).",
    "Make the error deterministic: rerun with PYTORCH_NO_CUDA_MEMORY_CACHING=1 (the caching allocator's slack "
    "hides out-of-bounds accesses) and CUDA_LAUNCH_BLOCKING=1 (the error is reported at the failing launch).",
    "Find the kernel: recompile with AOT_INDUCTOR_DEBUG_INTERMEDIATE_VALUE_PRINTER=3; the last kernel name printed "
    "before the crash is the suspect. Then recompile with AOT_INDUCTOR_FILTERED_KERNELS_TO_PRINT=<kernel> and "
    "printer level 2 to dump its inputs; if an input is already bad, move back to the kernel that produced it.",
    "Usual causes: dynamic shapes, and custom ops (especially C++ ones) whose meta function is not SymInt-aware.",
    "`aoti-lint validate PKG.pt2 --reference EP.pt2 --diagnose` runs the first two steps for you (every validate "
    "run has AOTI_RUNTIME_CHECK_INPUTS=1; on CUDA, --diagnose reruns a failure with the deterministic switches).",
)


KNOWN_FAILURES: tuple[KnownFailure, ...] = (
    KnownFailure(
        id="triton-index-out-of-bounds",
        title="Triton indirect-indexing assert: index out of bounds",
        pattern=r"Assertion `index out of bounds: 0 <= tmp\d+ < \w+` failed",
        diagnosis=(
            "A Triton kernel's indirect-index bound check fired. When the bound is a dynamic size `ksM`, the usual "
            "cause is that size being 0 at run time (an empty or jagged tensor): `ks0 - 1` becomes -1 and the "
            "negative-index wrap-around yields an index outside [0, ks0)."
        ),
        checks=(
            "Get the package (.pt2 or its extracted folder); the file that matters is `*.wrapper.cpp`, which holds "
            "every Triton kernel as a comment plus launch configs and the dynamic-shape definitions "
            "(`unzip PKG.pt2 '*.wrapper.cpp'`).",
            "Find the failing kernel: grep the assertion text (e.g. `tmp18 < ks0`) in `*.wrapper.cpp` with about 80 "
            "lines of context before it.",
            "Read the kernel: the typical pattern is `tmp13 = (-1) + ks0` followed by a `tl.where` wrap-around.",
            "Map `ksM` to a shape symbol at the `call_triton_<KERNEL>` call site (e.g. `ks0` <-> `s607`), then to its "
            "definition (`int64_t s607 = arg1416_1_size[0];`).",
            'Map the argument to a model input with `inputs_info_[INDEX].name = "argNNN_1"`; look at its size '
            "guards: they are often upper-bound only, with no `>= 1` lower bound.",
            "Map to the model code through the `// Topologically Sorted Source Nodes: [...]` comments.",
            "Run the package at the edges of its dynamic dimensions: "
            "`aoti-lint validate PKG.pt2 --reference EP.pt2 --edges`.",
        ),
        fix=(
            "Keep empty tensors away from the compiled model (guard the call, or pad), or handle size 0 in the "
            "model code; declare the real range of the dimension (`Dim(..., min=1)`) when 0 cannot occur."
        ),
        rules=("AOTI103",),
        source="PyTorch .claude/skills/aoti-debug/triton-index-out-of-bounds.md; Triton device-side assert text",
    ),
    KnownFailure(
        id="host-memory-pointer",
        title="A CUDA package read a host pointer",
        pattern=r"resides on host memory and is not registered with any CUDA device",
        diagnosis=(
            "A pointer the CUDA code expected on the GPU lives in ordinary host memory: the package was compiled "
            "for one device type and loaded or fed with another (typically compiled on CUDA, used with CPU tensors "
            "or loaded with the old `aot_load(path, 'cpu')`)."
        ),
        checks=FIRST_CHECKS,
        fix="Compile and load on the same device type, and move the inputs to the package's device.",
        rules=("AOTI101", "AOTI102"),
        source="aten/src/ATen/cuda/CUDADevice.h getDeviceFromPtr",
    ),
    KnownFailure(
        id="out-tensor-device",
        title="Output tensor on the wrong device",
        pattern=r"Expected out tensor to have device \S+, but got \S+ instead",
        diagnosis=(
            "An out= kernel received a buffer on another device than its inputs: the package runs on a device "
            "type other than the one it was compiled for, or inputs on different devices were mixed."
        ),
        checks=FIRST_CHECKS,
        fix="Use the same device type for compile and load (CPU<->CPU, CUDA<->CUDA) and keep all inputs on it.",
        rules=("AOTI101", "AOTI102"),
        source="libtorch_cpu 'Expected out tensor to have device '; aoti-debug skill, error pattern 1",
    ),
    *INPUT_CHECK_FAILURES,
    KnownFailure(
        id="package-device-unavailable",
        title="The package's device is not available in this process",
        pattern=r"Cannot load AOTInductor package for device",
        diagnosis=(
            "The package was compiled for a device (AOTI_DEVICE_KEY, e.g. cuda) that this process cannot use: no "
            "GPU visible, or a torch build without that backend. Raised by torch >= 2.14 before loading."
        ),
        checks=(
            "Run `aoti-lint validate PKG.pt2`: it prints the package's device and what this host offers.",
            "Check `torch.cuda.is_available()` and CUDA_VISIBLE_DEVICES in the container.",
        ),
        fix="Load where that device exists, or compile and package the model for CPU.",
        rules=("AOTI101",),
        source="torch 2.14 libtorch_cpu validate_package_device; test/export/test_package.py regexes",
    ),
    KnownFailure(
        id="not-a-package",
        title="The `.pt2` loader was handed a `.so` or a missing file",
        # The warning load_pt2 logs first, for a path not ending in .pt2, names the same mistake.
        pattern=r"Failed to initialize zip archive|Unable to load package\. f must be a buffer or a file ending in",
        diagnosis=(
            "`aoti_load_package` (and the C++ `AOTIModelPackageLoader`) read a `.pt2` package, which is a zip "
            'archive. "not a ZIP archive" or "failed finding central directory": the path is a bare `.so` from the '
            'deprecated `aot_compile` (or another file); "file open failed": nothing is there, often because the '
            "export still writes the `.so` path while the loader was migrated to read a `.pt2`."
        ),
        checks=(
            "Check the path the loader reads and what the export job writes: both must be the same `.pt2`.",
            "Run `aoti-lint . --diff` over the export and the serving code together: AOTI002 reports `aot_load` "
            "calls to migrate, AOTI003 a `.so` handed to `aoti_load_package`.",
        ),
        fix=(
            "Migrate the compile and every load of its artifact together (`aoti-lint . --fix --unsafe-fixes` does, "
            "per artifact flow), then re-run the export so that the `.pt2` exists."
        ),
        rules=("AOTI002", "AOTI003"),
        source="run: aoti_load_package of a .so and of a missing path, torch 2.13 CPU (miniz via PyTorchFileReader)",
    ),
    KnownFailure(
        id="torch-without-cuda",
        title="Loading a CUDA package with a CPU-only torch",
        pattern=r"Torch not compiled with CUDA enabled",
        diagnosis=(
            "A CPU-only torch build touched CUDA. With `aoti_load_package` (torch 2.13) this is the load of a "
            "package compiled for CUDA: the loader reads the device information for the package's device first."
        ),
        checks=(
            "Check the package's device: `aoti-lint validate PKG.pt2` prints AOTI_DEVICE_KEY.",
            "Check the torch build: `python -c 'import torch; print(torch.version.cuda)'` prints None on CPU builds.",
        ),
        fix="Install a CUDA build of torch on a machine with a GPU, or compile the package for CPU.",
        rules=("AOTI101",),
        source="torch/cuda/__init__.py _lazy_init; run: aoti_load_package of a package claiming cuda, torch 2.13 CPU",
    ),
    KnownFailure(
        id="unsupported-device-key",
        title="No runner registered for the package's device",
        pattern=r"Unsupported device (?:key )?found: \w+",
        diagnosis=(
            "The C++ loader has no runner for the package's AOTI_DEVICE_KEY: this libtorch was built without that "
            "backend (e.g. a CPU-only libtorch loading a CUDA package)."
        ),
        checks=("Compare the package's AOTI_DEVICE_KEY with the backends of the libtorch that loads it.",),
        fix="Load with a libtorch built for the package's device, or recompile the package for this one.",
        rules=("AOTI101",),
        source="torch/csrc/inductor/aoti_package/model_package_loader.cpp",
    ),
    KnownFailure(
        id="cpu-device-index",
        title="A device index was given for a CPU package",
        pattern=r"Incorrect device passed to aoti_runner_cpu",
        diagnosis=(
            "`aoti_load_package(..., device_index=N)` with N != -1 on a package compiled for CPU: CPU packages take "
            "no device index. Usually preceded by the misleading 'Loading outdated pt2 file' warning."
        ),
        checks=("Check the package's device (`aoti-lint validate PKG.pt2`) and the `device_index` passed.",),
        fix="Drop `device_index` (default -1) for CPU packages; to run on a GPU, compile the package on CUDA.",
        rules=("AOTI101",),
        source="libtorch_cpu AOTIModelContainerRunnerCpu; run: aoti_load_package(cpu_pkg, device_index=0), torch 2.13",
    ),
    KnownFailure(
        id="device-of-data",
        title="Data lives on another device than the one requested",
        pattern=r"Specified device \S+ does not match device of data",
        diagnosis=(
            "A tensor was wrapped around memory of one device while another `cuda:N` was requested: typically "
            "inputs or user-managed constants on cuda:0 for a package loaded with `device_index=1`, or the reverse."
        ),
        checks=(
            "Compare the `device_index` given to `aoti_load_package` with the `.device` of the inputs and of any "
            "constants passed to `load_constants`.",
        ),
        fix="Put the inputs and constants on the same `cuda:N` as the package's `device_index`.",
        rules=("AOTI102",),
        source="aten/src/ATen/templates/Functions.cpp from_blob / TensorMaker",
    ),
    KnownFailure(
        id="mixed-device-constants",
        title="Constants compiled for another device type",
        pattern=r"Mixed-device constants are only supported when the secondary",
        diagnosis=(
            "The package holds a constant compiled for a non-CPU device while it is loaded on another device "
            "type: compiled on GPU, loaded on CPU. AOTI must compile and load on the same device type."
        ),
        checks=FIRST_CHECKS[:1],
        fix="Load on the device type the package was compiled for, or recompile on the target device.",
        rules=("AOTI101",),
        source="torch/csrc/inductor/aoti_runtime/model_base.h; torch/_inductor/codegen/cpp_wrapper_cpu.py",
    ),
    KnownFailure(
        id="outdated-pt2-warning",
        title="'Loading outdated pt2 file' (usually misleading)",
        pattern=r"Loading outdated pt2 file",
        diagnosis=(
            "`load_package` logs this whenever the first load attempt raises a RuntimeError, then retries with the "
            "C++ loader. The package is rarely outdated: the real error is the one that follows (wrong device "
            "index, missing backend, a .so that does not load)."
        ),
        checks=("Read the error printed after this warning; `aoti-lint explain` the whole log.",),
        fix="Fix the error that follows; regenerate the package only if it was built by a much older torch.",
        source="torch/_inductor/package/package.py load_package",
    ),
    KnownFailure(
        id="not-exported-program",
        title="aoti_compile_and_package was given a module, not an ExportedProgram",
        pattern=r"Only ExportedProgram is supported",
        diagnosis="`aoti_compile_and_package` takes the result of `torch.export.export`, not an nn.Module.",
        checks=("Look at the first argument of `torch._inductor.aoti_compile_and_package`.",),
        fix="`ep = torch.export.export(model, example_inputs)` then `aoti_compile_and_package(ep, package_path=...)`.",
        rules=("AOTI003",),
        source="torch/_inductor/__init__.py aoti_compile_and_package; run with an nn.Module, torch 2.13",
    ),
    KnownFailure(
        id="package-path-extension",
        title="package_path does not end in .pt2",
        pattern=r"Expect package path to be a file ending in \.pt2",
        diagnosis="`aoti_compile_and_package(package_path=...)` accepts None, a buffer, or a path ending in `.pt2`.",
        checks=("Look at the `package_path` argument (often a leftover `.so` name from the old API).",),
        fix="Name the package `something.pt2`.",
        rules=("AOTI003",),
        source="torch/_inductor/__init__.py aoti_compile_and_package; run with package_path='x.so', torch 2.13",
    ),
    KnownFailure(
        id="output-path-config",
        title="aot_inductor.output_path set for the packaging API",
        pattern=r"instead of setting the aot_inductor\.output_path config",
        diagnosis=(
            "`aot_inductor.output_path` belongs to the old `.so` API; `aoti_compile_and_package` takes the "
            "destination as `package_path`."
        ),
        checks=("Look for `aot_inductor.output_path` in `inductor_configs`.",),
        fix="Remove the key and pass `package_path='model.pt2'`.",
        rules=("AOTI003",),
        source="torch/_inductor/__init__.py aoti_compile_and_package; run with the key set, torch 2.13",
    ),
    KnownFailure(
        id="output-path-pt2",
        title="The old aot_compile was asked to write a .pt2",
        pattern=r"The output path for aot_compile should not have an extension with \.pt2",
        diagnosis="`aot_compile`'s `aot_inductor.output_path` names the `.so`; packaging into a `.pt2` is another API.",
        checks=("Look for `aot_inductor.output_path` ending in `.pt2` in `options`.",),
        fix="Migrate to `torch._inductor.aoti_compile_and_package(ep, package_path='model.pt2')` (`aoti-lint --fix`).",
        rules=("AOTI001", "AOTI003"),
        source="torch/_inductor/compile_fx.py compile_fx_aot",
    ),
    KnownFailure(
        id="printer-level-int",
        title="Intermediate value printer level given as an int",
        pattern=r"is not a valid IntermediateValueDebuggingLevel",
        diagnosis='`aot_inductor.debug_intermediate_value_printer` takes a string: "0", "1", "2" or "3".',
        checks=("Look at the value of `aot_inductor.debug_intermediate_value_printer` in `inductor_configs`.",),
        fix='Use the string (`"3"`), and remove the key before shipping: the printer is baked into the package.',
        rules=("AOTI003", "AOTI202"),
        source="torch/_inductor/config.py; run with the int 3 in inductor_configs, torch 2.13",
    ),
    KnownFailure(
        id="cuda-illegal-memory-access",
        title="CUDA illegal memory access",
        pattern=r"an illegal memory access was encountered",
        diagnosis=(
            "A kernel read or wrote outside its buffers. With AOTI the usual causes are dynamic shapes (sizes the "
            "kernels were not compiled for) and custom ops whose meta function is not SymInt-aware."
        ),
        checks=(*FIRST_CHECKS, *IMA_PROCEDURE),
        fix="Fix the input or kernel the procedure points to; recompile without the debug switches afterwards.",
        rules=("AOTI102", "AOTI103"),
        source="CUDA runtime error string via c10/cuda/CUDAException.cpp",
    ),
    KnownFailure(
        id="cuda-async-error",
        title="Asynchronously reported CUDA/HIP error",
        pattern=r"kernel errors might be asynchronously reported at some other API call",
        diagnosis=(
            "The failing kernel is not necessarily the one in the stack trace: CUDA reports kernel errors at a "
            "later API call."
        ),
        checks=IMA_PROCEDURE,
        fix="Rerun with CUDA_LAUNCH_BLOCKING=1 to see the real failing launch, then follow the procedure.",
        source="c10/cuda/CUDAException.cpp c10_cuda_check_implementation",
    ),
    KnownFailure(
        id="nan-assert",
        title="A NaN/Inf assert baked into the package fired",
        pattern=r"At least one (?:NaN|INF) in \S+",
        diagnosis=(
            "The package was compiled with `nan_asserts` (TORCHINDUCTOR_NAN_ASSERTS=1) and the named buffer holds a "
            "NaN or Inf. `argN_1` names are graph inputs (bad input data); `bufN` names are kernel outputs (the "
            "first kernel producing it is the suspect)."
        ),
        checks=(
            "If the name is a graph input (`argN_1`), check the input data.",
            "Otherwise find `bufN` in `*.wrapper.cpp` and the kernel that writes it; compare with the exported "
            "program run eagerly (`aoti-lint validate PKG.pt2 --reference EP.pt2`).",
        ),
        fix="Fix the data or the op; then recompile without nan_asserts: they cost a reduction and a sync per buffer.",
        rules=("AOTI201", "AOTI202"),
        source="torch/csrc/inductor/aoti_torch/utils.h; run: a nan_asserts package fed a NaN, torch 2.13",
    ),
    KnownFailure(
        id="symbolic-meta",
        title="A meta function is not SymInt-aware",
        pattern=r"Cannot call \w+\(\) on tensor with symbolic sizes/strides",
        diagnosis=(
            "An op (often a custom op implemented in C++) reads concrete sizes (`sizes()`, `numel()`, `strides()`) "
            "while tracing with dynamic shapes. Such ops are also a usual source of illegal memory accesses in "
            "AOTI packages with dynamic shapes."
        ),
        checks=(
            "Find the op in the stack trace; check its meta/fake implementation.",
            "Test the custom op with both static and dynamic shapes.",
        ),
        fix="SymInt-ify the meta function (`sym_sizes()`, `sym_numel()`, `c10::SymInt`), or register a fake impl.",
        source="c10/core/TensorImpl.cpp throw_cannot_call_with_symbolic",
    ),
    KnownFailure(
        id="shared-library-not-found",
        title="A shared library, or one it needs, is not found",
        # The loader's own words for a file it cannot find (ENOENT), whoever asked: torch's dlopen, ctypes,
        # torch.ops.load_library.
        pattern=r"cannot open shared object file|Library not loaded|image not found",
        diagnosis=(
            "The loader did not find the library the message names: either that file is missing (a wrong path, a "
            "package extracted elsewhere, a library not shipped with the deployment), or, when it names another "
            "library than the one loaded (`libcudart.so.12`, a custom op's library), a dependency of the loaded "
            "`.so` that is not on the loader's search path. It says nothing about the torch version."
        ),
        checks=(
            "Does the named file exist? `ls -l PATH` for a path; for a bare name, `ldconfig -p | grep NAME`.",
            "Which dependencies are missing: `ldd LIB.so | grep 'not found'` (`otool -L` on macOS) on the library "
            "that was being loaded.",
            "Is the directory that holds it on the search path: `LD_LIBRARY_PATH` (`DYLD_LIBRARY_PATH`), the "
            "library's RUNPATH (`readelf -d LIB.so | grep -i path`)?",
        ),
        fix=(
            "Ship or install the missing library (the CUDA runtime whose major version the name carries, the custom "
            "op's library) and put its directory on the loader's path, or fix the path the code loads from."
        ),
        source="the dynamic loader's dlerror() for ENOENT (glibc; dyld on macOS); run: ctypes.CDLL('libfoo.so')",
    ),
    KnownFailure(
        id="dlopen-failure",
        title="The package's shared library does not load",
        # A line with the loader's "not found" is the entry above's, whatever else it says.
        pattern=r"^(?!.*(?:cannot open shared object file|Library not loaded|image not found))"
        r".*(?:Error in dlopen|undefined symbol: \S+)",
        diagnosis=(
            "The compiled `.so` cannot be loaded by this process. `undefined symbol` usually means the package was "
            "built against another torch version than the one loading it (AOTI links against libtorch); "
            "'invalid ELF header' or 'wrong ELF class' means a corrupt package or another platform."
        ),
        checks=(
            "Compare `torch.__version__` where the package was built and where it is loaded.",
            "Compare platform and machine: `aoti-lint validate PKG.pt2` prints AOTI_PLATFORM / AOTI_MACHINE.",
        ),
        fix="Recompile the package with the torch version (and on the platform) that will load it.",
        source="aten/src/ATen/DynamicLibrary.cpp; run: a package whose .so misses a symbol, torch 2.13",
    ),
    KnownFailure(
        id="gpu-arch-mismatch",
        title="Kernels compiled for another GPU architecture",
        pattern=r"no kernel image is available for execution on the device|device kernel image is invalid",
        diagnosis=(
            "AOTI compiles kernels natively for the GPU it runs on (AOTI_COMPUTE_CAPABILITY); this GPU has another "
            "architecture, or this torch build has no kernels for it."
        ),
        checks=(
            "Compare the package's AOTI_COMPUTE_CAPABILITY with `torch.cuda.get_device_capability()` here "
            "(`aoti-lint validate PKG.pt2` does).",
        ),
        fix="Recompile the package on the target GPU (same architecture), with a torch build that supports it.",
        source="CUDA error strings (cudaErrorNoKernelImageForDevice, CUDA_ERROR_INVALID_IMAGE)",
    ),
    KnownFailure(
        id="bare-segfault",
        title="Segmentation fault without a message",
        pattern=r"Segmentation fault|killed by SIGSEGV",
        diagnosis=(
            "The process died in native code. In AOTI the usual causes are the guide's three mismatches, which "
            "the package does not check unless asked."
        ),
        checks=(
            *FIRST_CHECKS,
            "`aoti-lint validate PKG.pt2 --reference EP.pt2 --diagnose` checks the inputs against the package, then "
            "runs it in a child process with the checks on.",
        ),
        fix="Fix the mismatch the checks reveal; if none, follow the illegal-memory-access procedure.",
        rules=("AOTI101", "AOTI102", "AOTI103"),
        source="faulthandler 'Fatal Python error: Segmentation fault'; aoti-lint validate's child report",
    ),
)

BY_ID: dict[str, KnownFailure] = {entry.id: entry for entry in KNOWN_FAILURES}
