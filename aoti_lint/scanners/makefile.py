"""Environment variables a Makefile sets for the commands it runs.

Read: ``export K=V`` (also ``:=``, ``::=``, ``?=``), which puts ``K`` in the environment of every recipe, and the
recipe lines themselves (a tab, then shell: ``K=V cmd``, ``export K=V; cmd``), each read as the shell reads it. Not
read: a variable exported by a separate ``export K`` line, ``+=``, values that expand a variable (``$(X)``,
``$$X``), ``define`` blocks, and recipe lines continued with a backslash.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from aoti_lint.fixes.edits import split_lines
from aoti_lint.scanners import EnvSetting, Locator, shell

_EXPORT = re.compile(r"[ \t]*export[ \t]+(?P<name>[A-Za-z_][A-Za-z0-9_]*)[ \t]*(?::{1,2}|\?)?=[ \t]*(?P<value>.*)")
# A recipe line: a tab, then make's own prefixes (silent, ignore errors, always run), then the shell command.
_RECIPE = re.compile(r"\t[@+\- \t]*")


def scan(text: str) -> Iterator[EnvSetting]:
    locator = Locator(text)
    offset = 0
    continued = False
    in_define = False
    for line in split_lines(text):
        start, offset = offset, offset + len(line)
        body = line.rstrip("\r\n")
        was_continued, continued = continued, body.endswith("\\")
        if was_continued:
            continue
        if in_define:
            in_define = not body.strip().startswith("endef")
            continue
        if body.lstrip().startswith("define"):
            in_define = True
            continue
        recipe = _RECIPE.match(body)
        if recipe is not None:
            if not continued:
                yield from shell.scan(text, locator=locator, region=(start + recipe.end(), start + len(body)))
            continue
        match = _EXPORT.match(body)
        if match is None or continued:
            continue
        yield EnvSetting(
            name=match.group("name"),
            value=_value(match.group("value")),
            start=locator.position(start + match.start("name")),
            end=locator.position(start + match.end("name")),
            removal=(locator.delete_lines(start, start + 1),),
        )


def _value(raw: str) -> str | None:
    """The value make gives: up to an unescaped `#`, without the blanks around it; None where it expands."""
    value = re.split(r"(?<!\\)#", raw, maxsplit=1)[0].strip()
    return None if "$" in value else value
