"""``--show-files`` and ``--show-settings``: what a run would read, and the settings it would read a file with, as
ruff shows them; nothing is linted."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from aoti_lint.read.files import Candidate, MissingPath, discover, ignores_of
from aoti_lint.read.ignores import excluded_by
from aoti_lint.report import printable
from aoti_lint.settings.config import Settings
from aoti_lint.settings.target_torch import format_target_torch

EXIT_CLEAN, EXIT_ERROR = 0, 2


def show_files(paths: list[Path], settings: Settings) -> int:
    """Each file the run would read, one absolute path a line, sorted (ruff's ``--show-files``); exit 2 when a path
    named does not exist."""
    found: list[str] = []
    missing = False
    for item in discover(paths, settings):
        if isinstance(item, MissingPath):
            print(f"error: {printable(f'{item.path}: {item.message}')}", file=sys.stderr)
            missing = True
        else:
            found.append(item.where)
    sys.stdout.write("".join(f"{printable(path)}\n" for path in sorted(found)))
    if not found and not missing:
        print("warning: No Python files found under the given path(s)", file=sys.stderr)
    return EXIT_ERROR if missing else EXIT_CLEAN


def show_settings(paths: list[Path], settings: Settings) -> int:
    """The settings the first file of the run is read with (ruff's ``--show-settings``): the configuration file they
    come from, the rules enabled for that file, what excludes it, then every setting."""
    from aoti_lint.run.ruleset import RuleSet

    first: Candidate | None = None
    for item in discover(paths, settings):
        if isinstance(item, MissingPath):
            print(f"error: {printable(f'{item.path}: {item.message}')}", file=sys.stderr)
            return EXIT_ERROR
        first = item
        break
    if first is None:
        print("error: No Python files found under the given path(s)", file=sys.stderr)
        return EXIT_ERROR
    ruleset = RuleSet(settings)
    of_kind = [rule.code for rule in ruleset.rules if first.kind in rule.file_kinds]
    rules = [rule.code for rule in ruleset.for_file(first.where, first.kind)]
    excluded = excluded_by(Path(first.where), ignores_of(settings))
    lines = [
        f"Resolved settings for: {_string(first.where)}",
        f"Settings path: {_string(str(settings.config_path)) if settings.config_path else 'none (the defaults)'}",
        "",
        "# The file",
        f"kind = {_string(first.kind)}",
        f"rules = {_strings(rules)}",
        f"per-file-ignored = {_strings(sorted(set(of_kind) - set(rules)))}",
        f"excluded-by = {_string(excluded) if excluded else 'none'}"
        + ("  # read all the same: named on the command line" if excluded and first.explicit else ""),
        "",
        "# The settings",
        f"root = {_string(str(settings.root))}",
        f"select = {_strings(settings.select)}",
        f"extend-select = {_strings(settings.extend_select)}",
        f"ignore = {_strings(settings.ignore)}",
        f"enabled = {_strings(sorted(settings.enabled))}",
        f"exclude = {_strings(settings.exclude)}",
        f"extend-exclude = {_strings(settings.extend_exclude)}",
        "per-file-ignores = {"
        + ", ".join(f"{_string(pattern)} = {_strings(codes)}" for pattern, codes in settings.per_file_ignores)
        + "}",
        f"respect-gitignore = {json.dumps(settings.respect_gitignore)}",
        f"force-exclude = {json.dumps(settings.force_exclude)}",
        f"output-format = {_string(settings.output_format)}",
        f"target-torch = {_string(format_target_torch(settings.target_torch))}",
    ]
    sys.stdout.write("\n".join(lines) + "\n")
    for error in ruleset.errors:
        print(f"error: {printable(f'{error.path}: {error.message}')}", file=sys.stderr)
    return EXIT_ERROR if ruleset.errors else EXIT_CLEAN


def _string(text: str) -> str:
    return printable(json.dumps(text, ensure_ascii=False))


def _strings(items: tuple[str, ...] | list[str]) -> str:
    return "[" + ", ".join(_string(item) for item in items) + "]"
