"""``aoti-lint flows [PATHS]``: each artifact flow the migration is planned on, and its verdict, before anyone trusts
a fix with it: the compiles that write an artifact, the constants and arguments that carry its path, the loads that
read it (each as ``file:row``), and whether the flow migrates whole or what blocks it. As a text tree, as JSON, or as
a Mermaid graph a pull request's description can carry.

The flows are the run's own (``lint.lint_paths`` plans them for ``check``): what is shown is what ``--fix`` does.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from pathlib import Path

from aoti_lint.flows.migration_flow import FlowMember, FlowReport

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

# Writers first, then what carries the path, then readers: the order of the text tree and of the graph's edges.
_ORDER = {"compile": 0, "producer": 0, "constant": 1, "argument": 1, "load": 2}
EXIT_CLEAN, EXIT_ERROR = 0, 2
_ROLE = {
    "compile": "compile (deprecated)",
    "producer": "compile that stays (writes a `.so`)",
    "constant": "path constant",
    "argument": "path argument",
    "load": "load (deprecated)",
}


def flows_command(argv: list[str], formatter: type[argparse.HelpFormatter]) -> int:
    from aoti_lint.report import FORMATS
    from aoti_lint.run.lint import lint_paths
    from aoti_lint.settings.config import ConfigError, load_settings
    from aoti_lint.usage import Parser

    parser = Parser(
        formatter_class=formatter,
        prog="aoti-lint flows",
        description="Show each artifact flow (compiles, path values, loads) and whether --fix migrates it whole.",
    )
    parser.add_argument("paths", nargs="*", type=Path, metavar="PATHS", help="files or directories (default: .)")
    parser.add_argument("--output-format", choices=("text", "json", "mermaid"), default="text")
    parser.add_argument("--config", type=Path, metavar="FILE", help="the aoti-lint.toml or pyproject.toml to use")
    parser.add_argument("--isolated", action="store_true", help="ignore every configuration file")
    args = parser.parse_args(argv)
    cwd = Path.cwd()
    try:
        settings = load_settings(args.config, cwd, formats=tuple(FORMATS), isolated=args.isolated).with_enabled()
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    run = lint_paths(args.paths or [Path(".")], settings, cwd)
    for error in run.errors:
        print(f"error: {error.path}: {error.message}", file=sys.stderr)
    flows = sorted(run.flows, key=lambda flow: [(m.path, m.row) for m in _ordered(flow.members)])
    render = {"text": render_text, "json": render_json, "mermaid": render_mermaid}[args.output_format]
    print(render(flows), end="")
    return EXIT_ERROR if run.errors else EXIT_CLEAN


def _ordered(members: Sequence[FlowMember]) -> list[FlowMember]:
    return sorted(members, key=lambda m: (_ORDER[m.role], m.path, m.row))


def verdict(flow: FlowReport) -> str:
    if flow.applicability == "display-only":
        return f"blocked: {flow.reason}"
    kind = "safe fix" if flow.applicability == "safe" else "unsafe fix"
    return f"migrates whole ({kind}{': ' + flow.reason if flow.reason else ''})"


def _label(member: FlowMember) -> str:
    role = _ROLE[member.role] + (f" `{member.name}`" if member.name else "")
    artifact = f": {member.artifact}" if member.artifact else ""
    return f"{member.path}:{member.row} {role}{artifact}"


def render_text(flows: Sequence[FlowReport]) -> str:
    if not flows:
        return "No artifact flow with a deprecated call.\n"
    lines: list[str] = []
    for number, flow in enumerate(flows, 1):
        lines.append(f"flow {number}: {verdict(flow)}")
        members = _ordered(flow.members)
        for index, member in enumerate(members):
            lines.append(("└── " if index == len(members) - 1 else "├── ") + _label(member))
    return "\n".join(lines) + "\n"


def render_json(flows: Sequence[FlowReport]) -> str:
    rows = [
        {
            "verdict": {"applicability": flow.applicability, "reason": flow.reason},
            "members": [
                {"filename": m.path, "row": m.row, "role": m.role, "name": m.name or None, "artifact": m.artifact}
                for m in _ordered(flow.members)
            ],
        }
        for flow in flows
    ]
    return json.dumps(rows, indent=2) + "\n"


def render_mermaid(flows: Sequence[FlowReport]) -> str:
    """A `flowchart LR`: one subgraph per flow, edges from the writers through the path values to the readers."""
    lines = ["flowchart LR"]
    for number, flow in enumerate(flows, 1):
        title = _mermaid_text(f"flow {number}: {verdict(flow)}")
        lines.append(f'  subgraph flow{number}["{title}"]')
        members = _ordered(flow.members)
        ids = {id(m): f"f{number}m{index}" for index, m in enumerate(members)}
        for member in members:
            lines.append(f'    {ids[id(member)]}["{_mermaid_text(_label(member))}"]')
        tiers = [[m for m in members if _ORDER[m.role] == tier] for tier in range(3)]
        present = [tier for tier in tiers if tier]
        for sources, targets in itertools.pairwise(present):
            for source in sources:
                for target in targets:
                    lines.append(f"    {ids[id(source)]} --> {ids[id(target)]}")
        lines.append("  end")
    return "\n".join(lines) + "\n"


def _mermaid_text(text: str) -> str:
    """Text inside a quoted Mermaid label: its quotes and the characters Mermaid reads as markup as entities."""
    return text.replace("&", "#amp;").replace('"', "#quot;").replace("`", "'").replace("<", "#lt;").replace(">", "#gt;")
