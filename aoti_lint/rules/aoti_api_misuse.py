"""AOTI003: hand-written or half-migrated calls of the new AOTI API that fail at run time."""

from __future__ import annotations

import ast
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
from aoti_lint.model.calls import argument
from aoti_lint.model.name_index import string
from aoti_lint.rules.base import AstModule, AstReader, AstRule, Invalid, Valid, defined_at

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


def _file_name_literal(node: ast.expr) -> ast.expr:
    """The literal carrying a path's file name: "x.pt2", os.path.join(d, "x.pt2"), d / "x.pt2"."""
    if type(node) is ast.Call and node.args and not node.keywords:
        return _file_name_literal(node.args[-1])
    if type(node) is ast.BinOp and type(node.op) is ast.Div:
        return _file_name_literal(node.right)
    return node


class AotiApiMisuse(AstRule):
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
    def reader(cls, module: AstModule) -> AstReader:
        return _PythonMisuse(cls, module)

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
                    start, end = Position(span.row, span.column), Position(span.end_row, span.end_column)
                    found.append(cls.make_finding(summary.path, start, end, message))
        return found


class _PythonMisuse(AstReader):
    """AOTI003 in one Python module, read from its ``ast`` tree: every call whose callee the semantic model names as
    a function of the API, its arguments followed to the literals and the one value of a variable they hold."""

    node_types = (ast.Call,)

    def __init__(self, rule: Any, module: AstModule) -> None:
        super().__init__(rule, module)
        self.model = module.model

    def visit(self, node: ast.AST) -> None:
        # `aoti_load_package(p)(x, device=d)` calls the loaded model, not the API: a call is named after its callee,
        # so a callee that is a call is passed over.
        func = node.func  # type: ignore[attr-defined]
        if type(func) is not ast.Call and self.model.may_name(func, CALLEE_NAMES):
            self._call(node)  # type: ignore[arg-type]

    def _report(self, node: Any, message: str, width: int | None = None) -> None:
        self.found.append(self.rule.finding_at(node, self.module, message, width=width))

    def _call(self, node: ast.Call) -> None:
        names = self.model.qualified_names(node.func)
        if not names:
            return
        if NEW_COMPILE in names:
            self._check_compile(node)
        if NEW_LOAD in names:
            self._check_load_keywords(node, NEW_LOAD_PARAMETERS, "aoti_load_package")
        if NEW_LOAD_LOW_LEVEL in names:
            self._check_load_keywords(node, LOW_LEVEL_LOAD_PARAMETERS, "load_package")
        loader = next((_PACKAGE_LOADERS[name] for name in sorted(names) if name in _PACKAGE_LOADERS), None)
        if loader is not None:
            self._check_package_path(node, loader)
        if AOT_LOAD.qualified_name in names:
            self._check_old_load(node)
        for function, keyword in CONFIG_DICT_ARGUMENTS.items():
            if function in names:
                self._check_config_dict(node, keyword, NEW_COMPILE in names)

    # -- aoti_compile_and_package --------------------------------------------------------------------
    def _check_compile(self, call: ast.Call) -> None:
        program = argument(call, 0, "exported_program")
        what = self._not_an_exported_program(program) if program is not None else None
        if what is not None:
            self._report(
                program,
                f"`aoti_compile_and_package` takes an `ExportedProgram`, not {what}: pass "
                "`torch.export.export(model, args)` (fails with 'Only ExportedProgram is supported')",
            )
        package_path = argument(call, None, "package_path")
        literal = _file_name_literal(package_path) if package_path is not None else None
        name = string(literal)
        if literal is not None and name is not None and not name.endswith(".pt2"):
            self._report(
                literal,
                f"`package_path` must end in `.pt2`, got `{name}` "
                "(fails with 'Expect package path to be a file ending in .pt2')",
            )

    def _not_an_exported_program(self, node: ast.expr, depth: int = 0) -> str | None:
        model = self.model
        if type(node) is ast.Lambda:
            return "a lambda"
        if type(node) is ast.Call:
            func = node.func
            callee = model.qualified_names(func)
            if "functools.partial" in callee:
                return "a `functools.partial`"
            if any(name.startswith("torch.nn.") and name.rsplit(".", 1)[-1][:1].isupper() for name in callee):
                return "an `nn.Module`"
            if type(func) is ast.Attribute and func.attr == "module" and not node.args and not node.keywords:
                return "an `ExportedProgram.module()` (a `GraphModule`)"
            if type(func) is ast.Attribute and func.attr in MODULE_RETURNING_METHODS[1:]:
                inner = self._not_an_exported_program(func.value, depth + 1)
                return inner if inner and "Module" in inner else None
            if type(func) is ast.Name and self._is_module_class(func):
                return "an `nn.Module`"
        if type(node) is ast.Name and depth < 5:
            value = model.single_value(node)
            return self._not_an_exported_program(value, depth + 1) if value is not None else None
        return None

    def _is_module_class(self, name: ast.Name) -> bool:
        """A class defined in this module whose base resolves to ``torch.nn.Module``."""
        for binding in self.model.bindings_of(name) or ():
            definition = binding.node
            if type(definition) is ast.ClassDef:
                return any("torch.nn.Module" in self.model.qualified_names(base) for base in definition.bases)
        return False

    # -- loaders -------------------------------------------------------------------------------------
    def _check_load_keywords(self, call: ast.Call, parameters: tuple[str, ...], function: str) -> None:
        for item in call.keywords:
            if item.arg is not None and item.arg not in parameters:
                hint = (
                    "; the package records its device type, pass `device_index=N` to choose a GPU"
                    if item.arg in ("device", "map_location")
                    else ""
                )
                self._report(
                    item,
                    f"`{function}` takes no `{item.arg}=` argument (it takes {', '.join(parameters)}){hint}",
                    width=len(item.arg),
                )

    def _check_package_path(self, call: ast.Call, loader: str) -> None:
        path = argument(call, 0, "path")
        name = self._path_name(path) if path is not None else None
        if name is not None and name.endswith(".so"):
            self._report(path, _package_of_so(loader, name))

    def _path_name(self, node: ast.expr | None, depth: int = 0) -> str | None:
        """How the path ``node`` certainly ends (its last literal part), or None when that is not known.

        Follows literals, `os.path.join` / `Path(...)` (last part), `/` and `+` (right side), f-strings ending in
        text, `str()` / `os.fspath()`, `.with_suffix(...)`, and names assigned once in scope.
        """
        if node is None or depth > 8:
            return None
        literal = string(node)
        if literal is not None:
            return literal
        kind = type(node)
        if kind is ast.JoinedStr:
            last = node.values[-1] if node.values else None  # type: ignore[attr-defined]
            return string(last)
        if kind is ast.BinOp and type(node.op) in (ast.Div, ast.Add):  # type: ignore[attr-defined]
            return self._path_name(node.right, depth + 1)  # type: ignore[attr-defined]
        if kind is ast.Name:
            return self._path_name(self.model.single_value(node), depth + 1)
        if kind is not ast.Call or not node.args or node.keywords:  # type: ignore[attr-defined]
            return None
        args = node.args  # type: ignore[attr-defined]
        if any(type(arg) is ast.Starred for arg in args):
            return None
        func = node.func  # type: ignore[attr-defined]
        if type(func) is ast.Attribute and func.attr == "with_suffix" and len(args) == 1:
            return string(args[0])
        names = self.model.qualified_names(func)
        if names & _PATH_JOINS or (names & _PATH_WRAPPERS and len(args) == 1):
            return self._path_name(args[-1], depth + 1)
        return None

    def _check_old_load(self, call: ast.Call) -> None:
        path = argument(call, 0, "so_path")
        if path is None:
            return
        name = self._path_name(path)
        value = self.model.single_value(path) if type(path) is ast.Name else None
        from_package = type(value) is ast.Call and NEW_COMPILE in self.model.qualified_names(value.func)
        if (name is not None and name.endswith(".pt2")) or from_package:
            self._report(
                path,
                "the old `torch._export.aot_load` cannot read a `.pt2` package; "
                "use `torch._inductor.aoti_load_package(path)`",
            )

    # -- inductor config dicts -----------------------------------------------------------------------
    def _check_config_dict(self, call: ast.Call, keyword: str, compile_new: bool) -> None:
        configs = argument(call, None, keyword)
        if type(configs) is ast.Name:
            configs = self.model.single_value(configs)
        if type(configs) is not ast.Dict:
            return
        for key, value in zip(configs.keys, configs.values, strict=True):
            name = string(key)
            if name == OUTPUT_PATH_KEY and compile_new:
                self._report(
                    key,
                    "`aot_inductor.output_path` is refused by `aoti_compile_and_package`: "
                    "pass `package_path=...pt2` instead",
                )
            elif name == PRINTER_KEY and type(value) is ast.Constant and type(value.value) is int:
                written = self.module.segment(value)
                self._report(
                    value,
                    f'`{PRINTER_KEY}` must be a string such as "{written}", not an integer '
                    f"(fails with '{written} is not a valid IntermediateValueDebuggingLevel')",
                )


def _package_of_so(loader: str, path: str) -> str:
    file_name = path.replace("\\", "/").rsplit("/", 1)[-1]
    shown = f" (`{file_name}`)" if file_name != ".so" else ""
    return (
        f"`{loader}` reads a `.pt2` package, not a bare `.so`{shown} (fails with 'Failed to initialize zip "
        "archive'): compile with `aoti_compile_and_package(..., package_path=...pt2)` and load that"
    )
