"""AOTI301-AOTI304 without torch: precision cases, the prefilter, and tree-sitter loaded only when needed."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from aoti_lint.read.source import SourceFile
from aoti_lint.rules import RULES_BY_CODE
from aoti_lint.rules.fake_kernels import could_hold_kernel_text
from aoti_lint.run.file_context import FileContext
from aoti_lint.run.prefilter import needs_parsing
from tests.conftest import FIXTURES, REPO
from tests.helpers import lint_text

PYTHON_RULES = [RULES_BY_CODE[code] for code in ("AOTI301", "AOTI302", "AOTI303")]


def _codes(text: str, filename: str = "ops.py") -> list[str]:
    result = lint_text(textwrap.dedent(text).lstrip("\n"), filename)
    assert not result.errors
    return [f.code for f in result.findings if f.code.startswith("AOTI3")]


SILENT_PYTHON = {
    "parameter annotated int": """
        import torch

        @torch.library.register_fake("mylib::op")
        def _(x, n: int, shape: list[int]):
            return x.new_empty(int(n), int(shape[0]), float(n))
        """,
    "rebound parameter": """
        import torch

        @torch.library.register_fake("mylib::op")
        def _(x):
            x = torch.ones(3)
            return x.new_empty(int(x.shape[0]))
        """,
    "size of a tensor that is not an argument": """
        import torch

        @torch.library.register_fake("mylib::op")
        def _(x):
            table = torch.ones(8)
            if table.shape[0] > 4:
                return x.new_empty(int(table.shape[0]))
            return x.new_empty(x.shape[0])
        """,
    "not registered": """
        import torch

        def fake(x):
            if x.shape[0] > 8:
                return x.new_empty(int(x.shape[0]))
            return x.sum().item()
        """,
    "registered for CPU": """
        import torch

        @torch.library.impl("mylib::op", "CPU")
        def cpu(x):
            return x.new_empty(int(x.shape[0]), x.sum().item())
        """,
    "legacy impl for CUDA": """
        import torch

        lib = torch.library.Library("mylib", "IMPL")

        @torch.library.impl(lib, "op", "CUDA")
        def cuda(x):
            return x.new_empty(int(x.shape[0]))
        """,
    "the name registered is another function": """
        import torch

        def fake(x):
            return x.new_empty(int(x.shape[0]))

        def make():
            def fake(x):
                return x.new_empty(x.shape[0])
            torch.library.register_fake("mylib::op", fake)
        """,
    "nested helper": """
        import torch

        @torch.library.register_fake("mylib::op")
        def _(x):
            def helper(y):
                return int(y.shape[0])
            return x.new_empty(x.shape[0])
        """,
    "comparisons that do not specialise": """
        import torch

        @torch.library.register_fake("mylib::op")
        def _(x, y):
            if x.shape[0] == 0 or x.numel() <= 1:
                return x.new_empty(0)
            if x.shape[0] != y.shape[0]:
                raise RuntimeError("rows differ")
            if x.dim() > 2:
                return x.new_empty(x.shape[0] + 1)
            return x.new_empty(torch.sym_max(x.shape[0], 8))
        """,
    "impl_abstract of another object": """
        class Registry:
            def impl_abstract(self, name):
                return name

        def impl_abstract(name):
            return name

        impl_abstract("mylib::op")
        Registry().impl_abstract("mylib::op")
        """,
}


@pytest.mark.parametrize("case", list(SILENT_PYTHON))
def test_python_precision(case):
    assert _codes(SILENT_PYTHON[case]) == []


REPORTED_PYTHON = {
    "size alias through arithmetic": (
        """
        import torch

        @torch.library.register_fake("mylib::op")
        def _(x):
            rows = x.shape[0]
            total = rows * x.shape[1]
            return x.new_empty(int(total))
        """,
        ["AOTI301"],
    ),
    "unpacked shape": (
        """
        import torch

        @torch.library.register_fake("mylib::op")
        def _(x):
            b, *rest = x.shape
            if b >= 16:
                return x.new_empty(b, *rest)
            return x.new_empty(float(b))
        """,
        ["AOTI302", "AOTI301"],
    ),
    "register_fake call form on a custom op": (
        """
        import torch

        @torch.library.custom_op("mylib::op", mutates_args=())
        def op(x: torch.Tensor) -> torch.Tensor:
            return x.clone()

        def op_fake(x):
            return x.new_empty(x.max().item())

        op.register_fake(op_fake)
        """,
        ["AOTI301"],
    ),
    "Library whose default key is Meta": (
        """
        from torch.library import Library

        meta = Library("mylib", "IMPL", "Meta")

        def op_meta(x):
            return x.new_empty(int(x.size(0)))

        meta.impl("op", op_meta)
        """,
        ["AOTI301"],
    ),
    "lambda kernels": (
        """
        import torch.library as tl

        tl.register_fake("mylib::a", lambda x: x.new_empty(int(x.shape[0])))
        tl.register_fake("mylib::b", lambda x: x.new_empty(x.shape[0] * 2) if x.shape[0] > 8 else x)
        tl.register_fake("mylib::c", lambda x: x.new_empty(x.shape[0] * 2))
        """,
        ["AOTI301", "AOTI302"],
    ),
    "meta among several device types": (
        """
        import torch

        @torch.library.impl("mylib::op", ["cpu", "meta"])
        def both(x):
            return x.new_empty(int(x.shape[0]))
        """,
        ["AOTI301"],
    ),
}


@pytest.mark.parametrize("case", list(REPORTED_PYTHON))
def test_python_reported(case):
    text, codes = REPORTED_PYTHON[case]
    assert sorted(_codes(text)) == sorted(codes)


SILENT_CPP = {
    "size of a vector, not a tensor": """
        at::Tensor op_meta(const at::Tensor& x, const std::vector<int64_t>& sizes) {
          return at::empty_symint({x.sym_size(0), static_cast<int64_t>(sizes.size())}, x.options());
        }
        TORCH_LIBRARY_IMPL(mylib, Meta, m) { m.impl("op", &op_meta); }
        """,
    "CPU kernel in a file that also has Meta kernels": """
        at::Tensor op_cpu(const at::Tensor& x) { return at::empty({x.size(0)}, x.options()); }
        at::Tensor op_meta(const at::Tensor& x) { return at::empty_symint(x.sym_sizes(), x.options()); }
        TORCH_LIBRARY_IMPL(mylib, CPU, m) { m.impl("op", &op_cpu); }
        TORCH_LIBRARY_IMPL(mylib, Meta, m) { m.impl("op", &op_meta); }
        """,
    "overloads: which one is registered is not known": """
        at::Tensor op_meta(const at::Tensor& x) { return at::empty({x.size(0)}, x.options()); }
        at::Tensor op_meta(const at::Tensor& x, int64_t n) { return at::empty({x.size(0) + n}, x.options()); }
        TORCH_LIBRARY_IMPL(mylib, Meta, m) { m.impl("op", TORCH_FN(op_meta)); }
        """,
    "int64_t where the schema says int": """
        at::Tensor op_meta(const at::Tensor& x, int64_t dim) {
          return at::empty_symint(x.sym_sizes(), x.options());
        }
        TORCH_LIBRARY(mylib, m) {
          m.def("op(Tensor x, int dim) -> Tensor");
          m.impl("op", c10::DispatchKey::Meta, &op_meta);
        }
        """,
    "Meta only in a comment": """
        // The Meta kernel lives in meta.cpp; m.impl registers the CPU one here.
        at::Tensor op_cpu(const at::Tensor& x) { return at::empty({x.size(0)}, x.options()); }
        TORCH_LIBRARY_IMPL(mylib, CPU, m) { m.impl("op", &op_cpu); }
        """,
    "sizes inside checks": """
        at::Tensor verify_meta(const at::Tensor& key, const at::Tensor& sig) {
          TORCH_CHECK(key.dim() == 1 && key.size(0) == 32, "key must be 32 bytes");
          TORCH_INTERNAL_ASSERT(sig.numel() == 64);
          return at::empty({}, key.options());
        }
        TORCH_LIBRARY_IMPL(mylib, Meta, m) { m.impl("verify", &verify_meta); }
        """,
    "file-level noqa": """
        // aoti-lint: noqa: AOTI304
        at::Tensor op_meta(const at::Tensor& x) { return at::empty({x.size(0)}, x.options()); }
        TORCH_LIBRARY_IMPL(mylib, Meta, m) { m.impl("op", &op_meta); }
        """,
}


@pytest.mark.parametrize("case", list(SILENT_CPP))
def test_cpp_precision(case):
    assert _codes(SILENT_CPP[case], "ops.cpp") == []


def test_cpp_op_named_by_a_constant():
    text = """
        namespace kernel {
        constexpr const char* kOp = "quant";
        std::tuple<at::Tensor, at::Tensor> quant_meta(const at::Tensor& x) {
          return {at::empty({x.size(0), x.size(1)}, x.options()), at::empty({x.size(0), 1}, x.options())};
        }
        }
        TORCH_LIBRARY_IMPL(mylib, Meta, m) { m.impl(kernel::kOp, kernel::quant_meta); }
        """
    result = lint_text(textwrap.dedent(text).lstrip("\n"), "quant.cpp")
    assert [f.code for f in result.findings] == ["AOTI304"] * 3
    assert "Meta kernel of `kernel::kOp`" in result.findings[0].message


def test_cpp_reads_cuda_sources_and_broken_code():
    text = """
        at::Tensor op_meta(const at::Tensor& x) {
          return at::empty({x.numel()}, x.options())   // missing semicolon: tree-sitter reads the rest
        }
        TORCH_LIBRARY_IMPL(mylib, Meta, m) { m.impl("op", &op_meta); }
        """
    assert _codes(text, "ops.cu") == ["AOTI304"]


def test_prefilter_skips_files_that_only_mention_the_words():
    """`impl`, a `"meta"` string and "Library" in a module that registers no kernel: the second stage drops
    the Python rules, so the file is never parsed with libcst."""
    quiet = 'import json\n"""Library."""\n\ndef impl(m):\n    return json.dumps(m)\n\nimpl({"meta": 1})\n'
    plain = 'import torch\n\n@torch.library.impl("a::b", "Meta")\ndef meta(x):\n    return x\n'
    # A kernel is parsed only when its body holds a construct a finding needs (here a branch on a size).
    kernel = plain.replace("return x", "return x if x.shape[0] > 8 else x")
    for text, parsed in ((quiet, False), (plain, False), (kernel, True)):
        source = SourceFile(Path("m.py"), "m.py", "python", text.encode())
        assert all(rule.could_match(source.data) for rule in PYTHON_RULES[:2])
        assert needs_parsing(source, FileContext.of(PYTHON_RULES)) is parsed


_PROBE = """
import sys
from pathlib import Path
from aoti_lint.settings.config import Settings
from aoti_lint.run.lint import lint_paths
root = Path(sys.argv[1])
run = lint_paths([root], Settings(root=root).with_enabled(), root)
print(len(run.findings), len(run.errors), "tree_sitter" in sys.modules)
"""


def _probe(directory: Path) -> tuple[int, int, bool]:
    out = subprocess.run(
        [sys.executable, "-c", _PROBE, str(directory)], capture_output=True, text=True, cwd=REPO, check=True
    ).stdout.split()
    return int(out[0]), int(out[1]), out[2] == "True"


def test_tree_sitter_is_imported_only_for_files_that_register_meta_kernels(tmp_path):
    (tmp_path / "cpu.cpp").write_text('TORCH_LIBRARY_IMPL(a, CPU, m) { m.impl("op", &f); }\n')
    (tmp_path / "notes.h").write_text("// Meta kernels are registered elsewhere.\nint f();\n")
    (tmp_path / "model.py").write_text("import torch\n\nx = torch.ones(3)\n")
    assert _probe(tmp_path) == (0, 0, False)
    (tmp_path / "meta.cc").write_bytes((FIXTURES / "rules" / "AOTI304" / "custom_ops_meta.cpp").read_bytes())
    findings, errors, loaded = _probe(tmp_path)
    assert (errors, loaded) == (0, True) and findings > 0


_KERNEL = 'import torch\n\n@torch.library.impl("a::b", "Meta")\ndef meta(x, group{annotation}):\n{body}'
# (kernel body, whether the ast stage keeps the file for libcst, what the rules report with no prefilter)
KERNEL_STAGE = {
    # torch/distributed/_symmetric_memory: `group.size()` without an argument is a shape, not a size, and the
    # group is not a tensor anyway; these two files cost 4.7 s of libcst on torch's sources.
    "range over a group's size": ("    return [x for _ in range(group.size())]\n", False, []),
    "a name bound to it": ("    n = group.size()\n    for _ in range(n):\n        pass\n    return x\n", False, []),
    "a size through two names": (
        "    n = x.shape[0]\n    m = n * 2\n    if m > 8:\n        return x\n    return x\n",
        True,
        ["AOTI302"],
    ),
    "a shape unpacked": ("    b, c = x.shape\n    return x if b > 4 else x\n", True, ["AOTI302"]),
    "a one-element index tuple": ("    return x if x.shape[0,] > 4 else x\n", True, ["AOTI302"]),
    # A tuple index, in parentheses or not (Python reads both alike): no size, an error at run time.
    "a parenthesised tuple index": ("    return x if x.shape[(0, 1)] > 4 else x\n", False, []),
    "int of a size": ("    return x.new_empty(int(x.size(0)))\n", True, ["AOTI301"]),
    ".item() of a numel": ("    return x.new_empty(x.numel().item())\n", True, ["AOTI301"]),
    "a parameter annotated int": ("    return x if group.shape[0] > 4 else x\n", False, []),
}


@pytest.mark.parametrize("name", KERNEL_STAGE)
def test_kernel_stage_follows_the_rules_model_of_sizes(name):
    """The screen reads which names hold a tensor, a size or a shape in a kernel as the rules do: it keeps every
    file the rules report on and drops the ones whose only candidates are sizes of something else."""
    body, kept, reported = KERNEL_STAGE[name]
    annotation = ": int" if name == "a parameter annotated int" else ""
    text = _KERNEL.format(annotation=annotation, body=body)
    source = SourceFile(Path("m.py"), "m.py", "python", text.encode())
    assert needs_parsing(source, FileContext.of(PYTHON_RULES)) is kept
    unfiltered = lint_text(text, "m.py", prefilter=False)
    assert [f.code for f in unfiltered.findings if f.code.startswith("AOTI3")] == reported


def test_kernel_stage_keeps_every_import_of_one_alias():
    """Imported twice under one name: the registration is one of them for libcst, so the stage keeps both
    (it used to keep the last one it walked, and dropped this file's finding)."""
    text = textwrap.dedent(
        """
        try:
            from torch.library import register_fake as rf
        except ImportError:
            from compat import noop as rf

        @rf("a::b")
        def meta(x):
            return x if x.shape[0] > 8 else x
        """
    ).lstrip("\n")
    source = SourceFile(Path("m.py"), "m.py", "python", text.encode())
    assert needs_parsing(source, FileContext.of(PYTHON_RULES))
    assert [f.code for f in lint_text(text, "m.py").findings if f.code.startswith("AOTI3")] == ["AOTI302"]


def test_kernel_stage_sees_impl_imported_under_another_name():
    """`from torch.library import impl as reg`: the stage looked for a call named `impl` and dropped the file,
    whose finding libcst (resolving `reg`) reports."""
    text = 'from torch.library import impl as reg\n\n@reg("a::b", "Meta")\ndef k(x):\n'
    text += "    return x if x.shape[0] > 8 else x\n"
    source = SourceFile(Path("m.py"), "m.py", "python", text.encode())
    assert needs_parsing(source, FileContext.of(PYTHON_RULES))
    assert [f.code for f in lint_text(text, "m.py").findings if f.code.startswith("AOTI3")] == ["AOTI302"]


def test_kernel_words_are_words():
    """The bytes `impl` and `"meta"` inside other words (torch's common_methods_invocations.py, 1.4 MB, whose
    `ast` tree was the run's peak memory): no `ast` parse at all."""
    from aoti_lint.model import name_index as code_index

    text = 'def simple_impl_(x):\n    # the lambda impl\n    return {"device": "meta", "simple": x}\n'
    source = SourceFile(Path("m.py"), "m.py", "python", text.encode())
    assert all(rule.could_match(source.data) for rule in PYTHON_RULES[:2])
    code_index.code_index.cache_clear()
    assert not needs_parsing(source, FileContext.of(PYTHON_RULES))
    assert code_index.code_index.cache_info().misses == 0
    # A `#` inside a string is no comment, and a string that closes on the line ends before the word.
    for line in ('x = "#"; impl("a::b", "Meta")(k)', '# """; impl("a::b", "Meta")(k)', "# a comment\rimpl(k)"):
        assert could_hold_kernel_text(line)


def test_kernel_words_are_found_as_the_word_pattern_finds_them():
    """The scan (one pattern per name, the word's start tested apart) answers as `\\b(?:...)\\b` does, Unicode
    word characters included, on generated texts."""
    import random
    import re

    words = re.compile(r"\b(?:register_fake|impl_abstract|impl)\b")

    def reference(text: str) -> bool:
        for match in words.finditer(text):
            start = match.start()
            newline = text.rfind("\n", 0, start)
            line = text[max(newline, text.rfind("\r", newline + 1, start)) + 1 : start]
            if "#" not in line or "'" in line or '"' in line:
                return True
        return False

    atoms = ["impl", "register_fake", "impl_abstract", "simple", "_impl", "impl_", "é", "Ǆ", "٣", "x", " ", "#"]
    atoms += ["'", '"', "\n", "\r", "\r\n", ".", "(", "1", "implimpl"]
    generated = random.Random(0)
    texts = ["".join(generated.choice(atoms) for _ in range(generated.randint(1, 12))) for _ in range(20_000)]
    assert any(reference(text) for text in texts) and not all(reference(text) for text in texts)
    assert [could_hold_kernel_text.__wrapped__(text) for text in texts] == [reference(text) for text in texts]


def test_stage_one_finds_a_kernel_word_wherever_the_text_stage_does():
    """The bytes' test (a registering name as a word, a byte of 128 or more counting as a word's) passes every text
    the text's test passes, identifiers of non-ASCII letters included; `impl` inside other words passes neither."""
    import random

    from aoti_lint.rules.fake_kernels import _holds_kernel_word, could_hold_kernel_bytes

    atoms = ["impl", "register_fake", "impl_abstract", "simple", "_impl", "impl_", "é", "Ǆ", "٣", "x", " ", "#"]
    atoms += ["'", '"', "\n", "\r", ".", "(", "1", "implimpl", "implé", "éimpl"]
    generated = random.Random(1)
    texts = ["".join(generated.choice(atoms) for _ in range(generated.randint(1, 12))) for _ in range(20_000)]
    passed = [text for text in texts if could_hold_kernel_text.__wrapped__(text)]
    assert passed and all(_holds_kernel_word(text.encode()) for text in passed)
    assert any(not _holds_kernel_word(text.encode()) for text in texts)
    meta = b'lib = torch.library.Library("a", "IMPL", "Meta")\n'
    assert could_hold_kernel_bytes(meta + b'lib.impl("b", k)\n')
    for words in (b"simple(x)", b"my_impl(x)", b"implementation(x)", b"impl\xc3\xa9(x)", b"# register_fakes"):
        assert not could_hold_kernel_bytes(meta + words + b"\n"), words
        assert not FileContext.of(PYTHON_RULES).reads(meta + words + b"\n"), words


def test_a_kernel_after_a_hash_inside_a_string_is_kept():
    text = 'import torch\n\nlib = torch.library.Library("a", "IMPL", "Meta")\n\n\ndef k(x):\n'
    text += '    return x if x.shape[0] > 8 else x\n\n\nSEP = "#"; lib.impl("b", k)\n'
    assert [f.code for f in lint_text(text, "m.py").findings if f.code.startswith("AOTI3")] == ["AOTI302"]
    source = SourceFile(Path("m.py"), "m.py", "python", text.encode())
    assert needs_parsing(source, FileContext.of(PYTHON_RULES))


def test_impl_abstract_fallback_of_a_version_gate_is_reported_not_rewritten(cli, tmp_path):
    """Issue 43: the rename made both branches of `if TORCH_VERSION_AT_LEAST_2_4: ... else: ...` the same."""
    import shutil

    project = tmp_path / "project"
    shutil.copytree(FIXTURES / "corpus" / "impl_abstract_version_gate", project)
    before = (project / "quant" / "ops.py").read_text()
    result = cli(".", "--isolated", "--no-cache", "--fix", "--unsafe-fixes", cwd=project)
    assert result.returncode == 1
    assert "quant/ops.py:8:35: AOTI303" in result.stdout and "version gate at line 5" in result.stdout
    assert (project / "quant" / "ops.py").read_text() == before
