"""The pages the rules' documentation cites, as data: each one named once, and listed by the rules (and the
deprecated-API table) that cite it. ``Rule.explanation`` renders a rule's list as its References section."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Reference:
    title: str
    # None for a reference that is not a page (a note naming torch's headers).
    url: str | None = None

    def markdown(self) -> str:
        return self.title if self.url is None else f"[{self.title}]({self.url})"


AOTI_DOCS = Reference("AOTInductor docs", "https://pytorch.org/docs/stable/torch.compiler_aot_inductor.html")
AOTI_CPP_INFERENCE = Reference(
    "AOTInductor: inference in C++", "https://docs.pytorch.org/docs/stable/torch.compiler_aot_inductor.html"
)
AOTI_DEBUGGING_GUIDE = Reference(
    "AOTInductor debugging guide",
    "https://docs.pytorch.org/docs/stable/torch.compiler_aot_inductor_debugging_guide.html",
)
# The same guide in the docs of torch's main branch, as the device-flow rules cite it.
AOTI_DEBUGGING_GUIDE_MAIN = Reference(
    "AOTInductor debugging guide", "https://pytorch.org/docs/main/torch.compiler_aot_inductor_debugging_guide.html"
)
MIGRATION_GUIDE = Reference("Migration guide", "../migration.md")  # docs/migration.md, from docs/rules/
PR_AOT_COMPILE_DEPRECATED = Reference("pytorch/pytorch#135893", "https://github.com/pytorch/pytorch/pull/135893")
PR_AOT_LOAD_DEPRECATED = Reference("pytorch/pytorch#142212", "https://github.com/pytorch/pytorch/pull/142212")
PR_REGISTER_FAKE = Reference("pytorch/pytorch#123937", "https://github.com/pytorch/pytorch/pull/123937")
CPP_RUNNER_HEADERS = Reference(
    "torch's headers: `torch/csrc/inductor/aoti_package/model_package_loader.h`,\n"
    "  `torch/csrc/inductor/aoti_runner/model_container_runner_cpu.h` (`_cuda.h`, `_xpu.h`, `_mps.h`)"
)
CPP_CUSTOM_OPS_META = Reference(
    "The Custom Operators Manual: Meta kernels and SymInt", "https://pytorch.org/tutorials/advanced/cpp_custom_ops.html"
)
CUSTOM_OPS_DYNAMIC_SHAPES = Reference(
    "Custom ops and dynamic shapes", "https://pytorch.org/tutorials/advanced/custom_ops_landing_page.html"
)
REGISTER_FAKE_DOCS = Reference(
    "torch.library.register_fake", "https://pytorch.org/docs/stable/library.html#torch.library.register_fake"
)
TORCH_CHECK = Reference("torch._check", "https://pytorch.org/docs/stable/generated/torch._check.html")
EXPORT_CONTROL_FLOW = Reference(
    "torch.export: control flow and dynamic shapes", "https://pytorch.org/docs/stable/export.html"
)
EXPORT_DYNAMIC_SHAPES = Reference(
    "torch.export dynamic shapes", "https://pytorch.org/docs/stable/export.html#expressing-dynamism"
)
CUDA_ENV_VARS = Reference(
    "CUDA environment variables", "https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#env-vars"
)
INDUCTOR_CONFIG_SOURCE = Reference(
    "torch._inductor.config", "https://github.com/pytorch/pytorch/blob/main/torch/_inductor/config.py"
)
PEP_263 = Reference("PEP 263: source code encodings", "https://peps.python.org/pep-0263/")
