"""Environment variables a Dockerfile sets: ``ENV K=V [K2=V2 ...]``, the legacy ``ENV K V``, and the shell of
``RUN`` instructions (inline prefixes and exports of a build step, e.g. a compile run in the image build).

Instructions may continue over lines with a trailing backslash; comment lines inside a continuation are
dropped, as Docker drops them. The escape directive (`# escape=`) is not read: the backslash is assumed.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from aoti_lint.fixes.edits import split_lines
from aoti_lint.scanners import ENV_NAME, EnvSetting, Locator, shell
from aoti_lint.scanners.shell import CommandRemoval

_INSTRUCTION = re.compile(r"[ \t]*([A-Za-z]+)(?=[ \t]|\\?$)")


@dataclass
class Instruction:
    keyword: str
    start: int  # offset of the keyword
    body_start: int  # offset after the keyword
    end: int  # offset of the end of the instruction's last line (before its newline)
    # (start, end) offsets of the body's pieces: the rest of each physical line, comment lines excluded
    pieces: list[tuple[int, int]]
    # (start, end) offsets of the comment lines inside the instruction, newline included: Docker drops them.
    comments: list[tuple[int, int]]

    def script(self, text: str) -> str:
        """``text`` up to the instruction's end, its comment lines blanked: the body as the shell reads it,
        at the offsets of ``text``."""
        pieces = [text[: self.body_start]]
        position = self.body_start
        for start, end in self.comments:
            pieces += [text[position:start], " " * (end - start)]
            position = end
        pieces.append(text[position : self.end])
        return "".join(pieces)


def instructions(text: str) -> Iterator[Instruction]:
    lines = split_lines(text)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    row = 0
    while row < len(lines):
        line, offset = lines[row], starts[row]
        row += 1
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        match = _INSTRUCTION.match(line)
        keyword = match.group(1).upper() if match else ""
        start = offset + (match.start(1) if match else 0)
        body_start = offset + (match.end(1) if match else 0)
        pieces = [(body_start, offset + len(line.rstrip("\r\n")))]
        comments = []
        continued = line.rstrip().endswith("\\")
        while continued and row < len(lines):
            line, offset = lines[row], starts[row]
            row += 1
            if line.strip().startswith("#"):
                comments.append((offset, offset + len(line)))
                continue
            pieces.append((offset, offset + len(line.rstrip("\r\n"))))
            continued = bool(line.strip()) and line.rstrip().endswith("\\")
        yield Instruction(keyword, start, body_start, pieces[-1][1], pieces, comments)


def scan(text: str) -> Iterator[EnvSetting]:
    locator = Locator(text)
    for instruction in instructions(text):
        if instruction.keyword == "ENV":
            yield from _env(instruction, locator)
        elif instruction.keyword == "RUN":
            body = text[instruction.body_start : instruction.end].lstrip()
            if not body.startswith("["):  # the exec form runs no shell
                region = (instruction.body_start, instruction.end)
                yield from shell.scan(instruction.script(text), CommandRemoval.COLON, locator, region)


def _env(instruction: Instruction, locator: Locator) -> Iterator[EnvSetting]:
    body = instruction.script(locator.text)
    words = [word for word in shell.tokenize(body[instruction.body_start : instruction.end]) if word.kind == "word"]
    if not words:
        return
    base = instruction.body_start
    remove_instruction = (locator.delete_lines(instruction.start, instruction.end),)
    if "=" not in words[0].text:
        # Legacy `ENV K V`: one variable, its value the rest of the instruction.
        name = words[0].text
        if not ENV_NAME.fullmatch(name) or len(words) < 2:
            return
        raw = body[base + words[1].start : instruction.end].strip()
        yield EnvSetting(
            name=name,
            value=shell.word_value(raw) if len(words) == 2 else _joined(words[1:]),
            start=locator.position(base + words[0].start),
            end=locator.position(base + words[0].end),
            removal=remove_instruction,
        )
        return
    for position, word in enumerate(words):
        name, equals, raw = word.text.partition("=")
        if not equals or not ENV_NAME.fullmatch(name):
            continue
        if len(words) == 1:
            removal = remove_instruction
        elif position + 1 < len(words):
            removal = (locator.edit(base + word.start, base + words[position + 1].start),)
        else:
            removal = (locator.edit(base + words[position - 1].end, base + word.end),)
        yield EnvSetting(
            name=name,
            value=shell.word_value(raw),
            start=locator.position(base + word.start),
            end=locator.position(base + word.start + len(name)),
            removal=removal,
        )


def _joined(words: list[shell.Token]) -> str | None:
    values = [shell.word_value(word.text) for word in words]
    return None if any(value is None for value in values) else " ".join(v for v in values if v is not None)
