"""argparse's parser with ruff's way of telling a usage error: what is wrong on one line (with a tip when an option
of a similar name exists), where help is on the next, exit code 2. Imported only where a command line is parsed
with argparse."""

from __future__ import annotations

import argparse
import re

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import NoReturn

_UNRECOGNIZED = re.compile(r"unrecognized arguments: (\S+)")


class Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        unknown = _UNRECOGNIZED.match(message)
        if unknown is None:
            lines = [f"error: {_printable(message)}"]
        else:
            argument = unknown.group(1)
            lines = [f"error: unexpected argument '{_printable(argument)}' found"]
            if argument.startswith("--"):
                import difflib

                options = [option for option in self._option_string_actions if option.startswith("--")]
                similar = difflib.get_close_matches(argument.partition("=")[0], options, n=1, cutoff=0.7)
                if similar:
                    lines.append(f"  tip: a similar argument exists: '{similar[0]}'")
        self.exit(2, "\n".join([*lines, "", "For more information, try '--help'.", ""]))


def _printable(text: str) -> str:
    """An argument as typed may hold a terminal's control characters: escaped, never sent to the terminal."""
    return "".join(char if char.isprintable() else ascii(char)[1:-1] for char in text)
