"""Debug switches that leave a trace in a compiled package, and the trace they leave, as data.

Read by ``aoti-lint validate`` (static step). Each marker was checked against packages compiled with torch 2.13
with the switch on and off: the generated ``*.wrapper.cpp`` is packaged, and it ends with the compile and link
commands as comments (``// Compile cmd`` / ``// Link cmd``). Codegen: ``torch/_inductor/codegen/debug_utils.py``
(printer), ``cpp_wrapper_cpu.py`` (NaN asserts), ``cpp_builder.py`` (``-O0`` / ``-g`` for debug builds).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class BakedInMarker:
    config_key: str
    # The value the switch had at compile time, as a user would write it.
    value: str
    env_var: str
    cost: str
    # Regular expression searched in each line of the packaged wrapper source.
    pattern: str
    # Lint rules that find the switch in the build script.
    rules: tuple[str, ...] = ("AOTI201", "AOTI202")
    # Not reported when this other switch (which implies it) is found.
    implied_by: str | None = None


BAKED_IN_MARKERS: tuple[BakedInMarker, ...] = (
    BakedInMarker(
        config_key="nan_asserts",
        value="True",
        env_var="TORCHINDUCTOR_NAN_ASSERTS=1",
        cost="a NaN/Inf reduction and a sync on every input and kernel output, every call",
        pattern=r"\baoti_torch_check_inf_and_nan\(",
    ),
    BakedInMarker(
        config_key="aot_inductor.debug_intermediate_value_printer",
        value='"3"',
        env_var="AOT_INDUCTOR_DEBUG_INTERMEDIATE_VALUE_PRINTER=3",
        cost="a printf before and after every kernel launch, every call",
        pattern=r'printf\("\[ (?:before|after)_launch: ',
    ),
    BakedInMarker(
        config_key="aot_inductor.debug_intermediate_value_printer",
        value='"2"',
        env_var="AOT_INDUCTOR_DEBUG_INTERMEDIATE_VALUE_PRINTER=2",
        cost="tensor statistics printed around kernel launches (copies and syncs), every call",
        pattern=r"\baoti_torch_print_tensor_handle\(",
    ),
    BakedInMarker(
        config_key="aot_inductor.debug_intermediate_value_printer",
        value='"1"',
        env_var="AOT_INDUCTOR_DEBUG_INTERMEDIATE_VALUE_PRINTER=1",
        cost="kernel arguments saved to .pt files around kernel launches (disk writes), every call",
        pattern=r"\baoti_torch_save_tensor_handle\(",
    ),
    BakedInMarker(
        config_key="aot_inductor.debug_compile",
        value="True",
        env_var="AOT_INDUCTOR_DEBUG_COMPILE=1",
        cost="built with -O0 and without -DNDEBUG: slower kernels and wrapper, bigger .so",
        pattern=r"^// .*\s-O0(?:\s|$)",
    ),
    BakedInMarker(
        config_key="aot_inductor.debug_symbols",
        value="True",
        env_var="AOT_INDUCTOR_DEBUG_SYMBOLS=1",
        cost="full debug symbols (-g): a bigger .so",
        pattern=r"^// .*\s-g(?:\s|$)",
        implied_by="aot_inductor.debug_compile",
    ),
)
