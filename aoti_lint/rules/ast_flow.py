"""AOTI001/AOTI002's findings and the device-flow summary of a module, read from ``ast`` without libcst, for the
modules whose deprecated calls this reading settles exactly as libcst's analysis does (``analysis.module_flow``
for the summary, ``codemods.migration_plan`` for the fixes' verdicts); None for any other, which libcst reads.

A module is settled here when
- its names are read by the semantic model (``aoti_lint.model.semantic``), as for libcst's reading;
- its AOTI calls are calls of the deprecated API alone (``aot_compile``/``aot_load``), or of
  ``torch._inductor.aot_compile`` alone (torch's own export helpers call it), or loads of the new API alone
  (``aoti_load_package``/``load_package``, as a migrated server makes them), by a name that resolves to one
  function only (or, for a load, to loaders only);
- what those calls are given are literals, parameters without a default, names bound once to such values or to
  a compile's result, tuples, lists and dicts of them, and `options` are a dict of literal keys other than the
  output path; a load's device is a string (or a name, an attribute);
- a load's path is a compile's result or a name, and a loaded model is called with no tensor the evaluator gives a
  device or shape (those are libcst's to read);
- a string naming a `.so` file is a comparison's operand or a statement of its own (a docstring), which no call or
  name receives, and none does in a module with deprecated calls; no module-level name is bound to an artifact path.

Deploy helpers mid-migration are such modules (``so = aot_compile(model, (x,))`` then ``return aot_load(so,
"cpu")``), and so is pre-commit's common case of one such file. Anything else the reading meets
(``NotSettled``) hands the whole module to libcst. ``tests/test_ast_flow.py`` compares the findings and the
summary with libcst's on every fixture and rule example and on generated modules.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

from aoti_lint.diagnostics import Applicability, Finding, Fix, Position
from aoti_lint.flows.example_inputs import ExampleInputs
from aoti_lint.flows.flow_summary import (
    CompileSite,
    FlowSummary,
    LoadSite,
    MigrationSite,
    ModelCall,
    Span,
)
from aoti_lint.flows.migration_verdicts import (
    ARGUMENTS_UNREAD,
    DEVICE_EFFECTS,
    DEVICE_INDEX_ZERO,
    DEVICE_NOT_LITERAL,
    ESCAPES,
    NEEDS_PACKAGE,
    NO_CONSTRAINT_SOLVER,
    NO_PRODUCER,
    NO_SAME_SIGNATURE,
    NOT_A_MODULE,
    OPTIONS_KEYS,
    OPTIONS_UNFOLLOWED,
    OPTIONS_UNPACKED,
    PRODUCER_BLOCKED,
    Verdict,
    by_hand,
    deprecation,
    device_index_needed,
    fix_title,
    foreign_torch,
    load_blocked,
    needs_torch,
    not_called,
    not_fixed,
    unsafe_reason,
)
from aoti_lint.flows.module_reader import last_parts
from aoti_lint.flows.values import (
    Artifact,
    Const,
    Exported,
    Loaded,
    Mapping,
    Qualified,
    Seq,
    device_of,
    int_of,
    parse_device,
    path_of,
)
from aoti_lint.knowledge.deprecated_api import (
    AOT_COMPILE,
    AOT_COMPILE_KEYWORDS,
    AOT_COMPILE_PARAMETERS,
    AOT_LOAD,
    AOT_LOAD_PARAMETERS,
    EXPORTED_PROGRAM_FACTORIES,
    LOAD_PACKAGE_PARAMETERS_SINCE,
    NEW_COMPILE,
    NEW_LOAD,
    OUTPUT_PATH_OPTION,
    PACKAGE_OPTION,
    DeprecatedSymbol,
)
from aoti_lint.knowledge.device_flow import (
    AOT_COMPILE_INDUCTOR,
    ARTIFACT_SUFFIXES,
    COMPILE_AND_PACKAGE,
    DIM,
    DIM_DYNAMIC,
    DIM_STATIC,
    DTYPES,
    EXPORT,
    LIKE_FACTORIES,
    MOVING_METHODS,
    OS_PATH_DIRNAME,
    OS_PATH_IDENTITY,
    OS_PATH_JOIN,
    OTHER_DEFAULT_DEVICE_SETTERS,
    PACKAGE_LOADERS,
    PATHLIB_PATH,
    PRESERVING_METHODS,
    SEQUENCE_BUILTINS,
    SET_DEFAULT_DEVICE,
    TENSOR_FACTORIES,
    TORCH_DEVICE,
)
from aoti_lint.model.bindings import ARGUMENT
from aoti_lint.model.parse import folds_names
from aoti_lint.model.semantic import SemanticModel, model_of
from aoti_lint.model.syntax_tree import children, source_lines

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class NotSettled(Exception):
    """Something this reading does not settle exactly as libcst's analysis: the module goes to libcst."""


@dataclass(frozen=True)
class AstFlow:
    """What libcst's reading of the module gives AOTI001/AOTI002 and the device-flow rules."""

    # The findings of both rules, before noqa comments, their fixes' edits deferred.
    findings: tuple[Finding, ...]
    summary: FlowSummary


_SYMBOLS = (AOT_COMPILE, AOT_LOAD)
# Every call the module reader sorts into compiles, loads and default-device setters (``module_reader``).
_SITE_SHORT_NAMES = last_parts(
    COMPILE_AND_PACKAGE,
    AOT_COMPILE_INDUCTOR,
    {AOT_COMPILE.qualified_name, AOT_LOAD.qualified_name, SET_DEFAULT_DEVICE},
    PACKAGE_LOADERS,
    OTHER_DEFAULT_DEVICE_SETTERS,
)
# The callees and attributes the evaluator gives a value to (``evaluator``): a value this reading does not build.
_SPECIAL_CALLEES = frozenset(
    {EXPORT, TORCH_DEVICE, "builtins.str"}
    | TENSOR_FACTORIES.keys()
    | LIKE_FACTORIES
    | DIM
    | PATHLIB_PATH
    | OS_PATH_JOIN
    | SEQUENCE_BUILTINS
    | OS_PATH_IDENTITY
    | OS_PATH_DIRNAME
)
_CALLEE_NAMES = last_parts(_SPECIAL_CALLEES)
_ATTRIBUTE_NAMES = last_parts(DTYPES, DIM_DYNAMIC, DIM_STATIC)
# Methods whose value the evaluator reads from their receiver (``ModuleEvaluator._method``): the value of a tensor, a
# program or a path, which this reading never gives, so theirs is none; and those that place a tensor.
_RECEIVER_METHODS = frozenset({"module", "resolve", "absolute"}) | PRESERVING_METHODS
_PLACING_METHODS = frozenset({"to"}) | MOVING_METHODS.keys()
_PROGRAM_FACTORY_NAMES = last_parts(EXPORTED_PROGRAM_FACTORIES)


def _names_so(value: object) -> bool:
    """Whether a constant's value (a string's or bytes') holds `.so`."""
    if type(value) is str:
        return ".so" in value
    return type(value) is bytes and b".so" in value


def read_flow(
    path: Path, display_path: str, text: str, tree: ast.Module, target_torch: tuple[int, int], noqa: Any
) -> AstFlow | None:
    """The module's ``AstFlow``, or None where libcst must read it. ``noqa``: the text's ``Suppressions``."""
    try:
        return _Reader(text, tree, target_torch).flow(path, display_path, noqa)
    except (NotSettled, RecursionError):
        return None


@dataclass
class _Site:
    """One deprecated call, as ``codemods.migration_plan`` plans it."""

    kind: str  # "compile" or "load"
    call: ast.Call
    symbol: DeprecatedSymbol
    arguments: dict[str, ast.expr]
    verdict: Verdict
    producer: _Site | None = None
    consumers: list[_Site] | None = None
    needs_producer: bool = False


class _Reader(ExampleInputs):
    def __init__(self, text: str, tree: ast.Module, target_torch: tuple[int, int]) -> None:
        if folds_names(text):
            raise NotSettled
        self.text, self.tree, self.target_torch = text, tree, target_torch
        self.lines = source_lines(text)
        self.model: SemanticModel = model_of(tree)
        self.parents: dict[int, ast.AST] = {}
        self.nodes: list[ast.AST] = []  # every node but the expression contexts, parents before children
        self.in_fstring: set[int] = set()
        # The strings that name a `.so`: a comparison's operands and statements of their own (a docstring) alone,
        # whose value no call or name receives (see ``_so_mentions``).
        self.so_strings: list[ast.Constant] = []
        stack: list[tuple[ast.AST, ast.AST | None, bool]] = [(tree, None, False)]
        while stack:
            node, parent, formatted = stack.pop()
            self.nodes.append(node)
            if parent is not None:
                self.parents[id(node)] = parent
            if formatted:
                self.in_fstring.add(id(node))
            if type(node) is ast.Constant and _names_so(node.value):
                if formatted or type(parent) not in (ast.Compare, ast.Expr):
                    raise NotSettled  # a path the migration plan follows, or one libcst places otherwise
                self.so_strings.append(node)
            inner = formatted or type(node) is ast.JoinedStr
            stack.extend((child, node, inner) for child in reversed(children(node)))
        # Calls in the order libcst meets them: by where they start, one around another first.
        self.calls: list[ast.Call] = sorted(
            (node for node in self.nodes if isinstance(node, ast.Call)),
            key=lambda call: (call.lineno, call.col_offset, -(call.end_lineno or 0), -(call.end_col_offset or 0)),
        )
        # The target of each plain one-name assignment, where libcst's single assignment of a name is read.
        self.assignments: dict[tuple[int, int], ast.Assign | ast.AnnAssign] = {}
        self.parameters: dict[tuple[int, int], ast.arg] = {}
        for node in self.nodes:
            if type(node) is ast.Assign and len(node.targets) == 1 and type(node.targets[0]) is ast.Name:
                self.assignments[self._at(node.targets[0])] = node
            elif type(node) is ast.AnnAssign and type(node.target) is ast.Name:
                self.assignments[self._at(node.target)] = node
            elif type(node) is ast.arg:
                self.parameters[self._at(node)] = node
        self.self_attributes = self._self_attributes()
        # The loads of the new API (``aoti_load_package``, ``load_package``), each call with its index among the
        # summary's loads: in a module without a deprecated call, those are all its loads.
        self.package_loads: dict[int, int] = {}
        self._memo: dict[int, object] = {}
        self._busy: set[int] = set()

    # -- positions and names ----------------------------------------------------------------------------

    def _column(self, line: int, offset: int) -> int:
        text = self.lines[line - 1]
        return offset if text.isascii() else len(text.encode()[:offset].decode(errors="replace"))

    def _at(self, node: Any) -> tuple[int, int]:
        """libcst's (line, column) of where a node starts: columns in characters, not bytes."""
        return (node.lineno, self._column(node.lineno, node.col_offset))

    def span(self, node: Any) -> Span:
        start = self._at(node)
        return Span(start[0], start[1] + 1, node.end_lineno, self._column(node.end_lineno, node.end_col_offset) + 1)

    def parent(self, node: ast.AST) -> ast.AST | None:
        return self.parents.get(id(node))

    def may_name(self, node: Any, short_names: frozenset[str] | set[str]) -> bool:
        """``QualifiedNames.may_name``: whether the node's qualified names can end in one of ``short_names``."""
        return self.model.may_name(node, short_names)

    def names(self, node: ast.AST) -> set[str]:
        """The qualified names of a name or attribute chain (``SemanticModel.qualified_names``)."""
        if id(node) in self.in_fstring:
            raise NotSettled  # before Python 3.12, ast may place what an f-string holds elsewhere
        names = self.model.qualified_names(node)
        if self.model.follow is not None and names != self.model.qualified_names(node, across_modules=False):
            raise NotSettled  # named through another module of the project: the fix's verdict is libcst's reading's
        return names

    def names_among(self, node: ast.AST, short_names: frozenset[str]) -> set[str]:
        return self.names(node) if self.may_name(node, short_names) else set()

    # -- the module's bindings, as ``dataflow.ModuleFacts`` reads them ------------------------------------

    def single_value(self, name: ast.Name) -> ast.expr | None:
        binding = self.model.only_binding(name)
        return None if binding is None else binding.value

    def lone_parameter(self, name: ast.Name) -> ast.arg | None:
        binding = self.model.only_binding(name)
        return binding.node if binding is not None and binding.kind == ARGUMENT else None  # type: ignore[return-value]

    def references(self, name: ast.Name) -> list[tuple[int, int]] | None:
        binding = self.model.only_binding(name)
        reads = None if binding is None else self.model.references(binding)
        return None if reads is None else [self._at(read) for read in reads]

    def may_be_import(self, name: ast.Name) -> bool:
        return self.model.may_be_import(name)

    # -- values, as ``analysis.evaluator`` gives them -----------------------------------------------------

    def _eval(self, node: Any) -> object:
        if id(node) in self.in_fstring:
            if self._unknown_attribute(node):
                return None  # as anywhere else: no name or position of it is read (`f"{options.keys()}"`)
            raise NotSettled
        kind = type(node)
        if kind is ast.Constant:
            value = node.value
            # libcst: a string's value, an integer's, and the names None, True and False.
            if value is None or type(value) in (str, int, bool):
                return Const(value)
            return None
        if kind is ast.UnaryOp:
            if type(node.op) is not ast.USub:
                return None
            operand = int_of(self.eval(node.operand))
            return None if operand is None else Const(-operand)
        if kind is ast.Name:
            return self._eval_name(node)
        if kind is ast.Tuple or kind is ast.List:
            items: list[object] = []
            for element in node.elts:
                if type(element) is ast.Starred:
                    value = self.eval(element.value)
                    if not isinstance(value, Seq):
                        return None
                    items.extend(value.items)
                else:
                    items.append(self.eval(element))
            return Seq(tuple(items))
        if kind is ast.Dict:
            pairs = []
            for key_node, value_node in zip(node.keys, node.values, strict=True):
                if key_node is None:
                    return None
                key = self.eval(key_node)
                if not isinstance(key, Const):
                    return None
                pairs.append((key.value, self.eval(value_node)))
            return Mapping(tuple(pairs))
        if kind is ast.Attribute:
            for name in self.names_among(node, _ATTRIBUTE_NAMES):
                if name in DTYPES or name in DIM_DYNAMIC or name in DIM_STATIC:
                    return Qualified(name)
            if type(node.value) is ast.Name and node.value.id == "self":
                owner = self._enclosing_class(node)
                values = self.self_attributes.get((id(owner), node.attr), []) if owner is not None else []
                return self.eval(values[0]) if len(values) == 1 else None
            if node.attr == "parent":
                raise NotSettled  # a path's parent
            return None
        if kind is ast.Subscript:
            return self._eval_subscript(node)
        if kind is ast.BinOp:
            # A path built with `/` starts from a path this reading never gives; `+` joins two strings.
            left, right = self.eval(node.left), self.eval(node.right)
            if type(node.op) is not ast.Add or not (isinstance(left, Const) and isinstance(right, Const)):
                return None
            if isinstance(left.value, str) and isinstance(right.value, str):
                return Const(left.value + right.value)
            return None
        if kind is ast.JoinedStr:
            raise NotSettled  # libcst reads an f-string's parts as written
        if kind is ast.Call:
            return self._eval_call(node)
        return None

    @staticmethod
    def _unknown_attribute(node: Any) -> bool:
        """An attribute that ``_eval`` gives no value without asking what it names: not `self.x`, no dtype or `Dim`
        attribute, no path's `parent`."""
        return (
            type(node) is ast.Attribute
            and node.attr not in _ATTRIBUTE_NAMES
            and node.attr != "parent"
            and not (type(node.value) is ast.Name and node.value.id == "self")
        )

    def _eval_name(self, node: ast.Name) -> object:
        # (The evaluator never gives a tensor here, so a name changed in place needs no care.)
        bound = self.single_value(node)
        if bound is not None:
            return self.eval(bound)
        parameter = self.lone_parameter(node)
        if parameter is not None:
            default = self._default_of(parameter)
            if default is None:
                return None
            value = self.eval(default)
            return value if isinstance(value, Const) and self._left_to_default(parameter) else None
        if node.id == "__file__":
            raise NotSettled
        return None

    def _left_to_default(self, parameter: ast.arg) -> bool:
        """Whether every call of the parameter's function leaves it to its default, as ``ModuleEvaluator``'s
        ``_parameter_default`` reads it: a function of no class, undecorated, called in this module, by its name
        (``SemanticModel.references`` of its def)."""
        function = self.parent(self.parent(parameter))  # type: ignore[arg-type]  # an ast.arguments, see _default_of
        if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
            raise NotSettled  # a lambda's: libcst's evaluator looks for the def around it
        if function.decorator_list or self._enclosing_class(function) is not None:
            return False
        binding = self.model.binding_made_by(function)
        reads = None if binding is None else self.model.references(binding)
        if not reads:
            return False
        arguments = function.args
        positional = [*arguments.posonlyargs, *arguments.args]
        position = positional.index(parameter) if parameter in positional else None
        for read in reads:
            call = self.parent(read)
            if type(call) is not ast.Call or call.func is not read:
                return False
            if any(type(item) is ast.Starred for item in call.args) or any(
                item.arg is None or item.arg == parameter.arg for item in call.keywords
            ):
                return False
            if position is not None and len(call.args) > position:
                return False
        return True

    def _default_of(self, parameter: ast.arg) -> ast.expr | None:
        arguments = self.parent(parameter)
        if type(arguments) is not ast.arguments:
            raise NotSettled
        positional = [*arguments.posonlyargs, *arguments.args]
        if parameter in positional:
            index = positional.index(parameter) - (len(positional) - len(arguments.defaults))
            return arguments.defaults[index] if index >= 0 else None
        if parameter in arguments.kwonlyargs:
            return arguments.kw_defaults[arguments.kwonlyargs.index(parameter)]
        return None  # *args, **kwargs

    def _eval_subscript(self, node: ast.Subscript) -> object:
        if type(node.slice) in (ast.Slice, ast.Tuple):
            # libcst: a slice, or several indices (`x[a, b]`), has no value; `x[(a, b)]` has one index, a tuple,
            # which is no constant either.
            return None
        base = self.eval(node.value)
        key = self.eval(node.slice)
        if not isinstance(key, Const):
            return None
        if isinstance(base, Seq) and isinstance(key.value, int) and -len(base.items) <= key.value < len(base.items):
            return base.items[key.value]
        if isinstance(base, Mapping):
            matches = [value for item_key, value in base.items if item_key == key.value]
            return matches[-1] if matches else None
        return None

    def _eval_call(self, call: ast.Call) -> object:
        site = self.sites_by_call.get(id(call))
        if site is not None:
            return Artifact(site[1]) if site[0].kind == "compile" else Loaded(site[1])
        package_load = self.package_loads.get(id(call))
        if package_load is not None:
            return Loaded(package_load)
        special = self.names_among(call.func, _CALLEE_NAMES) & _SPECIAL_CALLEES
        if special:
            if special <= SEQUENCE_BUILTINS and len(call.args) == 1 and not call.keywords:
                if type(call.args[0]) is ast.Starred:
                    raise NotSettled  # libcst's evaluator reads the starred value itself
                value = self.eval(call.args[0])  # `tuple(x)`, `list(x)`: x's items, when it is a sequence
                return value if isinstance(value, Seq) else None
            raise NotSettled  # a tensor factory, a device, an export, a path builder: not read here
        if type(call.func) is ast.Attribute and call.func.attr in _PLACING_METHODS:
            raise NotSettled
        if type(call.func) is ast.Attribute and call.func.attr in _RECEIVER_METHODS:
            self.eval(call.func.value)
        if type(call.func) is ast.Name and not call.args and not call.keywords and call.func.id in self.model.functions:
            raise NotSettled  # a helper of the module: libcst's evaluator reads what it returns
        return None

    # -- what the module reader finds ---------------------------------------------------------------------

    def argument(self, call: ast.Call, position: int | None, keyword: str | None) -> ast.expr | None:
        """``ModuleReader.argument``: the expression passed as ``keyword`` or at ``position`` (before any
        ``*args``)."""
        for item in call.keywords:
            if item.arg is not None and item.arg == keyword:
                return item.value
        if position is None:
            return None
        positional = []
        for arg in call.args:
            if type(arg) is ast.Starred:
                break
            positional.append(arg)
        return positional[position] if position < len(positional) else None

    @staticmethod
    def unpacks(call: ast.Call) -> bool:
        return any(type(arg) is ast.Starred for arg in call.args) or any(item.arg is None for item in call.keywords)

    def flow(self, path: Path, display_path: str, noqa: Any) -> AstFlow:
        self.sites_by_call: dict[int, tuple[_Site, int]] = {}
        compiles: list[_Site] = []
        loads: list[_Site] = []
        # Calls of `torch._inductor.aot_compile` (what torch's own export helpers call): summarised as compiles in a
        # module that has no other site, whose compiles they would share an index with.
        inductor_compiles: list[ast.Call] = []
        package_loads: list[ast.Call] = []
        for call in self.calls:
            if type(call.func) is ast.Call or not self.may_name(call.func, _SITE_SHORT_NAMES):
                continue
            names = self.names(call.func)
            if names == AOT_COMPILE_INDUCTOR:
                inductor_compiles.append(call)
                continue
            if names and names <= PACKAGE_LOADERS.keys():
                package_loads.append(call)
                continue
            if names & (COMPILE_AND_PACKAGE | AOT_COMPILE_INDUCTOR | PACKAGE_LOADERS.keys()):
                raise NotSettled  # the new API, or the other compile bound to something else too: read by libcst
            if names & ({SET_DEFAULT_DEVICE} | OTHER_DEFAULT_DEVICE_SETTERS):
                raise NotSettled
            for symbol, found in ((AOT_COMPILE, compiles), (AOT_LOAD, loads)):
                if symbol.qualified_name in names:
                    if names != {symbol.qualified_name}:
                        raise NotSettled  # bound to something else too: the message quotes libcst's code
                    site = _Site(
                        "compile" if symbol is AOT_COMPILE else "load", call, symbol, {}, Verdict(Applicability.SAFE)
                    )
                    self.sites_by_call[id(call)] = (site, len(found))
                    found.append(site)
                    break
        if inductor_compiles and (compiles or loads):
            raise NotSettled
        if package_loads and (compiles or loads or inductor_compiles):
            raise NotSettled  # the index of each load, old or new, and the plan of a flow through both: libcst's
        if self.so_strings and (compiles or loads):
            raise NotSettled  # a `.so` no site accounts for: the migration plan's escape check
        self.package_loads = {id(call): index for index, call in enumerate(package_loads)}
        sites = [self.sites_by_call[id(call)][0] for call in self.calls if id(call) in self.sites_by_call]
        self._plan(sites, compiles, loads)
        summary = FlowSummary(
            path=display_path,
            directory=str(path.resolve().parent),
            compiles=tuple(self._compile_site(site.call) for site in compiles)
            + tuple(self._inductor_compile_site(call) for call in inductor_compiles),
            loads=tuple(self._load_site(site.call) for site in loads)
            + tuple(self._package_load_site(call) for call in package_loads),
            calls=self._model_calls() if loads or package_loads else (),
            constants=self._artifact_constants(),
            migrations=tuple(self._migration_site(site, noqa, display_path) for site in sites),
            so_mentions=self._so_mentions(),
        )
        return AstFlow(tuple(self._findings(display_path)), summary)

    def _so_mentions(self) -> tuple[tuple[str, int, int], ...]:
        """``ModuleFlow.so_mentions``: where a string names a `.so` file. Each one is a comparison's operand or a
        statement of its own, so no call is given a `.so` path (``ModuleFlow.path_arguments`` has none)."""
        if not self.so_strings:
            return ()
        from aoti_lint.flows.so_mentions import placed_mentions  # compiles patterns: only where a .so is named

        found = []
        for node in self.so_strings:
            placed = placed_mentions(node, self.lines)
            if placed is None:
                raise NotSettled
            found.extend(placed)
        return tuple(sorted(found, key=lambda mention: (mention[1], mention[2])))

    def _model_calls(self) -> tuple[ModelCall, ...]:
        """The calls of a loaded model (``ModuleFlow.summary``). Their arguments hold no tensor this reading knows (it
        gives none a device or shape: what would is libcst's to read), so none is listed (``SiteReader.model_call``)."""
        found = []
        for call in self.calls:
            if type(call.func) not in (ast.Name, ast.Attribute):
                continue
            loaded = self.eval(call.func)
            if isinstance(loaded, Loaded):
                arguments: list[Any] = [*call.args, *call.keywords]
                for argument in sorted(arguments, key=lambda item: (item.lineno, item.col_offset)):
                    self.eval(argument.value if isinstance(argument, ast.keyword | ast.Starred) else argument)
                found.append(ModelCall(self.span(call), loaded.load_index, ()))
        return tuple(found)

    def _self_attributes(self) -> dict[tuple[int, str], list[ast.expr | None]]:
        """``self.x = ...`` values per class (``module_reader.scan_module``): a value not tracked counts twice."""
        found: dict[tuple[int, str], list[ast.expr | None]] = {}

        def bind(target: ast.expr, value: ast.expr | None) -> None:
            if isinstance(target, ast.Tuple | ast.List):
                for element in target.elts:
                    bind(element.value if isinstance(element, ast.Starred) else element, None)
            elif isinstance(target, ast.Attribute) and type(target.value) is ast.Name and target.value.id == "self":
                owner = self._enclosing_class(target)
                if owner is not None:
                    found.setdefault((id(owner), target.attr), []).extend(
                        [value] if value is not None else [None, None]
                    )

        for node in self.nodes:
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    bind(target, node.value)
            elif isinstance(node, ast.AnnAssign):
                if node.value is not None:
                    bind(node.target, node.value)
            elif isinstance(node, ast.AugAssign):
                bind(node.target, None)
        return found

    def _enclosing_class(self, node: ast.AST) -> ast.AST | None:
        current = self.parent(node)
        while current is not None and type(current) is not ast.ClassDef:
            current = self.parent(current)
        return current

    def _compile_site(self, call: ast.Call) -> CompileSite:
        model = self.argument(call, 0, "f")
        device, inputs = self._example_inputs(model, self.argument(call, 1, "args"), self.argument(call, 2, "kwargs"))
        self._no_output_path(self.argument(call, None, "options"))
        return CompileSite(self.span(call), device, None, self._dynamic_dims(call, inputs), None)

    def _inductor_compile_site(self, call: ast.Call) -> CompileSite:
        """A call of `torch._inductor.aot_compile` (``SiteReader.compile_site``): the example inputs' device; the
        program's inputs stand for its dynamic dimensions, and this reading knows no program's."""
        model = self.argument(call, 0, "gm")
        device, _ = self._example_inputs(model, self.argument(call, 1, "args"), self.argument(call, 2, "kwargs"))
        self._no_output_path(self.argument(call, None, "options"))
        if model is not None and isinstance(self.eval(model), Exported):
            raise NotSettled
        return CompileSite(self.span(call), device, None, None, None)

    def _no_output_path(self, options_node: ast.expr | None) -> None:
        """Raise ``NotSettled`` where a compile's options may name its output path: the plan's business. Only the
        keys of a dict are read, written out or bound once to a name: its values matter only under that key."""
        if type(options_node) is ast.Name and type(self.single_value(options_node)) is ast.Dict:
            options_node = self.single_value(options_node)
        if type(options_node) is ast.Dict and None not in options_node.keys:
            if any(self.eval(key) == Const(OUTPUT_PATH_OPTION) for key in options_node.keys):
                raise NotSettled
        elif options_node is not None:
            options = self.eval(options_node)
            if isinstance(options, Mapping) and any(key == OUTPUT_PATH_OPTION for key, _ in options.items):
                raise NotSettled

    def _load_site(self, call: ast.Call) -> LoadSite:
        path_node = self.argument(call, 0, "so_path")
        path_value = self.eval(path_node)
        compile_index = path_value.compile_index if isinstance(path_value, Artifact) else None
        if path_of(path_value) is not None:
            raise NotSettled  # a path written out: the plan's business
        base = path_node
        while type(base) is ast.Attribute:
            base = base.value
        if type(base) is ast.Name and self.may_be_import(base):
            raise NotSettled  # maybe a constant another module holds
        device_node = self.argument(call, 1, "device")
        device = device_of(self.eval(device_node))
        return LoadSite(self.span(call), "aot_load", compile_index, None, device, None, None)

    def _package_load_site(self, call: ast.Call) -> LoadSite:
        """A load of the new API, as ``SiteReader.load_site`` reads it: the package's path where it is written out,
        and the device index where it is a number."""
        names = self.names(call.func)
        path_node = self.argument(call, 0, "path")
        path_value = self.eval(path_node) if path_node is not None else None
        compile_index = path_value.compile_index if isinstance(path_value, Artifact) else None
        artifact = path_of(path_value)
        if artifact is None and path_node is not None:
            base = path_node
            while type(base) is ast.Attribute:
                base = base.value
            if type(base) is ast.Name and self.may_be_import(base):
                raise NotSettled  # maybe a constant another module holds, which libcst's scopes name
        index_node = self.argument(call, max(PACKAGE_LOADERS[name] for name in names), "device_index")
        if type(index_node) is ast.Attribute and index_node.attr == "index":
            raise NotSettled  # `device.index`: the device is libcst's to read
        device_index = int_of(self.eval(index_node)) if index_node is not None else None
        api = "aoti_load_package" if NEW_LOAD in names else "load_package"
        return LoadSite(self.span(call), api, compile_index, artifact, None, device_index, None)

    def _artifact_constants(self) -> tuple[tuple[str, str], ...]:
        """None here: a module-level name bound to an artifact path is the plan's business."""
        for statement in self.tree.body:
            value: ast.expr | None
            if isinstance(statement, ast.Assign):
                targets, value = statement.targets, statement.value
            elif isinstance(statement, ast.AnnAssign):
                targets, value = [statement.target], statement.value
            else:
                continue
            if any(type(target) is ast.Name for target in targets):
                path = path_of(self.eval(value))
                if path is not None and path.endswith(ARTIFACT_SUFFIXES):
                    raise NotSettled
        return ()

    # -- the verdicts, as ``codemods.migration_plan`` gives them ------------------------------------------

    def _plan(self, sites: list[_Site], compiles: list[_Site], loads: list[_Site]) -> None:
        for site in sites:
            verdict, symbol = site.verdict, site.symbol
            if self.target_torch < symbol.replacement_since:
                verdict.lower(Applicability.DISPLAY_ONLY, needs_torch(symbol, self.target_torch))
            positional, keywords = (
                (AOT_COMPILE_PARAMETERS, AOT_COMPILE_KEYWORDS) if site.kind == "compile" else (AOT_LOAD_PARAMETERS, ())
            )
            arguments = _bind(site.call, positional, keywords)
            if arguments is None or positional[0] not in arguments or positional[1] not in arguments:
                verdict.lower(Applicability.DISPLAY_ONLY, ARGUMENTS_UNREAD)
            site.arguments = arguments or {}
        if sites:
            name = self._torch_binding() or "torch"
            foreign = [site for site in sites if _root_name(site.call.func) != name]
            if foreign and not self.model.binds_only_a_module(name, "torch"):
                for site in foreign:
                    site.verdict.lower(Applicability.DISPLAY_ONLY, foreign_torch(name))
        for site in compiles:
            self._analyse_compile(site)
        for site in loads:
            self._analyse_load(site)
        self._link(compiles, loads)

    def _torch_binding(self) -> str | None:
        """``codemods.expressions.torch_binding``: the name a module-level ``import torch[.x] [as t]`` binds."""
        for statement in self.tree.body:
            if type(statement) is not ast.Import:
                continue
            for alias in statement.names:
                if alias.asname is None and alias.name.split(".")[0] == "torch":
                    return "torch"
                if alias.name == "torch" and alias.asname is not None:
                    return alias.asname
        return None

    def _analyse_compile(self, site: _Site) -> None:
        verdict, args = site.verdict, site.arguments
        for keyword, bad, reason in (
            ("disable_constraint_solver", False, NO_CONSTRAINT_SOLVER),
            ("same_signature", True, NO_SAME_SIGNATURE),
        ):
            if keyword in args and not _is_constant(args[keyword], bad):
                verdict.lower(Applicability.DISPLAY_ONLY, reason)
        if "f" in args:
            self._analyse_callable(site, args["f"])
        if "options" in args:
            self._analyse_options(site, args["options"])

    def _analyse_callable(self, site: _Site, f: ast.expr) -> None:
        if type(f) is ast.Lambda or (
            type(f) is ast.Call and self.may_name(f.func, {"partial"}) and "functools.partial" in self.names(f.func)
        ):
            site.verdict.lower(Applicability.DISPLAY_ONLY, NOT_A_MODULE)
            return
        if type(f) is ast.Name and f.id in self.model.functions:
            raise NotSettled  # a function of the module: libcst's scopes tell which binding it reads
        value = self.single_value(f) if type(f) is ast.Name else None
        if type(value) is ast.Call and self.may_name(value.func, _PROGRAM_FACTORY_NAMES):
            raise NotSettled  # maybe an exported program (``MigrationPlan._analyse_callable``)
        # (`ep.module()` of a program exported here changes the rewrite, not its verdict.)

    def _analyse_options(self, site: _Site, options: ast.expr) -> None:
        """``codemods.options.analyse_options``, for a literal dict of keys the fix keeps."""
        if type(options) is ast.Name:
            raise NotSettled  # the dict's keys are read where it is built and updated: libcst's scopes
        if type(options) is not ast.Dict:
            site.verdict.lower(Applicability.DISPLAY_ONLY, OPTIONS_UNFOLLOWED)
            return
        for key in options.keys:
            if key is None:
                site.verdict.lower(Applicability.DISPLAY_ONLY, OPTIONS_UNPACKED)
                return
            value = _string_value(key)
            if value is None:
                site.verdict.lower(Applicability.DISPLAY_ONLY, OPTIONS_KEYS)
                return
            if value in (OUTPUT_PATH_OPTION, PACKAGE_OPTION):
                raise NotSettled

    def _analyse_load(self, site: _Site) -> None:
        verdict = site.verdict
        if "device" not in site.arguments:
            return
        value = site.arguments["device"]
        if type(value) in (ast.Call, ast.JoinedStr):
            raise NotSettled  # torch.device(...), f"cuda:{rank}": read by libcst
        literal = _string_value(value)
        device = parse_device(literal.strip()) if literal is not None else None
        if device is None:
            effects = _effects(value)
            if ast.Call in effects:
                raise NotSettled  # whether each call only reads a value: libcst's names
            if effects:
                verdict.lower(Applicability.DISPLAY_ONLY, DEVICE_EFFECTS)
                return
            verdict.lower(Applicability.UNSAFE, DEVICE_NOT_LITERAL)
            return
        if device.index is None or device.type == "cpu":
            return
        if self.target_torch >= LOAD_PACKAGE_PARAMETERS_SINCE["device_index"]:
            return
        if device.index == 0:
            verdict.lower(Applicability.UNSAFE, DEVICE_INDEX_ZERO)
        else:
            verdict.lower(Applicability.DISPLAY_ONLY, device_index_needed(str(device)))

    def _link(self, compiles: list[_Site], loads: list[_Site]) -> None:
        calls = {id(site.call): site for site in compiles}
        for load in loads:
            path = load.arguments.get("so_path")
            if type(path) is ast.Call and id(path) in calls:
                load.producer = calls[id(path)]
            elif type(path) is ast.Name:
                value = self.single_value(path)
                if type(value) is ast.Call and id(value) in calls:
                    load.producer = calls[id(value)]
                elif type(value) is ast.Call and self.may_name(value.func, {NEW_COMPILE.rsplit(".", 1)[-1]}):
                    raise NotSettled
                else:
                    load.needs_producer = True
                    load.verdict.lower(Applicability.UNSAFE, NEEDS_PACKAGE)
            elif (_string_value(path) or "").endswith(".pt2"):
                continue  # the old loader on a package: the new loader is the fix
            else:
                load.needs_producer = True
                load.verdict.lower(Applicability.UNSAFE, NEEDS_PACKAGE)
            if load.producer is not None:
                load.producer.consumers = [*(load.producer.consumers or []), load]
        for site in compiles:
            self._settle_compile(site)
        for load in loads:
            if load.producer is not None:
                producer = load.producer.verdict
                if producer.applicability is Applicability.DISPLAY_ONLY:
                    load.verdict.lower(Applicability.DISPLAY_ONLY, PRODUCER_BLOCKED)
                elif producer.applicability is Applicability.UNSAFE:
                    load.verdict.lower(Applicability.UNSAFE, producer.reason)

    def _settle_compile(self, site: _Site) -> None:
        verdict = site.verdict
        if verdict.applicability is Applicability.DISPLAY_ONLY:
            return
        consumers = site.consumers or []
        for load in consumers:
            if load.verdict.applicability is Applicability.DISPLAY_ONLY:
                verdict.lower(Applicability.DISPLAY_ONLY, load_blocked(load.verdict.reason))
                return
            if load.verdict.applicability is Applicability.UNSAFE:
                verdict.lower(Applicability.UNSAFE, load.verdict.reason)
        consumer_paths = {id(load.arguments["so_path"]) for load in consumers}
        consumer_places = {self._at(load.arguments["so_path"]) for load in consumers}
        parent = self.parent(site.call)
        bound = None
        if type(parent) is ast.Assign and len(parent.targets) == 1 and type(parent.targets[0]) is ast.Name:
            bound = parent.targets[0]
        elif type(parent) is ast.AnnAssign and type(parent.target) is ast.Name and parent.value is site.call:
            bound = parent.target
        if bound is not None:
            uses = self.references(bound)
            if uses is None or any(use not in consumer_places for use in uses):
                verdict.lower(Applicability.UNSAFE, ESCAPES)
        elif type(parent) is not ast.Expr and id(site.call) not in consumer_paths:
            verdict.lower(Applicability.UNSAFE, ESCAPES)

    # -- the summary's migration sites and the rules' findings ---------------------------------------------

    def _migration_site(self, site: _Site, noqa: Any, display_path: str) -> MigrationSite:
        row, column = self._at(site.call.func)
        index = self.sites_by_call[id(site.call)][1]
        path = site.arguments.get("so_path") if site.kind == "load" else None
        code = "AOTI001" if site.kind == "compile" else "AOTI002"
        at = Position(row, column + 1)
        return MigrationSite(
            kind=site.kind,
            row=row,
            column=column + 1,
            index=index,
            applicability=site.verdict.applicability.value,
            reason=site.verdict.reason,
            path_name=path.id if type(path) is ast.Name else None,
            path_blocked=False,
            rewrites_path=False,
            param=self._parameter_of(path) if site.kind == "load" else None,
            suppressed=noqa.suppresses(Finding(code, "", display_path, at, at)),
            so_name=None,  # no string names a `.so`
            needs_producer=site.needs_producer,
        )

    def _parameter_of(self, node: ast.expr | None) -> tuple[str, int, str] | None:
        """``ModuleFlow._parameter_of``: (function, position, name) when ``node`` reads a parameter of a
        module-level function."""
        if type(node) is not ast.Name:
            return None
        parameter = self.lone_parameter(node)
        if parameter is None:
            return None
        arguments = self.parent(parameter)
        function = self.parent(arguments) if arguments is not None else None
        if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
            raise NotSettled  # a lambda's: libcst looks for the function around it
        if self.parent(function) is not self.tree:
            return None
        positional = [*function.args.posonlyargs, *function.args.args]
        position = next((i for i, p in enumerate(positional) if p is parameter), -1)
        return (function.name, position, node.id)

    def _findings(self, display_path: str) -> list[Finding]:
        """Every reference to the deprecated functions, called or not, as ``DeprecatedReference`` reports it."""
        from aoti_lint.rules import DeprecatedAotCompile, DeprecatedAotLoad

        rules = {AOT_COMPILE.qualified_name: DeprecatedAotCompile, AOT_LOAD.qualified_name: DeprecatedAotLoad}
        aliases = self.model.import_aliases
        # The `as` names of imports of a name spelled as the API's: another `as` name is named after what its
        # import names (`from torch._inductor import config as inductor_config`), never the API.
        short_names = {symbol.short_name for symbol in _SYMBOLS}
        api_aliases = {
            alias.asname
            for statement in self.nodes
            if type(statement) is ast.Import or type(statement) is ast.ImportFrom
            for alias in statement.names
            if alias.asname is not None and alias.name.rpartition(".")[2] in short_names
        }
        if self.model.follow is not None and (self.model.from_imported or self.model.module.star_imports):
            # A name imported from another module of the project may be the API whatever it is spelled:
            # ``DeprecatedReference``'s reading follows each one.
            raise NotSettled
        found: list[Finding] = []
        node: Any
        # `name = <the function>` then `name(...)`: ``DeprecatedReference.visit_Call`` follows the name with libcst
        called_aliases = {
            node.targets[0].id
            for node in self.nodes
            if type(node) is ast.Assign
            and len(node.targets) == 1
            and type(node.targets[0]) is ast.Name
            and type(node.value) in (ast.Attribute, ast.Name, ast.Call)
            and (
                _looks_up_the_api(node.value)
                if type(node.value) is ast.Call
                else self.may_name(node.value, short_names) and bool(self.names(node.value) & _QUALIFIED)
            )
        }
        if called_aliases and any(
            type(node) is ast.Call and type(node.func) is ast.Name and node.func.id in called_aliases
            for node in self.nodes
        ):
            raise NotSettled
        for node in self.nodes:
            kind = type(node)
            if kind is ast.Attribute:
                symbols = [symbol for symbol in _SYMBOLS if node.attr == symbol.short_name]
            elif kind is ast.Name:
                # A name libcst may resolve to the API: spelled as one of it, or the `as` name of an import of one.
                symbols = [symbol for symbol in _SYMBOLS if node.id == symbol.short_name or node.id in api_aliases]
            else:
                if kind in _NAME_HOLDERS and _binds_a_name(node, aliases):
                    raise NotSettled  # `global aot_load`, `except E as aot_load`: libcst may name it the API
                if kind is ast.Call and _looks_up_the_api(node):
                    raise NotSettled  # `getattr(torch._export, "aot_load")`: ``DeprecatedReference.visit_Call``
                continue
            if symbols:
                names = self.names(node)
                found += [
                    self._finding(rules[s.qualified_name], s, node, display_path)
                    for s in symbols
                    if s.qualified_name in names
                ]
        return found

    def _finding(self, rule: Any, symbol: DeprecatedSymbol, node: Any, display_path: str) -> Finding:
        span = self.span(node)
        message = deprecation(symbol)
        parent = self.parent(node)
        found = self.sites_by_call.get(id(parent)) if type(parent) is ast.Call and parent.func is node else None
        if found is None:
            fix = Fix(Applicability.DISPLAY_ONLY, not_called(symbol))
        else:
            verdict = found[0].verdict
            if found[0].needs_producer:  # alone, as ``MigrationPlan`` without a project plan judges it
                verdict = Verdict(verdict.applicability, verdict.reason)
                verdict.lower(Applicability.DISPLAY_ONLY, NO_PRODUCER)
            if verdict.applicability is Applicability.DISPLAY_ONLY:
                fix = Fix(Applicability.DISPLAY_ONLY, by_hand(verdict.reason))
                message += not_fixed(verdict.reason)
            else:
                fix = Fix(
                    verdict.applicability,
                    fix_title(found[0].kind, verdict),
                    deferred=True,
                    reason=unsafe_reason(verdict),
                )
        return Finding(
            code=rule.code,
            message=message,
            path=display_path,
            start=Position(span.row, span.column),
            end=Position(span.end_row, span.end_column),
            severity=rule.severity,
            fix=fix,
            url=rule.url(),
            data=node,
        )


def _effects(node: ast.AST) -> set[type]:
    """The kinds of node with an effect in an expression (``MigrationPlan._has_effects``): a lambda's body runs
    only when called."""
    found: set[type] = set()
    pending = [node]
    while pending:
        current = pending.pop()
        kind = type(current)
        if kind in (ast.Await, ast.Yield, ast.YieldFrom, ast.NamedExpr, ast.Call):
            found.add(ast.Yield if kind is ast.YieldFrom else kind)
        if kind is not ast.Lambda:
            pending.extend(children(current))
    return found


# Nodes that hold a name libcst visits as a name node and ``ast`` as a string (``_binds_a_name``).
_NAME_HOLDERS = frozenset(
    {ast.Global, ast.Nonlocal, ast.ExceptHandler, ast.MatchAs, ast.MatchStar, ast.MatchMapping}
    | {getattr(ast, name) for name in ("TypeVar", "ParamSpec", "TypeVarTuple") if hasattr(ast, name)}
)
_SHORT_NAMES = frozenset(symbol.short_name for symbol in _SYMBOLS)
_QUALIFIED = frozenset(symbol.qualified_name for symbol in _SYMBOLS)


def _looks_up_the_api(call: ast.Call) -> bool:
    """Whether ``call`` is `getattr(x, "aot_compile")` (or `"aot_load"`)."""
    func, args = call.func, call.args
    return (
        type(func) is ast.Name
        and func.id == "getattr"
        and len(args) >= 2
        and type(args[1]) is ast.Constant
        and args[1].value in _SHORT_NAMES
    )


def _binds_a_name(node: Any, aliases: frozenset[str] | set[str]) -> bool:
    """Whether ``node`` spells a deprecated function's name (or an import's `as` name) where libcst holds a name
    node that ``ast`` does not: `global`/`nonlocal`, `except ... as`, a match capture."""
    names: list[str] = []
    kind = type(node)
    if kind is ast.Global or kind is ast.Nonlocal:
        names = list(node.names)
    elif kind in (ast.ExceptHandler, ast.MatchAs, ast.MatchStar):
        names = [node.name] if node.name else []
    elif kind is ast.MatchMapping:
        names = [node.rest] if node.rest else []
    else:  # a type parameter (Python 3.12)
        names = [node.name]
    return any(name in _SHORT_NAMES or name in aliases for name in names)


def _bind(call: ast.Call, positional: tuple[str, ...], keywords: tuple[str, ...]) -> dict[str, ast.expr] | None:
    """``codemods.expressions.bind``: the call's arguments by parameter name; None when that cannot be done."""
    bound: dict[str, ast.expr] = {}
    for index, arg in enumerate(call.args):
        if type(arg) is ast.Starred or index >= len(positional):
            return None
        bound[positional[index]] = arg
    for item in call.keywords:
        name = item.arg
        if name is None or (name not in positional and name not in keywords) or name in bound:
            return None
        bound[name] = item.value
    return bound


def _string_value(node: ast.AST | None) -> str | None:
    """``codemods.expressions.string_value``: a string literal's value (several pieces joined), else None."""
    if type(node) is ast.Constant and type(node.value) is str:
        return node.value
    return None


def _is_constant(node: ast.AST, value: bool) -> bool:
    """``codemods.expressions.is_true`` / ``is_false``."""
    return type(node) is ast.Constant and node.value is value


def _root_name(node: ast.AST) -> str | None:
    while type(node) is ast.Attribute:
        node = node.value
    return node.id if type(node) is ast.Name else None
