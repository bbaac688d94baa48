"""The verdict on one deprecated call's fix, how safe it is and why, and every text it gives, in one place: the
reading judges (``flows.site_plan``), the codemod writes what it planned (``codemods.migration_plan``), and the
findings and fixes of AOTI001/AOTI002 say it."""

from __future__ import annotations

from dataclasses import dataclass

from aoti_lint.diagnostics import Applicability
from aoti_lint.knowledge.deprecated_api import DeprecatedSymbol

RANK = {Applicability.SAFE: 2, Applicability.UNSAFE: 1, Applicability.DISPLAY_ONLY: 0}


@dataclass
class Verdict:
    applicability: Applicability
    reason: str = ""

    def lower(self, applicability: Applicability, reason: str) -> None:
        """Take ``applicability`` and its reason when it is less safe than the verdict so far."""
        if RANK[applicability] < RANK[self.applicability]:
            self.applicability = applicability
            self.reason = reason


# A fix the reading plans and the codemod cannot write (libcst holds the call otherwise): it gets no edits.
CANNOT_WRITE = "the codemod cannot write this call's fix"


def deprecation(symbol: DeprecatedSymbol) -> str:
    """AOTI001/AOTI002's message."""
    since = symbol.replacement_since
    return f"`{symbol.qualified_name}` is deprecated; use `{symbol.replacement}` (torch {since[0]}.{since[1]}+)"


def needs_torch(symbol: DeprecatedSymbol, target_torch: tuple[int, int]) -> str:
    since = ".".join(map(str, symbol.replacement_since))
    return f"`{symbol.replacement}` needs torch {since}; `target-torch` is {'.'.join(map(str, target_torch))}"


def foreign_torch(name: str) -> str:
    return (
        f"`{name}` is bound to something else than the torch package in this module: the fix's "
        f"`{name}._inductor` might not reach torch"
    )


def device_index_needed(device: str) -> str:
    return f"loading on `{device}` needs `device_index=` (torch 2.8+); raise `target-torch`"


def options_away(name: str) -> str:
    return (
        f"`{name}` sets `aot_inductor.output_path` or `aot_inductor.package` away from the call; pass "
        "`package_path=...pt2` instead and drop those keys by hand"
    )


def another_so(text: str) -> str:
    return (
        f"another string of this module ends in `.so` (`{text}`): it may name the artifact, which is now a `.pt2` "
        "package"
    )


def already_exported(name: str) -> str:
    return (
        f"`{name}` is already an `ExportedProgram`, on which the old call fails (Dynamo does not trace "
        "`ExportedProgram.__call__`): pass it to `aoti_compile_and_package` as it is"
    )


def load_blocked(reason: str) -> str:
    return f"the load that reads its artifact cannot be migrated: {reason}"


ARGUMENTS_UNREAD = "its arguments cannot be read statically"
NO_CONSTRAINT_SOLVER = "`disable_constraint_solver=True` has no equivalent in the new API"
NO_SAME_SIGNATURE = "`same_signature=False` has no equivalent in the new API"
NOT_A_MODULE = "`torch.export.export` takes an `nn.Module`, not a lambda or `functools.partial`; wrap it in a Module"
OPTIONS_UNPACKED = "its `options` unpack another mapping (`**`)"
OPTIONS_KEYS = "its `options` have keys that are not literals"
OPTIONS_UNFOLLOWED = "its `options` cannot be followed statically (they may set `aot_inductor.output_path`)"
PATH_NOT_REWRITABLE = "its `aot_inductor.output_path` is not a literal `.so` path that can become a `.pt2` package path"
NOT_KNOWN_ABSOLUTE = (
    "the `aot_inductor.output_path` is not known to be absolute: the old API put a relative one under the inductor "
    "cache directory, `package_path` is relative to the working directory"
)
DEVICE_EFFECTS = (
    "the device argument is computed by a call (or an await, a yield, an assignment) that the "
    "fix would drop with it; move it to a statement of its own first"
)
DEVICE_NOT_LITERAL = (
    "the device is not a literal: the package decides the device type, and the device index is "
    "no longer passed (add `device_index=` for a specific GPU)"
)
DEVICE_INDEX_ZERO = (
    "`device_index` needs torch 2.8 (`target-torch`); without it the package loads on the current device"
)
NEEDS_PACKAGE = "the loader will need a `.pt2` package where it read a `.so`: its producer must now write one"
# A load migrated without its producer reads a `.so` with the package loader ("Failed to initialize zip archive"):
# unknown is not proven, so such a load is migrated only with a compile of the same plan.
NO_PRODUCER = (
    "no compile of this run is known to write the `.pt2` package the new loader needs: run aoti-lint on the "
    "files that write its artifact too, or migrate both by hand"
)
PRODUCER_BLOCKED = "the compile that writes its artifact cannot be migrated automatically"
ESCAPES = "its artifact is now a `.pt2` package; code outside this module that reads the `.so` must change"

# The fixes' titles, and what a finding whose fix is display-only adds to its message.
COMPILE_FIX = "Export with `torch.export.export` and compile with `aoti_compile_and_package`"
LOAD_FIX = "Load the package with `aoti_load_package`"


def fix_title(kind: str, verdict: Verdict) -> str:
    """The title of a fix the codemod builds for a ``kind`` ("compile" or "load") site."""
    title = COMPILE_FIX if kind == "compile" else LOAD_FIX
    if verdict.applicability is Applicability.UNSAFE:
        title += f" (unsafe: {verdict.reason})"
    return title


def unsafe_reason(verdict: Verdict) -> str:
    """``Fix.reason`` of a site's fix: why it is unsafe; empty for a safe one."""
    return verdict.reason if verdict.applicability is Applicability.UNSAFE else ""


def by_hand(reason: str) -> str:
    return f"Migrate by hand: {reason}"


def not_fixed(reason: str) -> str:
    return f"; not fixed automatically: {reason}"


def looked_up(symbol: DeprecatedSymbol, alias: str | None = None) -> str:
    how = f"called through `{alias}`, a name for it" if alias else "the function is looked up with `getattr`"
    return by_hand(f"{how}; call `{symbol.replacement}` instead")


def not_called(symbol: DeprecatedSymbol) -> str:
    return by_hand(f"the reference is not called here; its callers must switch to `{symbol.replacement}`")


def bound_otherwise(spelled: str) -> str:
    return f"`{spelled}` may also be bound to something else here"


def through_another_module(spelled: str, symbol: DeprecatedSymbol) -> str:
    return (
        f"`{spelled}` is `{symbol.qualified_name}` by way of another module of the project: migrate the module that "
        "binds it, or this call by hand"
    )
