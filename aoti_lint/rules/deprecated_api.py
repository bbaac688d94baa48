"""AOTI001 / AOTI002: references to the deprecated ``torch._export.aot_compile`` / ``aot_load``."""

from __future__ import annotations

import functools
import re

from aoti_lint.flows.migration_verdicts import deprecation
from aoti_lint.knowledge.deprecated_api import AOT_COMPILE, AOT_LOAD, DeprecatedSymbol
from aoti_lint.knowledge.references import MIGRATION_GUIDE
from aoti_lint.lazy import cst
from aoti_lint.rules.base import Invalid, PythonRule, Valid

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, ClassVar

# What stands between two tokens of one expression: blanks, a continuing backslash, a comment running to its line's
# end (bounded so: a banner of `#`s would make the match exponential), and, before the `.`, closing parentheses.
_GAP = r"(?:\s|\\|#[^\n]*(?![^\n]))*"
_CLOSING_GAP = r"(?:\s|\\|\)|#[^\n]*(?![^\n]))*"


@functools.cache
def _reference_patterns(parent: str, name: str) -> tuple[re.Pattern[str], ...]:
    """A superset of the text of every reference that resolves to ``parent.name``: the attribute written out,
    or an import statement naming the parent or the name (on its logical line, or in its parentheses)."""
    either = rf"(?<!\w)(?:{parent}|{name})(?!\w)"
    return (
        re.compile(rf"{parent}{_CLOSING_GAP}\.{_GAP}{name}(?!\w)"),
        # `getattr(torch._export, "aot_compile")`: the name as a string after the parent
        re.compile(rf"{parent}{_CLOSING_GAP},{_GAP}[rRuU]?[\"']{name}[\"']"),
        re.compile(rf"import(?!\w)(?:(?:[^\n;#]|\\\r?\n)*?{either}|\s*\((?:[^)#]|#[^\n]*(?![^\n]))*?{either})"),
    )


class _LookedUp:
    """A finding's data: a call the fix cannot rewrite, the function reached by another name: `getattr(module,
    "name")` looks it up, or ``alias`` holds it."""

    def __init__(self, call: Any, alias: str | None = None) -> None:
        self.call = call
        self.alias = alias


class DeprecatedReference(PythonRule):
    """Shared check: any reference (call or not) that resolves to ``symbol``, whatever the import form.

    Import statements are not reported on their own: the fix rewrites them with the uses.
    """

    symbol: ClassVar[DeprecatedSymbol]
    fix_availability = "sometimes"

    @classmethod
    def could_match_python(cls, text: str) -> bool:
        # The same, in the text (``_reference_patterns``): most of torch's files that hold both words import
        # something else from `torch._export`, or name the other `aot_compile`.
        module, name = cls.symbol.qualified_name.rsplit(".", 1)
        parent = module.rsplit(".", 1)[-1]
        if f"{parent}.{name}" in text:
            return True  # the common spelling, without compiling the patterns (a one-file run pays for that)
        return any(pattern.search(text) for pattern in _reference_patterns(parent, name))

    @classmethod
    def could_match_code(cls, code: Any) -> bool:
        # A reference resolves to `pkg.parent.name` only through `x.parent.name` / `parent.name`, or through
        # a name bound by an import of `...parent...` (`import pkg.parent as p`, `from pkg import parent`,
        # `from pkg.parent import name`).
        module, name = cls.symbol.qualified_name.rsplit(".", 1)
        parent = module.rsplit(".", 1)[-1]
        return (
            (parent, name) in code.attribute_pairs
            or ("getattr" in code.called and parent in code.identifiers)
            or any(parent in imported.split(".") for imported in code.imported_modules)
            or any(
                imported == parent or (imported == name and parent in source.split("."))
                for source, imported in code.imported_names
            )
        )

    def __init__(self, context: Any) -> None:
        super().__init__(context)
        self._in_import = 0
        self._reported_attr_names: set[int] = set()
        self._bound_names: set[int] = set()
        # Names bound by `name = <the function>` (an attribute or a `getattr` of it), to the value they hold.
        self._aliases: dict[str, Any] = {}

    def visit_Import(self, node: Any) -> None:
        self._in_import += 1

    def leave_Import(self, node: Any) -> None:
        self._in_import -= 1

    def visit_ImportFrom(self, node: Any) -> None:
        self._in_import += 1

    def leave_ImportFrom(self, node: Any) -> None:
        self._in_import -= 1

    # A name being bound is not a use of what it held before: the stub `def aot_compile(*args, **kwargs)` in a
    # compat module's `except ImportError:` (or `aot_load = None` there) shares the import's name, and libcst's
    # scopes give it the import's qualified name too.
    def visit_FunctionDef(self, node: Any) -> None:
        self._bound_names.add(id(node.name))

    def visit_ClassDef(self, node: Any) -> None:
        self._bound_names.add(id(node.name))

    def visit_Param(self, node: Any) -> None:
        self._bound_names.add(id(node.name))

    def visit_AssignTarget(self, node: Any) -> None:
        self._bound_names.add(id(node.target))

    def visit_AnnAssign(self, node: Any) -> None:
        self._bound_names.add(id(node.target))

    def visit_Call(self, node: Any) -> None:
        if self._in_import or not isinstance(node.func, cst.Name):
            return
        if node.func.value in self._aliases:
            # `compile(...)` after `compile = torch._export.aot_compile`: the call reads the one binding of the name
            bound = self._aliases[node.func.value]
            if self.context.facts().single_value(node.func) is bound:
                self.report(node.func, deprecation(self.symbol), data=_LookedUp(node, node.func.value))
            return
        # `getattr(torch._export, "aot_compile")`: the function looked up by its name
        if node.func.value != "getattr" or len(node.args) < 2:
            return
        if any(arg.keyword is not None or arg.star for arg in node.args[:2]):
            return
        looked_up = node.args[1].value
        if not isinstance(looked_up, cst.SimpleString) or looked_up.evaluated_value != self.symbol.short_name:
            return
        module = self.symbol.qualified_name.rsplit(".", 1)[0]
        if "builtins.getattr" in self.qualified_names(node.func) and module in self.qualified_names(node.args[0].value):
            self.report(node, deprecation(self.symbol), data=_LookedUp(node))
            self._remember_alias(node)

    def visit_Attribute(self, node: Any) -> None:
        if not self._in_import and self._resolves_to_symbol(node):
            self._reported_attr_names.add(id(node.attr))
            self._report(node)
            self._remember_alias(node)

    def _remember_alias(self, value: Any) -> None:
        """`name = <the function>`: a later call of ``name`` that reads this binding calls the function."""
        statement = self.context.facts().parent(value)
        if isinstance(statement, cst.Assign) and len(statement.targets) == 1:
            target = statement.targets[0].target
            if isinstance(target, cst.Name):
                self._aliases[target.value] = value

    def visit_Name(self, node: Any) -> None:
        if self._in_import or id(node) in self._reported_attr_names or id(node) in self._bound_names:
            return
        if self._resolves_to_symbol(node):
            self._report(node)

    def _resolves_to_symbol(self, node: Any) -> bool:
        # The spelling first: for a name bound other than by the module's imports, libcst's lookup resolves the
        # module's scopes, quadratic in the assignments to one name (10,000 `x = ...` lines took minutes).
        if not self.context.may_resolve_to(node, {self.symbol.short_name}):
            return False
        # The provider gives a set: a conditional import can bind one name to several targets. Any
        # deprecated target is a reason to report; whether the fix may rewrite is decided separately.
        return self.symbol.qualified_name in self.qualified_names(node)

    def _report(self, node: Any) -> None:
        from aoti_lint.flows.migration_verdicts import deprecation

        self.report(node, deprecation(self.symbol))

    @classmethod
    def tidy_after_fix(cls, text: str) -> str:
        """Once fixes are applied, drop imports of the old API that no fix alone could see were unused."""
        import libcst as cst

        from aoti_lint.codemods.migration import tidy_imports
        from aoti_lint.fixes.edits import with_last_line_end

        try:
            module = cst.parse_module(text)
        except cst.ParserSyntaxError:
            return text  # the engine refuses to write it anyway
        from aoti_lint.model.node_positions import gives_back

        if not gives_back(module.code, text):
            return text  # libcst does not give the text back: its code generation would edit lines no fix touched
        return with_last_line_end(tidy_imports(module).code, text)

    def leave_Module(self, node: Any) -> None:
        """Attach the migration's fix to each finding of this rule at a call the codemod understands."""
        mine = [f for f in self.context.findings if f.code == self.code]
        if not mine:
            return
        from aoti_lint.codemods.migration import fix_for_site
        from aoti_lint.codemods.migration_plan import MigrationPlan
        from aoti_lint.diagnostics import Applicability, Fix
        from aoti_lint.flows.migration_verdicts import looked_up, not_called, not_fixed

        context = self.context
        # With a project plan (``context.flow``), each call gets its artifact flow's verdict.
        plan = context.memo(
            "migration-plan", lambda: MigrationPlan(context.facts(), context.target_torch, context.flow)
        )
        for finding in mine:
            if isinstance(finding.data, _LookedUp):
                finding.fix = Fix(Applicability.DISPLAY_ONLY, looked_up(self.symbol, finding.data.alias))
                continue
            site = plan.site_for_reference(finding.data)
            if site is None:
                # A reference that is not called here (stored, passed on): its callers decide the arguments.
                finding.fix = Fix(Applicability.DISPLAY_ONLY, not_called(self.symbol))
                continue
            # A notebook's fix edits its own cell only: a flow across cells is migrated whole by `--fix`.
            whole_flow = context.source.kind != "jupyter"
            finding.fix = fix_for_site(plan, id(finding.data), context.source.text, whole_flow)
            if finding.fix.applicability is Applicability.DISPLAY_ONLY:
                finding.message += not_fixed(site.verdict.reason)


class DeprecatedAotCompile(DeprecatedReference):
    """
    ## What it does
    Finds every reference to `torch._export.aot_compile`, called or not, under any import form:
    `torch._export.aot_compile`, `import torch._export as te`, `from torch._export import aot_compile as c`,
    `from torch import _export`, `import torch as t`, and imports inside `if`/`try` blocks. A name another module
    of the project binds to it (a re-export in a package's `__init__.py`, a try/except compat module, a star
    import, `te = torch._export` imported from a shared module) is found where it is used, in any file that
    holds a word of some rule (a file that holds none is settled by its bytes); such a call's fix is left to a
    human: migrate the module that binds the name.

    ## Why is this bad?
    Since torch 2.6, `torch._export.aot_compile` logs a deprecation notice and PyTorch points users to
    `torch._inductor.aoti_compile_and_package(torch.export.export(...))`. The old function writes a bare
    `.so` that does not record which device it was compiled for, so nothing stops it from being loaded on
    the wrong device later (a segfault or "pointer ... not registered with any CUDA device"). The new API
    writes a `.pt2` package that stores the compile device (`AOTI_DEVICE_KEY`), and its loader picks it.

    `torch._inductor.aot_compile` (lower level, takes a `GraphModule`) is not deprecated and is not reported.

    ## Fix safety
    `aoti-lint --fix` exports the model with `torch.export.export` and compiles it with
    `aoti_compile_and_package`, moving `options` to `inductor_configs` and an `aot_inductor.output_path`
    of `x.so` to `package_path="x.pt2"`. The fix is safe when the artifact only serves the module itself
    (the path reaches an `aot_load` in the same module, which is migrated with it). It is unsafe when the
    `.so` or its path escapes the module (returned, stored, loaded in another file): the artifact becomes
    a `.pt2` for someone else. The unit of the fix is the artifact flow: the compile, every load of its
    artifact and every constant naming its path, in every file of the run, migrate together (constants are
    rewritten where they are defined) or, when one of them cannot (a C++ runner of the run loads the `.so`,
    a string names it where the fix cannot follow, a file of the project that is not Python names its file:
    a Makefile, a shell script, a YAML or JSON manifest, even in a run given only some files, AOTI101 reports
    a load), none does and each message names the other sites; `aoti-lint flows` shows every flow and its
    verdict. Calls with no faithful equivalent (`disable_constraint_solver=True`, `same_signature=False`, a
    callable `torch.export.export` does not take) are reported with a message saying what to do by hand; see
    `docs/migration.md`. With `target-torch` below 2.6 (torch 2.5 has neither
    new function) no call gets a fix.
    """

    code = "AOTI001"
    name = "deprecated-aot-compile"
    references = (*AOT_COMPILE.references, MIGRATION_GUIDE)
    summary = "`torch._export.aot_compile` is deprecated; use `aoti_compile_and_package`"
    symbol = AOT_COMPILE
    triggers = ((b"aot_compile", b"_export"),)

    VALID = [
        Valid(
            """
            import torch

            ep = torch.export.export(model, (x,))
            torch._inductor.aoti_compile_and_package(ep, package_path="model.pt2")
            """
        ),
        Valid(
            """
            import torch._inductor

            gm = torch.export.export(model, (x,)).module()
            so_path = torch._inductor.aot_compile(gm, (x,))
            """
        ),
        Valid(
            """
            def aot_compile(model, args):
                return model

            aot_compile(model, (x,))
            """
        ),
        Valid(
            """
            try:
                from torch._export import aot_compile
            except ImportError:

                def aot_compile(*args, **kwargs):
                    raise RuntimeError("aot_compile needs torch >= 2.2")

            __all__ = ["aot_compile"]
            """
        ),
        Valid(
            """
            class Exporter:
                def aot_compile(self):
                    pass

                def run(self):
                    self.aot_compile()
            """
        ),
        Valid(
            """
            import torch

            compiled = torch.compile(model)
            compiled.forward.aot_compile((x,))
            """
        ),
        Valid(
            '''
            def build():
                """Old code called torch._export.aot_compile(model, args) here."""
                # torch._export.aot_compile(model, (x,))
                return "torch._export.aot_compile"
            '''
        ),
    ]
    INVALID = [
        Invalid(
            """
            import os

            import torch

            so_path = torch._export.aot_compile(
                model,
                (x,),
                options={"aot_inductor.output_path": os.path.join(os.getcwd(), "model.so"), "max_autotune": True},
            )
            runner = torch._export.aot_load(so_path, "cuda")
            """,
            line=5,
            column=11,
            message_contains="aoti_compile_and_package",
            fixed="""
            import os

            import torch

            so_path = torch._inductor.aoti_compile_and_package(
                torch.export.export(model, (x,)),
                package_path=os.path.join(os.getcwd(), "model.pt2"),
                inductor_configs={"max_autotune": True},
            )
            runner = torch._inductor.aoti_load_package(so_path)
            """,
        ),
        Invalid(
            """
            from torch._export import aot_compile, aot_load

            aot_load(aot_compile(m, (x,)), "cpu")
            """,
            line=3,
            column=10,
            fixed="""
            import torch

            torch._inductor.aoti_load_package(torch._inductor.aoti_compile_and_package(torch.export.export(m, (x,))))
            """,
        ),
        Invalid(
            """
            import torch._export as te

            te.aot_compile(model, (x,))
            """,
            line=3,
            column=1,
        ),
        Invalid(
            """
            from torch._export import aot_compile as compile_so

            compile_so(model, (x,))
            """,
            line=3,
            column=1,
        ),
        Invalid(
            """
            from torch import _export

            _export.aot_compile(model, (x,))
            """,
            line=3,
        ),
        Invalid(
            """
            import torch as t

            fn = t._export.aot_compile
            """,
            line=3,
            column=6,
        ),
        Invalid(
            """
            try:
                from torch._export import aot_compile
            except ImportError:
                aot_compile = None

            aot_compile(model, (x,))
            """,
            line=6,
        ),
        Invalid(
            """
            import torch

            if hasattr(torch._inductor, "aoti_compile_and_package"):
                path = torch._inductor.aoti_compile_and_package(torch.export.export(model, (x,)))
            else:
                from torch._export import aot_compile

                path = aot_compile(model, (x,))
            """,
            line=8,
        ),
        Invalid(
            """
            import torch

            compile_so = torch._export.aot_compile

            def export(model, x):
                return compile_so(model, (x,))
            """,
            line=3,
            column=14,
            count=2,
            message_contains="aot_compile",
        ),
        Invalid(
            """
            import torch
            ep = torch.export.export(model, (x,))
            if not hasattr(torch._inductor, "aoti_compile_and_package"):
                path = torch._export.aot_compile(ep, (x,))
            """,
            line=4,
            message_contains="`ep` is already an `ExportedProgram`, on which the old call fails",
        ),
    ]


class DeprecatedAotLoad(DeprecatedReference):
    """
    ## What it does
    Finds every reference to `torch._export.aot_load`, called or not, under any import form, and through names
    other modules of the project bind to it, as AOTI001 does.

    ## Why is this bad?
    Since torch 2.6, `torch._export.aot_load` logs a deprecation notice; the replacement is
    `torch._inductor.aoti_load_package`. `aot_load(so_path, device)` trusts the caller's `device`: nothing
    checks it against the device the `.so` was compiled for, and a mismatch segfaults or fails with
    "The specified pointer resides on host memory and is not registered with any CUDA device".
    `aoti_load_package` reads the compile device from the `.pt2` package; the caller may only choose the
    device index (`device_index=`, torch 2.8+).

    ## Fix safety
    `aoti-lint --fix` rewrites `aot_load(path, device)` to `aoti_load_package(path)`, with
    `device_index=N` for `"cuda:N"` or `torch.device("cuda", N)` (also `f"cuda:{rank}"` and
    `torch.device("cuda", rank)`: `device_index=rank`) when `target-torch` is 2.8 or newer; below, a
    device index other than 0 leaves the call to be migrated by hand. A load is migrated only with the
    compile that writes its artifact: `aoti_load_package` cannot read a `.so` ("Failed to initialize zip
    archive"), so a load whose producer this run does not see migrating too (another repository, a file not
    named, a path the run cannot follow) gets no fix, and its message says so; a load of a literal `.pt2` path
    needs none. The fix is safe when the compile is in the same module (both sides are migrated together and
    stay consistent), and unsafe when its artifact flow spans files: a `.so` path the load is given (a
    literal, `os.path.join`, a constant of the run) is rewritten to the `.pt2` with it; a fix never hands a
    `.so` to `aoti_load_package`. A load that AOTI101 reports gets no fix: the rewrite would
    silently move it to the compile's device. A device that is not a literal is left to the package (the
    device type always comes from the package); the fix is then unsafe too, and there is none when the
    device is computed by a call that may do more than read a value (`aot_load(path, pick_device())`, unlike
    `torch.device(name)` or `torch.cuda.is_available()`): dropping the argument would drop the call.
    """

    code = "AOTI002"
    name = "deprecated-aot-load"
    references = (*AOT_LOAD.references, MIGRATION_GUIDE)
    summary = "`torch._export.aot_load` is deprecated; use `aoti_load_package`"
    symbol = AOT_LOAD
    triggers = ((b"aot_load", b"_export"),)

    VALID = [
        Valid(
            """
            import torch
            loader = getattr(torch._inductor, "aot_load", None)
            other = getattr(registry, "aot_load")
            named = getattr(torch._export, name)
            """
        ),
        Valid(
            """
            import torch

            model = torch._inductor.aoti_load_package("model.pt2")
            """
        ),
        Valid(
            """
            def aot_load(path):
                return open(path).read()

            aot_load("model.so")
            """
        ),
        Valid(
            """
            import torch
            from torch._inductor.package import load_package

            def load_package(path):
                return path

            load_package("model.pt2")
            """
        ),
        Valid(
            """
            try:
                from torch._export import aot_load
            except ImportError:
                aot_load = None

            def aot_load_or_fail(path, device):
                raise NotImplementedError("install torch>=2.2")
            """
        ),
    ]
    INVALID = [
        Invalid(
            """
            from torch._export import aot_compile, aot_load

            def build_and_serve(model, x):
                so_path = aot_compile(model, (x,))
                return aot_load(so_path, "cuda:1")
            """,
            line=5,
            column=12,
            message_contains="aoti_load_package",
            fixed="""
            import torch

            def build_and_serve(model, x):
                so_path = torch._inductor.aoti_compile_and_package(torch.export.export(model, (x,)))
                return torch._inductor.aoti_load_package(so_path, device_index=1)
            """,
            target_torch="2.8",
        ),
        Invalid(
            """
            from torch._export import aot_load

            def serve(path):
                return aot_load(path, "cuda")
            """,
            line=4,
            column=12,
            message_contains="no compile of this run is known to write the `.pt2` package",
        ),
        Invalid(
            """
            from torch._export import aot_compile, aot_load

            runner = aot_load(path, device)
            """,
            line=3,
            column=10,
        ),
        Invalid(
            """
            from torch import _export as ex

            loader = ex.aot_load
            """,
            line=3,
        ),
        Invalid(
            """
            import torch

            def load(path, device):
                if hasattr(torch._inductor, "aoti_load_package") and path.endswith(".pt2"):
                    return torch._inductor.aoti_load_package(path)
                return getattr(torch._export, "aot_load")(path, device)
            """,
            line=6,
            column=12,
        ),
    ]
