"""The compile sites, load sites, calls of loaded models and artifact constants of one module, as the device-flow
summary holds them."""

from __future__ import annotations

import ast
import posixpath
from dataclasses import dataclass, replace

from aoti_lint.diagnostics import Applicability
from aoti_lint.flows.flow_summary import (
    CallArgument,
    CompileSite,
    ConstantSite,
    ExampleInput,
    LoadSite,
    ModelCall,
    PathArgument,
    module_function_parts,
)
from aoti_lint.flows.migration_verdicts import Verdict
from aoti_lint.flows.site_plan import PlannedSite, SitePlan
from aoti_lint.flows.values import (
    Artifact,
    Const,
    Exported,
    Mapping,
    Seq,
    add_argument,
    add_elements,
    device_of,
    int_of,
    path_of,
)
from aoti_lint.knowledge.deprecated_api import AOT_COMPILE, AOT_LOAD, OUTPUT_PATH_OPTION
from aoti_lint.knowledge.device_flow import (
    AOT_COMPILE_INDUCTOR,
    AOT_LOAD_OLD,
    ARTIFACT_SUFFIXES,
    COMPILE_AND_PACKAGE,
    OTHER_DEFAULT_DEVICE_SETTERS,
    PACKAGE_LOADERS,
    SET_DEFAULT_DEVICE,
)
from aoti_lint.model.semantic import last_parts

TYPE_CHECKING = False
if TYPE_CHECKING:
    from aoti_lint.flows.migration_flow import FileFlow

# Every call the reader sorts into compiles, loads and default-device setters.
_SITE_SHORT_NAMES = last_parts(
    COMPILE_AND_PACKAGE,
    AOT_COMPILE_INDUCTOR,
    {AOT_COMPILE.qualified_name, AOT_LOAD.qualified_name, SET_DEFAULT_DEVICE},
    PACKAGE_LOADERS,
    OTHER_DEFAULT_DEVICE_SETTERS,
)
_COMPILES = COMPILE_AND_PACKAGE | AOT_COMPILE_INDUCTOR | {AOT_COMPILE.qualified_name}
_LOADS = {AOT_LOAD.qualified_name} | PACKAGE_LOADERS.keys()
_SETTERS = {SET_DEFAULT_DEVICE} | OTHER_DEFAULT_DEVICE_SETTERS


@dataclass(frozen=True)
class PlannedRewrite:
    """One deprecated call's fix as the reading plans it, for the codemod that writes it (``codemods.migration_plan``):
    a call is named by where its callee starts and ends (line, column, end line, end column; columns in characters
    from 0)."""

    kind: str  # "compile" or "load"
    at: tuple[int, int, int, int]
    verdict: Verdict
    # The compile whose artifact a load reads, migrated with it.
    producer: tuple[int, int, int, int] | None
    # A load's `.so` path written at the call becomes its `.pt2`; a compile's output path becomes its package path.
    rewrites_path: bool
    # The `package_aoti(path, files)` call a compile's migration replaces.
    package_call: tuple[int, int, int, int] | None
    reuses_program: bool
    device_index: int | None
    device_index_passed: bool


def planned_rewrites(
    text: str, tree: ast.Module, target_torch: tuple[int, int], path: str = "", plan: FileFlow | None = None
) -> list[PlannedRewrite]:
    """Every deprecated call's fix in the module, in the order the project plan numbers them: as the file alone
    allows, or as ``plan`` (the run's migration plan for the file) decided for its flow."""
    reader = SiteReader(text, tree, target_torch, path)
    reader.read_sites(plan)
    return [reader.rewrite(site) for site in reader.planned]


class SiteReader(SitePlan):
    """Reads the AOTI calls of the module with the values ``ModuleEvaluator`` gives."""

    def read_sites(self, plan: FileFlow | None = None) -> list[PlannedSite]:
        """Every deprecated call, planned as the project plan reads it (returned); as each fix will do (``alone``
        by call: the file alone, or the run's plan's decision for its flow, ``plan``), in ``planned``; and every
        compile, load and default-device setter call, sorted."""
        self.compile_calls: list[ast.Call] = []
        self.load_calls: list[ast.Call] = []
        compiles: list[PlannedSite] = []
        loads: list[PlannedSite] = []
        sites: list[PlannedSite] = []
        for call in self.calls:
            if type(call.func) is ast.Call or not self.may_name(call.func, _SITE_SHORT_NAMES):
                continue
            names = self.names(call.func)
            if names & _COMPILES:
                self.compile_calls.append(call)
            elif names & _LOADS:
                self.load_calls.append(call)
            elif names & _SETTERS:
                self.setter_calls.append(call)
            for symbol, found in ((AOT_COMPILE, compiles), (AOT_LOAD, loads)):
                if symbol.qualified_name in names:
                    kind = "compile" if symbol is AOT_COMPILE else "load"
                    site = PlannedSite(kind, call, symbol, {}, Verdict(Applicability.SAFE))
                    sites.append(site)
                    found.append(site)
                    break
        self.compile_index = {id(call): index for index, call in enumerate(self.compile_calls)}
        self.load_index = {id(call): index for index, call in enumerate(self.load_calls)}
        self.plan_sites(sites, compiles, loads)
        self.alone = self.plan_alone(sites)
        decisions = plan.decisions(len(sites)) if plan is not None else None
        for site, decision in zip(sites, decisions, strict=True) if decisions is not None else ():
            verdict = Verdict(decision.applicability, decision.reason)
            if site.path_blocked is not None and not decision.path_by_constant:
                verdict.lower(Applicability.DISPLAY_ONLY, site.path_blocked)
            self.alone[id(site.call)] = replace(site, verdict=verdict)
        self.planned = [self.alone[id(site.call)] for site in sites]
        return sites

    def rewrite(self, site: PlannedSite) -> PlannedRewrite:
        """What the codemod is to write for ``site``."""
        return PlannedRewrite(
            kind=site.kind,
            at=self._place(site.call.func),
            verdict=site.verdict,
            producer=self._place(site.producer.call.func) if site.producer is not None else None,
            rewrites_path=(site.path_literal if site.kind == "load" else site.package_path) is not None,
            package_call=self._place(site.package_call.func) if site.package_call is not None else None,
            reuses_program=site.reuses_program,
            device_index=site.device_index,
            device_index_passed=site.device_index_passed,
        )

    def _place(self, node: ast.expr) -> tuple[int, int, int, int]:
        span = self.span(node)
        return (span.row, span.column - 1, span.end_row, span.end_column - 1)

    def _import_ref(self, node: ast.AST) -> str | None:
        """The qualified name of ``NAME``/``module.NAME`` imported from another module, to resolve it there."""
        base = node
        while type(base) is ast.Attribute:
            base = base.value
        if type(base) is not ast.Name or not self.imported_alone(base):
            return None
        names = self.names(node)
        return names.pop() if len(names) == 1 else None

    def _artifact(self, node: ast.expr | None) -> tuple[str | None, str | None]:
        """The artifact path an expression gives, or the imported constant it names."""
        if node is None:
            return None, None
        path = path_of(self.eval(node))
        if path is not None:
            return path, None
        # `str(PACKAGE)`, `os.fspath(PACKAGE)`: the text of a path names the same artifact as the path.
        if (
            type(node) is ast.Call
            and len(node.args) == 1
            and not node.keywords
            and type(node.args[0]) is not ast.Starred
            and self.names(node.func) & {"builtins.str", "os.fspath"}
        ):
            node = node.args[0]
        return None, self._import_ref(node)

    def compile_site(self, call: ast.Call) -> CompileSite:
        names = self.names(call.func)
        if names & COMPILE_AND_PACKAGE:
            program = self.argument(call, 0, "exported_program")
            exported = self.eval(program) if program is not None else None
            artifact, ref = self._artifact(self.argument(call, None, "package_path"))
            if isinstance(exported, Exported):
                return CompileSite(self.span(call), exported.device, artifact, exported.inputs, ref)
            return CompileSite(self.span(call), None, artifact, None, ref)
        model = self.argument(call, 0, "gm" if names & AOT_COMPILE_INDUCTOR else "f")
        device, inputs = self._example_inputs(model, self.argument(call, 1, "args"), self.argument(call, 2, "kwargs"))
        artifact = ref = None
        options_node = self.argument(call, None, "options")
        if type(options_node) is ast.Dict and None not in options_node.keys:
            outputs = [
                value
                for key, value in zip(options_node.keys, options_node.values, strict=True)
                if self.eval(key) == Const(OUTPUT_PATH_OPTION)
            ]
            artifact, ref = self._artifact(outputs[-1] if outputs else None)
        else:
            options = self.eval(options_node) if options_node is not None else None
            if isinstance(options, Mapping):
                found = [value for key, value in options.items if key == OUTPUT_PATH_OPTION]
                artifact = path_of(found[-1]) if found else None
        if names & AOT_COMPILE_INDUCTOR:
            exported = self.eval(model) if model is not None else None
            examples = exported.inputs if isinstance(exported, Exported) else None
            if examples is not None and inputs is not None:
                dims = {i: example.dynamic for i, example in enumerate(examples)}
                examples = tuple(ExampleInput(item.shape, dims.get(i)) for i, item in enumerate(inputs))
            return CompileSite(self.span(call), device, artifact, examples, ref)
        dynamic = self._dynamic_dims(call, inputs)
        return CompileSite(self.span(call), device, artifact, dynamic, ref)

    def load_site(self, call: ast.Call) -> LoadSite:
        names = self.names(call.func)
        path_node = self.argument(call, 0, "so_path" if AOT_LOAD_OLD in names else "path")
        path_value = self.eval(path_node) if path_node is not None else None
        compile_index = path_value.compile_index if isinstance(path_value, Artifact) else None
        artifact, ref = self._artifact(path_node)
        if AOT_LOAD_OLD in names:
            device_node = self.argument(call, 1, "device")
            device = device_of(self.eval(device_node)) if device_node is not None else None
            return LoadSite(self.span(call), "aot_load", compile_index, artifact, device, None, ref)
        api = "aoti_load_package" if "torch._inductor.aoti_load_package" in names else "load_package"
        index_position = max(PACKAGE_LOADERS[name] for name in names if name in PACKAGE_LOADERS)
        index_node = self.argument(call, index_position, "device_index")
        device = device_index = None
        if type(index_node) is ast.Attribute and index_node.attr == "index":
            device = device_of(self.eval(index_node.value))
        elif index_node is not None:
            device_index = int_of(self.eval(index_node))
        return LoadSite(self.span(call), api, compile_index, artifact, device, device_index, ref)

    def model_call(self, call: ast.Call, load_index: int) -> ModelCall:
        arguments: list[CallArgument] = []
        position: int | None = 0
        for star, keyword, node in self.ordered_arguments(call):
            value = self.eval(node)
            text = self.code(node)
            if star == "*" and isinstance(value, Seq):
                for index, item in enumerate(value.items):
                    position = add_argument(arguments, f"{text}[{index}]", item, position)
            elif star == "**" and isinstance(value, Mapping):
                position = None
                for key, item in value.items:
                    add_elements(arguments, str(key), item)
            elif star or keyword is not None:
                position = None
                add_elements(arguments, text, value)
            else:
                position = add_argument(arguments, text, value, position)
        return ModelCall(self.span(call), load_index, tuple(arguments))

    def _module_constants(self) -> list[tuple[ast.Name, ast.expr, str]]:
        """Module-level names bound to an artifact path (`.pt2`/`.so`), with the value and the path."""
        found = []
        for statement in self.tree.body:
            targets: list[ast.expr]
            if isinstance(statement, ast.Assign):
                targets, value = statement.targets, statement.value
            elif isinstance(statement, ast.AnnAssign) and statement.value is not None:
                targets, value = [statement.target], statement.value
            else:
                continue
            for target in targets:
                if type(target) is not ast.Name:
                    continue
                path = path_of(self.eval(value))
                if path is not None and path.endswith(ARTIFACT_SUFFIXES):
                    found.append((target, value, path))
        return found

    def _referenced(self, target: ast.Name) -> bool:
        """Whether every read of the name reaches this binding alone (its references are known)."""
        binding = self.model.binding_made_by(target)
        return binding is not None and self.model.references(binding) is not None

    def artifact_constants(self) -> tuple[tuple[str, str], ...]:
        """Module-level names bound to a `.pt2`/`.so` path that others may
        import."""
        return tuple((target.id, path) for target, _, path in self._module_constants() if self._referenced(target))

    def constant_sites(self) -> tuple[ConstantSite, ...]:
        """Module-level names bound to a `.so` path, with the `.pt2` expression a
        migration writes there."""
        found = []
        for target, value, path in self._module_constants():
            if path.endswith(".so") and self._referenced(target):
                replacement = self.replaced_suffix(value)
                found.append(ConstantSite(target.id, path, self.span(value), replacement))
        return tuple(found)

    def path_arguments(self) -> tuple[PathArgument, ...]:
        """`.so` paths passed to functions other than the AOTI ones: a helper of the
        run may load them."""
        if ".so" not in self.text:
            return ()
        found = []
        for call in self.calls:
            if id(call) in self.compile_index or id(call) in self.load_index:
                continue
            callees = self.names(call.func)
            if not any(module_function_parts(callee) for callee in callees):
                continue  # no helper of another module of the run: the plan would join nothing to it
            position = 0
            arguments = self.ordered_arguments(call)
            for star, keyword, value in arguments:
                if star:
                    break
                path = path_of(self.eval(value))
                so_name = self.so_name(value)
                if (path is not None and path.endswith(".so")) or so_name is not None:
                    found.append(
                        PathArgument(
                            tuple(sorted(callees)),
                            None if keyword else position,
                            keyword,
                            path if path is not None and path.endswith(".so") else None,
                            self.span(value),
                            self.replaced_suffix(value),
                            so_name or posixpath.basename(path or ""),
                        )
                    )
                position += keyword is None
        return tuple(found)
