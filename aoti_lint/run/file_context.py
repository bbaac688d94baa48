"""What linting one file depends on besides its bytes, in one object handed down the lint core."""

from __future__ import annotations

import bisect
import functools
import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from aoti_lint.rules.base import (
    SCREEN_ANCHORS,
    ProjectRule,
    Rule,
    holds,
    remember,
    remember_verdicts,
    rule_matches,
)
from aoti_lint.screen.token_scan import MAX_TOKENS, scanner
from aoti_lint.settings.target_torch import DEFAULT_TARGET_TORCH

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from aoti_lint.flows.migration_flow import FileFlow
    from aoti_lint.screen._token_scan import Scanner


@dataclass(frozen=True)
class FileContext:
    """The rules enabled for the file's path and kind; the project rules to collect the file's project data
    for (per-file-ignores aside: a rule ignored here still needs the file's data to check the other files);
    the oldest torch the code must run on; and the run's migration plan for the file, if any
    (``aoti_lint.flows.migration_flow.FileFlow``, see ``aoti_lint.run.project_pass``)."""

    rules: tuple[type[Rule], ...]
    project_rules: tuple[type[ProjectRule], ...]
    target_torch: tuple[int, int] = DEFAULT_TARGET_TORCH
    flow: FileFlow | None = None

    @classmethod
    def of(
        cls,
        rules: Iterable[type[Rule]],
        project_rules: Iterable[type[Rule]] | None = None,
        target_torch: tuple[int, int] = DEFAULT_TARGET_TORCH,
        flow: FileFlow | None = None,
    ) -> FileContext:
        """A context; ``project_rules`` default to the project rules among ``rules``."""
        rules = tuple(rules)
        chosen = rules if project_rules is None else tuple(project_rules)
        project = tuple(rule for rule in chosen if issubclass(rule, ProjectRule))
        return cls(rules, project, target_torch, flow)

    def reads(self, data: bytes, present: list[bool] | None = None) -> bool:
        """The prefilter's first stage: whether some rule could match these bytes, or some project rule
        wants the file's data. A file that passes no rule here is settled without being decoded (nor parsed: it
        cannot hold a finding, so AOTI000 has nothing to say of it). ``present``: which of the screen's anchors
        the bytes hold, when that is known (``reads_many``)."""
        screen = _screen(self.rules, self.project_rules)
        if screen.compiled is not None:
            return screen.verdicts(data)
        if not (
            screen.tokens_in(data, present)
            or any(rule_matches(rule, data) for rule in screen.rules)
            or any(rule.wants_summary(data) for rule in screen.project_rules)
        ):
            return False
        return any(rule_matches(rule, data) for rule in self.rules) or any(
            rule.wants_summary(data) for rule in self.project_rules
        )

    def reads_many(self, datas: Sequence[bytes]) -> list[bool]:
        """``reads`` of each of several files' bytes. The screen's words are looked for in all of them at once: a
        search costs about a microsecond before it reads a byte, and most small files hold none of them."""
        screen = _screen(self.rules, self.project_rules)
        if len(datas) < 2 or screen.rules or screen.project_rules or screen.compiled is not None:
            return [self.reads(data) for data in datas]
        # No word holds a NUL byte: none is found across two files.
        joined = b"\0".join(datas)
        starts = list(itertools.accumulate((len(data) + 1 for data in datas[:-1]), initial=0))
        # Which anchors each file holds, each found once per file that holds it: ``reads`` looks for none again.
        present: list[list[bool] | None] = [None] * len(datas)
        anchors = len(screen.anchored)
        last = len(datas) - 1
        for position, (anchor, _) in enumerate(screen.anchored):
            at = joined.find(anchor)
            while at != -1:
                index = bisect.bisect_right(starts, at) - 1
                found = present[index]
                if found is None:
                    found = present[index] = [False] * anchors
                found[position] = True
                if index == last:
                    break
                at = joined.find(anchor, starts[index + 1])
        return [found is not None and self.reads(data, found) for found, data in zip(present, datas, strict=True)]


@dataclass(frozen=True)
class _Screen:
    """A cheaper first look at the bytes: ``anchored``, pairs of an anchor and the tokens holding it (empty:
    the anchor is itself a token), one token of which every rule and project rule matching on its trigger
    groups alone needs (one of each group); the rules with a test of their own apart."""

    anchored: tuple[tuple[bytes, tuple[bytes, ...]], ...]
    rules: tuple[type[Rule], ...]
    project_rules: tuple[type[ProjectRule], ...]
    # With the compiled scanner (``token_scan``): the tokens it looks for, the screen's first (``screened`` of
    # them), then those the rules' tests ask about, all found in one pass and kept for those tests (``holds``);
    # each rule and project rule with its trigger groups as bit masks of those tokens, or, for a test of its own,
    # the mask of its screen tokens (``_Test``).
    compiled: Scanner | None = None
    scanned: tuple[bytes, ...] = ()
    screened: int = 0
    tests: tuple[tuple[type[Rule], _Test], ...] = ()
    summary_tests: tuple[tuple[type[ProjectRule], _Test], ...] = ()

    def verdicts(self, data: bytes) -> bool:
        """``FileContext.reads`` with the compiled scanner: one pass finds every token; then each rule is asked,
        a rule of trigger groups alone by bits, and what each gives is kept for the stages that ask again
        (``rule_matches``, ``summary_wanted``)."""
        assert self.compiled is not None
        found = self.compiled.present(data)
        if not found & ((1 << self.screened) - 1):
            return False
        remember(data, {token: bool(found >> index & 1) for index, token in enumerate(self.scanned)})
        matched = {rule: test.passes(found, rule.could_match, data) for rule, test in self.tests}
        wanted = {rule: test.passes(found, rule.wants_summary, data) for rule, test in self.summary_tests}
        remember_verdicts(data, matched, wanted)
        return True in matched.values() or True in wanted.values()

    def tokens_in(self, data: bytes, present: list[bool] | None = None) -> bool:
        """Whether the bytes hold one of the tokens: an anchor, then one of the tokens under it. ``present``: which
        anchors they hold, when that is known."""
        # The anchors inline: most files hold none, and a call per anchor costs more than the scan of a small file;
        # for the others, what was found is kept for the rules' tests (``holds``).
        if present is None:
            present = [anchor in data for anchor, _ in self.anchored]
        if True not in present:
            return False
        remember(data, {anchor: found for (anchor, _), found in zip(self.anchored, present, strict=True)})
        return any(
            found and (not held or any(holds(data, token) for token in held))
            for found, (_, held) in zip(present, self.anchored, strict=True)
        )


@dataclass(frozen=True)
class _Test:
    """A rule's test of the bytes with the compiled scanner's bits: ``groups``, its trigger groups as masks (one
    matches when every token of it was found; None: not known as masks); ``own``, whether it has a test of its own,
    asked only when a group matches and one of its screen tokens (``screen``, a mask) was found: the trigger groups
    hold for every finding, and most files that hold a screen token (`options`) hold no group."""

    groups: tuple[int, ...] | None
    own: bool = False
    screen: int = -1  # -1: any bit

    def passes(self, found: int, own_test: Any, data: bytes) -> bool:
        if self.groups is not None and not any(found & group == group for group in self.groups):
            return False
        return not self.own or (bool(found & self.screen) and own_test(data))


def anchored_tokens(tokens: Iterable[bytes]) -> tuple[tuple[bytes, tuple[bytes, ...]], ...]:
    """Each token under the first of ``SCREEN_ANCHORS`` it holds, or as an anchor of its own."""
    groups: dict[bytes, list[bytes]] = {}
    for token in dict.fromkeys(tokens):
        anchor = next((anchor for anchor in SCREEN_ANCHORS if anchor in token), token)
        groups.setdefault(anchor, []).append(token)
    # An anchor that is itself a token needs no second look.
    return tuple((anchor, () if anchor in held else tuple(held)) for anchor, held in groups.items())


@functools.lru_cache(maxsize=32)
def _screen(rules: tuple[type[Rule], ...], project_rules: tuple[type[ProjectRule], ...]) -> _Screen:
    # Nine files in ten of a large tree hold no trigger: a few scans settle them, where asking each of the
    # fifteen rules costs a function call and its groups each.
    tokens: dict[bytes, None] = {}

    def by_groups(test: Any, base: Any, groups: tuple[tuple[bytes, ...], ...]) -> bool:
        # The base test matches on the groups alone; an empty group matches any bytes.
        if test.__func__ is not base.__func__ or not all(groups):
            return False
        tokens.update((max(group, key=len), None) for group in groups)  # the longest: the rarest, mostly
        return True

    def by_screen_tokens(rule: type[Rule]) -> bool:
        # A rule of its own test whose matching bytes hold one of its screen tokens: the screen asks it only then.
        tokens.update((token, None) for token in rule.screen_tokens)
        return bool(rule.screen_tokens)

    own_rules = [
        rule
        for rule in rules
        if not (by_groups(rule.could_match, Rule.could_match, rule.triggers) or by_screen_tokens(rule))
    ]
    own_project_rules = [
        rule
        for rule in project_rules
        if not by_groups(rule.wants_summary, ProjectRule.wants_summary, rule.summary_triggers)
    ]
    screened = tuple(tokens)
    asked = dict.fromkeys(screened)
    for rule in rules:
        asked.update((token, None) for group in rule.triggers for token in group)
    for rule in project_rules:
        asked.update((token, None) for group in rule.summary_triggers for token in group)
    scanned = tuple(asked) if len(asked) <= MAX_TOKENS else screened
    compiled = None if own_rules or own_project_rules else scanner(scanned)
    if compiled is None:
        return _Screen(anchored_tokens(tokens), tuple(own_rules), tuple(own_project_rules))
    bits = {token: 1 << index for index, token in enumerate(scanned)}

    def test(own: bool, groups: tuple[tuple[bytes, ...], ...], screen_tokens: tuple[bytes, ...]) -> _Test:
        masks = None
        # Groups the scanner was not given (more than it takes) are left to the rule's test, as are a test of its
        # own without groups.
        if all(token in bits for group in groups for token in group) and (groups or not own):
            masks = tuple(sum(bits[token] for token in group) for group in groups)
        screen = sum(bits[token] for token in screen_tokens) if screen_tokens else -1
        return _Test(masks, own=own or masks is None, screen=screen)

    tests = tuple(
        (rule, test(rule.could_match.__func__ is not Rule.could_match.__func__, rule.triggers, rule.screen_tokens))  # type: ignore[attr-defined]
        for rule in rules
    )
    summary_tests = tuple(
        (rule, test(rule.wants_summary.__func__ is not ProjectRule.wants_summary.__func__, rule.summary_triggers, ()))  # type: ignore[attr-defined]
        for rule in project_rules
    )
    return _Screen(
        anchored_tokens(tokens),
        (),
        (),
        compiled,
        scanned,
        len(screened),
        tests,
        summary_tests,
    )
