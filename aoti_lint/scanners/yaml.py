"""Environment variables a YAML file sets, read line by line (no YAML library).

Read:
- mappings under ``env:``, ``environment:`` or ``variables:`` (GitHub Actions at workflow, job and step level,
  docker-compose, GitLab CI), in map form (``K: V``) and list form (``- K=V``);
- Kubernetes-style lists of ``- name: K`` / ``value: "V"``;
- the shell of ``run:`` steps (block scalars ``|`` and one-line plain scalars), including
  ``echo "K=V" >> $GITHUB_ENV``; steps with a ``shell:`` that is not sh/bash are skipped.

Everything under a mapping whose ``if:`` mentions "debug" (a job's or a step's) is marked deliberate. Flow
collections (``{...}``, ``[...]``), anchors, tags and multi-line values are not read.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from aoti_lint.diagnostics import Edit
from aoti_lint.fixes.edits import split_lines
from aoti_lint.scanners import ENV_NAME, EnvSetting, Locator, mentions_debug, shell
from aoti_lint.scanners.shell import CommandRemoval

ENV_KEYS = frozenset({"env", "environment", "variables"})
_BLOCK_INDICATOR = re.compile(r"[|>][0-9+-]*")
_LIST_ITEM = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)=(.*)", re.DOTALL)


@dataclass(eq=False)
class Node:
    """One line of a block mapping or sequence: ``key: value``, ``- key: value`` or ``- scalar``."""

    row: int
    start: int  # offset of the line
    end: int  # offset after the line's newline
    indent: int  # column of the key (or of the scalar of a `- scalar` item)
    item: bool  # the line starts a sequence item (`- `)
    dash: int  # column of the `-` when ``item``
    key: str | None
    key_start: int
    key_end: int  # offset just after the key's colon
    value: str  # the raw value, comment stripped
    value_start: int
    parent: Node | None = None
    group: int = 0  # which sequence item of the parent the node belongs to
    children: list[Node] = field(default_factory=list)
    # The children by sequence item, so siblings are found without scanning long step lists.
    groups: dict[int, list[Node]] = field(default_factory=dict)
    block_end: int | None = None  # offset after the last line of its block scalar
    items_seen: int = 0

    @property
    def last_end(self) -> int:
        """Offset after the last line of this node, its block scalar and its children."""
        end = self.block_end or self.end
        return max([end, *(child.last_end for child in self.children)])

    def siblings(self) -> list[Node]:
        return self.parent.groups[self.group] if self.parent is not None else []


def _split_comment(text: str) -> str:
    """``text`` without its trailing comment; quotes in a quoted scalar are respected."""
    index = 0
    if text[:1] in ("'", '"'):
        quote = text[0]
        index = 1
        while index < len(text):
            if text[index] == "\\" and quote == '"':
                index += 2
                continue
            if text[index] == quote:
                if quote == "'" and text[index + 1 : index + 2] == "'":
                    index += 2
                    continue
                index += 1
                break
            index += 1
    match = re.search(r"(?:^|[ \t])#", text[index:])
    return (text[: index + match.start()] if match else text).rstrip()


def _key(content: str) -> tuple[str, int] | None:
    """The key of ``content`` and the offset just after its colon, or None for a plain scalar."""
    if content[:1] in ('"', "'"):
        close = content.find(content[0], 1)
        if close == -1:
            return None
        after = content[close + 1 :]
        stripped = after.lstrip(" ")
        if stripped.startswith(":") and (len(stripped) == 1 or stripped[1] in " \t"):
            return content[1:close], close + 1 + (len(after) - len(stripped)) + 1
        return None
    if not content or content[0] in "[]{}|>!&*%@`#,?":
        return None
    match = re.search(r":(?:[ \t]|$)", content)
    if match is None or re.search(r"[ \t]#", content[: match.start()]):
        return None
    return content[: match.start()].rstrip(), match.start() + 1


def parse(text: str) -> list[Node]:
    nodes: list[Node] = []
    stack: list[Node] = []
    block: Node | None = None
    offset = 0
    for row, line in enumerate(split_lines(text)):
        start, offset = offset, offset + len(line)
        body = line.rstrip("\r\n")
        indent = len(body) - len(body.lstrip(" "))
        if block is not None:
            if not body.strip() or indent > block.indent:
                if body.strip():
                    block.block_end = offset
                continue
            block = None
        stripped = body.strip()
        if not stripped or stripped.startswith("#") or stripped.startswith("%"):
            continue
        if stripped in ("---", "...") or stripped.startswith("--- "):
            stack.clear()
            continue
        content, column, item, dash = body[indent:], indent, False, indent
        if content == "-" or content.startswith("- "):
            item = True
            rest = content[1:]
            column = indent + 1 + (len(rest) - len(rest.lstrip(" ")))
            content = rest.lstrip(" ")
        key = _key(content) if content else None
        name, after_colon = key if key is not None else (None, 0)
        value_text = content[after_colon:]
        value_start = start + column + after_colon + (len(value_text) - len(value_text.lstrip()))
        node = Node(
            row=row,
            start=start,
            end=offset,
            indent=column,
            item=item,
            dash=dash,
            key=name,
            key_start=start + column,
            key_end=start + column + after_colon,
            value=_split_comment(value_text.strip()),
            value_start=value_start,
        )
        parent_column = dash if item else column
        while stack and (
            stack[-1].indent > parent_column
            or (stack[-1].indent == parent_column and not (item and stack[-1].key is not None and not stack[-1].value))
        ):
            stack.pop()
        node.parent = stack[-1] if stack else None
        if node.parent is not None:
            if item:
                node.parent.items_seen += 1
            node.group = node.parent.items_seen
            node.parent.children.append(node)
            node.parent.groups.setdefault(node.group, []).append(node)
        nodes.append(node)
        stack.append(node)
        if node.key is not None and _BLOCK_INDICATOR.fullmatch(node.value):
            block = node
    return nodes


def _guarded(node: Node | None, text: str, memo: dict[tuple[int, int], bool]) -> bool:
    """Under a mapping (the node's own or an ancestor's) whose `if:` mentions debug. ``memo``: the answer for each
    mapping asked about (by parent and item), for the scan of one text: the jobs of a workflow are siblings, and
    asking each job's steps about all of them made the scan quadratic in the jobs."""
    while node is not None:
        key = (id(node.parent), node.group)
        found = memo.get(key)
        if found is None:
            found = memo[key] = any(
                sibling.key == "if" and mentions_debug(text[sibling.value_start : sibling.block_end or sibling.end])
                for sibling in node.siblings()
            )
        if found:
            return True
        node = node.parent
    return False


def scalar(raw: str) -> str | None:
    """A YAML scalar's string value; None for what is not a literal (expressions, interpolation, tags)."""
    if raw[:1] == '"' and raw.endswith('"') and len(raw) > 1:
        value = raw[1:-1].replace('\\"', '"').replace("\\\\", "\\")
    elif raw[:1] == "'" and raw.endswith("'") and len(raw) > 1:
        value = raw[1:-1].replace("''", "'")
    elif raw[:1] in ("'", '"', "&", "*", "!", "{", "[", "|", ">"):
        return None
    else:
        value = "" if raw in ("~", "null", "Null", "NULL") else raw
    return None if "$" in value else value


def scan(text: str) -> Iterator[EnvSetting]:
    locator = Locator(text)
    nodes = parse(text)
    memo: dict[tuple[int, int], bool] = {}
    for node in nodes:
        if node.key in ENV_KEYS and not node.value and node.children:
            yield from _env_block(node, locator, _guarded(node, text, memo))
        elif node.key == "run" and node.value and _runs_shell(node):
            yield from _run(node, locator, _guarded(node, text, memo))


def _env_block(env: Node, locator: Locator, guarded: bool) -> Iterator[EnvSetting]:
    children, groups = env.children, env.groups
    only_entry = len(groups) == 1 if children[0].item else len(children) == 1
    empty = " []" if children[0].item else " {}"
    # Removing the only entry leaves an empty collection, not a null. Otherwise an empty edit after the key:
    # two removals from one block overlap there, so they are applied in separate rounds.
    emptied = (locator.edit(env.key_end, env.key_end, empty if only_entry else ""),)
    for child in children:
        if child.item or child.group or child.key is None or child.children or child.block_end is not None:
            continue
        if not ENV_NAME.fullmatch(child.key):
            continue
        name_start = child.key_start + (1 if locator.text[child.key_start] in "'\"" else 0)
        yield EnvSetting(
            name=child.key,
            value=scalar(child.value),
            start=locator.position(name_start),
            end=locator.position(name_start + len(child.key)),
            removal=(*emptied, locator.edit(child.start, child.end)),
            under_debug_condition=guarded,
        )
    for group in groups.values():
        first = group[0]
        if not first.item:
            continue
        removal = (*emptied, locator.edit(first.start, max(node.last_end for node in group)))
        if first.key is None:
            yield from _list_item(first, locator, removal, guarded)
            continue
        fields = {node.key: node for node in group}
        name_node, value_node = fields.get("name"), fields.get("value")
        if name_node is None or value_node is None or value_node.block_end is not None:
            continue
        name = scalar(name_node.value)
        if name is None or not ENV_NAME.fullmatch(name):
            continue
        name_start = name_node.value_start + (1 if name_node.value[:1] in ("'", '"') else 0)
        yield EnvSetting(
            name=name,
            value=scalar(value_node.value),
            start=locator.position(name_start),
            end=locator.position(name_start + len(name)),
            removal=removal if len(group) == 2 else (),
            under_debug_condition=guarded,
        )


def _list_item(item: Node, locator: Locator, removal: tuple[Edit, ...], guarded: bool) -> Iterator[EnvSetting]:
    """docker-compose's list form: ``- K=V`` (``- K`` alone passes the host's value: unknown)."""
    if item.children or item.block_end is not None:
        return
    text = scalar(item.value) if item.value[:1] in ("'", '"') else item.value
    match = _LIST_ITEM.fullmatch(text or "")
    if text is None or match is None:
        return
    name_start = item.value_start + (1 if item.value[:1] in ("'", '"') else 0)
    yield EnvSetting(
        name=match.group(1),
        value=None if "$" in match.group(2) else match.group(2),
        start=locator.position(name_start),
        end=locator.position(name_start + len(match.group(1))),
        removal=removal,
        under_debug_condition=guarded,
    )


def _runs_shell(run: Node) -> bool:
    shells = [s.value for s in run.siblings() if s.key == "shell"]
    return all(re.match(r"(?:ba)?sh\b", value) for value in shells)


def _run(run: Node, locator: Locator, guarded: bool) -> Iterator[EnvSetting]:
    if run.block_end is not None:
        if not run.value.startswith("|"):
            return  # a folded scalar joins the lines: not the script as written
        region, mode = (run.end, run.block_end), CommandRemoval.LINE
    elif run.value[:1] not in ("'", '"', "{", "[", "&", "*", "!", "|", ">"):
        region, mode = (run.value_start, run.value_start + len(run.value)), CommandRemoval.NONE
    else:
        return
    for setting in shell.scan(locator.text, mode, locator, region):
        if guarded and not setting.under_debug_condition:
            setting = EnvSetting(setting.name, setting.value, setting.start, setting.end, setting.removal, True)
        yield setting
