"""The AOTI3xx rules against real torch: each defect is a custom op exported with a dynamic batch.

Every case is one module's source. The linter reads it (it must report exactly the expected codes), then the
test runs it, registering a real custom op with that fake kernel, and exports a model calling the op with
``Dim("b", min=2, max=64)`` on the batch. Defective kernels fail with the error the rule docs quote, or
export silently specialised; SymInt-aware ones export with the range intact. torch.export only: no compile.
"""

from __future__ import annotations

import importlib.util
import itertools
import textwrap
import warnings

import pytest

from aoti_lint.fixes.edits import apply_edits
from aoti_lint.knowledge.custom_ops import CONSTRAINTS_VIOLATED, IMPL_ABSTRACT_WARNING
from tests.helpers import lint_text

pytestmark = pytest.mark.torch
# Imported by the tests that use it, not here: collecting this module under the fast suite's
# `-m "not torch"` would otherwise cost each worker the seconds of an import it never uses.
if importlib.util.find_spec("torch") is None:
    pytest.skip("torch is not installed", allow_module_level=True)

_NAMES = itertools.count()

TEMPLATE = """
import math

import torch

@torch.library.custom_op("aoti_lint_test::{name}", mutates_args=())
def op(x: torch.Tensor) -> torch.Tensor:
    return torch.cat([x, x])

@op.register_fake
def _(x):
{body}
"""

# name: (fake kernel body, codes the linter reports, the export's error text or None when it must pass)
CASES = {
    "int_of_size": (
        "n = int(x.shape[0])\nreturn x.new_empty(n * 2, *x.shape[1:])",
        ["AOTI301"],
        CONSTRAINTS_VIOLATED,
    ),
    "int_of_size_method": (
        "return x.new_empty(int(x.size(0)) * 2, *x.shape[1:])",
        ["AOTI301"],
        CONSTRAINTS_VIOLATED,
    ),
    "float_of_size": (
        "return x.new_empty(int(float(x.shape[0]) * 2), *x.shape[1:])",
        ["AOTI301"],
        CONSTRAINTS_VIOLATED,
    ),
    "math_on_size": (
        "return x.new_empty(math.ceil(x.shape[0] / 2), *x.shape[1:])",
        ["AOTI301"],
        CONSTRAINTS_VIOLATED,
    ),
    "item_of_size": (
        "return x.new_empty(x.shape[0].item() * 2, *x.shape[1:])",
        ["AOTI301"],
        "'SymInt' object has no attribute 'item'",
    ),
    "item_of_data": (
        "return x.new_empty(int(x.sum().item()), 3)",
        ["AOTI301"],
        "Could not extract specialized integer from data-dependent expression",
    ),
    "tolist_of_data": (
        "return x.new_empty(int(x.sum().tolist()), 3)",
        ["AOTI301"],
        "data-dependent expression",
    ),
    "numpy_of_data": (
        "return x.new_empty(int(x.numpy().sum()), 3)",
        ["AOTI301"],
        ".numpy() is not supported for tensor subclasses.",
    ),
    "branch_on_size": (
        "if x.shape[0] > 8:\n"
        "    return x.new_empty(x.shape[0] * 2, *x.shape[1:])\n"
        "return x.new_empty(x.shape[0], *x.shape[1:])",
        ["AOTI302"],
        CONSTRAINTS_VIOLATED,
    ),
    "loop_over_size": (
        "for i in range(x.shape[0]):\n    pass\nreturn x.new_empty(x.shape[0] * 2, *x.shape[1:])",
        ["AOTI302"],
        CONSTRAINTS_VIOLATED,
    ),
    # SymInt-aware kernels: silent, and the export keeps the batch dynamic over [2, 64].
    "symbolic_arithmetic": ("return x.new_empty(x.shape[0] * 2, *x.shape[1:])", [], None),
    "sym_max": ("return x.new_empty(torch.sym_max(x.shape[0], 8), *x.shape[1:])", [], None),
    "math_prod_of_shape": ("return x.new_empty(math.prod(x.shape), 3)", [], None),
    "sym_float": ("return x.new_empty(torch.sym_int(torch.sym_float(x.shape[0]) * 1.5), 3)", [], None),
    "check": ("torch._check(x.shape[0] >= 2)\nreturn x.new_empty(x.shape[0] * 2, *x.shape[1:])", [], None),
    "new_dynamic_size": ("n = torch.library.get_ctx().new_dynamic_size()\nreturn x.new_empty(n, 3)", [], None),
}


def _source(body: str) -> str:
    name = f"case{next(_NAMES)}"
    return textwrap.dedent(TEMPLATE).lstrip("\n").format(name=name, body=textwrap.indent(body, "    "))


def _export(source: str, dim=None):
    """Run the module (registering its custom op) and export a model that calls the op."""
    import torch
    from torch.export import Dim, export

    namespace: dict = {}
    exec(compile(source, "<case>", "exec"), namespace)  # the test runs the code; the linter never does
    op = namespace["op"]

    class Model(torch.nn.Module):
        def forward(self, x):
            return op(x)

    dim = Dim("b", min=2, max=64) if dim is None else dim
    return export(Model(), (torch.randn(4, 3),), dynamic_shapes={"x": {0: dim}})


def _batch(program) -> object:
    placeholder = next(node for node in program.graph.nodes if node.op == "placeholder")
    return placeholder.meta["val"].shape[0]


@pytest.mark.parametrize("case", list(CASES))
def test_linter_and_export_agree(case):
    import torch

    body, codes, error = CASES[case]
    source = _source(body)
    findings = [f.code for f in lint_text(source, "ops.py").findings]
    assert findings == codes, findings
    if error is None:
        program = _export(source)
        batch = _batch(program)
        assert isinstance(batch, torch.SymInt), batch
        (batch_range,) = [r for symbol, r in program.range_constraints.items() if str(symbol) == str(batch)]
        assert (int(batch_range.lower), int(batch_range.upper)) == (2, 64), program.range_constraints
    else:
        with pytest.raises(Exception) as raised:
            _export(source)
        assert error in str(raised.value)


@pytest.mark.parametrize("case", ["int_of_size", "branch_on_size"])
def test_auto_dynamic_export_specialises_silently(case):
    """With Dim.AUTO the same defects export without an error: the batch collapses to the example's size
    (a concrete size) or its range narrows to the example's side of the branch."""
    from torch.export import Dim

    program = _export(_source(CASES[case][0]), Dim.AUTO)
    batch = _batch(program)
    if case == "int_of_size":
        assert str(batch) == "4"  # a constant, no symbol left
        assert not program.range_constraints
    else:
        (symbol_range,) = program.range_constraints.values()
        assert (int(symbol_range.lower), int(symbol_range.upper)) == (2, 8)


META_TEMPLATE = """
import torch

torch.library.define("aoti_lint_test::{name}", "(Tensor x) -> Tensor")

@torch.library.impl("aoti_lint_test::{name}", "CPU")
def cpu(x):
    return torch.cat([x, x])

@torch.library.impl("aoti_lint_test::{name}", "Meta")
def meta(x):
    return x.new_empty({rows}, *x.shape[1:])

op = torch.ops.aoti_lint_test.{name}
"""


@pytest.mark.parametrize(
    ("rows", "codes", "error"),
    [("int(x.shape[0]) * 2", ["AOTI301"], CONSTRAINTS_VIOLATED), ("x.shape[0] * 2", [], None)],
)
def test_meta_impl_is_what_export_traces(rows, codes, error):
    """A Python kernel registered for the Meta key with torch.library.impl is what export traces."""
    source = META_TEMPLATE.lstrip("\n").format(name=f"meta{next(_NAMES)}", rows=rows)
    assert [f.code for f in lint_text(source, "ops.py").findings] == codes
    if error is None:
        assert str(_batch(_export(source))).startswith("s")
    else:
        with pytest.raises(Exception, match=error.split("!")[0].replace("(", r"\(").replace(")", r"\)")):
            _export(source)


def test_impl_abstract_warns_and_the_fix_does_not():
    template = textwrap.dedent(
        """
        import torch
        from torch.library import impl_abstract

        torch.library.define("aoti_lint_test::{name}", "(Tensor x) -> Tensor")

        @impl_abstract("aoti_lint_test::{name}")
        def _(x):
            return x.new_empty(x.shape[0] * 2, *x.shape[1:])
        """
    ).lstrip("\n")
    source = template.format(name=f"old{next(_NAMES)}")
    (finding,) = [f for f in lint_text(source, "ops.py").findings if f.code == "AOTI303"]
    fixed = apply_edits(template, list(finding.fix.edits)).format(name=f"new{next(_NAMES)}")
    assert "impl_abstract" not in fixed and "from torch.library import register_fake" in fixed
    assert not [f for f in lint_text(fixed, "ops.py").findings if f.code == "AOTI303"]
    for text, expected in ((source, [IMPL_ABSTRACT_WARNING]), (fixed, [])):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            exec(compile(text, "<case>", "exec"), {})
        assert [str(w.message) for w in caught if issubclass(w.category, FutureWarning)] == expected


CPP_OPS = r"""
#include <ATen/ATen.h>
#include <torch/library.h>

at::Tensor twice_cpu(const at::Tensor& x) { return at::cat({x, x}); }

at::Tensor twice_meta_bad(const at::Tensor& x) {
  return at::empty({x.size(0) * 2, x.size(1)}, x.options());
}

at::Tensor twice_meta_good(const at::Tensor& x) {
  return at::empty_symint({x.sym_size(0) * 2, x.sym_size(1)}, x.options());
}

at::Tensor pad_cpu(const at::Tensor& x, int64_t n) { return at::zeros({x.size(0) + n}, x.options()); }

at::Tensor pad_meta_bad(const at::Tensor& x, int64_t n) {
  return at::empty_symint({x.sym_size(0) + n}, x.options());
}

at::Tensor pad_meta_good(const at::Tensor& x, c10::SymInt n) {
  return at::empty_symint({x.sym_size(0) + n}, x.options());
}

TORCH_LIBRARY(aoti_lint_cpp, m) {
  m.def("twice_bad(Tensor x) -> Tensor");
  m.def("twice_good(Tensor x) -> Tensor");
  m.def("pad_bad(Tensor x, SymInt n) -> Tensor");
  m.def("pad_good(Tensor x, SymInt n) -> Tensor");
}

TORCH_LIBRARY_IMPL(aoti_lint_cpp, CPU, m) {
  m.impl("twice_bad", &twice_cpu);
  m.impl("twice_good", &twice_cpu);
  m.impl("pad_bad", &pad_cpu);
  m.impl("pad_good", &pad_cpu);
}

TORCH_LIBRARY_IMPL(aoti_lint_cpp, Meta, m) {
  m.impl("twice_bad", TORCH_FN(twice_meta_bad));
  m.impl("twice_good", &twice_meta_good);
  m.impl("pad_bad", &pad_meta_bad);
  m.impl("pad_good", &pad_meta_good);
}
"""


# Builds a C++ extension with the machine's g++ (about 50 s on 2 cores): the full suite only.
@pytest.mark.torch
@pytest.mark.slow
def test_cpp_meta_kernels_linted_and_exported(tmp_path):
    """The figures AOTI304's docs quote: a C++ extension whose Meta kernels read concrete sizes, or take
    int64_t for a SymInt, fails to export with a Dim batch; the SymInt spellings export."""
    import torch
    from torch.export import Dim, export
    from torch.utils.cpp_extension import load_inline

    findings = lint_text(CPP_OPS, "ops.cpp").findings
    assert sorted((f.start.row, f.code) for f in findings) == [(8, "AOTI304"), (8, "AOTI304"), (17, "AOTI304")]
    load_inline("aoti_lint_cpp", cpp_sources=[CPP_OPS], is_python_module=False, build_directory=str(tmp_path))
    ops = torch.ops.aoti_lint_cpp

    class Twice(torch.nn.Module):
        def __init__(self, op):
            super().__init__()
            self.op = op

        def forward(self, x):
            return self.op(x)

    class Pad(Twice):
        def forward(self, x, y):
            return self.op(x, y.shape[0])

    batch = {"x": {0: Dim("b", min=2, max=64)}}
    both = {**batch, "y": {0: Dim("c", min=2, max=64)}}
    with pytest.raises(Exception, match=r"Constraints violated \(b\)!"):
        export(Twice(ops.twice_bad), (torch.randn(4, 3),), dynamic_shapes=batch)
    with pytest.raises(Exception, match=r"Constraints violated \(c\)!"):
        export(Pad(ops.pad_bad), (torch.randn(4), torch.randn(5)), dynamic_shapes=both)
    program = export(Twice(ops.twice_good), (torch.randn(4, 3),), dynamic_shapes=batch)
    assert [(int(r.lower), int(r.upper)) for r in program.range_constraints.values()] == [(2, 64)]
    program = export(Pad(ops.pad_good), (torch.randn(4), torch.randn(5)), dynamic_shapes=both)
    assert [(int(r.lower), int(r.upper)) for r in program.range_constraints.values()] == [(2, 64), (2, 64)]
    auto = export(Twice(ops.twice_bad), (torch.randn(4, 3),), dynamic_shapes={"x": {0: Dim.AUTO}})
    assert not auto.range_constraints
