"""AOTI004: the old per-device AOTI runner classes used from C++."""

from __future__ import annotations

from collections.abc import Iterator

from aoti_lint.diagnostics import Finding
from aoti_lint.knowledge.cpp_runners import PACKAGE_LOADER_HEADER, REPLACEMENT, RUNNER_CLASSES
from aoti_lint.knowledge.references import AOTI_CPP_INFERENCE, CPP_RUNNER_HEADERS, MIGRATION_GUIDE
from aoti_lint.lazy import LazyPattern
from aoti_lint.rules.base import Invalid, TextRule, Valid

TYPE_CHECKING = False
if TYPE_CHECKING:
    from tree_sitter import Node

    from aoti_lint.read.source import SourceFile

_NAME_NODES = frozenset({"identifier", "type_identifier", "namespace_identifier"})
_CLASS_SPECIFIERS = frozenset({"class_specifier", "struct_specifier"})
# `class [MACRO ...] Name [final] :` or `{`, the macros in capitals as export macros are written.
_DEFINITION = LazyPattern(
    rb"\b(?:class|struct)\s+(?:[A-Z][A-Z0-9_]*\s+)*("
    + "|".join(sorted(RUNNER_CLASSES)).encode()
    + rb")\s*(?:final\s*)?[:{]"
)


class DeprecatedCppRunner(TextRule):
    """
    ## What it does
    Finds the old AOTI runner classes in C and C++ sources (`.cpp`, `.cc`, `.h`, `.hpp`, `.cu`, ...):
    `AOTIModelContainerRunnerCpu`, `AOTIModelContainerRunnerCuda`, `AOTIModelContainerRunnerXpu` and
    `AOTIModelContainerRunnerMps`, with or without `torch::inductor::`, wherever code names them: a
    declaration, `new`, `std::make_unique<...>`, a `std::unique_ptr<...>` member, a `using` alias. Each
    place that names a class is one finding, since each must change.

    Comments, strings, `#include` lines, a forward declaration (`class AOTIModelContainerRunnerCpu;`), and
    the files that define or implement the classes (torch's own sources) are not reported. The base class
    `AOTIModelContainerRunner`, which `AOTIModelPackageLoader::get_runner()` returns, is not deprecated and is
    not reported.

    ## Why is this bad?
    These runners load a bare `.so`, the output of the deprecated `torch._export.aot_compile` (and of the
    low-level `torch._inductor.aot_compile`). The supported export, `torch._inductor.aoti_compile_and_package`,
    writes a `.pt2` package, which the runners cannot open: a Python side migrated to packages breaks a C++
    server still on the runners. torch's C++ loader for packages, the one its AOTInductor docs show for
    inference in C++, is `torch::inductor::AOTIModelPackageLoader`. It reads the package's metadata and builds the
    runner for the device the package was compiled for, so the device string goes away. From torch 2.13's
    `aoti_package/model_package_loader.h`:

    ```cpp
    AOTIModelPackageLoader(
        const std::string& model_package_path,
        const std::string& model_name = "model",
        const bool run_single_threaded = false,
        const size_t num_runners = 1,
        const c10::DeviceIndex device_index = -1);
    ```

    and the runner it replaces, from `aoti_runner/model_container_runner_cuda.h`, under "Following APIs are
    subject to change due to active development. We provide NO BC guarantee for these APIs":

    ```cpp
    AOTIModelContainerRunnerCuda(
        const std::string& model_so_path,
        size_t num_models = 1,
        const std::string& device_str = "cuda",
        const std::string& cubin_dir = "",
        const bool run_single_threaded = false);
    ```

    (`AOTIModelContainerRunnerCpu(const std::string& model_so_path, size_t num_models = 1, const bool
    run_single_threaded = false)` in `model_container_runner_cpu.h`.) `run(inputs)` keeps its signature;
    `num_models` becomes `num_runners`, and a device index (`"cuda:1"`) becomes `device_index`. Include
    `<torch/csrc/inductor/aoti_package/model_package_loader.h>`.

    ## Known problems
    Names hidden in a macro body (`#define RUNNER AOTIModelContainerRunnerCpu`) are not read.

    ## Fix safety
    No fix: the artifact must change with the code (the Python side must write a `.pt2` with
    `aoti_compile_and_package`), and the C++ build must include the loader's header. To keep a runner on
    purpose, add `// noqa: AOTI004` at the end of the line.
    """

    code = "AOTI004"
    name = "deprecated-cpp-runner"
    references = (AOTI_CPP_INFERENCE, CPP_RUNNER_HEADERS, MIGRATION_GUIDE)
    summary = "An old AOTI runner class that loads a bare `.so` is used from C++"
    file_kinds = frozenset({"cpp"})
    triggers = tuple((name.encode(),) for name in sorted(RUNNER_CLASSES))

    @classmethod
    def check(cls, source: SourceFile) -> list[Finding]:
        from aoti_lint.read import cpp

        # The decoded text, re-encoded: positions then match the text the user sees (a BOM is not a column).
        data = source.text.encode("utf-8")
        locator = cpp.Locator(data)
        findings = []
        for node in _references(cpp.parse(data).root_node):
            name = cpp.text(node)
            start, end = locator.span(node)
            findings.append(cls.finding(source, start, end, _message(name)))
        return findings

    VALID = [
        Valid(
            """
            #include <torch/csrc/inductor/aoti_package/model_package_loader.h>

            int main() {
              torch::inductor::AOTIModelPackageLoader loader("model.pt2", "model");
              torch::inductor::AOTIModelContainerRunner* runner = loader.get_runner();
              auto outputs = loader.run({torch::randn({8, 10})});
            }
            """,
            filename="serve.cpp",
        ),
        Valid(
            """
            // Before: torch::inductor::AOTIModelContainerRunnerCpu runner("model.so");
            #include <torch/csrc/inductor/aoti_runner/model_container_runner_cpu.h>
            const char* kHelp = "AOTIModelContainerRunnerCpu is gone";
            namespace torch::inductor { class AOTIModelContainerRunnerCuda; }
            torch::inductor::AOTIModelContainerRunnerCpu runner("model.so");  // noqa: AOTI004
            """,
            filename="serve.cpp",
        ),
        Valid(
            """
            namespace torch::inductor {
            class AOTIModelContainerRunnerCpu : public AOTIModelContainerRunner {
             public:
              AOTIModelContainerRunnerCpu(const std::string& model_so_path, size_t num_models = 1);
              ~AOTIModelContainerRunnerCpu() override;
            };
            AOTIModelContainerRunnerCpu::~AOTIModelContainerRunnerCpu() = default;
            }
            """,
            filename="model_container_runner_cpu.h",
        ),
    ]
    INVALID = [
        Invalid(
            """
            #include <torch/csrc/inductor/aoti_runner/model_container_runner_cpu.h>

            int main() {
              torch::inductor::AOTIModelContainerRunnerCpu runner("model.so");
              auto outputs = runner.run({torch::randn({8, 10})});
            }
            """,
            filename="serve.cpp",
            line=4,
            column=20,
            message_contains="torch::inductor::AOTIModelPackageLoader(path, model_name)",
        ),
        Invalid(
            """
            class Server {
              std::unique_ptr<torch::inductor::AOTIModelContainerRunnerCuda> runner_;
             public:
              explicit Server(const std::string& path)
                  : runner_(std::make_unique<torch::inductor::AOTIModelContainerRunnerCuda>(path, 1, "cuda:1")) {}
            };
            """,
            filename="server.hpp",
            line=2,
            count=2,
            message_contains="device_index",
        ),
        Invalid(
            """
            using Runner = AOTIModelContainerRunnerXpu;
            auto* runner = new AOTIModelContainerRunnerMps(argv[1]);
            """,
            filename="serve.cc",
            count=2,
        ),
    ]


def _message(name: str) -> str:
    # Only the CUDA and XPU runners take a device string (see knowledge.cpp_runners).
    example = {"AOTIModelContainerRunnerCuda": "cuda:1", "AOTIModelContainerRunnerXpu": "xpu:1"}.get(name)
    device = f"; a device index (`{example}`) becomes `device_index`" if example else ""
    return (
        f"`{name}` loads a bare `.so`, the output of the deprecated `aot_compile`: load the `.pt2` of "
        f"`aoti_compile_and_package` with `{REPLACEMENT}` from `{PACKAGE_LOADER_HEADER}`{device}"
    )


def _references(root: Node) -> Iterator[Node]:
    """Every name of a runner class in code, except where a file declares or implements the class."""
    from aoti_lint.read import cpp

    names = [node for node in cpp.walk(root, _NAME_NODES) if cpp.text(node) in RUNNER_CLASSES]
    if not names:
        return
    implemented = {cpp.text(node) for node in names if _implements(node)}
    # `class TORCH_API AOTIModelContainerRunnerCpu : ...`: an export macro the grammar cannot know hides the
    # definition from the tree, so the text is asked too.
    implemented |= {match.group(1).decode() for match in _DEFINITION.finditer(root.text or b"")}
    for node in names:
        if cpp.text(node) not in implemented and not _declares(node):
            yield node


def _declares(node: Node) -> bool:
    """The name of a class specifier (a definition or a forward declaration) or of a destructor."""
    parent = node.parent
    if parent is None:
        return False
    if parent.type in _CLASS_SPECIFIERS and parent.child_by_field_name("name") == node:
        return True
    return parent.type == "destructor_name"


def _implements(node: Node) -> bool:
    """``class X { ... }`` with a body, or ``X::member`` in a function definition: torch's own sources."""
    parent = node.parent
    if parent is None:
        return False
    if parent.type in _CLASS_SPECIFIERS:
        return parent.child_by_field_name("name") == node and parent.child_by_field_name("body") is not None
    if parent.type == "qualified_identifier" and parent.child_by_field_name("scope") == node:
        outer = parent
        while outer.parent is not None and outer.parent.type == "qualified_identifier":
            outer = outer.parent
        return outer.parent is not None and outer.parent.type == "function_declarator"
    return False
