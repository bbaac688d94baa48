"""What the migration can do for each deprecated call of one module, and how safely.

The plan is computed once per module from libcst metadata and shared by the lint rules (which attach a fix to
each finding) and the transformers (which rewrite the sites they are given). Applicability follows ruff:
safe when the module's own behaviour and artifacts stay the same for its own use; unsafe when the artifact's
format or location changes for someone outside the module; display-only when it cannot be automated.
"""

from __future__ import annotations

import re

import libcst as cst

from aoti_lint.codemods.expressions import (
    bind,
    device_index_expression,
    is_false,
    is_true,
    literal_device,
    replace_suffix,
    string_value,
    suffix_literal,
    torch_binding,
)
from aoti_lint.codemods.options import analyse_options
from aoti_lint.codemods.rewrites import CompileRewrite, LoadRewrite
from aoti_lint.diagnostics import Applicability
from aoti_lint.fixes.module_facts import ModuleFacts
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
    NOT_KNOWN_ABSOLUTE,
    PATH_NOT_REWRITABLE,
    PRODUCER_BLOCKED,
    Verdict,
    already_exported,
    another_so,
    bound_otherwise,
    device_index_needed,
    foreign_torch,
    load_blocked,
    needs_torch,
    through_another_module,
)
from aoti_lint.knowledge.deprecated_api import (
    ABSOLUTE_PATH_FUNCTIONS,
    AOT_COMPILE,
    AOT_COMPILE_KEYWORDS,
    AOT_COMPILE_PARAMETERS,
    AOT_LOAD,
    AOT_LOAD_PARAMETERS,
    DEVICE_CALLS_WITHOUT_EFFECTS,
    EXPORTED_PROGRAM_FACTORIES,
    LOAD_PACKAGE_PARAMETERS_SINCE,
    NEW_COMPILE,
    PACKAGE_AOTI,
    PACKAGE_OPTION,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class MigrationPlan:
    """Every deprecated call of one module, with what its fix will do and how safe it is."""

    def __init__(
        self, facts: ModuleFacts, target_torch: tuple[int, int], flow: Any = None, lift_paths: bool = False
    ) -> None:
        self.facts = facts
        self.module = facts.module
        self.target_torch = target_torch
        self.compiles: dict[int, CompileRewrite] = {}
        self.loads: dict[int, LoadRewrite] = {}
        # Every call site in document order: the project plan (``flow``) names sites by this order.
        self.sites: list[CompileRewrite | LoadRewrite] = []
        self._strings: list[str] | None = None
        self._collect()
        # The project plan's part for this file (``aoti_lint.flows.migration_flow.FileFlow``), if any.
        self.flow = flow
        # The edits that migrate one flow (its sites, and whether its path constants are rewritten too), shared by
        # every site's fix (``migration.fix_for_site``); each site's flow group, read once from the decisions.
        self.fixed_edits: dict[tuple[frozenset[int], bool], tuple[Any, ...]] = {}
        self.site_groups: tuple[dict[int, int], dict[int, list[int]]] | None = None
        self._decisions = flow.decisions(len(self.sites)) if flow is not None else None
        # With a project plan (or to summarise for one), a path held by a constant is the plan's business.
        self._lift_paths = lift_paths or self._decisions is not None
        for site in self.compiles.values():
            self._analyse_compile(site)
        for site in self.loads.values():
            self._analyse_load(site)
        self._link()
        self.flow_applied = False
        if self._decisions is not None:
            self._apply_flow(self._decisions)

    def _apply_flow(self, decisions: Any) -> None:
        """Replace each site's own verdict by its flow's (all its sites in every file of the run, or none)."""
        self.flow_applied = True
        for site, decision in zip(self.sites, decisions, strict=True):
            site.verdict = Verdict(decision.applicability, decision.reason)
            if decision.path_by_constant and site.kind == "compile":
                site.package_path = site.so_path
            if site.path_blocked is not None and not decision.path_by_constant:
                site.verdict.lower(Applicability.DISPLAY_ONLY, site.path_blocked)

    @property
    def decisions(self) -> Any:
        """The project plan's decision for each of ``sites``, in order; None without a project plan."""
        return self._decisions

    def names(self, node: cst.CSTNode) -> set[str]:
        return self.facts.names(node)

    def parent(self, node: cst.CSTNode) -> cst.CSTNode | None:
        return self.facts.parent(node)

    def assigned_name(self, call: cst.Call) -> tuple[cst.Name, cst.CSTNode] | None:
        return self.facts.assigned_name(call)

    def references(self, name: cst.Name) -> list[cst.CSTNode] | None:
        return self.facts.references(name)

    def single_value(self, name: cst.Name) -> cst.BaseExpression | None:
        return self.facts.single_value(name)

    def argument_of(self, node: cst.CSTNode) -> tuple[cst.Call, int, cst.Arg] | None:
        return self.facts.argument_of(node)

    def _collect(self) -> None:
        short_names = {AOT_COMPILE.short_name, AOT_LOAD.short_name}
        for node in self.facts.nodes(cst.Call):
            # Syntax first: a method of a parameter would have libcst resolve the scopes of the module. libcst
            # names a call after its callee: `aot_load(so, "cpu")(x)` runs the loaded model, it loads nothing.
            if isinstance(node.func, cst.Call) or not self.facts.may_name(node.func, short_names):
                continue
            names = self.names(node.func)
            for symbol, table, positional, keywords, site_type in (
                (AOT_COMPILE, self.compiles, AOT_COMPILE_PARAMETERS, AOT_COMPILE_KEYWORDS, CompileRewrite),
                (AOT_LOAD, self.loads, AOT_LOAD_PARAMETERS, (), LoadRewrite),
            ):
                if symbol.qualified_name not in names:
                    continue
                verdict = Verdict(Applicability.SAFE)
                if self.target_torch < symbol.replacement_since:
                    verdict.lower(Applicability.DISPLAY_ONLY, needs_torch(symbol, self.target_torch))
                if names != {symbol.qualified_name}:
                    verdict.lower(Applicability.DISPLAY_ONLY, bound_otherwise(self.module.code_for_node(node.func)))
                elif self.facts.names(node.func, across_modules=False) != names:
                    verdict.lower(
                        Applicability.DISPLAY_ONLY, through_another_module(self.module.code_for_node(node.func), symbol)
                    )
                arguments = bind(node, positional, keywords)
                if arguments is None or positional[0] not in arguments or positional[1] not in arguments:
                    verdict.lower(Applicability.DISPLAY_ONLY, ARGUMENTS_UNREAD)
                    arguments = arguments or {}
                table[id(node.func)] = site = site_type(node, node.func, arguments, verdict)
                self.sites.append(site)
        if self.sites:
            # The fix spells the new API through the module's torch (`torch._inductor...`, adding `import torch`
            # where there is none). Where the old call reads that name too (`torch._export.aot_compile`), the new
            # one reads the same binding; else a name `torch` bound to something else anywhere (a parameter, an
            # assignment) could be what the migrated call reads.
            name = torch_binding(self.module) or "torch"
            foreign = [site for site in self.sites if _root_name(site.reference) != name]
            if foreign and not self.facts.binds_only_a_module(name, "torch"):
                for site in foreign:
                    site.verdict.lower(Applicability.DISPLAY_ONLY, foreign_torch(name))

    # -- compile -------------------------------------------------------------------------------------
    def _analyse_compile(self, site: CompileRewrite) -> None:
        verdict, args = site.verdict, site.arguments
        for keyword, bad, reason in (
            ("disable_constraint_solver", is_false, NO_CONSTRAINT_SOLVER),
            ("same_signature", is_true, NO_SAME_SIGNATURE),
        ):
            if keyword in args and not bad(args[keyword].value):
                verdict.lower(Applicability.DISPLAY_ONLY, reason)
        if "f" in args:
            self._analyse_callable(site, args["f"].value)
        if "options" in args and analyse_options(self.facts, site, args["options"].value):
            self.pair_package_aoti(site)
        if site.package_path is None and site.so_path is not None:
            site.path_blocked = PATH_NOT_REWRITABLE
            if not self._lift_paths:
                verdict.lower(Applicability.DISPLAY_ONLY, site.path_blocked)

    def _analyse_callable(self, site: CompileRewrite, f: cst.BaseExpression) -> None:
        if isinstance(f, cst.Lambda) or (isinstance(f, cst.Call) and self.names(f.func) & {"functools.partial"}):
            site.verdict.lower(Applicability.DISPLAY_ONLY, NOT_A_MODULE)
            return
        if (
            isinstance(f, cst.Name)
            and self.facts.may_be_function(f.value)
            and any(isinstance(node, cst.FunctionDef) for node in self.facts.referents(f) or ())
        ):
            site.verdict.lower(
                Applicability.DISPLAY_ONLY,
                f"`{f.value}` is a function; `torch.export.export` takes an `nn.Module`: wrap it in one",
            )
            return
        if isinstance(f, cst.Name):
            value = self.single_value(f)
            if isinstance(value, cst.Call) and self.names(value.func) & EXPORTED_PROGRAM_FACTORIES:
                # The old call fails on a program (torch 2.13: Dynamo's 'Unsupported'): no rewrite runs as it did.
                site.verdict.lower(Applicability.DISPLAY_ONLY, already_exported(f.value))
                return
        # `ep.module()` of a program exported here: compile that program instead of exporting again.
        if (
            (
                isinstance(f, cst.Call)
                and not f.args
                and isinstance(f.func, cst.Attribute)
                and isinstance(f.func.value, cst.Name)
                and f.func.attr.value == "module"
            )
            and "dynamic_shapes" not in site.arguments
            and "kwargs" not in site.arguments
        ):
            program = f.func.value
            value = self.single_value(program)
            if isinstance(value, cst.Call) and self.names(value.func) & EXPORTED_PROGRAM_FACTORIES:
                site.reuse_program = program

    def pair_package_aoti(self, site: CompileRewrite) -> None:
        """``files = aot_compile(..., options={"aot_inductor.package": True})`` + ``package_aoti(path, files)``."""
        reason = (
            f"`{PACKAGE_OPTION}: True` returns a file list; only the pairing with `package_aoti(path, files)` is "
            "migrated"
        )
        bound = self.assigned_name(site.call)
        uses = self.references(bound[0]) if bound else None
        if not uses or len(uses) != 1:
            site.verdict.lower(Applicability.DISPLAY_ONLY, reason)
            return
        found = self.argument_of(uses[0])
        if found is None or found[1] != 1 or PACKAGE_AOTI not in self.names(found[0].func):
            site.verdict.lower(Applicability.DISPLAY_ONLY, reason)
            return
        call = found[0]
        if len(call.args) != 2 or any(a.keyword or a.star for a in call.args):
            site.verdict.lower(Applicability.DISPLAY_ONLY, reason)
            return
        package_path = call.args[0].value
        if replace_suffix(package_path, ".pt2", ".pt2") is None and not isinstance(package_path, cst.Name):
            site.verdict.lower(Applicability.DISPLAY_ONLY, "the `package_aoti` path is not a `.pt2` path")
            return
        package_statement, compile_statement = self._statement_of(call), self._statement_of(site.call)
        if package_statement is None or compile_statement is None:
            site.verdict.lower(Applicability.DISPLAY_ONLY, reason)
            return
        if self._block_of(package_statement) is not self._block_of(compile_statement):
            site.verdict.lower(Applicability.DISPLAY_ONLY, reason)
            return
        site.package_call = call
        site.package_path = package_path
        site.statement = compile_statement

    def _statement_of(self, node: cst.CSTNode) -> cst.SimpleStatementLine | None:
        current: cst.CSTNode | None = node
        while current is not None and not isinstance(current, cst.SimpleStatementLine):
            current = self.parent(current)
        if current is not None and len(current.body) != 1:
            return None
        return current

    def _block_of(self, statement: cst.CSTNode) -> cst.CSTNode | None:
        return self.parent(statement)

    # -- load ----------------------------------------------------------------------------------------
    def _analyse_load(self, site: LoadRewrite) -> None:
        verdict = site.verdict
        if "device" not in site.arguments:
            return
        device = literal_device(site.arguments["device"].value, self.names)
        indexed = device_index_expression(site.arguments["device"].value, self.names)
        if device is None and indexed is not None:
            device_type, expression = indexed
            if device_type == "cpu":
                return
            if self.target_torch >= LOAD_PACKAGE_PARAMETERS_SINCE["device_index"]:
                site.device_index_expr = expression
            else:
                device_text = self.module.code_for_node(site.arguments["device"].value)
                verdict.lower(Applicability.DISPLAY_ONLY, device_index_needed(device_text))
            return
        if device is None and self._has_effects(site.arguments["device"].value):
            verdict.lower(Applicability.DISPLAY_ONLY, DEVICE_EFFECTS)
            return
        if device is None:
            verdict.lower(Applicability.UNSAFE, DEVICE_NOT_LITERAL)
            return
        device_type, index = device
        if index is None or device_type == "cpu":
            return
        if self.target_torch >= LOAD_PACKAGE_PARAMETERS_SINCE["device_index"]:
            site.device_index = index
        elif index == 0:
            verdict.lower(Applicability.UNSAFE, DEVICE_INDEX_ZERO)
        else:
            verdict.lower(Applicability.DISPLAY_ONLY, device_index_needed(f"{device_type}:{index}"))

    def _has_effects(self, node: cst.CSTNode) -> bool:
        """Whether evaluating ``node`` may do something besides giving a value: it holds an await, a yield, an
        assignment expression, or a call other than those that only read a value (``DEVICE_CALLS_WITHOUT_EFFECTS``,
        a string literal's ``format``). Reading a name or an attribute counts as none."""
        pending = [node]
        while pending:
            current = pending.pop()
            if isinstance(current, cst.Await | cst.Yield | cst.NamedExpr):
                return True
            if isinstance(current, cst.Lambda):
                continue  # its body runs only when called
            if isinstance(current, cst.Call) and not self._reads_only(current.func):
                return True
            pending.extend(current.children)
        return False

    def _reads_only(self, callee: cst.BaseExpression) -> bool:
        literal = isinstance(callee, cst.Attribute) and isinstance(callee.value, cst.SimpleString)
        if literal and callee.attr.value == "format":  # type: ignore[attr-defined]
            return True
        names = self.names(callee)
        return bool(names) and names <= DEVICE_CALLS_WITHOUT_EFFECTS

    def _link(self) -> None:
        """Connect each load to the compile that produced its artifact, and settle both sides' safety."""
        so_literals: dict[str, CompileRewrite] = {}
        for compile_site in self.compiles.values():
            value = string_value(compile_site.so_path)
            if value is not None:
                so_literals[value] = compile_site
        for load in self.loads.values():
            path = load.arguments.get("so_path")
            path = path.value if path is not None else None
            if isinstance(path, cst.Call) and id(path.func) in self.compiles:
                load.producer = self.compiles[id(path.func)]  # `aot_load(aot_compile(...), device)`
            elif isinstance(path, cst.Name):
                value = self.single_value(path)
                if isinstance(value, cst.Call) and id(value.func) in self.compiles:
                    load.producer = self.compiles[id(value.func)]
                elif isinstance(value, cst.Call) and NEW_COMPILE in self.names(value.func):
                    continue  # already a package
                elif value is not None and replace_suffix(value, ".so", ".pt2") is not None:
                    load.path_blocked = (
                        f"`{path.value}` holds a `.so` path: make it the `.pt2` package path where it is defined"
                    )
                    if not self._lift_paths:
                        load.verdict.lower(Applicability.DISPLAY_ONLY, load.path_blocked)
                    self._needs_producer(load)
                else:
                    self._needs_producer(load)
            elif string_value(path) is not None and string_value(path).endswith(".pt2"):
                continue  # the old loader on a package: the new loader is the fix
            elif string_value(path) in so_literals:
                load.producer = so_literals[string_value(path)]
                load.path_literal = path
            elif path is not None and replace_suffix(path, ".so", ".pt2") is not None:
                load.path_literal = path
                self._needs_producer(load)
            elif (
                path is not None
                and string_value(suffix_literal(path)) is not None
                and ".so" in (string_value(suffix_literal(path)) or "")
            ):
                load.verdict.lower(
                    Applicability.DISPLAY_ONLY, "its `.so` path cannot be rewritten to the `.pt2` package path"
                )
            else:
                self._needs_producer(load)
            if load.producer is not None:
                load.producer.consumers.append(load)

        for compile_site in self.compiles.values():
            self._settle_compile(compile_site, so_literals)
        for load in self.loads.values():
            if load.producer is not None:
                producer = load.producer.verdict
                if producer.applicability is Applicability.DISPLAY_ONLY:
                    load.verdict.lower(Applicability.DISPLAY_ONLY, PRODUCER_BLOCKED)
                elif producer.applicability is Applicability.UNSAFE:
                    load.verdict.lower(Applicability.UNSAFE, producer.reason)

    def _needs_producer(self, load: LoadRewrite) -> None:
        """A load whose artifact no compile of this module writes: the project plan (``lift_paths``) migrates it
        only with a compile that does; alone it is not migrated."""
        load.needs_producer = True
        if self._lift_paths:
            load.verdict.lower(Applicability.UNSAFE, NEEDS_PACKAGE)
        else:
            load.verdict.lower(Applicability.DISPLAY_ONLY, NO_PRODUCER)

    def _settle_compile(self, site: CompileRewrite, so_literals: dict[str, CompileRewrite]) -> None:
        verdict = site.verdict
        if verdict.applicability is Applicability.DISPLAY_ONLY:
            return
        for load in site.consumers:
            if load.verdict.applicability is Applicability.DISPLAY_ONLY:
                verdict.lower(Applicability.DISPLAY_ONLY, load_blocked(load.verdict.reason))
                return
            if load.verdict.applicability is Applicability.UNSAFE:
                # Migrated alone (a safe-only --fix without the run's plan: stdin, the codemod command), the
                # compile would hand the old loader a package: the pair is as safe as its weaker side.
                verdict.lower(Applicability.UNSAFE, load.verdict.reason)
        escapes = ESCAPES
        if site.package_call is not None:
            verdict.lower(Applicability.UNSAFE, escapes)
            return
        bound = self.assigned_name(site.call)
        consumer_paths = {id(load.arguments["so_path"].value) for load in site.consumers}
        if bound is not None:
            uses = self.references(bound[0])
            if uses is None or any(id(use) not in consumer_paths for use in uses):
                verdict.lower(Applicability.UNSAFE, escapes)
        elif not isinstance(self.parent(site.call), cst.Expr) and id(site.call) not in consumer_paths:
            # The `.so` path is the call's value: it escapes unless a load of this module reads it right there.
            verdict.lower(Applicability.UNSAFE, escapes)
        literal = string_value(suffix_literal(site.so_path))
        if site.so_path is not None and literal is None:
            verdict.lower(Applicability.UNSAFE, escapes)
        if site.so_path is not None and not self._is_absolute(site.so_path):
            verdict.lower(Applicability.UNSAFE, NOT_KNOWN_ABSOLUTE)
        # The same file name elsewhere in the module (deleted, passed on, derived from) is another reader.
        readers = 1 + sum(1 for load in site.consumers if load.path_literal)
        if literal is not None and self._literal_count(literal) > readers:
            verdict.lower(Applicability.UNSAFE, escapes)
        # So may a name put together from pieces (`"/srv/m" + ".so"`): any other string ending in `.so`.
        strings = self._string_values() if literal is not None else []
        other = next((text for text in strings if text.endswith(".so") and literal not in text), None)
        if other is not None:
            verdict.lower(Applicability.UNSAFE, another_so(other))
        if site.so_path is not None and bound is None and not site.consumers:
            verdict.lower(Applicability.UNSAFE, escapes)

    def _is_absolute(self, node: cst.BaseExpression) -> bool:
        """Whether a path expression is absolute for sure: "/x", os.path.join(os.getcwd(), ...), Path.cwd() / ..."""
        literal = string_value(node)
        if literal is not None:
            return literal.startswith("/") or bool(re.match(r"^[A-Za-z]:[\\/]", literal))
        if isinstance(node, cst.BinaryOperation):
            return self._is_absolute(node.left)
        if isinstance(node, cst.Call):
            names = self.names(node.func)
            if names & ABSOLUTE_PATH_FUNCTIONS:
                return True
            if names & {"os.path.join", "posixpath.join"} and node.args and not node.args[0].keyword:
                return self._is_absolute(node.args[0].value)
        return False

    def _literal_count(self, value: str) -> int:
        return sum(1 for text in self._string_values() if value in text)

    def _string_values(self) -> list[str]:
        """The values of the module's plain string literals."""
        if self._strings is None:
            values = (string_value(node) for node in self.facts.nodes(cst.SimpleString))
            self._strings = [text for text in values if text is not None]
        return self._strings


def _root_name(node: cst.CSTNode) -> str | None:
    """The name an attribute chain starts from (`torch` in `torch._export.aot_compile`)."""
    while isinstance(node, cst.Attribute):
        node = node.value
    return node.value if isinstance(node, cst.Name) else None
