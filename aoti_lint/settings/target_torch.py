"""The `target-torch` setting: the oldest torch the checked code must run on, as ``(major, minor)``.

The default and the one way to read a version string, for the configuration, the command lines (aoti-lint's and
the codemod's) and the rule examples alike.
"""

from __future__ import annotations

from aoti_lint.knowledge.new_api_since import NEW_API_SINCE

# The default: code that may use the new API everywhere.
DEFAULT_TARGET_TORCH = NEW_API_SINCE


def format_target_torch(version: tuple[int, int]) -> str:
    """The setting as it is written: "2.6"."""
    return f"{version[0]}.{version[1]}"


DEFAULT_TARGET_TORCH_TEXT = format_target_torch(DEFAULT_TARGET_TORCH)


def parse_target_torch(value: object) -> tuple[int, int] | None:
    """``(major, minor)`` of a version string such as "2.6" or "2.8.0"; None for anything else."""
    if isinstance(value, str):
        parts = value.strip().split(".")
        if len(parts) >= 2 and all(part.isdigit() for part in parts[:2]):
            return int(parts[0]), int(parts[1])
    return None
