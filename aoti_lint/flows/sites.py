"""The compile sites, load sites, calls of loaded models and artifact constants of one module, as the device-flow
summary holds them."""

from __future__ import annotations

import ast
import posixpath

from aoti_lint.flows.flow_summary import (
    CallArgument,
    CompileSite,
    ConstantSite,
    ExampleInput,
    LoadSite,
    ModelCall,
    PathArgument,
)
from aoti_lint.flows.site_plan import SitePlan
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
from aoti_lint.knowledge.deprecated_api import OUTPUT_PATH_OPTION
from aoti_lint.knowledge.device_flow import (
    AOT_COMPILE_INDUCTOR,
    AOT_LOAD_OLD,
    ARTIFACT_SUFFIXES,
    COMPILE_AND_PACKAGE,
    PACKAGE_LOADERS,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    pass


class SiteReader(SitePlan):
    """Reads the AOTI calls of the module with the values ``ModuleEvaluator`` gives."""

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
        """Whether every read of the name reaches this binding alone (``ModuleFacts.references`` is not None)."""
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
                            tuple(sorted(self.names(call.func))),
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
