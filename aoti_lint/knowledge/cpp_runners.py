"""The C++ side of AOTI loading, as data: the old per-device runners and the package loader that replaces them.

Facts read from the headers of the installed torch 2.13.0 (``torch/include/torch/csrc/inductor/``):

- ``aoti_runner/model_container_runner_cpu.h``:
  ``AOTIModelContainerRunnerCpu(const std::string& model_so_path, size_t num_models = 1,
  const bool run_single_threaded = false)``
- ``aoti_runner/model_container_runner_cuda.h``:
  ``AOTIModelContainerRunnerCuda(const std::string& model_so_path, size_t num_models = 1,
  const std::string& device_str = "cuda", const std::string& cubin_dir = "", const bool run_single_threaded
  = false)``, under "Following APIs are subject to change due to active development. We provide NO BC
  guarantee for these APIs".
- ``aoti_runner/model_container_runner_xpu.h``: as CUDA, with ``device_str = "xpu"`` and ``kernel_bin_dir``.
- ``aoti_runner/model_container_runner_mps.h``: as CPU (no device string).
- ``aoti_package/model_package_loader.h``:
  ``AOTIModelPackageLoader(const std::string& model_package_path, const std::string& model_name = "model",
  const bool run_single_threaded = false, const size_t num_runners = 1,
  const c10::DeviceIndex device_index = -1)``; it reads the package's metadata and builds the runner for the
  device the package was compiled for.
"""

from __future__ import annotations

# The old runners: each takes the path of a bare `.so` as its first argument.
RUNNER_CLASSES = frozenset(
    {
        "AOTIModelContainerRunnerCpu",
        "AOTIModelContainerRunnerCuda",
        "AOTIModelContainerRunnerXpu",
        "AOTIModelContainerRunnerMps",
    }
)
# The loader of `.pt2` packages (torch >= 2.6): its first argument is the package path.
PACKAGE_LOADER = "AOTIModelPackageLoader"
REPLACEMENT = "torch::inductor::AOTIModelPackageLoader(path, model_name)"
PACKAGE_LOADER_HEADER = "torch/csrc/inductor/aoti_package/model_package_loader.h"
