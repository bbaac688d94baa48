"""The deprecated AOTI Python API, as data.

Every rule, fix and doc page that talks about the old API reads this table; nothing else spells the names.
Facts come from the torch wheels 2.5.1 / 2.6.0 / 2.13.0 / 2.14.1 (see ``shared/reference/aoti-api.md``).
"""

from __future__ import annotations

from dataclasses import dataclass

from aoti_lint.knowledge.references import AOTI_DOCS, PR_AOT_COMPILE_DEPRECATED, PR_AOT_LOAD_DEPRECATED, Reference


@dataclass(frozen=True)
class DeprecatedSymbol:
    qualified_name: str
    replacement: str
    # First torch release that ships the replacement (and the deprecation notice).
    replacement_since: tuple[int, int]
    # The pages that document the deprecation; the rule's References section lists them.
    references: tuple[Reference, ...]

    @property
    def short_name(self) -> str:
        return self.qualified_name.rsplit(".", 1)[-1]


AOT_COMPILE = DeprecatedSymbol(
    qualified_name="torch._export.aot_compile",
    replacement="torch._inductor.aoti_compile_and_package(torch.export.export(...))",
    replacement_since=(2, 6),
    references=(AOTI_DOCS, PR_AOT_COMPILE_DEPRECATED),
)

AOT_LOAD = DeprecatedSymbol(
    qualified_name="torch._export.aot_load",
    replacement="torch._inductor.aoti_load_package(...)",
    replacement_since=(2, 6),
    references=(AOTI_DOCS, PR_AOT_LOAD_DEPRECATED),
)

DEPRECATED_SYMBOLS = (AOT_COMPILE, AOT_LOAD)

# The new API and the torch release where each of its parameters first appeared (read from the wheels).
NEW_COMPILE = "torch._inductor.aoti_compile_and_package"
NEW_LOAD = "torch._inductor.aoti_load_package"
NEW_LOAD_LOW_LEVEL = "torch._inductor.package.load_package"
EXPORT = "torch.export.export"
PACKAGE_AOTI = "torch._inductor.package.package_aoti"
LOAD_PACKAGE_PARAMETERS_SINCE = {
    "path": (2, 6),
    "run_single_threaded": (2, 7),
    "device_index": (2, 8),
}
# load_package also takes model_name and (2.8+) num_runners; aoti_load_package does not.
LOW_LEVEL_LOAD_PARAMETERS = ("path", "model_name", "run_single_threaded", "num_runners", "device_index")
COMPILE_AND_PACKAGE_KEYWORDS = ("package_path", "inductor_configs")

# The old calls' parameters as the codemod binds them: aot_compile(f, args, kwargs=None, *, dynamic_shapes=None,
# options=None, remove_runtime_assertions=False, disable_constraint_solver=False, same_signature=True) and
# aot_load(so_path, device) (torch/_export/__init__.py).
AOT_COMPILE_PARAMETERS = ("f", "args", "kwargs")
AOT_COMPILE_KEYWORDS = (
    "dynamic_shapes",
    "options",
    "remove_runtime_assertions",
    "disable_constraint_solver",
    "same_signature",
)
AOT_LOAD_PARAMETERS = ("so_path", "device")
# The options keys of the old API: where the `.so` is written, and the file-list mode paired with package_aoti.
OUTPUT_PATH_OPTION = "aot_inductor.output_path"
PACKAGE_OPTION = "aot_inductor.package"
# Calls whose result is an ExportedProgram: `ep.module()` of one is compiled from `ep`, not exported again.
EXPORTED_PROGRAM_FACTORIES = frozenset({"torch.export.export", "torch.export.load"})
# Calls that give an absolute path, so a relative `aot_inductor.output_path` question does not arise.
ABSOLUTE_PATH_FUNCTIONS = frozenset(
    {
        "os.getcwd",
        "os.path.abspath",
        "os.path.realpath",
        "pathlib.Path.cwd",
        "pathlib.Path.home",
        "os.path.expanduser",
        "tempfile.gettempdir",
        "tempfile.mkdtemp",
    }
)
# Calls that only read a value: a load's device argument made of them may be dropped by its fix (`"cuda" if
# torch.cuda.is_available() else "cpu"`, `torch.device(name)`); one holding any other call keeps its fix by hand.
DEVICE_CALLS_WITHOUT_EFFECTS = frozenset(
    {
        "builtins.str",
        "builtins.int",
        "builtins.format",
        "os.getenv",
        "os.environ.get",
        "torch.device",
        "torch.cuda.is_available",
        "torch.cuda.current_device",
        "torch.cuda.device_count",
        "torch.distributed.get_rank",
        "torch.distributed.get_world_size",
        "torch.distributed.is_initialized",
    }
)
