"""AOTI304: a C++ Meta kernel that reads concrete sizes, or takes int64_t/IntArrayRef for a SymInt argument."""

from __future__ import annotations

from collections.abc import Iterator

from aoti_lint.diagnostics import Finding, Severity
from aoti_lint.knowledge.custom_ops import CPP_META_KEY, CPP_SYMINT_METHODS, CPP_SYMINT_PARAMETERS, CPP_TENSOR_TYPES
from aoti_lint.knowledge.references import AOTI_DEBUGGING_GUIDE, CPP_CUSTOM_OPS_META
from aoti_lint.lazy import LazyPattern
from aoti_lint.read.cpp_kernels import (
    MetaKernel,
    declarator_name,
    function_name,
    in_check,
    kernel_parameters,
    registered_op_name,
    registration_macro,
    schema_arguments,
)
from aoti_lint.rules.base import Invalid, TextRule, Valid, tokens_match

TYPE_CHECKING = False
if TYPE_CHECKING:
    from tree_sitter import Node

    from aoti_lint.read import cpp
    from aoti_lint.read.source import SourceFile

# Validation macros: a size read inside one is a check the author wants, not a size that flows on.
CHECK_MACROS = ("TORCH_CHECK", "TORCH_INTERNAL_ASSERT", "TORCH_SYM_CHECK", "AT_ASSERT", "assert")
# Every registration the rule reads is a member call `X.impl(...)` or `X->impl(...)` (tree-sitter's field
# expression): a header that merely names `*_impl` functions and the Meta key registers nothing.
_IMPL_MEMBER = LazyPattern(rb"(?:\.|->)\s*impl\b")


class CppMetaKernelConcreteSize(TextRule):
    """
    ## What it does
    Finds C++ Meta kernels of custom ops, registered in the same file with
    `TORCH_LIBRARY_IMPL(ns, Meta, m) { m.impl("op", ...); }`, `m.impl("op", c10::DispatchKey::Meta, ...)` or
    `torch::dispatch(c10::DispatchKey::Meta, ...)`, whose body the file holds (a function or a lambda), and
    reports in them:
    - `.sizes()`, `.size(i)`, `.numel()`, `.strides()`, `.stride(i)` called on a tensor parameter;
    - an `int64_t` or `at::IntArrayRef` parameter where the op's schema, defined in the same file with
      `m.def("op(Tensor x, SymInt n) -> Tensor")`, declares `SymInt` or `SymInt[]`.

    The message gives the SymInt spelling: `.sym_sizes()`, `.sym_size(i)`, `.sym_numel()`, `.sym_strides()`,
    `.sym_stride(i)`, `c10::SymInt`, `c10::SymIntArrayRef` (and `at::empty_symint` to allocate from them).
    There is no automatic fix: the arithmetic around the call must change type too.

    ## Why is this bad?
    `torch.export` and AOTInductor trace a C++ custom op through its Meta kernel with symbolic sizes. The
    concrete accessors force each size to a number: the op is specialised to the example's size. Measured with
    torch 2.13 on an extension built with `torch.utils.cpp_extension.load_inline`, whose Meta kernel of
    `twice(Tensor x) -> Tensor` does `at::empty({x.size(0) * 2, x.size(1)}, x.options())`:
    - exported with `dynamic_shapes={"x": {0: Dim("b", min=2, max=64)}}` it fails with
      `UserError: Constraints violated (b)! For more information, run with TORCH_LOGS="+dynamic".`
      (`x.sizes()` the same);
    - exported with `Dim.AUTO` it succeeds silently, the input's size collapsed to the example's
      (`torch.Size([4, 3])`, no range constraint);
    - written `at::empty_symint({x.sym_size(0) * 2, x.sym_size(1)}, x.options())` it exports with
      `{s77: VR[2, 64]}`.

    A Meta kernel of `pad(Tensor x, SymInt n)` that takes `int64_t n`, called with `y.shape[0]`, fails with
    `Constraints violated (c)!`, `c` being the dimension passed as `n`; taking `c10::SymInt n` it exports with
    both ranges intact. (`tests/test_custom_ops.py` builds this extension in the full suite.)

    ## Known problems
    Only kernels registered in the file that defines them are read; a kernel declared here and defined in
    another file is not followed. An `int64_t` parameter is reported only when the schema is in the same
    file. Sizes read inside `TORCH_CHECK(...)`, `TORCH_INTERNAL_ASSERT(...)` or `assert(...)` are not
    reported: a check that a dimension is 32 pins it on purpose. C++ comments `// noqa: AOTI304` (same line)
    and `// aoti-lint: noqa: AOTI304` (whole file) suppress it.
    """

    code = "AOTI304"
    name = "cpp-meta-kernel-concrete-size"
    references = (CPP_CUSTOM_OPS_META, AOTI_DEBUGGING_GUIDE)
    summary = "A C++ Meta kernel reads concrete sizes where it needs SymInts"
    severity = Severity.ERROR
    file_kinds = frozenset({"cpp"})
    # Every registration the rule reads is an `impl` call naming the Meta key.
    triggers = ((CPP_META_KEY.encode(), b"impl"),)
    screen_tokens = (CPP_META_KEY.encode(),)

    @classmethod
    def could_match(cls, data: bytes) -> bool:
        return tokens_match(cls.triggers, data) and _IMPL_MEMBER.search(data) is not None

    VALID = [
        Valid(
            """
            #include <torch/library.h>

            at::Tensor twice_meta(const at::Tensor& x) {
              return at::empty_symint({x.sym_size(0) * 2, x.sym_size(1)}, x.options());
            }

            at::Tensor twice_cpu(const at::Tensor& x) {
              return at::cat({x, x});  // a CPU kernel sees real sizes
            }

            TORCH_LIBRARY_IMPL(mylib, Meta, m) {
              m.impl("twice", &twice_meta);
            }

            TORCH_LIBRARY_IMPL(mylib, CPU, m) {
              m.impl("twice", &twice_cpu);
            }
            """,
            filename="ops.cpp",
        ),
        Valid(
            """
            at::Tensor pad_meta(const at::Tensor& x, c10::SymInt n, int64_t dim) {
              TORCH_CHECK(x.dim() == 2);
              return at::empty_symint({x.sym_size(0) + n}, x.options());
            }

            TORCH_LIBRARY(mylib, m) {
              m.def("pad(Tensor x, SymInt n, int dim) -> Tensor");
              m.impl("pad", c10::DispatchKey::Meta, TORCH_FN(pad_meta));
            }
            """,
            filename="pad.cu",
        ),
    ]
    INVALID = [
        Invalid(
            """
            #include <torch/library.h>

            at::Tensor twice_meta(const at::Tensor& x) {
              return at::empty({x.size(0) * 2, x.size(1)}, x.options());
            }

            TORCH_LIBRARY_IMPL(mylib, Meta, m) {
              m.impl("twice", TORCH_FN(twice_meta));
            }
            """,
            line=4,
            column=21,
            count=2,
            message_contains="x.sym_size(0)",
            filename="ops.cpp",
        ),
        Invalid(
            """
            at::Tensor pad_meta(const at::Tensor& x, int64_t n) {
              auto sizes = x.sizes().vec();  // noqa: AOTI304
              return at::empty({sizes[0] + n}, x.options());
            }

            TORCH_LIBRARY(mylib, m) {
              m.def("pad(Tensor x, SymInt n) -> Tensor");
              m.impl("pad", torch::dispatch(c10::DispatchKey::Meta, &pad_meta));
            }
            """,
            line=1,
            column=42,
            message_contains="c10::SymInt",
            filename="pad.cc",
        ),
        Invalid(
            """
            TORCH_LIBRARY_IMPL(mylib, Meta, m) {
              m.impl("rows", [](const at::Tensor& x) {
                return at::empty({x.numel()}, x.options());
              });
            }
            """,
            line=3,
            message_contains="sym_numel",
            filename="rows.h",
        ),
    ]

    @classmethod
    def check(cls, source: SourceFile) -> list[Finding]:
        from aoti_lint.read import cpp

        data = source.text.encode("utf-8")
        tree = cpp.parse(data)
        root = tree.root_node
        locator = cpp.Locator(data)
        definitions: dict[str, list[Node]] = {}
        schemas: dict[str, list[str]] = {}
        kernels: list[MetaKernel] = []
        for node in cpp.walk(root, ("function_definition", "call_expression")):
            if node.type == "function_definition":
                macro = registration_macro(node)
                if macro is not None:
                    if macro[0] == "TORCH_LIBRARY_IMPL" and len(macro[1]) == 3 and macro[1][1] == CPP_META_KEY:
                        kernels += cls._impl_block(node, macro[1][2], definitions)
                    continue
                name = function_name(node)
                if name is not None and node.child_by_field_name("body") is not None:
                    definitions.setdefault(name, []).append(node)
            else:
                schema = cls._schema(node)
                if schema is not None:
                    schemas.setdefault(schema[0], schema[1])
                kernels += cls._keyed_registration(node)
        findings: list[Finding] = []
        seen: set[int] = set()
        for kernel in kernels:
            for function in cls._resolve(kernel.node, definitions):
                if function.start_byte in seen:
                    continue
                seen.add(function.start_byte)
                findings += cls._check_kernel(source, locator, function, kernel.op, schemas.get(kernel.op))
        return cls._suppress(root, findings) if findings else findings

    # -- registrations ---------------------------------------------------------------------------------
    @staticmethod
    def _impl_calls(scope: Node, receiver: str | None = None) -> Iterator[Node]:
        """``X.impl(...)`` calls under ``scope`` (with ``X`` the given name when one is given)."""
        from aoti_lint.read.cpp import text, walk

        for call in walk(scope, ("call_expression",)):
            function = call.child_by_field_name("function")
            if function is None or function.type != "field_expression":
                continue
            field = function.child_by_field_name("field")
            argument = function.child_by_field_name("argument")
            if field is None or text(field) != "impl" or argument is None:
                continue
            if receiver is None or text(argument) == receiver:
                yield call

    @classmethod
    def _impl_block(cls, block: Node, receiver: str, definitions: dict[str, list[Node]]) -> list[MetaKernel]:
        body = block.child_by_field_name("body")
        kernels = []
        for call in cls._impl_calls(body, receiver) if body is not None else ():
            arguments = call.child_by_field_name("arguments")
            named = list(arguments.named_children) if arguments is not None else []
            op = registered_op_name(named[0]) if named else None
            if op is not None and len(named) == 2:
                kernels.append(MetaKernel(named[1], op))
        return kernels

    @classmethod
    def _keyed_registration(cls, call: Node) -> list[MetaKernel]:
        """``m.impl("op", c10::DispatchKey::Meta, f)`` and ``m.impl("op", torch::dispatch(DispatchKey::Meta, f))``."""
        from aoti_lint.read.cpp import last_name, text

        if next(cls._impl_calls(call), None) is not call:
            return []
        arguments = call.child_by_field_name("arguments")
        named = list(arguments.named_children) if arguments is not None else []
        op = registered_op_name(named[0]) if named else None
        if op is None or len(named) < 2:
            return []

        def is_meta(key: Node) -> bool:
            return key.type == "qualified_identifier" and last_name(key) == CPP_META_KEY and "DispatchKey" in text(key)

        if len(named) == 3 and is_meta(named[1]):
            return [MetaKernel(named[2], op)]
        dispatch = named[1]
        if len(named) == 2 and dispatch.type == "call_expression":
            function = dispatch.child_by_field_name("function")
            inner = dispatch.child_by_field_name("arguments")
            inner_named = list(inner.named_children) if inner is not None else []
            dispatches = function is not None and last_name(function) == "dispatch" and len(inner_named) == 2
            if dispatches and is_meta(inner_named[0]):
                return [MetaKernel(inner_named[1], op)]
        return []

    @staticmethod
    def _schema(call: Node) -> tuple[str, list[str]] | None:
        from aoti_lint.read.cpp import string_value, text

        function = call.child_by_field_name("function")
        if function is None or function.type != "field_expression":
            return None
        field = function.child_by_field_name("field")
        if field is None or text(field) != "def":
            return None
        arguments = call.child_by_field_name("arguments")
        named = list(arguments.named_children) if arguments is not None else []
        value = string_value(named[0]) if named else None
        return schema_arguments(value) if value else None

    @staticmethod
    def _resolve(node: Node, definitions: dict[str, list[Node]]) -> list[Node]:
        """The kernel a registration names: a lambda, or ``f`` / ``&f`` / ``TORCH_FN(f)`` defined once here."""
        from aoti_lint.read.cpp import last_name, text

        while True:
            if node.type in ("pointer_expression", "parenthesized_expression"):
                inner = node.named_children
                if len(inner) != 1:
                    return []
                node = inner[0]
            elif node.type == "call_expression":
                function = node.child_by_field_name("function")
                arguments = node.child_by_field_name("arguments")
                inner = list(arguments.named_children) if arguments is not None else []
                if function is None or text(function) != "TORCH_FN" or len(inner) != 1:
                    return []
                node = inner[0]
            else:
                break
        if node.type == "lambda_expression":
            return [node]
        if node.type in ("identifier", "qualified_identifier", "template_function"):
            found = definitions.get(last_name(node), [])
            return found if len(found) == 1 else []
        return []

    # -- one kernel ------------------------------------------------------------------------------------
    @classmethod
    def _check_kernel(
        cls, source: SourceFile, locator: cpp.Locator, function: Node, op: str, schema: list[str] | None
    ) -> list[Finding]:
        from aoti_lint.read.cpp import last_name, text, walk

        body = function.child_by_field_name("body")
        if body is None:
            return []
        what = f"the Meta kernel of `{op}`"
        tensors: set[str] = set()
        findings = []
        for index, parameter in enumerate(kernel_parameters(function)):
            type_node = parameter.child_by_field_name("type")
            declarator = parameter.child_by_field_name("declarator")
            name = declarator_name(declarator) if declarator is not None else None
            if type_node is None or name is None:
                continue
            type_name = last_name(type_node)
            if type_name in CPP_TENSOR_TYPES:
                tensors.add(text(name))
                continue
            expected = CPP_SYMINT_PARAMETERS.get(type_name)
            if expected is not None and schema is not None and index < len(schema) and schema[index] == expected[0]:
                findings.append(
                    cls.finding(
                        source,
                        *locator.span(parameter),
                        f"`{text(parameter)}` in {what}: the schema declares `{expected[0]}`, and an "
                        f"`{type_name}` parameter pins that size to the example's under export; "
                        f"take `{expected[1]}`",
                    )
                )
        assigned = {
            text(left)
            for assignment in walk(body, ("assignment_expression",))
            if (left := assignment.child_by_field_name("left")) is not None and left.type == "identifier"
        }
        for call in walk(body, ("call_expression",)):
            function_node = call.child_by_field_name("function")
            if function_node is None or function_node.type != "field_expression":
                continue
            receiver = function_node.child_by_field_name("argument")
            field = function_node.child_by_field_name("field")
            operator = function_node.child_by_field_name("operator")
            if receiver is None or field is None or receiver.type != "identifier":
                continue
            if operator is not None and text(operator) != ".":
                continue
            method, variable = text(field), text(receiver)
            if method not in CPP_SYMINT_METHODS or variable not in tensors or variable in assigned:
                continue
            if in_check(call, body):
                continue
            arguments = call.child_by_field_name("arguments")
            args_text = text(arguments) if arguments is not None else "()"
            symbolic = f"{variable}.{CPP_SYMINT_METHODS[method]}{args_text}"
            findings.append(
                cls.finding(
                    source,
                    *locator.span(call),
                    f"`{text(call)}` reads a concrete size in {what}: under export with dynamic shapes it "
                    f"pins the size to the example's ('Constraints violated', or a silently static input); "
                    f"use `{symbolic}` (c10::SymInt arithmetic, `at::empty_symint`)",
                )
            )
        return findings

    @staticmethod
    def _suppress(root: Node, findings: list[Finding]) -> list[Finding]:
        """``// noqa: AOTI304`` on the finding's line, ``// aoti-lint: noqa`` anywhere: C++ comments read as
        the ``#`` comments the engine understands elsewhere."""
        from aoti_lint.model.suppressions import Suppressions
        from aoti_lint.read.cpp import text, walk

        suppressions = Suppressions()
        for comment in walk(root, ("comment",)):
            body = text(comment)
            if body.startswith("//"):
                suppressions.add_comment(comment.start_point[0] + 1, "#" + body[2:])
            elif body.startswith("/*"):
                suppressions.add_comment(comment.end_point[0] + 1, "#" + body[2:-2])
        return suppressions.filter(findings)
