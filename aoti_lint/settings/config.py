"""Configuration: ``[tool.aoti-lint]`` in pyproject.toml, or aoti-lint.toml / .aoti-lint.toml, validated.

Errors name the file, the key and what was expected, so ``aoti-lint`` can exit 2 with one clear line.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field, replace
from pathlib import Path

from aoti_lint.settings import selection
from aoti_lint.settings.defaults import CONFIG_FILES, DEFAULT_EXCLUDE
from aoti_lint.settings.output_formats import FORMATS
from aoti_lint.settings.target_torch import DEFAULT_TARGET_TORCH, DEFAULT_TARGET_TORCH_TEXT, parse_target_torch

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def _toml() -> Any:
    """The TOML parser, imported only when a configuration file is read."""
    if sys.version_info >= (3, 11):
        import tomllib

        return tomllib
    import tomli  # pragma: no cover - exercised on 3.10 only

    return tomli  # pragma: no cover


OUTPUT_FORMATS = tuple(FORMATS)


class ConfigError(Exception):
    """A configuration problem; the message is the whole user-facing explanation."""


@dataclass(frozen=True)
class Settings:
    root: Path
    config_path: Path | None = None
    select: tuple[str, ...] = ("ALL",)
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    exclude: tuple[str, ...] = DEFAULT_EXCLUDE
    extend_exclude: tuple[str, ...] = ()
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    respect_gitignore: bool = True
    force_exclude: bool = False
    output_format: str = "concise"
    target_torch: tuple[int, int] = DEFAULT_TARGET_TORCH
    enabled: frozenset[str] = field(default_factory=frozenset)

    def with_enabled(self) -> Settings:
        try:
            enabled = selection.resolve(self.select, self.extend_select, self.ignore)
        except selection.SelectorError as exc:
            raise ConfigError(str(exc)) from None
        return replace(self, enabled=enabled)


def _string_list(value: Any, key: str, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ConfigError(f"{where}: `{key}` must be a list of strings, got {_describe(value)}")
    return tuple(value)


def _describe(value: Any) -> str:
    return f"{type(value).__name__} `{value!r}`"


def target_torch_setting(value: Any, where: str) -> tuple[int, int]:
    """``target-torch`` from a configuration file or ``--target-torch`` (``where``); raises ConfigError."""
    parsed = parse_target_torch(value)
    if parsed is None:
        raise ConfigError(
            f"{where}: `target-torch` must be a version string such as "
            f'"{DEFAULT_TARGET_TORCH_TEXT}", got {_describe(value)}'
        )
    return parsed


def _per_file_ignores(value: Any, where: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    if not isinstance(value, dict):
        raise ConfigError(f"{where}: `per-file-ignores` must be a table of pattern = [codes], got {_describe(value)}")
    result = []
    for pattern, codes in value.items():
        codes = _string_list(codes, f"per-file-ignores.{pattern}", where)
        _check_selectors(codes, f"per-file-ignores.{pattern}", where)
        result.append((pattern, codes))
    return tuple(result)


def _check_selectors(selectors: tuple[str, ...], key: str, where: str) -> None:
    try:
        selection.validate(selectors)
    except selection.SelectorError as exc:
        raise ConfigError(f"{where}: `{key}`: {exc}") from None


def _bool(value: Any, key: str, where: str) -> bool:
    if not isinstance(value, bool):
        raise ConfigError(f"{where}: `{key}` must be true or false, got {_describe(value)}")
    return value


def _output_format(value: Any, where: str, formats: tuple[str, ...]) -> str:
    if not isinstance(value, str) or value not in formats:
        raise ConfigError(f"{where}: `output-format` must be one of {', '.join(formats)}, got {_describe(value)}")
    return value


KEYS = (
    "select",
    "extend-select",
    "ignore",
    "exclude",
    "extend-exclude",
    "per-file-ignores",
    "respect-gitignore",
    "force-exclude",
    "output-format",
    "target-torch",
)


def settings_from_table(table: dict[str, Any], root: Path, where: str, formats: tuple[str, ...]) -> Settings:
    settings = Settings(root=root)
    changes: dict[str, Any] = {}
    for key, value in table.items():
        if key not in KEYS:
            import difflib  # only to word an error

            hint = difflib.get_close_matches(key, KEYS, n=1)
            suggestion = f"; did you mean `{hint[0]}`?" if hint else f"; valid keys: {', '.join(KEYS)}"
            raise ConfigError(f"{where}: unknown key `{key}`{suggestion}")
        attr = key.replace("-", "_")
        if key in ("select", "extend-select", "ignore"):
            changes[attr] = _string_list(value, key, where)
            _check_selectors(changes[attr], key, where)
        elif key in ("exclude", "extend-exclude"):
            changes[attr] = _string_list(value, key, where)
        elif key == "per-file-ignores":
            changes[attr] = _per_file_ignores(value, where)
        elif key in ("respect-gitignore", "force-exclude"):
            changes[attr] = _bool(value, key, where)
        elif key == "output-format":
            changes[attr] = _output_format(value, where, formats)
        elif key == "target-torch":
            changes[attr] = target_torch_setting(value, where)
    return replace(settings, **changes)


def read_table(path: Path) -> dict[str, Any] | None:
    """The aoti-lint table of a config file; None for a pyproject.toml without one."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read configuration: {exc.strerror or exc}") from None
    toml = _toml()
    try:
        document = toml.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: configuration is not valid UTF-8") from None
    except toml.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None
    except RecursionError:  # tomllib recurses per nesting level: a 5,000-deep array
        raise ConfigError(f"{path}: invalid TOML: nested too deeply") from None
    if path.name == "pyproject.toml":
        tool = document.get("tool", {})
        table = tool.get("aoti-lint") if isinstance(tool, dict) else None
        if table is None:
            return None
        if not isinstance(table, dict):
            raise ConfigError(f"{path}: [tool.aoti-lint] must be a table")
        return table
    return document


def find_config(start: Path) -> Path | None:
    """The nearest config file at or above ``start``, as ruff finds it."""
    for directory in (start, *start.parents):
        for name in CONFIG_FILES:
            candidate = directory / name
            try:
                if not candidate.is_file():
                    continue
            except OSError:  # an unreadable directory on the way up is not our business
                continue
            if name != "pyproject.toml" or read_table(candidate) is not None:
                return candidate
    return None


def load_settings(
    config_path: Path | None, cwd: Path, formats: tuple[str, ...] = OUTPUT_FORMATS, isolated: bool = False
) -> Settings:
    if config_path is None and not isolated:
        config_path = find_config(cwd)
    if config_path is None:
        return Settings(root=cwd)
    # Named as the user has it; a symlinked config file still roots the project where the link sits.
    config_path = config_path.absolute()
    table = read_table(config_path) or {}
    root = config_path.parent.resolve()
    return replace(settings_from_table(table, root, str(config_path), formats), config_path=config_path)
