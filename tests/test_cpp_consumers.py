"""C++ loads of AOTI artifacts: which paths are known from the file alone, and which stay unknown."""

from __future__ import annotations

import subprocess
import sys

import pytest

from aoti_lint.diagnostics import Position
from aoti_lint.flows.cpp_consumers import CppArtifactLoad, find_artifact_loads


def loads(code: str) -> list[tuple[str, str, int]]:
    return [(load.path, load.runner, load.start.row) for load in find_artifact_loads(code.encode())]


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        (
            'torch::inductor::AOTIModelContainerRunnerCpu runner("model.so");',
            ("model.so", "AOTIModelContainerRunnerCpu"),
        ),
        ('AOTIModelContainerRunnerCuda runner{"m.so", 1, "cuda:0"};', ("m.so", "AOTIModelContainerRunnerCuda")),
        (
            'auto r = std::make_unique<torch::inductor::AOTIModelContainerRunnerXpu>(std::string("x.so"));',
            ("x.so", "AOTIModelContainerRunnerXpu"),
        ),
        ('auto r = std::make_shared<AOTIModelContainerRunnerMps>("y.so");', ("y.so", "AOTIModelContainerRunnerMps")),
        (
            'auto* r = new torch::inductor::AOTIModelContainerRunnerCpu(std::string{"z.so"});',
            ("z.so", "AOTIModelContainerRunnerCpu"),
        ),
        ('auto r = AOTIModelContainerRunnerCpu("w.so");', ("w.so", "AOTIModelContainerRunnerCpu")),
        ('run(AOTIModelContainerRunnerCpu{"t.so"});', ("t.so", "AOTIModelContainerRunnerCpu")),
        ('auto r = AOTIModelContainerRunnerCpu("dir/" "w.so");', ("dir/w.so", "AOTIModelContainerRunnerCpu")),
        ('auto r = AOTIModelContainerRunnerCpu(R"(C:\\m.so)");', ("C:\\m.so", "AOTIModelContainerRunnerCpu")),
        (
            'torch::inductor::AOTIModelPackageLoader loader("model.pt2", "model");',
            ("model.pt2", "AOTIModelPackageLoader"),
        ),
        (
            'using Runner = torch::inductor::AOTIModelContainerRunnerCuda;\nRunner r("a.so");',
            ("a.so", "AOTIModelContainerRunnerCuda"),
        ),
    ],
)
def test_construction_forms(code, expected):
    found = loads(code)
    assert [(path, runner) for path, runner, _ in found] == [expected]


@pytest.mark.parametrize(
    "definition",
    [
        'const std::string kPath = "model.so";',
        'constexpr char kPath[] = "model.so";',
        'static const char* kPath = "model.so";',
        'const std::string kPath("model.so");',
        'const std::string kPath{std::string("model.so")};',
        'constexpr std::string_view kPath = "model.so";',
        '#define kPath "model.so"',
        'namespace cfg { const std::string kPath = "model.so"; }',
    ],
)
def test_constant_in_the_same_file(definition):
    code = f"{definition}\nint main() {{\n  torch::inductor::AOTIModelContainerRunnerCpu runner(kPath);\n}}\n"
    assert loads(code) == [("model.so", "AOTIModelContainerRunnerCpu", 3)]


def test_global_runner_from_a_constant():
    code = 'const std::string kPath = "model.so";\nstatic AOTIModelContainerRunnerCpu runner(kPath);\n'
    assert loads(code) == [("model.so", "AOTIModelContainerRunnerCpu", 2)]


def test_qualified_constant_and_member_construction():
    code = """
namespace cfg { constexpr const char* kPath = "model.so"; }
struct Server {
  static constexpr const char* kOther = "other.so";
  AOTIModelContainerRunnerCpu runner_{cfg::kPath};
  std::unique_ptr<AOTIModelContainerRunnerCpu> second_;
  Server() : second_(std::make_unique<AOTIModelContainerRunnerCpu>(Server::kOther)) {}
};
"""
    assert loads(code) == [
        ("model.so", "AOTIModelContainerRunnerCpu", 5),
        ("other.so", "AOTIModelContainerRunnerCpu", 7),
    ]


@pytest.mark.parametrize(
    "code",
    [
        # From outside the file, or computed.
        "int main(int argc, char** argv) { AOTIModelContainerRunnerCpu r(argv[1]); }",
        'AOTIModelContainerRunnerCpu r(std::getenv("MODEL"));',
        'AOTIModelContainerRunnerCpu r(dir + "/model.so");',
        'AOTIModelContainerRunnerCpu r(std::string(dir) + "model.so");',
        "void load(const std::string& path) { AOTIModelContainerRunnerCpu r(path); }",
        # A variable that is not a constant, or is assigned later.
        'std::string path = "model.so";\nAOTIModelContainerRunnerCpu r(path);',
        'const char* path = "a.so";\nvoid f() { path = other; AOTIModelContainerRunnerCpu r(path); }',
        # A name defined twice: which one reaches the runner is not known without scopes.
        'const std::string kPath = "a.so";\nvoid f(const std::string& kPath) { AOTIModelContainerRunnerCpu r(kPath); }',
        '#ifdef GPU\n#define MODEL "gpu.so"\n#else\n#define MODEL "cpu.so"\n#endif\n'
        "AOTIModelContainerRunnerCpu r(MODEL);",
        'const std::string kPath = "a.so";\n'
        "void f() { for (const auto& kPath : all) { AOTIModelContainerRunnerCpu r(kPath); } }",
        # A macro that is not one literal, an escape whose value is not certain.
        '#define MODEL DIR "/m.so"\nAOTIModelContainerRunnerCpu r(MODEL);',
        'AOTIModelContainerRunnerCpu r("m\\x2eso");',
        # Not a runner, or no argument.
        'OtherRunner r("model.so");',
        "AOTIModelContainerRunnerCpu* runner = nullptr;",
        'std::unique_ptr<AOTIModelContainerRunner> make(); auto p = make_thing("model.so");',
        '// AOTIModelContainerRunnerCpu r("model.so");',
        'const char* doc = "AOTIModelContainerRunnerCpu(\\"model.so\\")";',
    ],
)
def test_unknown_or_unrelated_stays_out(code):
    assert loads(code) == []


def test_positions_span_the_construction():
    code = 'int main() {\n  // é\n  auto r = std::make_unique<AOTIModelContainerRunnerCpu>("é.so");\n}\n'
    (load,) = find_artifact_loads(code.encode())
    assert load == CppArtifactLoad("é.so", "AOTIModelContainerRunnerCpu", Position(3, 12), Position(3, 65))


def test_declaration_span_stops_before_the_semicolon():
    (load,) = find_artifact_loads(b'  AOTIModelContainerRunnerCpu runner("m.so");\n')
    assert (load.start, load.end) == (Position(1, 3), Position(1, 45))


def test_broken_code_still_reads_the_rest():
    code = 'int f( {\nAOTIModelContainerRunnerCpu runner("ok.so");\n'
    assert [path for path, _, _ in loads(code)] == ["ok.so"]


def test_files_without_the_names_do_not_load_tree_sitter():
    script = (
        "import sys\n"
        "from aoti_lint.flows.cpp_consumers import find_artifact_loads\n"
        "assert find_artifact_loads(b'int main() { return 0; }') == []\n"
        "assert 'tree_sitter' not in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", script], check=True)
