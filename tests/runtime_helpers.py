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
# argv: output folder, device, then the groups to build: "base" (plain.pt2, reference.pt2, other_reference.pt2),
# "debug" (debug.pt2), "migration" (old.so from the deprecated aot_compile of the same model, and other.pt2: a
# slightly different model, compiled for the static shape (2, 10)).
BUILD_SCRIPT = r"""
import sys, torch
out, device, groups = sys.argv[1], sys.argv[2], sys.argv[3:]
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(10, 4), torch.nn.ReLU()).eval().to(device)
batch = torch.export.Dim("batch", min=1, max=64)
example = (torch.randn(4, 10, device=device),)
ep = torch.export.export(model, example, dynamic_shapes={"input": {0: batch}})
if "base" in groups:
    torch.export.save(ep, f"{out}/reference.pt2")
    torch._inductor.aoti_compile_and_package(ep, package_path=f"{out}/plain.pt2")
if "migration" in groups:
    # What production serves before the migration: the same model through the deprecated API.
    torch._export.aot_compile(
        model, example, dynamic_shapes={"input": {0: batch}}, options={"aot_inductor.output_path": f"{out}/old.so"}
    )
if "debug" in groups:
    debug = {
        "nan_asserts": True,
        "aot_inductor.debug_intermediate_value_printer": "3",
        "aot_inductor.debug_compile": True,
    }
    torch._inductor.aoti_compile_and_package(ep, package_path=f"{out}/debug.pt2", inductor_configs=debug)
# The same program with other weights: a reference the package must disagree with.
with torch.no_grad():
    model[0].weight.add_(1.0)
if "base" in groups:
    torch.export.save(
        torch.export.export(model, example, dynamic_shapes={"input": {0: batch}}), f"{out}/other_reference.pt2"
    )
if "migration" in groups:
    static = torch.export.export(model, (torch.randn(2, 10, device=device),))
    torch._inductor.aoti_compile_and_package(static, package_path=f"{out}/other.pt2")
"""
ARTIFACTS = {
    "base": {"plain": "plain.pt2", "reference": "reference.pt2", "other_reference": "other_reference.pt2"},
    "debug": {"debug": "debug.pt2"},
    "migration": {"old_so": "old.so", "other": "other.pt2"},
}


def build_packages(
    dest: Path, device: str = "cpu", debug: bool = True, groups: tuple[str, ...] = ("base",)
) -> dict[str, Path]:
    """Compile the groups' artifacts into dest (ARTIFACTS), in one child process; kept when already there."""
    groups = tuple(groups) + (("debug",) if debug and "debug" not in groups else ())
    paths = {name: dest / file for group in groups for name, file in ARTIFACTS[group].items()}
    if not all(path.is_file() for path in paths.values()):
        command = [sys.executable, "-c", BUILD_SCRIPT, str(dest), device, *groups]
        subprocess.run(command, check=True, capture_output=True, timeout=1800)
    return paths


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
