"""Paths as text, for what both the directory walk (``aoti_lint.read.files``) and the entry point
(``aoti_lint.entry_point``) ask of them: ``os`` only, and string operations where a ``Path`` costs more than the
question (the walk asks for every entry of every directory)."""

from __future__ import annotations

import os


def relative(path: str, base: str) -> str | None:
    """``path`` below ``base`` with `/` separators, "." for ``base`` itself, None outside it."""
    prefix = os.path.join(base, "")
    if not path.startswith(prefix):
        return "." if path == base else None
    rel = path[len(prefix) :]
    return rel if os.sep == "/" else rel.replace(os.sep, "/")


def parents(directory: str) -> list[str]:
    """``directory``'s ancestors, nearest first (``Path.parents`` of a normalised absolute path)."""
    found = []
    while (parent := os.path.dirname(directory)) != directory:
        found.append(parent)
        directory = parent
    return found


def gitignore_bases(directory: str) -> list[str]:
    """The directories above ``directory`` whose ignore files apply, outermost first: up to the enclosing git
    repository's; none outside a repository."""
    bases = []
    for parent in parents(directory):
        bases.append(parent)
        if os.path.exists(os.path.join(parent, ".git")):
            return bases[::-1]
    return []
