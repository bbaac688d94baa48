"""Environment variables a ``.env`` file sets: ``K=V`` and ``export K=V``, one a line.

Values may be quoted; ``$VAR`` / ``${VAR}`` in an unquoted or double-quoted value is interpolated by most
readers (docker compose, python-dotenv), so such a value is unknown. A quoted value that runs over several
lines is skipped whole.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from aoti_lint.fixes.edits import split_lines
from aoti_lint.scanners import EnvSetting, Locator

_LINE = re.compile(r"[ \t]*(?:export[ \t]+)?(?P<name>[A-Za-z_][A-Za-z0-9_]*)[ \t]*=[ \t]*(?P<value>.*?)[ \t]*\r?$")


def scan(text: str) -> Iterator[EnvSetting]:
    locator = Locator(text)
    offset = 0
    open_quote: str | None = None
    for line in split_lines(text):
        start, offset = offset, offset + len(line)
        if open_quote is not None:
            if open_quote in line:
                open_quote = None
            continue
        match = _LINE.match(line.rstrip("\n"))
        if match is None:
            continue
        raw = match.group("value")
        if raw[:1] in ("'", '"') and raw.count(raw[0]) == 1:
            open_quote = raw[0]
            continue
        yield EnvSetting(
            name=match.group("name"),
            value=_value(raw),
            start=locator.position(start + match.start("name")),
            end=locator.position(start + match.end("name")),
            removal=(locator.delete_lines(start, start + 1),),
        )


def _value(raw: str) -> str | None:
    if raw[:1] == "'":
        close = raw.find("'", 1)
        return raw[1:close]
    if raw[:1] == '"':
        close = raw.find('"', 1)
        value = raw[1:close]
    else:
        value = re.split(r"[ \t]#", raw, maxsplit=1)[0].strip()
    return None if "$" in value else value
