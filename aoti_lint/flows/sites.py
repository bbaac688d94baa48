"""The compile sites, load sites and calls of loaded models of one module, as plain data
(``flow_summary.CompileSite``, ``LoadSite``, ``ModelCall``) read from the evaluated expressions."""

from __future__ import annotations

from aoti_lint.flows.evaluator import ModuleEvaluator
from aoti_lint.flows.flow_summary import (
    CallArgument,
    CompileSite,
    ExampleInput,
    LoadSite,
    ModelCall,
)
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
    COMPILE_AND_PACKAGE,
    PACKAGE_LOADERS,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class SiteReader(ModuleEvaluator):
    """Reads the AOTI calls of the module with the values the evaluator gives."""

    def _import_ref(self, node: Any) -> str | None:
        """The qualified name of ``NAME``/``module.NAME`` imported from another module, to resolve it there."""
        base = node
        while isinstance(base, self.cst.Attribute):
            base = base.value
        if not isinstance(base, self.cst.Name) or not self.facts.imported_alone(base):
            return None
        names = self.names(node)
        return names.pop() if len(names) == 1 else None

    def _artifact(self, node: Any) -> tuple[str | None, str | None]:
        """The artifact path an expression gives, or the imported constant it names."""
        if node is None:
            return None, None
        path = path_of(self.eval(node))
        if path is not None:
            return path, None
        # `str(PACKAGE)`, `os.fspath(PACKAGE)`: the text of a path names the same artifact as the path.
        if (
            isinstance(node, self.cst.Call)
            and len(node.args) == 1
            and node.args[0].keyword is None
            and not node.args[0].star
            and self.names(node.func) & {"builtins.str", "os.fspath"}
        ):
            node = node.args[0].value
        return None, self._import_ref(node)

    def compile_site(self, call: Any) -> CompileSite:
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
        if isinstance(options_node, self.cst.Dict) and all(
            isinstance(element, self.cst.DictElement) for element in options_node.elements
        ):
            outputs = [
                element.value
                for element in options_node.elements
                if isinstance(element, self.cst.DictElement) and self.eval(element.key) == Const(OUTPUT_PATH_OPTION)
            ]
            artifact, ref = self._artifact(outputs[-1] if outputs else None)
        else:
            options = self.eval(options_node) if options_node is not None else None
            if isinstance(options, Mapping):
                outputs = [value for key, value in options.items if key == OUTPUT_PATH_OPTION]
                artifact = path_of(outputs[-1]) if outputs else None
        if names & AOT_COMPILE_INDUCTOR:
            exported = self.eval(model) if model is not None else None
            examples = exported.inputs if isinstance(exported, Exported) else None
            if examples is not None and inputs is not None:
                dims = {i: example.dynamic for i, example in enumerate(examples)}
                examples = tuple(ExampleInput(item.shape, dims.get(i)) for i, item in enumerate(inputs))
            return CompileSite(self.span(call), device, artifact, examples, ref)
        dynamic = self._dynamic_dims(call, inputs)
        return CompileSite(self.span(call), device, artifact, dynamic, ref)

    def load_site(self, call: Any) -> LoadSite:
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
        if isinstance(index_node, self.cst.Attribute) and index_node.attr.value == "index":
            device = device_of(self.eval(index_node.value))
        elif index_node is not None:
            device_index = int_of(self.eval(index_node))
        return LoadSite(self.span(call), api, compile_index, artifact, device, device_index, ref)

    def model_call(self, call: Any, load_index: int) -> ModelCall:
        arguments: list[CallArgument] = []
        position: int | None = 0
        for arg in call.args:
            value = self.eval(arg.value)
            text = self.text(arg.value)
            if arg.star == "*" and isinstance(value, Seq):
                for index, item in enumerate(value.items):
                    position = add_argument(arguments, f"{text}[{index}]", item, position)
            elif arg.star == "**" and isinstance(value, Mapping):
                position = None
                for key, item in value.items:
                    add_elements(arguments, str(key), item)
            elif arg.star or arg.keyword is not None:
                position = None
                add_elements(arguments, text, value)
            else:
                position = add_argument(arguments, text, value, position)
        return ModelCall(self.span(call), load_index, tuple(arguments))
