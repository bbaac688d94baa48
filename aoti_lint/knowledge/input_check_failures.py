"""The failures AOTI_RUNTIME_CHECK_INPUTS reports: an input whose device type, static size, dtype, strides or dynamic
size is not what the package was compiled for (torch/_inductor/codegen/cpp_wrapper_cpu.py's input checks)."""

from __future__ import annotations

from aoti_lint.knowledge.known_failure import KnownFailure

INPUT_CHECK_FAILURES: tuple[KnownFailure, ...] = (
    KnownFailure(
        id="input-device-type",
        title="Runtime input check: input on the wrong device type",
        pattern=r"unmatched device type, expected: ",
        diagnosis=(
            "AOTI_RUNTIME_CHECK_INPUTS found an input on another device type than the compile device. The "
            "integers are c10 device types (0 = cpu, 1 = cuda); the expected one is printed twice by a codegen "
            "quirk (`00(cpu)` means 0)."
        ),
        checks=("Compare each input's `.device` with the package's device (`aoti-lint validate PKG.pt2` prints it).",),
        fix="Move the inputs to the package's device before the call (`x.to('cuda')`), or recompile for theirs.",
        rules=("AOTI102",),
        source="torch/_inductor/codegen/cpp_wrapper_cpu.py input checks; run with AOTI_RUNTIME_CHECK_INPUTS=1",
    ),
    KnownFailure(
        id="input-dim-value",
        title="Runtime input check: a static dimension differs",
        pattern=r"unmatched dim value at \d+, expected: ",
        diagnosis=(
            "An input's size at a dimension compiled as static differs from the compile-time size. Without "
            "AOTI_RUNTIME_CHECK_INPUTS the package does not check this and gives undefined results."
        ),
        checks=(
            "Compare the input's shape with the example input used for export.",
            "If that dimension must vary, it needs a `Dim` in `dynamic_shapes` at export time.",
        ),
        fix="Feed inputs of the compiled shape, or re-export with that dimension dynamic and recompile.",
        rules=("AOTI103",),
        source="torch/_inductor/codegen/cpp_wrapper_cpu.py input checks; run with AOTI_RUNTIME_CHECK_INPUTS=1",
    ),
    KnownFailure(
        id="input-dtype",
        title="Runtime input check: wrong dtype",
        pattern=r"unmatched dtype, expected: ",
        diagnosis=(
            "An input's dtype differs from the compile-time dtype (the integers are ScalarType codes: 6 = float32, "
            "7 = float64, 5 = float16, 15 = bfloat16, 4 = int64). The package does not convert inputs."
        ),
        checks=("Compare each input's `.dtype` with the example inputs used for export.",),
        fix="Convert the inputs (`x.to(torch.float32)`) or re-export and recompile with the dtype you feed.",
        source="torch/_inductor/codegen/cpp_wrapper_cpu.py input checks; run with AOTI_RUNTIME_CHECK_INPUTS=1",
    ),
    KnownFailure(
        id="input-stride",
        title="Runtime input check: wrong strides (layout)",
        pattern=r"unmatched stride value at \d+, expected: ",
        diagnosis=(
            "An input's strides differ from the compile-time layout, e.g. a transposed or sliced view where a "
            "contiguous tensor was compiled. Without the check such inputs run silently and read wrong elements."
        ),
        checks=("Check `x.is_contiguous()` and `x.stride()` against the example input used for export.",),
        fix="Pass `x.contiguous()` (or the layout used at export), or export with the layout you feed.",
        rules=("AOTI103",),
        source="torch/_inductor/codegen/cpp_wrapper_cpu.py input checks; run with AOTI_RUNTIME_CHECK_INPUTS=1",
    ),
    KnownFailure(
        id="input-dim-range",
        title="Runtime input check: a dynamic dimension is outside its range",
        pattern=r"dim value is too (?:small|large) at \d+",
        diagnosis=(
            "A dynamic dimension is outside the range the package was compiled for. Inductor's lower bound is "
            "often 2 even for `Dim(min=1)`, because export specializes sizes 0 and 1."
        ),
        checks=(
            "Compare the size with the `Dim(min=..., max=...)` used at export.",
            "For sizes 0/1 rejected by a lower bound of 2: compile with `aot_inductor.check_lowerbound=False` if "
            "the model really handles them (check with `aoti-lint validate --edges`).",
        ),
        fix="Keep inputs inside the declared range, or widen the `Dim` range and recompile.",
        rules=("AOTI103",),
        source="torch/_inductor/codegen/cpp_wrapper_cpu.py input checks; run with AOTI_RUNTIME_CHECK_INPUTS=1",
    ),
)
