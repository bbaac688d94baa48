"""Environment variables a POSIX shell script sets for the processes it starts.

Read: ``export K=V [K2=V2]``, the inline prefix ``K=V [K2=V2] cmd ...``, ``env [-i] K=V cmd ...`` and
``echo "K=V" >> $GITHUB_ENV``. Not read: bare ``K=V`` (not exported), heredoc bodies, comments, command
substitutions. Settings inside an ``if`` (or after ``cond &&``) whose condition mentions "debug" are marked.

The scanner also reads shell embedded in other files (YAML ``run:`` blocks, Dockerfile ``RUN``): the caller
names the region of the file that holds the script, so offsets stay those of the real file.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from aoti_lint.diagnostics import Edit
from aoti_lint.scanners import EnvSetting, Locator, mentions_debug


class CommandRemoval(enum.Enum):
    """How a fix may remove a whole command (``export K=V``, ``echo K=V >> $GITHUB_ENV``)."""

    # Delete its line when it stands alone there (else replace it with `:`): a script file, a run block.
    LINE = "line"
    # Always replace it with the no-op `:`: a Dockerfile RUN, whose instruction line must stay.
    COLON = "colon"
    # Never: a one-line YAML scalar, which must not become empty or start with `:`.
    NONE = "none"


_OPERATORS = ("&&", "||", ";;", ">>", "<<-", "<<", ">&", "<&", ">|", ";", "&", "|", "(", ")", ">", "<")
_OPERATOR_STARTS = frozenset(op[0] for op in _OPERATORS)
# Characters a word runs over without looking closer.
_PLAIN_RUN = re.compile(r"[^\s&|;<>()\\'\"`$]+")
_SEPARATORS = frozenset({"&&", "||", ";;", ";", "&", "|", "(", ")", "\n"})
_REDIRECT_OPERATORS = frozenset({">>", ">", ">|", "<", ">&", "<&", "<<", "<<-"})
# Words that may precede a command without being it.
_PREFIX_KEYWORDS = frozenset({"then", "do", "else", "{", "!", "time"})
_COMMAND_POSITION_KEYWORDS = _PREFIX_KEYWORDS | {"if", "elif", "while", "until", "fi", "done", "}"}
# What may stand right before / after a command in a compound body that would be empty without it.
_OPENERS = frozenset({"then", "do", "else", "{", "(", "&&", "||", "|"})
_CLOSERS = frozenset({"fi", "done", "else", "elif", "}", ")", ";;", "esac"})
_ASSIGNMENT = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)=")
_HEREDOC_DELIMITER = re.compile(r"""\s*(['"]?)([^\s'"<>|&;()]+)\1""")


@dataclass
class Token:
    kind: str  # "word", "op", "newline"
    start: int
    end: int
    text: str


def tokenize(text: str, start: int = 0) -> list[Token]:
    """Words and operators of ``text[start:]``; comments, line continuations and heredoc bodies are skipped."""
    tokens: list[Token] = []
    pending_heredocs: list[tuple[str, bool]] = []
    index, length = start, len(text)
    while index < length:
        char = text[index]
        if char in " \t\r":
            index += 1
        elif text.startswith(("\\\n", "\\\r\n"), index):
            index += 2 if text[index + 1] == "\n" else 3
        elif char == "\n":
            tokens.append(Token("newline", index, index + 1, "\n"))
            index += 1
            for delimiter, strip_tabs in pending_heredocs:
                index = _skip_heredoc(text, index, delimiter, strip_tabs)
            pending_heredocs.clear()
        elif char == "#":
            newline = text.find("\n", index)
            index = length if newline == -1 else newline
        else:
            operator = (
                next((op for op in _OPERATORS if text.startswith(op, index)), None)
                if char in _OPERATOR_STARTS
                else None
            )
            if operator is not None:
                tokens.append(Token("op", index, index + len(operator), operator))
                index += len(operator)
                if operator in ("<<", "<<-"):
                    match = _HEREDOC_DELIMITER.match(text, index)
                    if match:
                        pending_heredocs.append((match.group(2), operator == "<<-"))
                        tokens.append(Token("word", match.start(2), match.end(), match.group(0).strip()))
                        index = match.end()
                continue
            end = _word_end(text, index)
            tokens.append(Token("word", index, end, text[index:end]))
            index = end
    return tokens


def _skip_heredoc(text: str, index: int, delimiter: str, strip_tabs: bool) -> int:
    while index < len(text):
        newline = text.find("\n", index)
        line_end = len(text) if newline == -1 else newline
        line = text[index:line_end]
        index = line_end + 1
        if (line.lstrip("\t") if strip_tabs else line).rstrip("\r") == delimiter:
            break
    return min(index, len(text))


def _word_end(text: str, index: int) -> int:
    """The end of the word at ``index``: quotes, escapes, ``$(...)``, ``${...}`` and backquotes included."""
    length = len(text)
    while index < length:
        plain = _PLAIN_RUN.match(text, index)
        if plain:
            index = plain.end()
            continue
        char = text[index]
        if char in " \t\r\n" or char in _OPERATOR_STARTS:
            return index
        if char == "\\":
            index += 3 if text.startswith("\\\r\n", index) else 2
        elif char == "'":
            close = text.find("'", index + 1)
            index = length if close == -1 else close + 1
        elif char == '"':
            index = _double_quote_end(text, index + 1)
        elif char == "`":
            close = text.find("`", index + 1)
            index = length if close == -1 else close + 1
        elif text.startswith("$(", index) or text.startswith("${", index):
            index = _group_end(text, index + 1)
        else:
            index += 1
    return index


def _double_quote_end(text: str, index: int) -> int:
    while index < len(text):
        char = text[index]
        if char == "\\":
            index += 2
        elif char == '"':
            return index + 1
        elif text.startswith("$(", index) or text.startswith("${", index):
            index = _group_end(text, index + 1)
        else:
            index += 1
    return len(text)


def _group_end(text: str, index: int) -> int:
    """``index`` at an opening ``(`` or ``{``: the offset after its matching closer."""
    closer = ")" if text[index] == "(" else "}"
    opener = text[index]
    depth = 0
    while index < len(text):
        char = text[index]
        if char == "\\":
            index += 2
            continue
        if char == "'":
            close = text.find("'", index + 1)
            index = len(text) if close == -1 else close + 1
            continue
        if char == '"':
            index = _double_quote_end(text, index + 1)
            continue
        if char == opener:
            depth += 1
        elif char == closer:
            depth -= 1
            if depth == 0:
                return index + 1
        index += 1
    return len(text)


def word_value(raw: str) -> str | None:
    """The word after quote removal; None when it holds an expansion (``$``, backquotes)."""
    out: list[str] = []
    index = 0
    while index < len(raw):
        char = raw[index]
        if char in "$`":
            return None
        if char == "\\":
            if raw.startswith("\\\n", index):
                index += 2
                continue
            out.append(raw[index + 1 : index + 2])
            index += 2
        elif char == "'":
            close = raw.find("'", index + 1)
            if close == -1:
                return None
            out.append(raw[index + 1 : close])
            index = close + 1
        elif char == '"':
            index += 1
            while index < len(raw) and raw[index] != '"':
                if raw[index] in "$`":
                    return None
                if raw[index] == "\\" and raw[index + 1 : index + 2] in ('"', "\\", "$", "`"):
                    index += 1
                out.append(raw[index])
                index += 1
            if index >= len(raw):
                return None
            index += 1
        else:
            out.append(char)
            index += 1
    return "".join(out)


@dataclass
class _IfFrame:
    condition: list[str] = field(default_factory=list)


@dataclass
class _Command:
    words: list[Token]
    # Tokens of the command including redirections (for its span).
    tokens: list[Token]
    redirects: list[tuple[str, Token]]
    frames: tuple[_IfFrame, ...]
    # The keyword that opened the innermost compound body holding the command (`then`, `do`, `{`, `else`).
    opener: Token | None
    # In a branch taken on a debug test: `[ -n "$DEBUG" ] && export ...`, a `case` branch `debug) ...`.
    after_debug_test: bool
    before: Token | None  # the significant token before the command
    after: Token | None  # the significant token after it


def scan(
    text: str,
    command_removal: CommandRemoval = CommandRemoval.LINE,
    locator: Locator | None = None,
    region: tuple[int, int] | None = None,
) -> Iterator[EnvSetting]:
    """The settings of a script, or of the script embedded in ``text[region[0]:region[1]]``.

    ``locator``: the real file's, when ``text`` is a copy of it with comments blanked (a Dockerfile RUN).
    """
    locator = locator or Locator(text)
    tokens = tokenize(text[: region[1]], region[0]) if region is not None else tokenize(text)
    for command in _commands(tokens):
        yield from _settings(command, locator, command_removal)


def _commands(tokens: list[Token]) -> Iterator[_Command]:
    frames: list[_IfFrame] = []
    openers: list[Token] = []
    in_condition: _IfFrame | None = None
    list_mentions_debug = False
    # Inside `case`: whether the current branch's pattern mentions debug (`debug|dev) ... ;;`).
    case_depth, case_branch_debug = 0, False
    index = 0
    while index < len(tokens):
        token = tokens[index]
        if token.kind != "word":
            if token.text == ";;":
                case_branch_debug = False
            elif token.text == ")" and case_depth:
                case_branch_debug = list_mentions_debug
            if token.text in (";", "&", "\n", ";;", "(", ")"):
                list_mentions_debug = False
            index += 1
            continue
        before = tokens[index - 1] if index else None
        end = index
        while end < len(tokens) and not (tokens[end].kind != "word" and tokens[end].text in _SEPARATORS):
            end += 1
        words: list[Token] = []
        redirects: list[tuple[str, Token]] = []
        parts = tokens[index:end]
        position = 0
        while position < len(parts):
            part = parts[position]
            if part.kind == "op" and part.text in _REDIRECT_OPERATORS:
                if position + 1 < len(parts):
                    redirects.append((part.text, parts[position + 1]))
                position += 2
                continue
            words.append(part)
            position += 1
        # Reserved words in command position.
        while words and words[0].text in _COMMAND_POSITION_KEYWORDS:
            keyword_token = words.pop(0)
            keyword = keyword_token.text
            if keyword in ("elif", "else", "fi", "done", "}") and openers:
                openers.pop()
            if keyword in ("then", "do", "else", "{"):
                openers.append(keyword_token)
            if keyword == "if":
                frames.append(_IfFrame())
                in_condition = frames[-1]
            elif keyword == "elif" and frames:
                in_condition = frames[-1]
            elif keyword == "then":
                in_condition = None
            elif keyword == "fi" and frames:
                frames.pop()
        if words and words[0].text == "case":
            case_depth += 1
        elif words and words[0].text == "esac":
            case_depth, case_branch_debug = max(case_depth - 1, 0), False
        if in_condition is not None:
            in_condition.condition.extend(word.text for word in words)
        if words:
            after = tokens[end] if end < len(tokens) else None
            significant_before = before if before is not None and before.kind != "newline" else None
            first_word_index = tokens.index(words[0], index)
            if first_word_index > index:  # a keyword such as `then` opened this body
                significant_before = tokens[first_word_index - 1]
            elif significant_before is None:
                significant_before = _previous_significant(tokens, index)
            yield _Command(
                words=words,
                tokens=[t for t in parts if t.start >= words[0].start],
                redirects=redirects,
                frames=tuple(frames),
                opener=openers[-1] if openers else None,
                after_debug_test=case_branch_debug
                or (list_mentions_debug and before is not None and before.text in ("&&", "||")),
                before=significant_before,
                after=after if after is not None and after.kind != "newline" else _next_significant(tokens, end),
            )
            if any(mentions_debug(word.text) for word in words):
                list_mentions_debug = True
        index = end


def _previous_significant(tokens: list[Token], index: int) -> Token | None:
    for position in range(index - 1, -1, -1):
        if tokens[position].kind != "newline":
            return tokens[position]
    return None


def _next_significant(tokens: list[Token], index: int) -> Token | None:
    for position in range(index, len(tokens)):
        if tokens[position].kind != "newline":
            return tokens[position]
    return None


def _settings(command: _Command, locator: Locator, removal_mode: CommandRemoval) -> Iterator[EnvSetting]:
    words = command.words
    count = 0
    while count < len(words) and _ASSIGNMENT.match(words[count].text):
        count += 1
    assignments, rest = words[:count], words[count:]
    if not rest:
        return  # bare assignments: shell variables, not exported
    name = rest[0].text
    found: list[tuple[Token, bool]] = []  # (word, removing it removes the command)
    if name == "export" and not assignments:
        pairs = [w for w in rest[1:] if not w.text.startswith("-")]
        exported = [w for w in pairs if _ASSIGNMENT.match(w.text)]
        found = [(w, len(pairs) == 1) for w in exported]
    elif name == "env" and len(rest) > 1:
        position = 1
        while position < len(rest) and rest[position].text.startswith("-"):
            position += 2 if rest[position].text in ("-u", "-C", "-S") else 1
        env_words = []
        while position < len(rest) and _ASSIGNMENT.match(rest[position].text):
            env_words.append(rest[position])
            position += 1
        if position < len(rest):  # `env K=V` alone only prints the environment
            found = [(w, False) for w in [*assignments, *env_words]]
    else:
        found = [(w, False) for w in assignments]
        if name == "echo":
            yield from _github_env(command, locator, removal_mode)
    # Positions by identity: `words.index(word)` compares dataclasses field by field, once per word of a
    # command that may hold thousands of pairs (`export A=1 ... V19999=x`: quadratic).
    positions = {id(word): position for position, word in enumerate(words)}
    for word, whole_command in found:
        match = _ASSIGNMENT.match(word.text)
        assert match is not None
        yield EnvSetting(
            name=match.group(1),
            value=word_value(word.text[match.end() :]),
            start=locator.position(word.start),
            end=locator.position(word.start + len(match.group(1))),
            removal=_remove_command(command, locator, removal_mode)
            if whole_command
            else _remove_word(command, positions[id(word)], locator),
            under_debug_condition=_under_debug(command),
        )


def _github_env(command: _Command, locator: Locator, removal_mode: CommandRemoval) -> Iterator[EnvSetting]:
    """``echo "K=V" >> $GITHUB_ENV``: GitHub Actions sets K for the following steps."""
    if not any(op == ">>" and "GITHUB_ENV" in target.text for op, target in command.redirects):
        return
    arguments = command.words[1:]
    if len(arguments) != 1:
        return
    word = arguments[0]
    value = word_value(word.text)
    match = _ASSIGNMENT.match(value or "")
    if value is None or match is None:
        return
    name = match.group(1)
    start = word.start + word.text.find(name)
    yield EnvSetting(
        name=name,
        value=value[match.end() :],
        start=locator.position(start),
        end=locator.position(start + len(name)),
        removal=_remove_command(command, locator, removal_mode),
        under_debug_condition=_under_debug(command),
    )


def _under_debug(command: _Command) -> bool:
    return command.after_debug_test or any(mentions_debug(" ".join(frame.condition)) for frame in command.frames)


def _remove_word(command: _Command, position: int, locator: Locator) -> tuple[Edit, ...]:
    """Delete the word at ``position`` of a command that keeps others (an inline prefix, one pair of several)."""
    words = command.words
    word = words[position]
    if position + 1 < len(words):
        return (locator.edit(word.start, words[position + 1].start),)
    return (locator.edit(words[position - 1].end, word.end),)


def _remove_command(command: _Command, locator: Locator, removal_mode: CommandRemoval) -> tuple[Edit, ...]:
    if removal_mode is CommandRemoval.NONE:
        return ()
    start, end = command.tokens[0].start, command.tokens[-1].end
    text = locator.text
    alone = (
        not text[locator.line_start(start) : start].strip()
        and not text[end : locator.line_end(end)].split("#", 1)[0].strip()
    )
    body_stays = not (command.before is not None and command.before.text in _OPENERS) or not (
        command.after is not None and command.after.text in _CLOSERS
    )
    if removal_mode is CommandRemoval.LINE and alone and body_stays:
        deletion = locator.delete_lines(start, end)
        if command.opener is None:
            return (deletion,)
        # An empty edit at the body's opening keyword: two removals from one body overlap there, so they are
        # applied in separate rounds and the last command left becomes `:`, never an empty body.
        return (deletion, locator.edit(command.opener.end, command.opener.end))
    return (locator.edit(start, end, ":"),)
