"""Read an AOTInductor package (.pt2) without torch and without running anything from it.

A .pt2 is a zip archive. Since torch 2.13 its entries sit under a folder named after the archive's stem:
``<stem>/data/aotinductor/<model>/<hash>.wrapper.cpp``, ``…wrapper.so``, ``…wrapper_metadata.json`` (AOTI_DEVICE_KEY,
AOTI_PLATFORM, AOTI_MACHINE, AOTI_CPU_ISA, AOTI_COMPUTE_CAPABILITY). Older packages have no stem folder.
"""

from __future__ import annotations

import json
import re
import stat
import zipfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path

from aoti_lint.knowledge.baked_in_debug import BAKED_IN_MARKERS, BakedInMarker

_MODEL_MEMBER = re.compile(r"(?:^|/)data/aotinductor/([^/]+)/([^/]+)$")
# What is read of a member at most: a zip bomb (a small archive declaring or inflating to gigabytes) is refused
# before it is read, or when the stream passes the cap; a real wrapper.cpp is far below it.
MAX_METADATA_BYTES = 1 << 20
MAX_WRAPPER_BYTES = 256 << 20
_CHUNK = 1 << 20

# The input checks torch's C++ wrapper codegen writes into every package (cpp_wrapper_cpu.py
# generate_input_output_runtime_checks, torch 2.13), run when AOTI_RUNTIME_CHECK_INPUTS=1: one
# check_input_<i> function per input, with the compiled dtype, static sizes, dynamic ranges and device type.
_CHECK_HANDLE = re.compile(r"ConstantHandle (\w+) = ConstantHandle\(input_handles\[(\d+)\]\);")
_CHECK_DTYPE = re.compile(r"int32_t (\w+)_expected_dtype = aoti_torch_dtype_(\w+)\(\);")
_CHECK_STATIC = re.compile(r"if \((\d+) != (\w+)_size\[(\d+)\]\)")
_CHECK_BOUND = re.compile(r"if \((\w+)_size\[(\d+)\] ([<>]) (\d+)\)")
_CHECK_DEVICE = re.compile(r'<< "(\d+)\((\w+)\), "')
_CHECK_DEVICE_VAR = re.compile(r"int32_t (\w+)_expected_device_type = (\d+);")


class PackageError(Exception):
    """The file is not a readable AOTInductor package."""


@dataclass(frozen=True)
class BakedInSwitch:
    marker: BakedInMarker
    member: str
    line: int


@dataclass
class InputSpec:
    """What the package checks of one input when AOTI_RUNTIME_CHECK_INPUTS=1, read from its wrapper."""

    index: int
    dtype: str | None = None  # torch's name: float32, int64, ...
    device_type: str | None = None  # cpu, cuda, ...
    # dim -> the compiled size (static) or [lower, upper] (dynamic; None where unbounded or unchecked).
    sizes: dict[int, int | list[int | None]] = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {
            "index": self.index,
            "dtype": self.dtype,
            "device_type": self.device_type,
            "sizes": {str(dim): size for dim, size in sorted(self.sizes.items())},
        }


@dataclass
class ModelInfo:
    name: str
    metadata: dict[str, str]
    metadata_member: str | None
    members: list[str]
    switches: list[BakedInSwitch] = field(default_factory=list)
    # Empty when the wrapper holds no input checks (torch <= 2.6 generated them only with debug_compile).
    input_specs: list[InputSpec] = field(default_factory=list)

    @property
    def device_type(self) -> str:
        return self.metadata.get("AOTI_DEVICE_KEY", "")


@dataclass
class PackageInfo:
    path: Path
    models: list[ModelInfo]
    # (member name, why it is refused): entries that would land outside the extraction folder.
    unsafe_members: list[tuple[str, str]]


def unsafe_reason(info: zipfile.ZipInfo) -> str | None:
    """Why extracting this member could write outside the target folder, or None when it cannot."""
    name = info.filename
    if name.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:", name):
        return "absolute path"
    if ".." in re.split(r"[\\/]", name):
        return "`..` path component"
    if stat.S_ISLNK(info.external_attr >> 16):
        return "symbolic link"
    return None


def read_package(path: Path) -> PackageInfo:
    try:
        archive = zipfile.ZipFile(path)
    except FileNotFoundError:
        raise PackageError(f"{path}: no such file") from None
    except (zipfile.BadZipFile, OSError) as exc:
        raise PackageError(f"{path}: not a .pt2 package (a zip archive): {exc}") from None
    with archive:
        try:
            return _read_archive(path, archive)
        except (zipfile.BadZipFile, zlib.error, EOFError) as exc:
            raise PackageError(f"{path}: a damaged archive: {exc}") from None


def _read_archive(path: Path, archive: zipfile.ZipFile) -> PackageInfo:
    infos = archive.infolist()
    unsafe = [(info.filename, reason) for info in infos if (reason := unsafe_reason(info))]
    members_by_model: dict[str, list[str]] = {}
    for info in infos:
        match = _MODEL_MEMBER.search(info.filename)
        if match and not unsafe_reason(info):
            members_by_model.setdefault(match.group(1), []).append(info.filename)
    models = [_read_model(archive, name, members) for name, members in sorted(members_by_model.items())]
    return PackageInfo(path=path, models=models, unsafe_members=unsafe)


def _read_member(archive: zipfile.ZipFile, member: str, cap: int) -> bytes:
    """The member's bytes, refused past cap whatever its header declares (streamed, never inflated whole)."""
    info = archive.getinfo(member)
    if info.file_size > cap:
        raise PackageError(f"{member}: {info.file_size} bytes, more than the {cap} this reader accepts (a zip bomb?)")
    chunks, total = [], 0
    with archive.open(info) as stream:
        while chunk := stream.read(min(_CHUNK, cap + 1 - total)):
            total += len(chunk)
            if total > cap:
                raise PackageError(f"{member}: inflates past the {cap} bytes this reader accepts (a zip bomb?)")
            chunks.append(chunk)
    return b"".join(chunks)


def _read_model(archive: zipfile.ZipFile, name: str, members: list[str]) -> ModelInfo:
    wrappers = [m for m in members if m.endswith(".wrapper.cpp")]
    # The loader reads the metadata next to the wrapper source: <wrapper stem>_metadata.json.
    candidates = [m[: -len(".cpp")] + "_metadata.json" for m in wrappers]
    candidates += sorted(m for m in members if m.endswith("_metadata.json"))
    metadata_member = next((m for m in candidates if m in members), None)
    metadata: dict[str, str] = {}
    if metadata_member is not None:
        data = _read_member(archive, metadata_member, MAX_METADATA_BYTES)
        try:
            loaded = json.loads(data)
        except RecursionError:
            raise PackageError(f"{metadata_member}: unreadable metadata: nested too deeply") from None
        except (ValueError, UnicodeDecodeError) as exc:
            raise PackageError(f"{metadata_member}: unreadable metadata: {exc}") from None
        if isinstance(loaded, dict):
            metadata = {str(k): v if isinstance(v, str) else json.dumps(v) for k, v in loaded.items()}
    model = ModelInfo(name=name, metadata=metadata, metadata_member=metadata_member, members=sorted(members))
    for member in wrappers:
        text = _read_member(archive, member, MAX_WRAPPER_BYTES).decode("utf-8", errors="replace")
        model.switches.extend(_baked_in(text, member))
        if member == wrappers[0]:
            model.input_specs = input_specs(text)
    return model


def input_specs(wrapper: str) -> list[InputSpec]:
    """The input checks of a wrapper.cpp, per input index (see the _CHECK_* patterns)."""
    by_name: dict[str, InputSpec] = {}
    device_of: InputSpec | None = None
    for line in wrapper.splitlines():
        if "input_handles" not in line and "_expected_" not in line and "_size[" not in line and '<< "' not in line:
            continue
        if match := _CHECK_HANDLE.search(line):
            by_name[match.group(1)] = InputSpec(index=int(match.group(2)))
        elif match := _CHECK_DTYPE.search(line):
            if spec := by_name.get(match.group(1)):
                spec.dtype = match.group(2)
        elif match := _CHECK_STATIC.search(line):
            if spec := by_name.get(match.group(2)):
                spec.sizes[int(match.group(3))] = int(match.group(1))
        elif match := _CHECK_BOUND.search(line):
            if spec := by_name.get(match.group(1)):
                current = spec.sizes.get(int(match.group(2)))
                bounds: list[int | None] = current if isinstance(current, list) else [None, None]
                bounds[0 if match.group(3) == "<" else 1] = int(match.group(4))
                spec.sizes[int(match.group(2))] = bounds
        elif match := _CHECK_DEVICE_VAR.search(line):
            device_of = by_name.get(match.group(1))
        elif (match := _CHECK_DEVICE.search(line)) and device_of is not None:
            # The device's name is only in the message that follows: `<< "0(cpu), "`.
            device_of.device_type = match.group(2)
            device_of = None
    specs = sorted(by_name.values(), key=lambda spec: spec.index)
    return specs if [spec.index for spec in specs] == list(range(len(specs))) else []


def _baked_in(text: str, member: str) -> list[BakedInSwitch]:
    found = []
    lines = text.splitlines()
    for marker in BAKED_IN_MARKERS:
        regex = re.compile(marker.pattern)
        number = next((n for n, line in enumerate(lines, 1) if regex.search(line)), None)
        if number is not None:
            found.append(BakedInSwitch(marker=marker, member=member, line=number))
    keys = {switch.marker.config_key for switch in found}
    return [switch for switch in found if switch.marker.implied_by not in keys]
