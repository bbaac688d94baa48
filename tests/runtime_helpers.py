"""Real AOTInductor packages for the runtime tests: compiled once per session, then copied and forged."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Callable
from pathlib import Path

# One child process compiles the packages (one torch import). The model has a dynamic batch (Dim min=1, max=64).
# argv: output folder, device, "debug" to also build the debug package.
BUILD_SCRIPT = r"""
import sys, torch
out, device = sys.argv[1], sys.argv[2]
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(10, 4), torch.nn.ReLU()).eval().to(device)
batch = torch.export.Dim("batch", min=1, max=64)
ep = torch.export.export(model, (torch.randn(4, 10, device=device),), dynamic_shapes={"input": {0: batch}})
torch.export.save(ep, f"{out}/reference.pt2")
torch._inductor.aoti_compile_and_package(ep, package_path=f"{out}/plain.pt2")
# The same program with other weights: a reference the package must disagree with.
with torch.no_grad():
    model[0].weight.add_(1.0)
torch.export.save(
    torch.export.export(model, (torch.randn(4, 10, device=device),), dynamic_shapes={"input": {0: batch}}),
    f"{out}/other_reference.pt2",
)
if sys.argv[3:] != ["debug"]:
    sys.exit(0)
debug = {
    "nan_asserts": True,
    "aot_inductor.debug_intermediate_value_printer": "3",
    "aot_inductor.debug_compile": True,
}
torch._inductor.aoti_compile_and_package(ep, package_path=f"{out}/debug.pt2", inductor_configs=debug)
"""


def build_packages(dest: Path, device: str = "cpu", debug: bool = True) -> dict[str, Path]:
    command = [sys.executable, "-c", BUILD_SCRIPT, str(dest), device, *(["debug"] if debug else [])]
    subprocess.run(command, check=True, capture_output=True, timeout=900)
    return {name: dest / f"{name}.pt2" for name in ("plain", "debug", "reference", "other_reference")}


def rewrite_zip(src: Path, dst: Path, transform: Callable[[str, bytes], bytes]) -> Path:
    """Copy an archive, passing each member's bytes through transform(name, data)."""
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w") as zout:
        for info in zin.infolist():
            zout.writestr(info, transform(info.filename, zin.read(info)))
    return dst


def with_metadata(src: Path, dst: Path, **changes: str) -> Path:
    def patch(name: str, data: bytes) -> bytes:
        if name.endswith("_metadata.json"):
            return json.dumps({**json.loads(data), **changes}).encode()
        return data

    return rewrite_zip(src, dst, patch)


def with_native_library(src: Path, dst: Path, c_source: str, tmp: Path) -> Path:
    """The package with its compiled .so replaced by one built from c_source (needs the C compiler AOTI uses)."""
    compiler = shutil.which("cc") or shutil.which("gcc") or shutil.which("g++")
    assert compiler, "no C compiler: AOTInductor needs one too"
    (tmp / "lib.c").write_text(c_source)
    subprocess.run([compiler, "-shared", "-fPIC", "-o", str(tmp / "lib.so"), str(tmp / "lib.c")], check=True)
    library = (tmp / "lib.so").read_bytes()
    return rewrite_zip(src, dst, lambda name, data: library if name.endswith(".so") else data)
