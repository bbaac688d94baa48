"""Debug switches of AOTInductor and CUDA that must not stay on, as data.

AOTI201 (environment variables) and AOTI202 (``torch._inductor.config`` keys) read this table and nothing
else. Facts: torch 2.13.0 ``torch/_inductor/config.py`` and ``cpp_builder.py``, the generated AOTI wrapper
(``codegen/cpp_wrapper_cpu.py``), and ``shared/reference/aoti-api.md`` sections 1 and 4.

Never listed, on purpose: cache locations, compile threads, autotuning and other settings that are not for
debugging (``TORCHINDUCTOR_CACHE_DIR``, ``TRITON_CACHE_DIR``, ``TORCHINDUCTOR_COMPILE_THREADS``,
``TORCHINDUCTOR_MAX_AUTOTUNE``, ...).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


class Phase(enum.Enum):
    """When a switch acts, worded as the finding's message says it."""

    COMPILE = "baked into the package when it is compiled: rebuild the package without it"
    RUNTIME = "read at run time: it slows every run"
    TORCH_BUILD = "baked into a PyTorch built from source with it: rebuild PyTorch without it"


# Values that switch any of these off. Compared after stripping and lower-casing.
OFF_VALUES = frozenset({"", "0", "false", "off", "no"})


class OnWhen(enum.Enum):
    """Which string values turn a switch on."""

    # torch compares the value with "1" (`os.environ.get(NAME) == "1"` in Python, `c10::utils::check_env(NAME)
    # == true` in C++, which warns about anything but "0" and "1"): nothing else turns it on.
    EQUALS_ONE = "equals-one"
    # Anything but an off value.
    NOT_OFF = "not-off"
    # The intermediate value printer levels "1" (save), "2" (print), "3" (kernel names); "0" is off.
    PRINTER_LEVEL = "printer-level"
    # TORCH_LOGS: a comma-separated list; only components that are not turned down ("-dynamo") log more.
    LOG_COMPONENTS = "log-components"

    def is_on(self, value: str) -> bool:
        value = value.strip()
        if self is OnWhen.EQUALS_ONE:
            return value == "1"
        if self is OnWhen.PRINTER_LEVEL:
            return value in {"1", "2", "3"}
        if self is OnWhen.LOG_COMPONENTS:
            return any(part.strip() and not part.strip().startswith("-") for part in value.split(","))
        return value.lower() not in OFF_VALUES


@dataclass(frozen=True)
class DebugSwitch:
    # The environment variable that sets it, if any.
    env_var: str | None
    # The `torch._inductor.config` key (dotted for nested configs), if any.
    config_key: str | None
    on_when: OnWhen
    phase: Phase
    cost: str
    # Why the switch exists: what it is for while debugging.
    purpose: str

    @property
    def name(self) -> str:
        return self.env_var or f"torch._inductor.config.{self.config_key}"

    def is_on_value(self, value: str | bool | int | None) -> bool:
        """Whether a literal value turns the switch on: a string as the environment would hold it, or a
        Python value assigned to the config key (judged by truthiness)."""
        if isinstance(value, str):
            return self.on_when.is_on(value)
        return bool(value)


DEBUG_SWITCHES: tuple[DebugSwitch, ...] = (
    DebugSwitch(
        env_var="AOTI_RUNTIME_CHECK_INPUTS",
        config_key=None,
        # The generated wrapper tests `value[0] != '0'`; the off words are kept off too (precision first).
        on_when=OnWhen.NOT_OFF,
        phase=Phase.RUNTIME,
        cost="checks dtype, sizes, strides and device of every input on every call",
        purpose="turns input mismatches into a clear RuntimeError instead of a crash",
    ),
    DebugSwitch(
        env_var="TORCHINDUCTOR_NAN_ASSERTS",
        config_key="nan_asserts",
        on_when=OnWhen.EQUALS_ONE,
        phase=Phase.COMPILE,
        cost="a NaN/Inf check, with a reduction and a sync, on the inputs and every kernel output",
        purpose="finds the first kernel that produces a NaN or Inf",
    ),
    DebugSwitch(
        env_var="TORCHINDUCTOR_RUNTIME_TRITON_NAN_ASSERTS",
        config_key="runtime_triton_nan_asserts",
        on_when=OnWhen.EQUALS_ONE,
        phase=Phase.COMPILE,
        cost="NaN checks on every value inside the Triton kernels",
        purpose="finds the Triton computation that produces a NaN",
    ),
    DebugSwitch(
        env_var="CUDA_LAUNCH_BLOCKING",
        config_key=None,
        on_when=OnWhen.NOT_OFF,
        phase=Phase.RUNTIME,
        cost="makes every CUDA kernel launch synchronous (a large slowdown)",
        purpose="reports a CUDA error at the launch that caused it",
    ),
    DebugSwitch(
        env_var="PYTORCH_NO_CUDA_MEMORY_CACHING",
        config_key=None,
        on_when=OnWhen.EQUALS_ONE,
        phase=Phase.RUNTIME,
        cost="disables the CUDA caching allocator: every allocation goes to the driver (a large slowdown)",
        purpose="makes out-of-bounds accesses fail instead of landing in cached memory",
    ),
    DebugSwitch(
        env_var="AOT_INDUCTOR_DEBUG_INTERMEDIATE_VALUE_PRINTER",
        config_key="aot_inductor.debug_intermediate_value_printer",
        on_when=OnWhen.PRINTER_LEVEL,
        phase=Phase.COMPILE,
        cost="prints or saves values around every kernel launch (copies, syncs, disk or console I/O)",
        purpose="shows the kernel that crashes and the values it reads",
    ),
    DebugSwitch(
        env_var="AOT_INDUCTOR_FILTERED_KERNELS_TO_PRINT",
        config_key="aot_inductor.filtered_kernel_names",
        on_when=OnWhen.NOT_OFF,
        phase=Phase.COMPILE,
        cost="selects kernels for the intermediate value printer",
        purpose="limits the printer's output to the suspect kernels",
    ),
    DebugSwitch(
        env_var="AOT_INDUCTOR_DEBUG_COMPILE",
        config_key="aot_inductor.debug_compile",
        on_when=OnWhen.EQUALS_ONE,
        phase=Phase.COMPILE,
        cost="builds the model library without optimisation (-O3 -DNDEBUG dropped) and with debug symbols",
        purpose="makes the compiled model debuggable with gdb",
    ),
    DebugSwitch(
        env_var="TORCHINDUCTOR_DEBUG_COMPILE",
        config_key=None,
        on_when=OnWhen.EQUALS_ONE,
        phase=Phase.COMPILE,
        cost="builds the model library without optimisation and with debug symbols",
        purpose="makes the compiled model debuggable with gdb",
    ),
    DebugSwitch(
        env_var="TORCH_COMPILE_DEBUG",
        config_key="trace.enabled",
        on_when=OnWhen.EQUALS_ONE,
        phase=Phase.COMPILE,
        cost="writes a debug directory with the graphs and generated code on every compile",
        purpose="shows what Inductor generated",
    ),
    DebugSwitch(
        env_var="DUMP_AOTI_MINIFIER",
        config_key="aot_inductor.dump_aoti_minifier",
        on_when=OnWhen.EQUALS_ONE,
        phase=Phase.COMPILE,
        cost="writes a minifier launcher when compilation fails",
        purpose="produces a small reproducer of a compile failure",
    ),
    DebugSwitch(
        env_var="TORCH_LOGS",
        config_key=None,
        on_when=OnWhen.LOG_COMPONENTS,
        phase=Phase.RUNTIME,
        cost="verbose logging from the named components",
        purpose="shows what Dynamo and Inductor do",
    ),
    DebugSwitch(
        env_var="TORCH_SHOW_CPP_STACKTRACES",
        config_key=None,
        on_when=OnWhen.EQUALS_ONE,
        phase=Phase.RUNTIME,
        cost="collects a C++ stack trace for every error raised",
        purpose="shows where in C++ an error comes from",
    ),
    DebugSwitch(
        env_var="TORCH_USE_CUDA_DSA",
        config_key=None,
        on_when=OnWhen.NOT_OFF,
        phase=Phase.TORCH_BUILD,
        cost="device-side assertions in every CUDA kernel",
        purpose="reports which CUDA kernel assertion failed",
    ),
    DebugSwitch(
        env_var=None,
        config_key="debug",
        on_when=OnWhen.NOT_OFF,
        phase=Phase.COMPILE,
        cost="debug printouts during compilation",
        purpose="traces Inductor's compilation",
    ),
    DebugSwitch(
        env_var=None,
        config_key="debug_index_asserts",
        on_when=OnWhen.NOT_OFF,
        phase=Phase.COMPILE,
        cost="index bound asserts in decompositions and lowerings too",
        purpose="catches out-of-bounds indexing in generated kernels",
    ),
    DebugSwitch(
        env_var=None,
        config_key="triton.debug_sync_graph",
        on_when=OnWhen.NOT_OFF,
        phase=Phase.COMPILE,
        cost="a device synchronisation before and after every call of the graph",
        purpose="localises asynchronous CUDA errors to one graph",
    ),
    DebugSwitch(
        env_var=None,
        config_key="triton.debug_sync_kernel",
        on_when=OnWhen.NOT_OFF,
        phase=Phase.COMPILE,
        cost="a device synchronisation after every kernel launch (like CUDA_LAUNCH_BLOCKING, baked in)",
        purpose="localises asynchronous CUDA errors to one kernel",
    ),
)

SWITCHES_BY_ENV_VAR: dict[str, DebugSwitch] = {s.env_var: s for s in DEBUG_SWITCHES if s.env_var}
SWITCHES_BY_CONFIG_KEY: dict[str, DebugSwitch] = {s.config_key: s for s in DEBUG_SWITCHES if s.config_key}

INDUCTOR_CONFIG = "torch._inductor.config"
# Compile entry points and the keyword that takes a dict of Inductor config keys.
CONFIG_DICT_KEYWORDS: dict[str, str] = {
    "torch._inductor.aoti_compile_and_package": "inductor_configs",
    "torch._export.aot_compile": "options",
    "torch._inductor.aot_compile": "options",
    "torch.compile": "options",
}
# Functions that start a process with an `env=` mapping.
SUBPROCESS_FUNCTIONS = frozenset(
    f"subprocess.{name}" for name in ("run", "Popen", "call", "check_call", "check_output")
)
# Text that marks a condition as a deliberate debug switch (compared lower-cased).
DEBUG_CONDITION_MARKER = "debug"


def message(switch: DebugSwitch, shown: str) -> str:
    """The finding's message: the switch, what it costs and when it acts."""
    return f"debug switch `{shown}` is on: {switch.cost}; {switch.phase.value}"


# Files that are debugging tools on purpose (a minifier, `run_debug.sh`, a repro script): their switches are
# reported, but no fix removes them. A folder of one of these names anywhere in the path as aoti-lint shows it
# (`tools/`, `scripts/debug/`), or a word of the file's name (split at `_`, `-` and `.`: `run_debug.sh`).
DEBUGGING_TOOL_FOLDERS = frozenset({"tools", "debug", "debugging"})
DEBUGGING_TOOL_NAME_WORDS = frozenset({"debug", "debugging", "minify", "minifier", "repro", "reproducer"})
