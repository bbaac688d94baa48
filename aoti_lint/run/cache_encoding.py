"""What the cache and the run memo keep, as JSON: findings, file outcomes, and the project pass's summaries
(plain data), without pickle.

Only dataclasses from an allow-list are rebuilt: a tampered cache entry can produce wrong data, never run code.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib

from aoti_lint.diagnostics import Applicability, Edit, Finding, Fix, Position, Severity

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from aoti_lint.run.results import FileOutcome

# Modules whose dataclasses may be rebuilt from the cache.
ALLOWED_MODULES = ("aoti_lint.flows.flow_summary", "aoti_lint.run.results", "aoti_lint.model.suppressions")


class DecodeError(ValueError):
    pass


def encode(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        cls = type(value)
        fields = {field.name: encode(getattr(value, field.name)) for field in dataclasses.fields(value)}
        return {"__dataclass__": f"{cls.__module__}:{cls.__qualname__}", "fields": fields}
    if isinstance(value, tuple):
        return {"__tuple__": [encode(item) for item in value]}
    if isinstance(value, (set, frozenset)):
        kind = "__frozenset__" if isinstance(value, frozenset) else "__set__"
        return {kind: sorted((encode(item) for item in value), key=repr)}
    if isinstance(value, dict):
        return {"__dict__": [[encode(key), encode(item)] for key, item in value.items()]}
    if isinstance(value, list):
        return [encode(item) for item in value]
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    raise TypeError(f"not plain data: {type(value).__name__}")


def decode(value: Any) -> Any:
    # Exact types, tested in the order they are met: a warm run decodes the summaries of every file it shows.
    kind = type(value)
    if kind is list:
        return [decode(item) for item in value]
    if kind is not dict:
        return value
    if "__dataclass__" in value:
        return _dataclass(value["__dataclass__"])(**{k: decode(v) for k, v in value["fields"].items()})
    if "__tuple__" in value:
        return tuple(decode(item) for item in value["__tuple__"])
    if "__frozenset__" in value:
        return frozenset(decode(item) for item in value["__frozenset__"])
    if "__set__" in value:
        return {decode(item) for item in value["__set__"]}
    if "__dict__" in value:
        return {decode(key): decode(item) for key, item in value["__dict__"]}
    raise DecodeError("unknown encoding")


def _dataclass(name: Any) -> type:
    if type(name) is not str:
        raise DecodeError("not a type name")
    return _dataclass_named(name)


@functools.lru_cache(maxsize=64)
def _dataclass_named(name: str) -> type:
    module_name, _, qualname = name.partition(":")
    if module_name not in ALLOWED_MODULES or not qualname.isidentifier():
        raise DecodeError(f"type not allowed: {name}")
    cls = getattr(importlib.import_module(module_name), qualname, None)
    if not (isinstance(cls, type) and dataclasses.is_dataclass(cls)):
        raise DecodeError(f"not a dataclass: {name}")
    return cls


def _position(value: Position) -> list[int]:
    return [value.row, value.column]


def outcome_to_json(outcome: FileOutcome) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "findings": [finding_to_json(finding) for finding in outcome.findings],
        "project": None if outcome.project is None else encode(outcome.project),
    }
    if outcome.depends_on:
        entry["imports"] = [outcome.imports_stamp, *outcome.depends_on]
    return entry


def finding_to_json(finding: Finding) -> dict[str, Any]:
    """A finding as an entry holds it (its path aside: an entry's findings are those of the file it names)."""
    return {
        "code": finding.code,
        "message": finding.message,
        "start": _position(finding.start),
        "end": _position(finding.end),
        "severity": finding.severity.value,
        "fix": None
        if finding.fix is None
        else {
            "applicability": finding.fix.applicability.value,
            "message": finding.fix.message,
            "edits": [[e.content, *_position(e.start), *_position(e.end)] for e in finding.fix.edits],
            "deferred": finding.fix.deferred,
            "reason": finding.fix.reason,
        },
        "noqa_row": finding.noqa_row,
        "cell": finding.cell,
        "url": finding.url,
    }


def _text(value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError("not a string")
    return value


def _count(value: Any, optional: bool = False) -> Any:
    """A row, column or cell number: an int >= 1 (bool is not one)."""
    if optional and value is None:
        return None
    if type(value) is not int or value < 1:
        raise ValueError("not a positive integer")
    return value


def _span(start: Any, end: Any) -> tuple[Position, Position]:
    first, last = Position(*map(_count, start)), Position(*map(_count, end))
    if len(start) != 2 or len(end) != 2 or (last.row, last.column) < (first.row, first.column):
        raise ValueError("not a span")
    return first, last


def outcome_from_json(entry: dict[str, Any], display_path: str) -> FileOutcome:
    """The outcome an entry holds; raises on anything not exactly as ``outcome_to_json`` writes it."""
    from aoti_lint.run.results import FileOutcome

    if not isinstance(entry, dict) or not isinstance(entry["findings"], list):
        raise ValueError("not an entry")
    findings = [finding_from_json(item, display_path) for item in entry["findings"]]
    project = None if entry.get("project") is None else decode(entry["project"])
    outcome = FileOutcome(path=display_path, findings=findings, checked=True, project=project)
    imports = entry.get("imports")
    if imports is not None:
        outcome.imports_stamp, *modules = map(_text, imports)
        outcome.depends_on = tuple(modules)
    return outcome


def finding_from_json(item: Any, path: str) -> Finding:
    """The finding ``finding_to_json`` wrote, found in ``path``; raises on anything else."""
    from aoti_lint.rule_manifest import RULE_CODES

    fix = item["fix"]
    if _text(item["code"]) not in RULE_CODES:
        raise ValueError("unknown rule")
    start, end = _span(item["start"], item["end"])
    edits = []
    if fix is not None:
        for content, r1, c1, r2, c2 in fix["edits"]:
            edits.append(Edit(_text(content), *_span((r1, c1), (r2, c2))))
    return Finding(
        code=item["code"],
        message=_text(item["message"]),
        path=path,
        start=start,
        end=end,
        severity=Severity(item["severity"]),
        fix=None
        if fix is None
        else Fix(
            applicability=Applicability(fix["applicability"]),
            message=_text(fix["message"]),
            edits=tuple(edits),
            deferred=fix.get("deferred") is True,
            reason=_text(fix.get("reason", "")),
        ),
        noqa_row=_count(item["noqa_row"], optional=True),
        cell=_count(item["cell"], optional=True),
        url=None if item["url"] is None else _text(item["url"]),
    )
