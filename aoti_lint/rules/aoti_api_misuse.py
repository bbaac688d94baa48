"""AOTI003: hand-written or half-migrated calls of the new AOTI API that fail at run time."""

from __future__ import annotations

import re

from aoti_lint.diagnostics import Finding, Position
from aoti_lint.knowledge.deprecated_api import (
    AOT_COMPILE,
    AOT_LOAD,
    LOW_LEVEL_LOAD_PARAMETERS,
    NEW_COMPILE,
    NEW_LOAD,
    NEW_LOAD_LOW_LEVEL,
)
from aoti_lint.knowledge.references import AOTI_DOCS, MIGRATION_GUIDE
from aoti_lint.lazy import cst
from aoti_lint.model.calls import call_argument
from aoti_lint.rules.ast_reading import AstReading
from aoti_lint.rules.base import Invalid, PythonRule, Valid, defined_at

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

OUTPUT_PATH_KEY = "aot_inductor.output_path"
PRINTER_KEY = "aot_inductor.debug_intermediate_value_printer"
NEW_LOAD_PARAMETERS = ("path", "run_single_threaded", "device_index")
# Calls whose options dict holds inductor config keys.
CONFIG_DICT_ARGUMENTS = {
    NEW_COMPILE: "inductor_configs",
    AOT_COMPILE.qualified_name: "options",
    "torch._inductor.aot_compile": "options",
    "torch.compile": "options",
}
# The last part of every function above: a call can resolve to one of them only if its callee ends so.
CALLEE_NAMES = frozenset(
    name.rsplit(".", 1)[-1]
    for name in (NEW_COMPILE, NEW_LOAD, NEW_LOAD_LOW_LEVEL, AOT_LOAD.qualified_name, *CONFIG_DICT_ARGUMENTS)
)
_CALLED_FOR_THEMSELVES = frozenset(
    name.rsplit(".", 1)[-1] for name in (NEW_COMPILE, NEW_LOAD, NEW_LOAD_LOW_LEVEL, AOT_LOAD.qualified_name)
)
MODULE_RETURNING_METHODS = ("module", "eval", "train", "to", "cuda", "cpu", "float", "half", "double")


def _string(node: Any) -> str | None:
    if isinstance(node, (cst.SimpleString, cst.ConcatenatedString)):
        value = node.evaluated_value
        return value if isinstance(value, str) else None
    return None


# Calls whose result is a path ending in their last positional argument (joins) or in their only one.
_PATH_JOINS = frozenset({"os.path.join", "posixpath.join", "ntpath.join", "pathlib.Path", "pathlib.PurePath"})
_PATH_WRAPPERS = frozenset(
    {"builtins.str", "os.fspath", "os.path.abspath", "os.path.realpath", "os.path.normpath", "os.path.expanduser"}
)
_PACKAGE_LOADERS = {NEW_LOAD: "aoti_load_package", NEW_LOAD_LOW_LEVEL: "load_package"}


# The text stage. A name is called (`f(`, `(f)(`, `f[0](`) or imported (`import f`, `f as g`, `f,`, `(f,`) only where
# the next character that is no blank opens or ends brackets, separates, ends the line or opens a comment; where
# it is a `.`, a quote, a backtick or an operator, the name is a mention (most of torch's files that name the API
# do so in docstrings and messages) or a value. A `def`/`class` of the name defines it.
_WORD = re.compile(r"\w")
_AFTER_CALLED_OR_IMPORTED = frozenset("()[,;\\#\r\n")


def _called_or_imported(text: str, name: str) -> bool:
    at = text.find(name)
    while at != -1:
        end = at + len(name)
        if not (at and _WORD.match(text, at - 1)) and not _WORD.match(text, end):
            after = end
            while after < len(text) and text[after] in " \t\f":
                after += 1
            if (
                after == len(text)
                or text[after] in _AFTER_CALLED_OR_IMPORTED
                or (text.startswith("as", after) and not _WORD.match(text, after + 2))
            ) and not defined_at(text, at):
                return True
        at = text.find(name, at + 1)
    return False


def _printer_key_in_string(text: str) -> bool:
    """The printer's key where a string can spell it: after a quote and what of `aot_inductor.` may open it
    (`"aot_inductor.debug_...`, `"aot_inductor." "debug_..."`), not in `config.aot_inductor.debug_...`."""
    token = PRINTER_KEY.rsplit(".", 1)[-1]
    at = text.find(token)
    while at != -1:
        start = at
        while start and (text[start - 1] == "." or _WORD.match(text, start - 1)):
            start -= 1
        if start and text[start - 1] in "\"'":
            return True
        at = text.find(token, at + 1)
    return False


def _file_name_literal(node: Any) -> Any:
    """The literal carrying a path's file name: "x.pt2", os.path.join(d, "x.pt2"), d / "x.pt2"."""
    if isinstance(node, cst.Call) and node.args and node.args[-1].keyword is None:
        return _file_name_literal(node.args[-1].value)
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Divide):
        return _file_name_literal(node.right)
    return node


class AotiApiMisuse(PythonRule):
    """
    ## What it does
    Finds calls of the current AOTI API that are known to fail at run time, as hand-written or half-migrated
    code often has them:
    - `aoti_compile_and_package` given something that is not an `ExportedProgram` (an `nn.Module`, a
      `.module()` result, a lambda or `functools.partial`);
    - a `package_path` whose file name does not end in `.pt2`;
    - `aot_inductor.output_path` in `inductor_configs`;
    - keyword arguments `aoti_load_package` does not take, such as `device=`;
    - a bare `.so` path handed to `aoti_load_package` or `load_package`, written as a literal, through
      `os.path.join`, `pathlib.Path`, `/`, `+`, an f-string ending in `.so`, `.with_suffix(".so")`, a
      constant of the same module, or a constant imported from another file of the run (a half-migrated flow:
      `MODEL = "model.so"` in `paths.py`, `aoti_load_package(MODEL)` in `serve.py`);
    - an integer for `aot_inductor.debug_intermediate_value_printer` (it must be a string: `"0"`..`"3"`);
    - the old `torch._export.aot_load` applied to a `.pt2` package (in the same path forms).

    Only paths whose ending is certain are reported: a path from `argv`, the environment or an unknown
    variable is left alone.

    ## Why is this bad?
    Each fails when it runs, after a long compile or on the serving host:
    `ValueError: Only ExportedProgram is supported`;
    `AssertionError: Expect package path to be a file ending in .pt2, is None, or is a buffer`;
    `RuntimeError: Please pass in a package path to aot_inductor_compile() instead of setting the
    aot_inductor.output_path config.`; `TypeError: aoti_load_package() got an unexpected keyword argument
    'device'`; `ValueError: 3 is not a valid IntermediateValueDebuggingLevel`. The package loaders read a
    `.pt2` zip archive and fail on a bare `.so` with `RuntimeError: Failed to initialize zip archive`; the old
    loader reads a bare `.so` and cannot open a `.pt2` archive.

    The device of a package is recorded in it at compile time; the loader only takes `device_index=`.
    """

    code = "AOTI003"
    name = "aoti-api-misuse"
    # A package load of a `.so` constant of another file is read from the run's flow summaries (``check_flows``).
    reads_flows = True
    references = (AOTI_DOCS, MIGRATION_GUIDE)
    summary = "A call of the AOTI API that fails at run time"
    triggers = (
        (b"aoti_compile_and_package",),
        (b"load_package",),
        (b"aot_load", b".pt2"),
        (b"debug_intermediate_value_printer",),
    )

    VALID = [
        Valid(
            """
            import torch

            ep = torch.export.export(model, (x,))
            path = torch._inductor.aoti_compile_and_package(
                ep, package_path="model.pt2", inductor_configs={"aot_inductor.debug_intermediate_value_printer": "0"}
            )
            runner = torch._inductor.aoti_load_package(path, device_index=1)
            """
        ),
        Valid(
            """
            import os
            import torch

            def build(program, out_dir):
                pkg = os.path.join(out_dir, "model.pt2")
                return torch._inductor.aoti_compile_and_package(program, package_path=pkg)
            """
        ),
        Valid(
            """
            import os
            import sys
            from torch._inductor import aoti_load_package

            runner = aoti_load_package(sys.argv[1])
            other = aoti_load_package(os.path.join(out_dir, name))
            third = aoti_load_package(os.path.join(out_dir, "model.pt2"))
            """
        ),
        Valid(
            """
            import torch

            torch._inductor.config.aot_inductor.debug_intermediate_value_printer = "2"
            so = torch._export.aot_load("model.so", "cpu")
            """
        ),
        Valid(
            """
            import torch

            # The keyword goes to the loaded model's call, not to `aoti_load_package`.
            out = torch._inductor.aoti_load_package("model.pt2")(x, device="cuda")
            """
        ),
    ]
    INVALID = [
        Invalid(
            """
            import torch

            model = MyModel().eval()
            path = torch._inductor.aoti_compile_and_package(model.module(), package_path="model.pt2")
            """,
            line=4,
            column=49,
            message_contains="ExportedProgram",
        ),
        Invalid(
            """
            import torch

            model = torch.nn.Linear(4, 4)
            path = torch._inductor.aoti_compile_and_package(model, package_path="model.pt2")
            """,
            line=4,
            column=49,
        ),
        Invalid(
            """
            import torch

            torch._inductor.aoti_compile_and_package(ep, package_path="model.so")
            """,
            line=3,
            column=59,
            message_contains=".pt2",
        ),
        Invalid(
            """
            import torch

            torch._inductor.aoti_compile_and_package(ep, inductor_configs={"aot_inductor.output_path": "m.so"})
            """,
            line=3,
            message_contains="package_path",
        ),
        Invalid(
            """
            from torch._inductor import aoti_load_package

            runner = aoti_load_package("model.pt2", device="cuda:0")
            """,
            line=3,
            column=41,
            message_contains="device_index",
        ),
        Invalid(
            """
            import torch

            torch._inductor.aoti_compile_and_package(
                ep, inductor_configs={"aot_inductor.debug_intermediate_value_printer": 3}
            )
            """,
            line=4,
            message_contains='"3"',
        ),
        Invalid(
            """
            import os
            from torch._inductor import aoti_load_package

            MODEL = os.path.join(os.environ["ARTIFACTS"], "model.so")
            runner = aoti_load_package(MODEL)
            other = aoti_load_package(f"{out_dir}/encoder.so", device_index=0)
            """,
            line=5,
            column=28,
            count=2,
            message_contains="not a bare `.so` (`model.so`)",
        ),
        Invalid(
            """
            import os
            import torch

            runner = torch._export.aot_load(os.path.join(out_dir, "model.pt2"), "cpu")
            """,
            line=4,
            column=33,
            message_contains="cannot read a `.pt2`",
        ),
        Invalid(
            """
            import torch

            path = torch._inductor.aoti_compile_and_package(ep, package_path="model.pt2")
            runner = torch._export.aot_load(path, "cuda")
            """,
            line=4,
            column=33,
            message_contains="cannot read a `.pt2`",
        ),
    ]

    @classmethod
    def could_match_python(cls, text: str) -> bool:
        # Every check but the printer's is on a call of the API; the printer's key is a dict's, in a string.
        return any(_called_or_imported(text, name) for name in _CALLED_FOR_THEMSELVES) or _printer_key_in_string(text)

    @classmethod
    def could_match_code(cls, code: Any) -> bool:
        # Every check is on a call of the API, reached by its name or by a name imported from it; the config
        # dict checks need the dict passed by keyword. A relative import never names the API (libcst resolves
        # `from .package import load_package` to `.package.load_package`): a name it binds counts once called.
        reached = code.called | {module.rsplit(".", 1)[-1] for module in code.imported_modules}
        reached |= {name for module, name in code.imported_names if not module.startswith(".")}
        if reached & _CALLED_FOR_THEMSELVES:
            return True
        return bool(code.keywords & set(CONFIG_DICT_ARGUMENTS.values())) and bool(reached & CALLEE_NAMES)

    @classmethod
    def check_ast(cls, code: Any, path: str) -> list[Finding] | None:
        # No findings where no call can give one (see _AstMisuse); libcst reads any other file.
        return _AstMisuse(cls, code, path).findings()

    def visit_Call(self, node: cst.Call) -> None:
        # The callee's last name first: the first qualified_names call resolves every name of the module. libcst
        # names a call after its callee: `aoti_load_package(p)(x, device=d)` calls the loaded model, not the API.
        if isinstance(node.func, cst.Call) or not self.context.may_resolve_to(node.func, CALLEE_NAMES):
            return
        names = self.qualified_names(node.func)
        if not names:
            return
        if NEW_COMPILE in names:
            self._check_compile(node)
        if NEW_LOAD in names:
            self._check_load_keywords(node, NEW_LOAD_PARAMETERS, "aoti_load_package")
        if NEW_LOAD_LOW_LEVEL in names:
            self._check_load_keywords(node, LOW_LEVEL_LOAD_PARAMETERS, "load_package")
        loader = next((_PACKAGE_LOADERS[name] for name in names if name in _PACKAGE_LOADERS), None)
        if loader is not None:
            self._check_package_path(node, loader)
        if AOT_LOAD.qualified_name in names:
            self._check_old_load(node)
        for function, keyword in CONFIG_DICT_ARGUMENTS.items():
            if function in names:
                self._check_config_dict(node, keyword)

    # -- aoti_compile_and_package --------------------------------------------------------------------
    def _check_compile(self, call: Any) -> None:
        program = call_argument(call, 0, "exported_program")
        what = self._not_an_exported_program(program) if program is not None else None
        if what is not None:
            self.report(
                program,
                f"`aoti_compile_and_package` takes an `ExportedProgram`, not {what}: pass "
                "`torch.export.export(model, args)` (fails with 'Only ExportedProgram is supported')",
            )
        package_path = call_argument(call, None, "package_path")
        literal = _file_name_literal(package_path) if package_path is not None else None
        name = _string(literal)
        if literal is not None and name is not None and not name.endswith(".pt2"):
            self.report(
                literal,
                f"`package_path` must end in `.pt2`, got `{name}` "
                "(fails with 'Expect package path to be a file ending in .pt2')",
            )

    def _not_an_exported_program(self, node: Any, depth: int = 0) -> str | None:
        facts = self.context.facts()
        if isinstance(node, cst.Lambda):
            return "a lambda"
        if isinstance(node, cst.Call):
            callee = facts.names(node.func)
            if "functools.partial" in callee:
                return "a `functools.partial`"
            if any(name.startswith("torch.nn.") and name.rsplit(".", 1)[-1][:1].isupper() for name in callee):
                return "an `nn.Module`"
            if isinstance(node.func, cst.Attribute) and node.func.attr.value == "module" and not node.args:
                return "an `ExportedProgram.module()` (a `GraphModule`)"
            if isinstance(node.func, cst.Attribute) and node.func.attr.value in MODULE_RETURNING_METHODS[1:]:
                inner = self._not_an_exported_program(node.func.value, depth + 1)
                return inner if inner and "Module" in inner else None
            if isinstance(node.func, cst.Name) and self._is_module_class(node.func):
                return "an `nn.Module`"
        if isinstance(node, cst.Name) and depth < 5:
            value = facts.single_value(node)
            return self._not_an_exported_program(value, depth + 1) if value is not None else None
        return None

    def _is_module_class(self, name: Any) -> bool:
        """A class defined in this module whose base resolves to ``torch.nn.Module``."""
        facts = self.context.facts()
        for definition in facts.referents(name) or ():
            if isinstance(definition, cst.ClassDef):
                return any("torch.nn.Module" in facts.names(base.value) for base in definition.bases)
        return False

    # -- loaders -------------------------------------------------------------------------------------
    def _check_load_keywords(self, call: Any, parameters: tuple[str, ...], function: str) -> None:
        for arg in call.args:
            if arg.keyword is not None and arg.keyword.value not in parameters:
                hint = (
                    "; the package records its device type, pass `device_index=N` to choose a GPU"
                    if arg.keyword.value in ("device", "map_location")
                    else ""
                )
                self.report(
                    arg.keyword,
                    f"`{function}` takes no `{arg.keyword.value}=` argument (it takes {', '.join(parameters)}){hint}",
                )

    def _check_package_path(self, call: Any, loader: str) -> None:
        path = call_argument(call, 0, "path")
        name = self._path_name(path) if path is not None else None
        if name is not None and name.endswith(".so"):
            self.report(path, _package_of_so(loader, name))

    @classmethod
    def check_flows(cls, summaries: Sequence[Any]) -> list[Finding]:
        """A package load of a path that is a `.so` constant of another file of the run (a half-migrated flow:
        `MODEL = "model.so"` in paths.py, `aoti_load_package(MODEL)` in serve.py). A path written in the load's own
        file is read by ``_check_package_path``."""
        from aoti_lint.flows.flow_summary import ArtifactResolver

        resolve = ArtifactResolver(summaries)
        found = []
        for summary in summaries:
            for load in summary.loads:
                if load.api == "aot_load" or load.artifact is not None or load.artifact_ref is None:
                    continue
                path = resolve(None, load.artifact_ref)
                if path is not None and path.endswith(".so"):
                    name = load.artifact_ref.rpartition(".")[2]
                    message = _package_of_so(load.api, path) + f"; `{name}` holds that path"
                    span = load.span
                    found.append(
                        Finding(
                            code=cls.code,
                            message=message,
                            path=summary.path,
                            start=Position(span.row, span.column),
                            end=Position(span.end_row, span.end_column),
                            severity=cls.severity,
                            url=cls.url(),
                        )
                    )
        return found

    def _path_name(self, node: Any, depth: int = 0) -> str | None:
        """How the path ``node`` certainly ends (its last literal part), or None when that is not known.

        Follows literals, `os.path.join` / `Path(...)` (last part), `/` and `+` (right side), f-strings ending in
        text, `str()` / `os.fspath()`, `.with_suffix(...)`, and names assigned once in scope.
        """
        if depth > 8:
            return None
        literal = _string(node)
        if literal is not None:
            return literal
        facts = self.context.facts()
        if isinstance(node, cst.FormattedString):
            last = node.parts[-1] if node.parts else None
            return last.value if isinstance(last, cst.FormattedStringText) else None
        if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, (cst.Divide, cst.Add)):
            return self._path_name(node.right, depth + 1)
        if isinstance(node, cst.Name):
            value = facts.single_value(node)
            return self._path_name(value, depth + 1) if value is not None else None
        if not isinstance(node, cst.Call) or any(arg.star or arg.keyword is not None for arg in node.args):
            return None
        if not node.args:
            return None
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value == "with_suffix" and len(node.args) == 1:
            return _string(node.args[0].value)
        names = facts.names(func)
        if names & _PATH_JOINS or (names & _PATH_WRAPPERS and len(node.args) == 1):
            return self._path_name(node.args[-1].value, depth + 1)
        return None

    def _check_old_load(self, call: Any) -> None:
        path = call_argument(call, 0, "so_path")
        if path is None:
            return
        facts = self.context.facts()
        name = self._path_name(path)
        value = facts.single_value(path) if isinstance(path, cst.Name) else None
        from_package = isinstance(value, cst.Call) and NEW_COMPILE in facts.names(value.func)
        if (name is not None and name.endswith(".pt2")) or from_package:
            self.report(
                path,
                "the old `torch._export.aot_load` cannot read a `.pt2` package; "
                "use `torch._inductor.aoti_load_package(path)`",
            )

    # -- inductor config dicts -----------------------------------------------------------------------
    def _check_config_dict(self, call: Any, keyword: str) -> None:
        configs = call_argument(call, None, keyword)
        if isinstance(configs, cst.Name):
            configs = self.context.facts().single_value(configs)
        if not isinstance(configs, cst.Dict):
            return
        compile_new = NEW_COMPILE in self.qualified_names(call.func)
        for element in configs.elements:
            if not isinstance(element, cst.DictElement):
                continue
            key = _string(element.key)
            if key == OUTPUT_PATH_KEY and compile_new:
                self.report(
                    element.key,
                    "`aot_inductor.output_path` is refused by `aoti_compile_and_package`: "
                    "pass `package_path=...pt2` instead",
                )
            elif key == PRINTER_KEY and isinstance(element.value, cst.Integer):
                self.report(
                    element.value,
                    f'`{PRINTER_KEY}` must be a string such as "{element.value.value}", not an integer '
                    f"(fails with '{element.value.value} is not a valid IntermediateValueDebuggingLevel')",
                )


# The API functions whose calls this rule checks, as libcst names them.
_CHECKED = frozenset({NEW_COMPILE, NEW_LOAD, NEW_LOAD_LOW_LEVEL, AOT_LOAD.qualified_name, *CONFIG_DICT_ARGUMENTS})
# Each loader and the keywords it takes (`**kwargs`, whose ``ast`` keyword has no name, is checked by none).
_LOADERS = ((NEW_LOAD, {None, *NEW_LOAD_PARAMETERS}), (NEW_LOAD_LOW_LEVEL, {None, *LOW_LEVEL_LOAD_PARAMETERS}))


class _AstMisuse(AstReading):
    """AOTI003 read from ``ast`` where no call can be reported, as torch's own modules that define the API are: every
    call whose callee may be the API (``visit_Call``'s own test) is named from the module's bindings, and each call of
    it is one no check can report. A loader's keywords are its parameters, and its path cannot end in `.so` when no
    string of the module does but a comparison's operands and statements of their own (every path the rule follows
    ends in one of its literals, which are neither); a config dict cannot hold
    a key no string of the module spells. A compile of the new API, or a load of the old one, is left to libcst, as
    is a callee this reading cannot name. ``tests/test_api_misuse_ast.py`` compares both readings."""

    def findings(self) -> list[Finding] | None:
        import ast

        nodes = self.nodes()
        if nodes is None or not self.read_imports():
            return None
        calls = [node for node in nodes if type(node) is ast.Call and self._may_be_checked(node.func)]
        if not calls:
            return []
        constants = [node for node in nodes if type(node) is ast.Constant and type(node.value) is str]
        strings = {node.value for node in constants}
        # A comparison's operand, or a statement of its own, is in no path the rule follows.
        bare_so = any(
            str(node.value).endswith(".so") and type(self.parents.get(node)) not in (ast.Compare, ast.Expr)
            for node in constants
        )
        keyed = OUTPUT_PATH_KEY in strings or PRINTER_KEY in strings
        for call in calls:
            names = self.qualified_names(call.func)
            if names is None:
                return None
            checked = names & _CHECKED
            if not checked:
                continue
            if NEW_COMPILE in checked or AOT_LOAD.qualified_name in checked:
                return None
            for loader, parameters in _LOADERS:
                if loader in checked and (bare_so or any(item.arg not in parameters for item in call.keywords)):
                    return None
            if keyed and checked & CONFIG_DICT_ARGUMENTS.keys():
                return None
        return []

    def _may_be_checked(self, func: Any) -> bool:
        """``visit_Call``'s first test: the callee is no call, and its names may end in one of ``CALLEE_NAMES``."""
        import ast

        return type(func) is not ast.Call and self.model.may_name(func, CALLEE_NAMES)


def _package_of_so(loader: str, path: str) -> str:
    file_name = path.replace("\\", "/").rsplit("/", 1)[-1]
    shown = f" (`{file_name}`)" if file_name != ".so" else ""
    return (
        f"`{loader}` reads a `.pt2` package, not a bare `.so`{shown} (fails with 'Failed to initialize zip "
        "archive'): compile with `aoti_compile_and_package(..., package_path=...pt2)` and load that"
    )
