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
from dataclasses import dataclass, field
from pathlib import Path

from aoti_lint.knowledge.baked_in_debug import BAKED_IN_MARKERS, BakedInMarker

_MODEL_MEMBER = re.compile(r"(?:^|/)data/aotinductor/([^/]+)/([^/]+)$")


class PackageError(Exception):
    """The file is not a readable AOTInductor package."""


@dataclass(frozen=True)
class BakedInSwitch:
    marker: BakedInMarker
    member: str
    line: int


@dataclass
class ModelInfo:
    name: str
    metadata: dict[str, str]
    metadata_member: str | None
    members: list[str]
    switches: list[BakedInSwitch] = field(default_factory=list)

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
        infos = archive.infolist()
        unsafe = [(info.filename, reason) for info in infos if (reason := unsafe_reason(info))]
        members_by_model: dict[str, list[str]] = {}
        for info in infos:
            match = _MODEL_MEMBER.search(info.filename)
            if match and not unsafe_reason(info):
                members_by_model.setdefault(match.group(1), []).append(info.filename)
        models = [_read_model(archive, name, members) for name, members in sorted(members_by_model.items())]
    return PackageInfo(path=path, models=models, unsafe_members=unsafe)


def _read_model(archive: zipfile.ZipFile, name: str, members: list[str]) -> ModelInfo:
    wrappers = [m for m in members if m.endswith(".wrapper.cpp")]
    # The loader reads the metadata next to the wrapper source: <wrapper stem>_metadata.json.
    candidates = [m[: -len(".cpp")] + "_metadata.json" for m in wrappers]
    candidates += sorted(m for m in members if m.endswith("_metadata.json"))
    metadata_member = next((m for m in candidates if m in members), None)
    metadata: dict[str, str] = {}
    if metadata_member is not None:
        try:
            loaded = json.loads(archive.read(metadata_member))
        except (ValueError, UnicodeDecodeError) as exc:
            raise PackageError(f"{metadata_member}: unreadable metadata: {exc}") from None
        if isinstance(loaded, dict):
            metadata = {str(k): str(v) for k, v in loaded.items()}
    model = ModelInfo(name=name, metadata=metadata, metadata_member=metadata_member, members=sorted(members))
    for member in wrappers:
        text = archive.read(member).decode("utf-8", errors="replace")
        model.switches.extend(_baked_in(text, member))
    return model


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
