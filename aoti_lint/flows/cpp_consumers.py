"""Where C++ code loads an AOTI artifact from a path written in the file.

A `.so` compiled in Python is often loaded by a C++ server (``AOTIModelContainerRunnerCpu("model.so")``); a
migration that makes Python write a `.pt2` must know about it. This module finds the constructions of the old
runners and of ``AOTIModelPackageLoader`` whose path argument is known from the file alone:

- a string literal, also wrapped in ``std::string("...")`` / ``std::string{"..."}``;
- a name defined once in the file as a constant: ``const std::string kPath = "..."``,
  ``constexpr char kPath[] = "..."``, ``static const char* kPath = "..."`` (never assigned afterwards), a
  ``#define K "..."``;
- constructed as a declaration (``Runner r("...")``, ``Runner r{"..."}``), a temporary, ``new Runner(...)``,
  ``std::make_unique<Runner>(...)`` / ``std::make_shared<Runner>(...)``, or through ``using Alias = Runner``.

Anything else (``argv``, environment, concatenation, a name defined twice) is left out: precision first.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from aoti_lint.diagnostics import Position
from aoti_lint.knowledge.cpp_runners import PACKAGE_LOADER, RUNNER_CLASSES

TYPE_CHECKING = False
if TYPE_CHECKING:
    from tree_sitter import Node

LOADER_CLASSES = RUNNER_CLASSES | {PACKAGE_LOADER}
# Bytes a file must hold to load an artifact: cheap to test before parsing.
TOKENS = (b"AOTIModelContainerRunner", b"AOTIModelPackageLoader")
_MAKERS = frozenset({"make_unique", "make_shared"})
_STRING_TYPES = frozenset({"string", "basic_string"})
# A macro whose whole body is one plain string literal.
_MACRO_STRING = re.compile(r'\s*"([^"\\\n]*)"\s*')
_DECLARATOR_WRAPPERS = frozenset({"array_declarator", "pointer_declarator", "reference_declarator"})


@dataclass(frozen=True)
class CppArtifactLoad:
    """One construction of a runner or loader with a known path.

    ``runner`` is the class name without namespace (``AOTIModelContainerRunnerCpu``, ...,
    ``AOTIModelPackageLoader``); ``start``/``end`` span the construction, from the type to its arguments.
    """

    path: str
    runner: str
    start: Position
    end: Position


def could_load(data: bytes) -> bool:
    return any(token in data for token in TOKENS)


def find_artifact_loads(data: bytes) -> list[CppArtifactLoad]:
    """The artifact loads of one C/C++ file, in source order."""
    if not could_load(data):
        return []
    from aoti_lint.read import cpp

    root = cpp.parse(data).root_node
    finder = _Finder(root)
    locator = cpp.Locator(data)
    loads = []
    for runner, construction, argument in finder.constructions():
        path = finder.value(argument)
        if path is not None:
            start, end = locator.span(construction)
            loads.append(CppArtifactLoad(path, runner, start, end))
    loads.sort(key=lambda load: (load.start.row, load.start.column))
    return loads


class _Finder:
    def __init__(self, root: Node) -> None:
        from aoti_lint.read import cpp

        self._cpp = cpp
        self.root = root
        # Every definition of a name in the file: the constant's value node (or a macro's value), or None
        # for a definition whose value is unknown (a parameter, a non-const variable).
        self.definitions: dict[str, list[Node | str | None]] = {}
        self.assigned: set[str] = set()
        self.aliases: dict[str, str] = {}
        self._collect()

    # What the file defines.

    def _collect(self) -> None:
        cpp = self._cpp
        for node in cpp.walk(self.root):
            kind = node.type
            if kind in ("declaration", "field_declaration"):
                self._declaration(node)
            elif kind in ("parameter_declaration", "optional_parameter_declaration", "for_range_loop"):
                name = self._declared_name(node.child_by_field_name("declarator"))
                if name is not None:
                    self.definitions.setdefault(name, []).append(None)
            elif kind == "preproc_def":
                name_node, value = node.child_by_field_name("name"), node.child_by_field_name("value")
                if name_node is not None:
                    match = _MACRO_STRING.fullmatch(cpp.text(value)) if value is not None else None
                    self.definitions.setdefault(cpp.text(name_node), []).append(match.group(1) if match else None)
            elif kind in ("assignment_expression", "update_expression"):
                target = node.child_by_field_name("left") or node.child_by_field_name("argument")
                if target is not None and target.type in ("identifier", "qualified_identifier"):
                    self.assigned.add(cpp.last_name(target))
            elif kind == "alias_declaration":
                name_node, target = node.child_by_field_name("name"), node.child_by_field_name("type")
                if name_node is not None and target is not None:
                    inner = target.child_by_field_name("type") or target
                    self.aliases[cpp.text(name_node)] = cpp.last_name(inner)

    def _declaration(self, node: Node) -> None:
        cpp = self._cpp
        constant = any(
            child.type == "type_qualifier" and cpp.text(child) in ("const", "constexpr") for child in node.children
        )
        for declarator in node.children_by_field_name("declarator"):
            value: Node | None = None
            target: Node | None = declarator
            if declarator.type == "init_declarator":
                target = declarator.child_by_field_name("declarator")
                value = declarator.child_by_field_name("value")
            name = self._declared_name(target)
            if name is None:
                continue
            if node.type == "field_declaration":
                value = node.child_by_field_name("default_value")
            if value is not None and value.type in ("argument_list", "initializer_list"):
                arguments = value.named_children
                value = arguments[0] if len(arguments) == 1 else None
            self.definitions.setdefault(name, []).append(value if constant else None)

    def _declared_name(self, declarator: Node | None) -> str | None:
        while declarator is not None and declarator.type in _DECLARATOR_WRAPPERS:
            declarator = declarator.child_by_field_name("declarator") or next(
                (child for child in declarator.named_children if child.type != "type_qualifier"), None
            )
        if declarator is None or declarator.type not in ("identifier", "field_identifier"):
            return None
        return self._cpp.text(declarator)

    # Constructions of the loaders.

    def _class(self, type_node: Node | None) -> str | None:
        if type_node is None:
            return None
        name = self._cpp.last_name(type_node)
        name = self.aliases.get(name, name)
        return name if name in LOADER_CLASSES else None

    def constructions(self) -> Iterator[tuple[str, Node | _Span, Node]]:
        """(class, construction node, first argument) for each construction with at least one argument."""
        cpp = self._cpp
        for node in cpp.walk(self.root):
            kind = node.type
            if kind == "declaration":
                runner = self._class(node.child_by_field_name("type"))
                if runner is None:
                    continue
                for declarator in node.children_by_field_name("declarator"):
                    if declarator.type == "function_declarator":
                        # `Runner runner(kPath);` parses as a function declaration taking a `kPath`; `value` accepts
                        # that "type" only where the file defines kPath as a constant, which makes it a construction.
                        parameters = declarator.child_by_field_name("parameters")
                        first = _vexing_argument(parameters)
                        if first is not None:
                            yield runner, _Span(node, parameters), first
                        continue
                    value = declarator.child_by_field_name("value") if declarator.type == "init_declarator" else None
                    if value is not None and value.type in ("argument_list", "initializer_list"):
                        first = _first_argument(value)
                        if first is not None:
                            yield runner, _Span(node, value), first
            elif kind == "field_declaration":  # a member constructed in place: `Runner runner_{"..."};`
                runner = self._class(node.child_by_field_name("type"))
                value = node.child_by_field_name("default_value")
                if runner is not None and value is not None and value.type in ("argument_list", "initializer_list"):
                    first = _first_argument(value)
                    if first is not None:
                        yield runner, _Span(node, value), first
            elif kind == "call_expression":
                function = node.child_by_field_name("function")
                runner = self._class(function) or self._made_class(function)
                first = _first_argument(node.child_by_field_name("arguments"))
                if runner is not None and first is not None:
                    yield runner, node, first
            elif kind in ("new_expression", "compound_literal_expression"):
                runner = self._class(node.child_by_field_name("type"))
                arguments = node.child_by_field_name("arguments") or node.child_by_field_name("value")
                first = _first_argument(arguments)
                if runner is not None and first is not None:
                    yield runner, node, first

    def _made_class(self, function: Node | None) -> str | None:
        """The class of ``std::make_unique<Class>`` / ``std::make_shared<Class>``."""
        while function is not None and function.type == "qualified_identifier":
            function = function.child_by_field_name("name")
        if function is None or function.type != "template_function":
            return None
        name = function.child_by_field_name("name")
        if name is None or self._cpp.text(name) not in _MAKERS:
            return None
        arguments = function.child_by_field_name("arguments")
        types = [child for child in arguments.named_children if child.type == "type_descriptor"] if arguments else []
        return self._class(types[0].child_by_field_name("type")) if len(types) == 1 else None

    # Values.

    def value(self, node: Node, seen: frozenset[str] = frozenset()) -> str | None:
        """The string ``node`` certainly holds, or None."""
        cpp = self._cpp
        kind = node.type
        if kind in ("string_literal", "concatenated_string", "raw_string_literal"):
            return cpp.string_value(node)
        if kind == "parenthesized_expression" and node.named_child_count == 1:
            return self.value(node.named_children[0], seen)
        if kind == "call_expression":  # std::string("...")
            if not self._is_string_type(node.child_by_field_name("function")):
                return None
            return self._single(node.child_by_field_name("arguments"), seen)
        if kind == "compound_literal_expression":  # std::string{"..."}
            if not self._is_string_type(node.child_by_field_name("type")):
                return None
            return self._single(node.child_by_field_name("value"), seen)
        if kind in ("identifier", "qualified_identifier", "type_identifier"):
            name = cpp.last_name(node)
            definitions = self.definitions.get(name, [])
            if len(definitions) != 1 or name in self.assigned or name in seen:
                return None
            (definition,) = definitions
            if definition is None or isinstance(definition, str):
                return definition
            return self.value(definition, seen | {name})
        return None

    def _single(self, arguments: Node | None, seen: frozenset[str]) -> str | None:
        if arguments is None or arguments.named_child_count != 1:
            return None
        return self.value(arguments.named_children[0], seen)

    def _is_string_type(self, node: Node | None) -> bool:
        if node is None:
            return False
        if node.type == "qualified_identifier":
            scope = node.child_by_field_name("scope")
            if scope is None or self._cpp.text(scope) != "std":
                return False
        elif node.type not in ("identifier", "type_identifier"):
            return False
        return self._cpp.last_name(node) in _STRING_TYPES


def _first_argument(arguments: Node | None) -> Node | None:
    if arguments is None:
        return None
    named = [child for child in arguments.named_children if child.type != "comment"]
    return named[0] if named else None


def _vexing_argument(parameters: Node | None) -> Node | None:
    """The one "parameter" of ``Runner runner(kPath)``: a bare name, no declarator."""
    named = [child for child in parameters.named_children if child.type != "comment"] if parameters else []
    if len(named) != 1 or named[0].type != "parameter_declaration":
        return None
    (parameter,) = named
    if parameter.child_by_field_name("declarator") is not None or parameter.named_child_count != 1:
        return None
    type_node = parameter.child_by_field_name("type")
    if type_node is None or type_node.type not in ("type_identifier", "qualified_identifier"):
        return None
    return type_node


class _Span:
    """A declaration's construction: from its type to the end of its arguments (not the trailing `;`)."""

    def __init__(self, declaration: Node, arguments: Node) -> None:
        self.start_point = declaration.start_point
        self.end_point = arguments.end_point
