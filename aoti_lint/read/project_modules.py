"""Which files of the project a Python file imports, found from its text and the file system alone.

A module name is looked for where Python would find it for the project's scripts and packages: a relative name
from the importer's package; an absolute one in the importer's directory and each directory above it, up to the
project's top (the first directory holding ``.git``, ``pyproject.toml``, ``setup.py`` or ``setup.cfg``), as a
module (``name.py``), a package (``name/__init__.py``) or a folder of modules without one. Installed packages
(torch, the standard library, whatever lies in a ``site-packages`` folder) are never looked for, and torch's own
sources import none of the project's: the names they hold are the knowledge tables'.

``imported_files`` reads a text's import statements with a pattern that finds each one starting a line (and maybe
more: a screen, like the byte screen); the semantic model reads them exactly. A file that imports modules of the
project may call the API by a name one of them binds (``te.aot_compile`` where ``te`` is ``torch._export``): the
screen reads its bytes with those of the modules it follows (``followed_imports``, ``with_imports``), and the model
follows the name into them.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable, Iterator

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import TypeVar

    T = TypeVar("T")

# `from .x.y import a, b` / `from . import (a, b)` / `import a.b as c, d`, at a line's start.
_STATEMENT = re.compile(
    r"[ \t]*(?:from[ \t]+(\.*)[ \t]*([\w.]*)[ \t]+import[ \t]*(\([^)]*\)?|[^\n;#]*)"
    r"|import[ \t]+([\w. \t,]+))"
)
_NAME = re.compile(r"[^\W\d][\w.]*")
_TOP_MARKERS = (".git", "pyproject.toml", "setup.py", "setup.cfg")
# Modules never looked for in the project: what the knowledge tables name, and the standard library.
_INSTALLED = frozenset({"torch", "torchvision", "torchaudio", "numpy", "triton"}) | frozenset(sys.stdlib_module_names)

# Where installed modules lie: never the project's, whatever the importer's place.
_INSTALL_FOLDERS = frozenset({"site-packages", "dist-packages"})

_tops: dict[str, str] = {}
_found: dict[tuple[str, str], str | None] = {}


def project_top(directory: str) -> str:
    """The nearest directory at or above ``directory`` holding a project marker; the file system's root if none."""
    known = _tops.get(directory)
    if known is not None:
        return known
    current = directory
    while True:
        if any(os.path.exists(os.path.join(current, marker)) for marker in _TOP_MARKERS):
            break
        parent = os.path.dirname(current)
        if parent == current:
            break
        current = parent
    _tops[directory] = current
    return current


_packages: dict[str, str] = {}


def _top_package(directory: str) -> str:
    """The name of the outermost package holding ``directory`` (folders with an ``__init__.py``), or ""."""
    known = _packages.get(directory)
    if known is None:
        name, current = "", directory
        while os.path.isfile(os.path.join(current, "__init__.py")):
            name, current = os.path.basename(current), os.path.dirname(current)
        known = _packages[directory] = name
    return known


def _module_in(base: str, parts: list[str]) -> str | None:
    """The file of module ``parts`` under ``base``: ``a/b.py``, ``a/b/__init__.py``; None if neither exists."""
    stem = os.path.join(base, *parts)
    for candidate in (stem + ".py", os.path.join(stem, "__init__.py")):
        if os.path.isfile(candidate):
            return candidate
    return None


def module_file(importer: str, module: str, level: int = 0) -> str | None:
    """The project file ``importer`` names by importing ``module`` (``level``: its leading dots); None when it names
    none (an installed module, a name the project does not hold)."""
    parts = [part for part in module.split(".") if part]
    directory = os.path.dirname(os.path.abspath(importer))
    if _top_package(directory) in _INSTALLED:
        return None  # torch's own sources: the names it holds are the knowledge tables'
    if level:
        base = directory
        for _ in range(level - 1):
            base = os.path.dirname(base)
        if not parts:
            return os.path.join(base, "__init__.py") if os.path.isfile(os.path.join(base, "__init__.py")) else None
        return _module_in(base, parts)
    if not parts or parts[0] in _INSTALLED:
        return None
    key = (directory, module)
    if key in _found:
        return _found[key]
    top = project_top(directory)
    found = None
    current = directory
    while found is None and os.path.basename(current) not in _INSTALL_FOLDERS:
        found = _module_in(current, parts)
        if current == top or os.path.dirname(current) == current:
            break
        current = os.path.dirname(current)
    _found[key] = found
    return found


def _imports(text: str) -> Iterator[tuple[str, int]]:
    """(module, level) of every module the text's import statements may name, submodules of `from` imports too:
    each line holding `import` is matched from its start (a statement after `;` or in a one-line suite is not)."""
    at = text.find("import")
    while at != -1:
        start = text.rfind("\n", 0, at) + 1
        match = _STATEMENT.match(text, start)
        end = text.find("\n", at)
        if match is not None and match.end() >= at:
            dots, module, names, imported = match.groups()
            if imported is not None:
                for item in imported.split(","):
                    words = item.split()
                    if words:
                        yield words[0], 0
            else:
                level = len(dots)
                yield module, level
                if names.startswith("(") and not names.endswith(")"):  # names over several lines
                    close = text.find(")", match.end())
                    names = text[match.end() - len(names) : close if close != -1 else len(text)]
                    end = text.find("\n", close) if close != -1 else -1
                for item in names.strip("()").split(","):
                    words = item.split()
                    if words and _NAME.fullmatch(words[0]):
                        yield f"{module}.{words[0]}" if module else words[0], level
        at = text.find("import", end) if end != -1 else -1


def imported_files(path: str, text: str) -> list[str]:
    """The project files ``path``'s text may import, in the order first named."""
    found: dict[str, None] = {}
    for module, level in _imports(text):
        file = module_file(path, module, level)
        if file is not None and file != path:
            found[file] = None
    return list(found)


# How many modules deep ``followed_imports`` goes: a re-export of a re-export of the API is two.
MAX_DEPTH = 3
# path -> ((size, mtime), the project files its text imports)
_imported: dict[str, tuple[tuple[int, int], list[str]]] = {}


def once_per_version(memo: dict[str, tuple[tuple[int, int], T]], path: str, read: Callable[[bytes], T]) -> T | None:
    """``read`` of a file's bytes, computed once per version of the file (its size and modification time) and kept
    in ``memo``; None when the file cannot be read."""
    try:
        info = os.stat(path)
        stamp = (info.st_size, info.st_mtime_ns)
        known = memo.get(path)
        if known is not None and known[0] == stamp:
            return known[1]
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError:
        return None
    value = read(data)
    memo[path] = (stamp, value)
    return value


def _imports_of(path: str) -> list[str]:
    found = once_per_version(_imported, path, lambda data: imported_files(path, data.decode("utf-8", "replace")))
    return found or []


def followed_imports(path: str, text: str) -> list[str]:
    """The project files a file imports, directly or through other project modules (``MAX_DEPTH`` deep at most),
    the nearest first: the modules a name it imports may be followed through."""
    seen = {path}
    followed: list[str] = []
    layer = imported_files(path, text)
    for _ in range(MAX_DEPTH):
        following: list[str] = []
        for file in layer:
            if file not in seen:
                seen.add(file)
                followed.append(file)
                following.extend(_imports_of(file))
        layer = following
    return followed


def with_imports(data: bytes, imported: list[str]) -> bytes:
    """The file's bytes and those of the project modules it imports, apart (a NUL between): what the screen reads
    for a file that may call the API by a name another module gives it (``te.aot_compile`` where ``te`` is
    ``torch._export`` imported elsewhere)."""
    parts = [data]
    for file in imported:
        try:
            with open(file, "rb") as handle:
                parts.append(handle.read())
        except OSError:
            continue
    return b"\0".join(parts)
