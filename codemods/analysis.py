"""What the migration can do for each deprecated call of one module, and how safely.

The plan is computed once per module from libcst metadata and shared by the lint rules (which attach a fix to
each finding) and the transformers (which rewrite the sites they are given). Applicability follows ruff:
safe when the module's own behaviour and artifacts stay the same for its own use; unsafe when the artifact's
format or location changes for someone outside the module; display-only when it cannot be automated.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import libcst as cst
import libcst.matchers as m

from aoti_lint.dataflow import ModuleFacts
from aoti_lint.diagnostics import Applicability
from aoti_lint.knowledge.deprecated_api import (
    AOT_COMPILE,
    AOT_LOAD,
    LOAD_PACKAGE_PARAMETERS_SINCE,
    NEW_COMPILE,
    PACKAGE_AOTI,
)

AOT_COMPILE_PARAMETERS = ("f", "args", "kwargs")
AOT_COMPILE_KEYWORDS = (
    "dynamic_shapes",
    "options",
    "remove_runtime_assertions",
    "disable_constraint_solver",
    "same_signature",
)
AOT_LOAD_PARAMETERS = ("so_path", "device")
OUTPUT_PATH_KEY = "aot_inductor.output_path"
PACKAGE_KEY = "aot_inductor.package"
EXPORTED_PROGRAM_FACTORIES = {"torch.export.export", "torch.export.load"}
ABSOLUTE_PATH_FUNCTIONS = {
    "os.getcwd",
    "os.path.abspath",
    "os.path.realpath",
    "pathlib.Path.cwd",
    "pathlib.Path.home",
    "os.path.expanduser",
    "tempfile.gettempdir",
    "tempfile.mkdtemp",
}
DEVICE_LITERAL = re.compile(r"^(?P<type>cpu|cuda|xpu|mps)(?::(?P<index>\d+))?$")

NEEDS_PACKAGE = "the loader will need a `.pt2` package where it read a `.so`: its producer must now write one"

_RANK = {Applicability.SAFE: 2, Applicability.UNSAFE: 1, Applicability.DISPLAY_ONLY: 0}


def weakest(*values: Applicability) -> Applicability:
    return min(values, key=_RANK.__getitem__)


@dataclass
class Verdict:
    applicability: Applicability
    reason: str = ""

    def lower(self, applicability: Applicability, reason: str) -> None:
        if _RANK[applicability] < _RANK[self.applicability]:
            self.applicability = applicability
            self.reason = reason


@dataclass
class CompileSite:
    call: cst.Call
    reference: cst.CSTNode
    arguments: dict[str, cst.Arg]
    verdict: Verdict
    # The `.so` path as a literal node, when the options name one.
    so_path: cst.BaseExpression | None = None
    package_path: cst.BaseExpression | None = None
    options: cst.BaseExpression | None = None  # what becomes inductor_configs=
    reuse_program: cst.BaseExpression | None = None  # `ep` when f is `ep.module()`
    consumers: list[LoadSite] = field(default_factory=list)
    # Two-step packaging: the statement holding `package_aoti(path, files)` and the call in it.
    package_call: cst.Call | None = None
    statement: cst.CSTNode | None = None
    # Why the output path cannot become a package path here (a name bound elsewhere); the project plan
    # lifts it when it rewrites that constant where it is defined.
    path_blocked: str | None = None
    # Comments trailing the options entries the fix removes: they move to the package path.
    removed_comments: list[str] = field(default_factory=list)

    kind = "compile"


@dataclass
class LoadSite:
    call: cst.Call
    reference: cst.CSTNode
    arguments: dict[str, cst.Arg]
    verdict: Verdict
    producer: CompileSite | None = None
    device_index: int | None = None
    # ``rank`` in ``f"cuda:{rank}"`` / ``torch.device("cuda", rank)``: passed on as ``device_index=rank``.
    device_index_expr: cst.BaseExpression | None = None
    # A `.so` path written here (literal, join, Path, f-string), to be rewritten to its `.pt2`: a fix never
    # hands a `.so` to the package loader.
    path_literal: cst.BaseExpression | None = None
    # Why a variable holding a `.so` path blocks the fix; the project plan lifts it when it rewrites that
    # constant where it is defined.
    path_blocked: str | None = None

    kind = "load"


def bind(call: cst.Call, positional: tuple[str, ...], keywords: tuple[str, ...]) -> dict[str, cst.Arg] | None:
    """Map a call's arguments to parameter names; None when that cannot be done statically."""
    bound: dict[str, cst.Arg] = {}
    for index, arg in enumerate(call.args):
        if arg.star:
            return None
        if arg.keyword is None:
            if index >= len(positional):
                return None
            bound[positional[index]] = arg
        else:
            name = arg.keyword.value
            if (name not in positional and name not in keywords) or name in bound:
                return None
            bound[name] = arg
    return bound


def string_value(node: cst.CSTNode | None) -> str | None:
    if isinstance(node, cst.SimpleString):
        value = node.evaluated_value
        return value if isinstance(value, str) else None
    if isinstance(node, cst.ConcatenatedString):
        value = node.evaluated_value
        return value if isinstance(value, str) else None
    return None


def is_true(node: cst.CSTNode | None) -> bool:
    return isinstance(node, cst.Name) and node.value == "True"


def is_false(node: cst.CSTNode | None) -> bool:
    return isinstance(node, cst.Name) and node.value == "False"


def replace_suffix(node: cst.BaseExpression, old: str, new: str) -> cst.BaseExpression | None:
    """The same path expression with its literal file suffix ``old`` swapped for ``new``, or None.

    Handles "x.so", os.path.join(..., "x.so"), f"{d}/x.so" and Path(...) / "x.so".
    """
    if isinstance(node, cst.SimpleString):
        value = string_value(node)
        if value is None or not value.endswith(old) or "\\" in node.value:
            return None
        quote_end = len(node.value) - len(node.quote)
        body = node.value[:quote_end]
        if not body.endswith(old):
            return None
        return node.with_changes(value=body[: -len(old)] + new + node.value[quote_end:])
    if isinstance(node, cst.Call) and node.args and not node.args[-1].keyword and not node.args[-1].star:
        last = replace_suffix(node.args[-1].value, old, new)
        if last is None or not m.matches(node.func, m.Attribute(attr=m.Name("join"))):
            return None
        return node.with_changes(args=[*node.args[:-1], node.args[-1].with_changes(value=last)])
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Divide):
        right = replace_suffix(node.right, old, new)
        return None if right is None else node.with_changes(right=right)
    if isinstance(node, cst.FormattedString) and node.parts and isinstance(node.parts[-1], cst.FormattedStringText):
        text = node.parts[-1].value
        if not text.endswith(old):
            return None
        last = node.parts[-1].with_changes(value=text[: -len(old)] + new)
        return node.with_changes(parts=[*node.parts[:-1], last])
    return None


def parse_device(node: cst.BaseExpression | None, names: Any) -> tuple[str, int | None] | None:
    """(device type, index) of a literal device: "cuda:1", torch.device("cuda", 1), torch.device("cpu")."""
    from aoti_lint.analysis.values import parse_device as parse_device_text

    literal = string_value(node)
    if literal is not None:
        device = parse_device_text(literal.strip())
        return None if device is None else (device.type, device.index)
    if isinstance(node, cst.Call) and names(node.func) == {"torch.device"} and 1 <= len(node.args) <= 2:
        if any(arg.keyword is not None or arg.star for arg in node.args):
            return None
        parsed = parse_device(node.args[0].value, names)
        if parsed is None:
            return None
        if len(node.args) == 2:
            index = node.args[1].value
            if parsed[1] is not None or not isinstance(index, cst.Integer):
                return None
            return parsed[0], int(index.value)
        return parsed
    return None


def device_index_expression(node: cst.BaseExpression | None, names: Any) -> tuple[str, cst.BaseExpression] | None:
    """(device type, index expression) of ``f"cuda:{rank}"`` or ``torch.device("cuda", rank)``."""
    if isinstance(node, cst.FormattedString) and len(node.parts) == 2:
        text, expression = node.parts
        if (
            isinstance(text, cst.FormattedStringText)
            and isinstance(expression, cst.FormattedStringExpression)
            and expression.conversion is None
            and expression.format_spec is None
            and text.value.endswith(":")
        ):
            device = parse_device(cst.SimpleString(repr(text.value[:-1])), names)
            if device is not None and device[1] is None:
                return device[0], expression.expression
    if isinstance(node, cst.Call) and names(node.func) == {"torch.device"} and len(node.args) == 2:
        if any(arg.keyword is not None or arg.star for arg in node.args):
            return None
        device = parse_device(node.args[0].value, names)
        if device is not None and device[1] is None and not isinstance(node.args[1].value, cst.Integer):
            return device[0], node.args[1].value
    return None


class MigrationPlan:
    """Every deprecated call of one module, with what its fix will do and how safe it is."""

    def __init__(
        self, facts: ModuleFacts, target_torch: tuple[int, int], flow: Any = None, lift_paths: bool = False
    ) -> None:
        self.facts = facts
        self.module = facts.module
        self.target_torch = target_torch
        self.compiles: dict[int, CompileSite] = {}
        self.loads: dict[int, LoadSite] = {}
        # Every call site in document order: the project plan (``flow``) names sites by this order.
        self.sites: list[CompileSite | LoadSite] = []
        self._collect()
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

    def names(self, node: cst.CSTNode) -> set[str]:
        return self.facts.names(node)

    def site_for_reference(self, node: cst.CSTNode) -> CompileSite | LoadSite | None:
        return self.compiles.get(id(node)) or self.loads.get(id(node))

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
        plan = self

        class Finder(cst.CSTVisitor):
            def visit_Call(self, node: cst.Call) -> None:
                names = plan.names(node.func)
                for symbol, table, positional, keywords, site_type in (
                    (AOT_COMPILE, plan.compiles, AOT_COMPILE_PARAMETERS, AOT_COMPILE_KEYWORDS, CompileSite),
                    (AOT_LOAD, plan.loads, AOT_LOAD_PARAMETERS, (), LoadSite),
                ):
                    if symbol.qualified_name not in names:
                        continue
                    verdict = Verdict(Applicability.SAFE)
                    if names != {symbol.qualified_name}:
                        verdict.lower(
                            Applicability.DISPLAY_ONLY,
                            f"`{plan.module.code_for_node(node.func)}` may also be bound to something else here",
                        )
                    arguments = bind(node, positional, keywords)
                    if arguments is None or positional[0] not in arguments or positional[1] not in arguments:
                        verdict.lower(Applicability.DISPLAY_ONLY, "its arguments cannot be read statically")
                        arguments = arguments or {}
                    table[id(node.func)] = site = site_type(node, node.func, arguments, verdict)
                    plan.sites.append(site)

        self.module.visit(Finder())

    # -- compile -------------------------------------------------------------------------------------
    def _analyse_compile(self, site: CompileSite) -> None:
        verdict, args = site.verdict, site.arguments
        for keyword, bad, reason in (
            (
                "disable_constraint_solver",
                is_false,
                "`disable_constraint_solver=True` has no equivalent in the new API",
            ),
            ("same_signature", is_true, "`same_signature=False` has no equivalent in the new API"),
        ):
            if keyword in args and not bad(args[keyword].value):
                verdict.lower(Applicability.DISPLAY_ONLY, reason)
        if "f" in args:
            self._analyse_callable(site, args["f"].value)
        if "options" in args:
            self._analyse_options(site, args["options"].value)
        if site.package_path is None and site.so_path is not None:
            site.path_blocked = (
                "its `aot_inductor.output_path` is not a literal `.so` path that can become a `.pt2` package path"
            )
            if not self._lift_paths:
                verdict.lower(Applicability.DISPLAY_ONLY, site.path_blocked)

    def _analyse_callable(self, site: CompileSite, f: cst.BaseExpression) -> None:
        if isinstance(f, cst.Lambda) or (isinstance(f, cst.Call) and self.names(f.func) & {"functools.partial"}):
            site.verdict.lower(
                Applicability.DISPLAY_ONLY,
                "`torch.export.export` takes an `nn.Module`, not a lambda or `functools.partial`; wrap it in a Module",
            )
            return
        if isinstance(f, cst.Name):
            scope = self.facts.scopes.get(f)
            if scope is not None and f in scope.accesses:
                for access in scope.accesses[f]:
                    if any(isinstance(getattr(a, "node", None), cst.FunctionDef) for a in access.referents):
                        site.verdict.lower(
                            Applicability.DISPLAY_ONLY,
                            f"`{f.value}` is a function; `torch.export.export` takes an `nn.Module`: wrap it in one",
                        )
                        return
        # `ep.module()` of a program exported here: compile that program instead of exporting again.
        if (
            m.matches(f, m.Call(func=m.Attribute(value=m.Name(), attr=m.Name("module")), args=()))
            and "dynamic_shapes" not in site.arguments
            and "kwargs" not in site.arguments
        ):
            program = f.func.value
            value = self.single_value(program)
            if isinstance(value, cst.Call) and self.names(value.func) & EXPORTED_PROGRAM_FACTORIES:
                site.reuse_program = program

    def _analyse_options(self, site: CompileSite, options: cst.BaseExpression) -> None:
        verdict = site.verdict
        if isinstance(options, cst.Dict):
            self._analyse_options_dict(site, options)
            return
        if isinstance(options, cst.Name) and self._literal_keys_of_variable(options) is not None:
            keys = self._literal_keys_of_variable(options)
            if OUTPUT_PATH_KEY in keys or PACKAGE_KEY in keys:
                verdict.lower(
                    Applicability.DISPLAY_ONLY,
                    f"`{options.value}` sets `{OUTPUT_PATH_KEY}` or `{PACKAGE_KEY}` away from the call; "
                    "pass `package_path=...pt2` instead and drop those keys by hand",
                )
            site.options = options
            return
        verdict.lower(
            Applicability.DISPLAY_ONLY,
            "its `options` cannot be followed statically (they may set `aot_inductor.output_path`)",
        )

    def _analyse_options_dict(self, site: CompileSite, options: cst.Dict) -> None:
        kept = []
        package = False
        for element in options.elements:
            if not isinstance(element, cst.DictElement):
                site.verdict.lower(Applicability.DISPLAY_ONLY, "its `options` unpack another mapping (`**`)")
                return
            key = string_value(element.key)
            if key is None:
                site.verdict.lower(Applicability.DISPLAY_ONLY, "its `options` have keys that are not literals")
                return
            if key == OUTPUT_PATH_KEY:
                site.so_path = element.value
                site.package_path = replace_suffix(element.value, ".so", ".pt2")
            elif key == PACKAGE_KEY:
                if not is_true(element.value) and not is_false(element.value):
                    site.verdict.lower(Applicability.DISPLAY_ONLY, f"`{PACKAGE_KEY}` is not a literal boolean")
                    return
                package = is_true(element.value)
            else:
                kept.append(element)
        if package:
            self._pair_package_aoti(site)
        if kept:
            site.options = options.with_changes(elements=_reflow(options.elements, kept))
        self._keep_dict_comments(site, options, kept)

    def _keep_dict_comments(self, site: CompileSite, options: cst.Dict, kept: list[Any]) -> None:
        """A removed entry's trailing comment goes with the package path; the comment lines after it stay in
        front of the next entry that is kept."""
        lines: list[cst.EmptyLine] = []
        elements = list(site.options.elements) if kept and isinstance(site.options, cst.Dict) else []
        kept_ids = {id(element) for element in kept}
        position = 0
        for element in options.elements:
            if id(element) in kept_ids:
                if lines and elements:
                    if position == 0:
                        brace = site.options.lbrace
                        whitespace = brace.whitespace_after
                        if isinstance(whitespace, cst.ParenthesizedWhitespace):
                            brace = brace.with_changes(
                                whitespace_after=whitespace.with_changes(empty_lines=[*whitespace.empty_lines, *lines])
                            )
                            site.options = site.options.with_changes(lbrace=brace)
                    else:
                        before = elements[position - 1]
                        whitespace = before.comma.whitespace_after if isinstance(before.comma, cst.Comma) else None
                        if isinstance(whitespace, cst.ParenthesizedWhitespace):
                            elements[position - 1] = before.with_changes(
                                comma=before.comma.with_changes(
                                    whitespace_after=whitespace.with_changes(
                                        empty_lines=[*whitespace.empty_lines, *lines]
                                    )
                                )
                            )
                            site.options = site.options.with_changes(elements=elements)
                    lines = []
                position += 1
                continue
            after = element.comma.whitespace_after if isinstance(element.comma, cst.Comma) else None
            if isinstance(after, cst.ParenthesizedWhitespace):
                if after.first_line.comment is not None:
                    site.removed_comments.append(after.first_line.comment.value)
                lines += [line for line in after.empty_lines if line.comment is not None]
        site.removed_comments += [line.comment.value for line in lines]

    def _literal_keys_of_variable(self, name: cst.Name) -> set[str] | None:
        """All keys a dict variable can hold, when every write to it in its scope is a literal-keyed dict."""
        value = self.single_value(name)
        if not isinstance(value, cst.Dict):
            return None
        keys = set()
        for element in value.elements:
            key = string_value(element.key) if isinstance(element, cst.DictElement) else None
            if key is None:
                return None
            keys.add(key)
        scope = self.facts.scopes.get(name)
        for access in scope.accesses[name.value]:
            node = access.node
            parent = self.parent(node)
            if node is name:
                continue
            if isinstance(parent, cst.Attribute) and parent.attr.value == "update":
                call = self.parent(parent)
                if not isinstance(call, cst.Call):
                    return None
                for arg in call.args:
                    if arg.star:
                        return None
                    if arg.keyword is not None:
                        keys.add(arg.keyword.value)
                    elif isinstance(arg.value, cst.Dict):
                        for element in arg.value.elements:
                            key = string_value(element.key) if isinstance(element, cst.DictElement) else None
                            if key is None:
                                return None
                            keys.add(key)
                    else:
                        return None
            elif isinstance(parent, cst.Subscript):
                key = None
                if len(parent.slice) == 1 and isinstance(parent.slice[0].slice, cst.Index):
                    key = string_value(parent.slice[0].slice.value)
                if key is None:
                    return None
                keys.add(key)
            elif isinstance(parent, cst.Arg):
                continue  # passed on: read-only use, e.g. to this very call
            else:
                return None
        return keys

    def _pair_package_aoti(self, site: CompileSite) -> None:
        """``files = aot_compile(..., options={"aot_inductor.package": True})`` + ``package_aoti(path, files)``."""
        reason = (
            f"`{PACKAGE_KEY}: True` returns a file list; only the pairing with `package_aoti(path, files)` is migrated"
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
        if self._statement_of(call) is None or self._statement_of(site.call) is None:
            site.verdict.lower(Applicability.DISPLAY_ONLY, reason)
            return
        if self._block_of(self._statement_of(call)) is not self._block_of(self._statement_of(site.call)):
            site.verdict.lower(Applicability.DISPLAY_ONLY, reason)
            return
        site.package_call = call
        site.package_path = package_path
        site.statement = self._statement_of(site.call)

    def _statement_of(self, node: cst.CSTNode) -> cst.SimpleStatementLine | None:
        current = node
        while current is not None and not isinstance(current, cst.SimpleStatementLine):
            current = self.parent(current)
        if current is not None and len(current.body) != 1:
            return None
        return current

    def _block_of(self, statement: cst.CSTNode) -> cst.CSTNode | None:
        return self.parent(statement)

    # -- load ----------------------------------------------------------------------------------------
    def _analyse_load(self, site: LoadSite) -> None:
        verdict = site.verdict
        if "device" not in site.arguments:
            return
        device = parse_device(site.arguments["device"].value, self.names)
        indexed = device_index_expression(site.arguments["device"].value, self.names)
        if device is None and indexed is not None:
            device_type, expression = indexed
            if device_type == "cpu":
                return
            if self.target_torch >= LOAD_PACKAGE_PARAMETERS_SINCE["device_index"]:
                site.device_index_expr = expression
            else:
                verdict.lower(
                    Applicability.DISPLAY_ONLY,
                    f"loading on `{self.module.code_for_node(site.arguments['device'].value)}` needs "
                    "`device_index=` (torch 2.8+); raise `target-torch`",
                )
            return
        if device is None:
            verdict.lower(
                Applicability.UNSAFE,
                "the device is not a literal: the package decides the device type, and the device index is "
                "no longer passed (add `device_index=` for a specific GPU)",
            )
            return
        device_type, index = device
        if index is None or device_type == "cpu":
            return
        if self.target_torch >= LOAD_PACKAGE_PARAMETERS_SINCE["device_index"]:
            site.device_index = index
        elif index == 0:
            verdict.lower(
                Applicability.UNSAFE,
                "`device_index` needs torch 2.8 (`target-torch`); without it the package loads on the current device",
            )
        else:
            verdict.lower(
                Applicability.DISPLAY_ONLY,
                f"loading on `{device_type}:{index}` needs `device_index=` (torch 2.8+); raise `target-torch`",
            )

    def _link(self) -> None:
        """Connect each load to the compile that produced its artifact, and settle both sides' safety."""
        so_literals: dict[str, CompileSite] = {}
        for compile_site in self.compiles.values():
            value = string_value(compile_site.so_path)
            if value is not None:
                so_literals[value] = compile_site
        for load in self.loads.values():
            path = load.arguments.get("so_path")
            path = path.value if path is not None else None
            if isinstance(path, cst.Name):
                value = self.single_value(path)
                if isinstance(value, cst.Call) and id(value.func) in self.compiles:
                    load.producer = self.compiles[id(value.func)]
                elif isinstance(value, cst.Call) and NEW_COMPILE in self.names(value.func):
                    continue  # already a package
                elif value is not None and replace_suffix(value, ".so", ".pt2") is not None:
                    load.path_blocked = (
                        f"`{path.value}` holds a `.so` path: make it the `.pt2` package path where it is defined"
                    )
                    load.verdict.lower(Applicability.UNSAFE, NEEDS_PACKAGE)
                    if not self._lift_paths:
                        load.verdict.lower(Applicability.DISPLAY_ONLY, load.path_blocked)
                else:
                    load.verdict.lower(Applicability.UNSAFE, NEEDS_PACKAGE)
            elif string_value(path) is not None and string_value(path).endswith(".pt2"):
                continue  # the old loader on a package: the new loader is the fix
            elif string_value(path) in so_literals:
                load.producer = so_literals[string_value(path)]
                load.path_literal = path
            elif path is not None and replace_suffix(path, ".so", ".pt2") is not None:
                load.path_literal = path
                load.verdict.lower(Applicability.UNSAFE, NEEDS_PACKAGE)
            elif (
                path is not None
                and string_value(_suffix_literal(path)) is not None
                and ".so" in (string_value(_suffix_literal(path)) or "")
            ):
                load.verdict.lower(
                    Applicability.DISPLAY_ONLY, "its `.so` path cannot be rewritten to the `.pt2` package path"
                )
            else:
                load.verdict.lower(Applicability.UNSAFE, NEEDS_PACKAGE)
            if load.producer is not None:
                load.producer.consumers.append(load)

        for compile_site in self.compiles.values():
            self._settle_compile(compile_site, so_literals)
        for load in self.loads.values():
            if load.producer is not None:
                producer = load.producer.verdict
                if producer.applicability is Applicability.DISPLAY_ONLY:
                    load.verdict.lower(
                        Applicability.DISPLAY_ONLY,
                        "the compile that writes its artifact cannot be migrated automatically",
                    )
                elif producer.applicability is Applicability.UNSAFE:
                    load.verdict.lower(Applicability.UNSAFE, producer.reason)

    def _settle_compile(self, site: CompileSite, so_literals: dict[str, CompileSite]) -> None:
        verdict = site.verdict
        if verdict.applicability is Applicability.DISPLAY_ONLY:
            return
        for load in site.consumers:
            if load.verdict.applicability is Applicability.DISPLAY_ONLY:
                verdict.lower(
                    Applicability.DISPLAY_ONLY,
                    f"the load that reads its artifact cannot be migrated: {load.verdict.reason}",
                )
                return
        escapes = "its artifact is now a `.pt2` package; code outside this module that reads the `.so` must change"
        if site.package_call is not None:
            verdict.lower(Applicability.UNSAFE, escapes)
            return
        bound = self.assigned_name(site.call)
        consumer_paths = {id(load.arguments["so_path"].value) for load in site.consumers}
        if bound is not None:
            uses = self.references(bound[0])
            if uses is None or any(id(use) not in consumer_paths for use in uses):
                verdict.lower(Applicability.UNSAFE, escapes)
        elif not isinstance(self.parent(site.call), cst.Expr):
            verdict.lower(Applicability.UNSAFE, escapes)
        literal = string_value(_suffix_literal(site.so_path))
        if site.so_path is not None and literal is None:
            verdict.lower(Applicability.UNSAFE, escapes)
        if site.so_path is not None and not self._is_absolute(site.so_path):
            verdict.lower(
                Applicability.UNSAFE,
                "the old API put a relative `aot_inductor.output_path` under the inductor cache directory; "
                "`package_path` is relative to the working directory",
            )
        # The same file name elsewhere in the module (deleted, passed on, derived from) is another reader.
        readers = 1 + sum(1 for load in site.consumers if load.path_literal)
        if literal is not None and self._literal_count(literal) > readers:
            verdict.lower(Applicability.UNSAFE, escapes)
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
        count = 0

        class Counter(cst.CSTVisitor):
            def visit_SimpleString(self, node: cst.SimpleString) -> None:
                nonlocal count
                if string_value(node) is not None and value in string_value(node):
                    count += 1

        self.module.visit(Counter())
        return count


def _suffix_literal(node: cst.BaseExpression | None) -> cst.BaseExpression | None:
    """The string literal that carries a path expression's file name ("x.so" in os.path.join(d, "x.so"))."""
    if isinstance(node, cst.Call) and node.args:
        return _suffix_literal(node.args[-1].value)
    if isinstance(node, cst.BinaryOperation):
        return _suffix_literal(node.right)
    return node


def _reflow(original: Any, kept: list[Any]) -> list[Any]:
    """Keep ``kept`` elements of a comma-separated sequence, giving the last one the original last comma."""
    if not kept or kept[-1] is original[-1]:
        return list(kept)
    return [*kept[:-1], kept[-1].with_changes(comma=original[-1].comma)]
