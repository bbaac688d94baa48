"""The verdict of each deprecated call's fix in one module: whether its migration keeps the program running (safe),
may change what another file sees (unsafe), or is left to a human, and why (``flows.migration_verdicts``); for the
file alone, and as the project plan (``flows.migration_flow``) reads it."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from aoti_lint.diagnostics import Applicability
from aoti_lint.flows.load_device import LoadDevice
from aoti_lint.flows.migration_verdicts import (
    ARGUMENTS_UNREAD,
    ESCAPES,
    NEEDS_PACKAGE,
    NO_CONSTRAINT_SOLVER,
    NO_PRODUCER,
    NO_SAME_SIGNATURE,
    NOT_A_MODULE,
    NOT_KNOWN_ABSOLUTE,
    OPTIONS_KEYS,
    OPTIONS_UNFOLLOWED,
    OPTIONS_UNPACKED,
    PATH_NOT_REWRITABLE,
    PRODUCER_BLOCKED,
    Verdict,
    already_exported,
    another_so,
    bound_otherwise,
    foreign_torch,
    load_blocked,
    needs_torch,
    options_away,
    through_another_module,
)
from aoti_lint.flows.path_expressions import string_value as _string_value
from aoti_lint.knowledge.deprecated_api import (
    ABSOLUTE_PATH_FUNCTIONS,
    AOT_COMPILE_KEYWORDS,
    AOT_COMPILE_PARAMETERS,
    AOT_LOAD_PARAMETERS,
    EXPORTED_PROGRAM_FACTORIES,
    NEW_COMPILE,
    OUTPUT_PATH_OPTION,
    PACKAGE_AOTI,
    PACKAGE_OPTION,
    DeprecatedSymbol,
)
from aoti_lint.model.semantic import last_parts

_PROGRAM_FACTORY_NAMES = last_parts(EXPORTED_PROGRAM_FACTORIES)
_NEW_COMPILE_NAME = last_parts({NEW_COMPILE})


@dataclass
class PlannedSite:
    """One deprecated call and its fix's plan."""

    kind: str  # "compile" or "load"
    call: ast.Call
    symbol: DeprecatedSymbol
    arguments: dict[str, ast.expr]
    verdict: Verdict
    producer: PlannedSite | None = None
    consumers: list[PlannedSite] | None = None
    needs_producer: bool = False
    # A `.so` path written at the load, which the fix rewrites to its `.pt2`.
    path_literal: ast.expr | None = None
    # Why a variable holding a `.so` path blocks the load's fix alone (the project plan lifts it).
    path_blocked: str | None = None
    # A compile's literal `aot_inductor.output_path`, and the `.pt2` path the fix writes for it.
    so_path: ast.expr | None = None
    package_path: str | None = None
    # What else the fix writes, which the codemod carries out (``codemods.migration_plan``): the
    # `package_aoti(path, files)` call that the new compile replaces; whether `f` is `ep.module()` of a program
    # exported here (that program is compiled, not exported again); the new loader's device index, as a number or
    # as the index expression the device argument holds (`f"cuda:{rank}"`).
    package_call: ast.Call | None = None
    reuses_program: bool = False
    device_index: int | None = None
    device_index_passed: bool = False


class SitePlan(LoadDevice):
    """The verdict of each deprecated call's fix, on what ``ModuleEvaluator`` reads."""

    # The verdicts as the project plan reads them (True: a load lacking a producer, or a path held by a name, is the
    # project's to settle), or as the fix of this file alone is judged (False).
    lift_paths = True

    def plan_alone(self, sites: list[PlannedSite]) -> dict[int, PlannedSite]:
        """The plan of ``sites`` without a project plan (AOTI001/AOTI002's fixes of
        this file alone), each site by the id of its call."""
        alone = {
            id(site.call): PlannedSite(site.kind, site.call, site.symbol, {}, Verdict(Applicability.SAFE))
            for site in sites
        }
        ordered = [alone[id(site.call)] for site in sites]
        self.lift_paths = False
        try:
            self.plan_sites(
                ordered,
                [site for site in ordered if site.kind == "compile"],
                [site for site in ordered if site.kind == "load"],
            )
        finally:
            self.lift_paths = True
        return {id(site.call): site for site in ordered}

    def plan_sites(self, sites: list[PlannedSite], compiles: list[PlannedSite], loads: list[PlannedSite]) -> None:
        for site in sites:
            verdict, symbol = site.verdict, site.symbol
            if self.target_torch < symbol.replacement_since:
                verdict.lower(Applicability.DISPLAY_ONLY, needs_torch(symbol, self.target_torch))
            names = self.names(site.call.func)
            if names != {symbol.qualified_name}:
                verdict.lower(Applicability.DISPLAY_ONLY, bound_otherwise(self.code(site.call.func)))
            elif self.model.qualified_names(site.call.func, across_modules=False) != names:
                verdict.lower(Applicability.DISPLAY_ONLY, through_another_module(self.code(site.call.func), symbol))
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
            if "device" in site.arguments:
                site.device_index, site.device_index_passed = self.judge_load_device(
                    site.verdict, site.arguments["device"]
                )
        self._link(compiles, loads)

    def _torch_binding(self) -> str | None:
        """The name a module-level ``import torch[.x] [as t]`` binds."""
        for statement in self.tree.body:
            if type(statement) is not ast.Import:
                continue
            for alias in statement.names:
                if alias.asname is None and alias.name.split(".")[0] == "torch":
                    return "torch"
                if alias.name == "torch" and alias.asname is not None:
                    return alias.asname
        return None

    def _analyse_compile(self, site: PlannedSite) -> None:
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
        if site.package_path is None and site.so_path is not None:
            site.path_blocked = PATH_NOT_REWRITABLE
            if not self.lift_paths:
                verdict.lower(Applicability.DISPLAY_ONLY, site.path_blocked)

    def _analyse_callable(self, site: PlannedSite, f: ast.expr) -> None:
        if type(f) is ast.Lambda or (
            type(f) is ast.Call and self.may_name(f.func, {"partial"}) and "functools.partial" in self.names(f.func)
        ):
            site.verdict.lower(Applicability.DISPLAY_ONLY, NOT_A_MODULE)
            return
        if type(f) is not ast.Name:
            site.reuses_program = self._exported_here(f) and not site.arguments.keys() & {"dynamic_shapes", "kwargs"}
            return
        bindings = self.model.bindings_of(f) if f.id in self.model.functions else None
        if bindings and any(isinstance(binding.node, ast.FunctionDef | ast.AsyncFunctionDef) for binding in bindings):
            site.verdict.lower(
                Applicability.DISPLAY_ONLY,
                f"`{f.id}` is a function; `torch.export.export` takes an `nn.Module`: wrap it in one",
            )
            return
        if self._is_program(f):
            # The old call fails on a program (torch 2.13: Dynamo's 'Unsupported'): no rewrite runs as it did.
            site.verdict.lower(Applicability.DISPLAY_ONLY, already_exported(f.id))

    def _exported_here(self, f: ast.expr) -> bool:
        """Whether ``f`` is `ep.module()` of a name that holds a program exported here."""
        return (
            type(f) is ast.Call
            and not f.args
            and not f.keywords
            and type(f.func) is ast.Attribute
            and f.func.attr == "module"
            and type(f.func.value) is ast.Name
            and self._is_program(f.func.value)
        )

    def _is_program(self, name: ast.Name) -> bool:
        """Whether the one value of ``name`` is an exported program made here (`torch.export.export(...)`)."""
        value = self.single_value(name)
        return (
            type(value) is ast.Call
            and self.may_name(value.func, _PROGRAM_FACTORY_NAMES)
            and bool(self.names(value.func) & EXPORTED_PROGRAM_FACTORIES)
        )

    def _analyse_options(self, site: PlannedSite, options: ast.expr) -> None:
        """A literal dict's output path becomes the package path; a dict built in
        a variable is kept whole, unless it may name the output path."""
        keys = self._literal_keys_of_variable(options) if type(options) is ast.Name else None
        if type(options) is ast.Name and keys is not None:
            if OUTPUT_PATH_OPTION in keys or PACKAGE_OPTION in keys:
                site.verdict.lower(Applicability.DISPLAY_ONLY, options_away(options.id))
            return
        if type(options) is not ast.Dict:
            site.verdict.lower(Applicability.DISPLAY_ONLY, OPTIONS_UNFOLLOWED)
            return
        for key, value in zip(options.keys, options.values, strict=True):
            if key is None:
                site.verdict.lower(Applicability.DISPLAY_ONLY, OPTIONS_UNPACKED)
                return
            name = _string_value(key)
            if name is None:
                site.verdict.lower(Applicability.DISPLAY_ONLY, OPTIONS_KEYS)
                return
            if name == OUTPUT_PATH_OPTION:
                site.so_path, site.package_path = value, self.replaced_suffix(value)
            elif name == PACKAGE_OPTION:
                if not _is_constant(value, True) and not _is_constant(value, False):
                    site.verdict.lower(Applicability.DISPLAY_ONLY, f"`{PACKAGE_OPTION}` is not a literal boolean")
                    return
                if _is_constant(value, True):
                    self._pair_package_aoti(site)

    def _pair_package_aoti(self, site: PlannedSite) -> None:
        """``files = aot_compile(..., options={"aot_inductor.package": True})`` + ``package_aoti(path, files)``, in one
        block: the only form of the option the fix migrates."""
        reason = (
            f"`{PACKAGE_OPTION}: True` returns a file list; only the pairing with `package_aoti(path, files)` is "
            "migrated"
        )
        statement = self.parent(site.call)
        target = statement.targets[0] if type(statement) is ast.Assign and len(statement.targets) == 1 else None
        binding = self.model.binding_made_by(target) if type(target) is ast.Name else None
        uses = None if binding is None else self.model.references(binding)
        call = self.parent(uses[0]) if uses and len(uses) == 1 else None
        if (
            type(call) is not ast.Call
            or call.keywords
            or len(call.args) != 2
            or call.args[1] is not uses[0]  # type: ignore[index]
            or any(type(arg) is ast.Starred for arg in call.args)
            or PACKAGE_AOTI not in self.names(call.func)
        ):
            site.verdict.lower(Applicability.DISPLAY_ONLY, reason)
            return
        package_path = call.args[0]
        if self.replaced_suffix(package_path, ".pt2", ".pt2") is None and type(package_path) is not ast.Name:
            site.verdict.lower(Applicability.DISPLAY_ONLY, "the `package_aoti` path is not a `.pt2` path")
            return
        package_statement = self.parent(call)
        if type(package_statement) is not ast.Expr and type(package_statement) is not ast.Assign:
            site.verdict.lower(Applicability.DISPLAY_ONLY, reason)
            return
        if self._block_of(package_statement) != self._block_of(statement):  # type: ignore[arg-type]
            site.verdict.lower(Applicability.DISPLAY_ONLY, reason)
            return
        site.package_path = self.code(package_path)
        site.package_call = call

    def _block_of(self, statement: ast.AST) -> tuple[int, int] | None:
        """The statement list that holds ``statement`` (its parent's, and which of the parent's lists)."""
        parent = self.parent(statement)
        for field in ("body", "orelse", "finalbody", "handlers"):
            block = getattr(parent, field, None)
            if isinstance(block, list) and any(item is statement for item in block):
                return (id(parent), id(block))
        return None

    def _literal_keys_of_variable(self, name: ast.Name) -> set[str] | None:
        """Every key a dict variable can hold, when every write to it
        in its scope is a literal-keyed dict; None where that is not known."""
        value = self.single_value(name)
        if type(value) is not ast.Dict:
            return None
        keys = set()
        for key in value.keys:
            text = _string_value(key)
            if text is None:
                return None
            keys.add(text)
        binding = self.model.only_binding(name)
        reads = None if binding is None else self.model.references(binding)
        if reads is None:
            return None
        for read in reads:
            if read is name:
                continue
            parent = self.parent(read)
            if type(parent) is ast.Attribute and parent.attr == "update":
                call = self.parent(parent)
                if type(call) is not ast.Call or call.func is not parent:
                    return None
                for star, keyword, argument in self.ordered_arguments(call):
                    if star:
                        return None
                    if keyword is not None:
                        keys.add(keyword)
                    elif type(argument) is ast.Dict:
                        for key in argument.keys:
                            text = _string_value(key)
                            if text is None:
                                return None
                            keys.add(text)
                    else:
                        return None
            elif type(parent) is ast.Subscript and parent.value is read:
                text = _string_value(parent.slice) if type(parent.slice) is not ast.Slice else None
                if text is None:
                    return None
                keys.add(text)
            elif not self._passed_on(read, parent):
                return None
        return keys

    def _passed_on(self, read: ast.Name, parent: ast.AST | None) -> bool:
        """Whether a read is a call's argument : a read-only use, e.g. by the compile itself."""
        if type(parent) is ast.Starred:
            parent = self.parent(parent)
            return type(parent) is ast.Call and read is not parent.func
        if type(parent) is ast.keyword:
            return True
        return type(parent) is ast.Call and read is not parent.func

    def _link(self, compiles: list[PlannedSite], loads: list[PlannedSite]) -> None:
        """Connect each load to the compile that wrote its artifact, and settle both sides'
        safety."""
        calls = {id(site.call): site for site in compiles}
        so_literals = {}
        for site in compiles:
            literal = _string_value(site.so_path)
            if literal is not None:
                so_literals[literal] = site
        for load in loads:
            path = load.arguments.get("so_path")
            if type(path) is ast.Call and id(path) in calls:
                load.producer = calls[id(path)]
            elif type(path) is ast.Name:
                value = self.single_value(path)
                if type(value) is ast.Call and id(value) in calls:
                    load.producer = calls[id(value)]
                elif type(value) is ast.Call and NEW_COMPILE in self.names_among(value.func, _NEW_COMPILE_NAME):
                    continue  # already a package
                else:
                    if value is not None and self.replaced_suffix(value) is not None:
                        load.path_blocked = (
                            f"`{path.id}` holds a `.so` path: make it the `.pt2` package path where it is defined"
                        )
                        if not self.lift_paths:
                            load.verdict.lower(Applicability.DISPLAY_ONLY, load.path_blocked)
                    self._needs_producer(load)
            elif (_string_value(path) or "").endswith(".pt2"):
                continue  # the old loader on a package: the new loader is the fix
            elif _string_value(path) in so_literals:
                load.producer = so_literals[_string_value(path)]  # type: ignore[index]
                load.path_literal = path
            elif path is not None and self.replaced_suffix(path) is not None:
                load.path_literal = path
                self._needs_producer(load)
            elif path is not None and ".so" in (_string_value(self.suffix_literal(path)) or ""):
                load.verdict.lower(
                    Applicability.DISPLAY_ONLY, "its `.so` path cannot be rewritten to the `.pt2` package path"
                )
            else:
                self._needs_producer(load)
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

    def _needs_producer(self, load: PlannedSite) -> None:
        """A load whose artifact no compile of this module writes: the project plan migrates it only with a compile
        that does; alone it is not migrated."""
        load.needs_producer = True
        if self.lift_paths:
            load.verdict.lower(Applicability.UNSAFE, NEEDS_PACKAGE)
        else:
            load.verdict.lower(Applicability.DISPLAY_ONLY, NO_PRODUCER)

    def _settle_compile(self, site: PlannedSite) -> None:
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
        if site.so_path is not None:
            self._settle_output_path(site, bound)

    def _settle_output_path(self, site: PlannedSite, bound: ast.Name | None) -> None:
        """Who else may read the `.so` a compile's literal output path names."""
        verdict, consumers = site.verdict, site.consumers or []
        literal = _string_value(self.suffix_literal(site.so_path))
        if literal is None:
            verdict.lower(Applicability.UNSAFE, ESCAPES)
        if not self._is_absolute(site.so_path):
            verdict.lower(Applicability.UNSAFE, NOT_KNOWN_ABSOLUTE)
        # The same file name elsewhere in the module (deleted, passed on, derived from) is another reader.
        readers = 1 + sum(1 for load in consumers if load.path_literal is not None)
        if literal is not None and sum(1 for text in self.string_values() if literal in text) > readers:
            verdict.lower(Applicability.UNSAFE, ESCAPES)
        # So may a name put together from pieces (`"/srv/m" + ".so"`): any other string ending in `.so`.
        strings = self.string_values() if literal is not None else []
        other = next((text for text in strings if text.endswith(".so") and literal not in text), None)  # type: ignore[operator]
        if other is not None:
            verdict.lower(Applicability.UNSAFE, another_so(other))
        if bound is None and not consumers:
            verdict.lower(Applicability.UNSAFE, ESCAPES)

    def _is_absolute(self, node: ast.expr | None) -> bool:
        """Whether a path is absolute for sure: "/x", os.path.join(os.getcwd(), ...), Path.cwd() / ..."""
        literal = _string_value(node)
        if literal is not None:
            return literal.startswith("/") or bool(re.match(r"^[A-Za-z]:[\\/]", literal))
        if type(node) is ast.BinOp:
            return self._is_absolute(node.left)
        if type(node) is ast.Call:
            names = self.names(node.func)
            if names & ABSOLUTE_PATH_FUNCTIONS:
                return True
            arguments = self.ordered_arguments(node)
            if names & {"os.path.join", "posixpath.join"} and arguments and arguments[0][1] is None:
                return self._is_absolute(arguments[0][2])
        return False


def _bind(call: ast.Call, positional: tuple[str, ...], keywords: tuple[str, ...]) -> dict[str, ast.expr] | None:
    """The call's arguments by parameter name; None when that cannot be done."""
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


def _is_constant(node: ast.AST, value: bool) -> bool:
    """Whether ``node`` is the literal ``value``."""
    return type(node) is ast.Constant and node.value is value


def _root_name(node: ast.AST) -> str | None:
    while type(node) is ast.Attribute:
        node = node.value
    return node.id if type(node) is ast.Name else None
