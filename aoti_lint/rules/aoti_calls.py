"""AOTI003's reading of a Python module: the calls of the AOTI API, old and new, and what they are given (a `.so` handed
to a package loader, a package path that is no `.pt2`, parameters the new functions do not take, config keys of
the wrong type), each a finding where it fails at run time."""

from __future__ import annotations

import ast

from aoti_lint.knowledge.deprecated_api import (
    AOT_COMPILE,
    AOT_LOAD,
    LOW_LEVEL_LOAD_PARAMETERS,
    NEW_COMPILE,
    NEW_LOAD,
    NEW_LOAD_LOW_LEVEL,
)
from aoti_lint.model.calls import argument
from aoti_lint.model.name_index import string
from aoti_lint.rules.base import AstModule, AstReader

TYPE_CHECKING = False
if TYPE_CHECKING:
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
CALLED_FOR_THEMSELVES = frozenset(
    name.rsplit(".", 1)[-1] for name in (NEW_COMPILE, NEW_LOAD, NEW_LOAD_LOW_LEVEL, AOT_LOAD.qualified_name)
)
MODULE_RETURNING_METHODS = ("module", "eval", "train", "to", "cuda", "cpu", "float", "half", "double")


# Calls whose result is a path ending in their last positional argument (joins) or in their only one.
_PATH_JOINS = frozenset({"os.path.join", "posixpath.join", "ntpath.join", "pathlib.Path", "pathlib.PurePath"})
_PATH_WRAPPERS = frozenset(
    {"builtins.str", "os.fspath", "os.path.abspath", "os.path.realpath", "os.path.normpath", "os.path.expanduser"}
)
_PACKAGE_LOADERS = {NEW_LOAD: "aoti_load_package", NEW_LOAD_LOW_LEVEL: "load_package"}


def _file_name_literal(node: ast.expr) -> ast.expr:
    """The literal carrying a path's file name: "x.pt2", os.path.join(d, "x.pt2"), d / "x.pt2"."""
    if type(node) is ast.Call and node.args and not node.keywords:
        return _file_name_literal(node.args[-1])
    if type(node) is ast.BinOp and type(node.op) is ast.Div:
        return _file_name_literal(node.right)
    return node


class CallMisuse(AstReader):
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
            self._report(path, package_of_so(loader, name))

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


def package_of_so(loader: str, path: str) -> str:
    file_name = path.replace("\\", "/").rsplit("/", 1)[-1]
    shown = f" (`{file_name}`)" if file_name != ".so" else ""
    return (
        f"`{loader}` reads a `.pt2` package, not a bare `.so`{shown} (fails with 'Failed to initialize zip "
        "archive'): compile with `aoti_compile_and_package(..., package_path=...pt2)` and load that"
    )
