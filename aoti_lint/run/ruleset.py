"""Which rules apply to which file: the enabled rules of the settings, less those the per-file-ignores switch off
for a path, plus the project rules a file must be read for."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from aoti_lint.diagnostics import FileError
from aoti_lint.settings.config import Settings

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from aoti_lint.flows.migration_flow import FileFlow
    from aoti_lint.rules.base import ProjectRule, Rule
    from aoti_lint.run.file_context import FileContext


_NONE_IGNORED: frozenset[str] = frozenset()


class RuleSet:
    """The enabled rules, and the per-file-ignores that switch some of them off for some paths."""

    def __init__(self, settings: Settings, rules: Sequence[type[Rule]] | None = None) -> None:
        from aoti_lint.settings import selection

        self.settings = settings
        self._given = rules
        self._rules: tuple[type[Rule], ...] | None = None
        self._per_file = []
        self._for_file: dict[tuple[str, frozenset[str]], tuple[type[Rule], ...]] = {}
        self._project_rules: dict[str, tuple[type[ProjectRule], ...]] = {}
        self._contexts: dict[tuple[tuple[type[Rule], ...], str, tuple[int, int]], FileContext] = {}
        # Invalid per-file-ignores patterns, reported by the run (which goes on without them).
        self.errors: list[FileError] = []
        if settings.per_file_ignores:
            from aoti_lint.read.ignores import gitignore_spec  # pathspec is slow to import: only when needed

            def spec(lines: list[str]) -> Any:
                built, problems = gitignore_spec(lines)
                origin = str(settings.config_path or "--per-file-ignores")
                self.errors += [FileError(origin, f"per-file-ignores: {problem}") for problem in problems]
                return built

            # One spec per set of ignored codes, not per pattern: thousands of patterns (generated configs)
            # stay one pass per file. A negated pattern keeps its own spec: in a shared one it would undo others.
            groups: dict[frozenset[str], list[str]] = {}
            for pattern, codes in settings.per_file_ignores:
                resolved = frozenset(selection.resolve(codes, (), ()))
                if pattern.startswith("!"):
                    self._per_file.append((spec([pattern]), resolved))
                else:
                    groups.setdefault(resolved, []).append(pattern)
            self._per_file += [(spec(group), codes) for codes, group in groups.items()]

    @property
    def rules(self) -> tuple[type[Rule], ...]:
        """The enabled rules (all of ``aoti_lint.rules`` unless others were given), imported on first use: a run
        that reports from its memo needs only their codes (``rules_key``)."""
        if self._rules is None:
            if self._given is None:
                from aoti_lint.rules import ALL_RULES

                self._given = ALL_RULES
            self._rules = tuple(rule for rule in self._given if rule.code in self.settings.enabled)
        return self._rules

    def rules_key(self, path: Path | str, kind: str) -> str:
        """What the rules for the file at ``path`` depend on besides the settings and ``kind`` (both part of any
        key the caller makes): the codes the per-file-ignores switch off for it, and the codes of the rules this
        set was given instead of the registry's. The registry's rules are not imported."""
        given = "" if self._given is None else ",".join(sorted(rule.code for rule in self.rules))
        if not self._per_file:
            return given
        return f"{given};{','.join(sorted(self._ignored(path)))}"

    def flow_readers(self) -> RuleSet:
        """The rules whose readings the project pass and the migration plan take from a file (``project_codes``),
        the others left out: the set a file read only for its part in a flow is read with (``lint._rest_of_project``),
        whose findings of other rules would be dropped."""
        from aoti_lint.run.results import project_codes

        codes = project_codes(self.rules)
        return RuleSet(self.settings, [rule for rule in self.rules if rule.code in codes])

    def project_rules(self, kind: str) -> tuple[type[ProjectRule], ...]:
        """The project rules to summarise files of ``kind`` for, per-file-ignores left aside: the enabled ones,
        and the device-flow summary whenever the migration fixes are on (they are planned per artifact flow)."""
        if kind not in self._project_rules:
            self._project_rules[kind] = self._project_rules_of(kind)
        return self._project_rules[kind]

    def _project_rules_of(self, kind: str) -> tuple[type[ProjectRule], ...]:
        from aoti_lint.rules import CrossDeviceLoad
        from aoti_lint.rules.base import ProjectRule
        from aoti_lint.run.results import FLOW_SUMMARY, MIGRATION_CODES

        rules = tuple(rule for rule in self.rules if issubclass(rule, ProjectRule) and kind in rule.file_kinds)
        migrating = any(rule.code in MIGRATION_CODES or rule.reads_flows for rule in self.rules)
        if migrating and kind in CrossDeviceLoad.file_kinds and not any(r.summary_key == FLOW_SUMMARY for r in rules):
            rules += (CrossDeviceLoad,)
        return rules

    def context(
        self, path: Path | str, kind: str, target_torch: tuple[int, int] | None = None, flow: FileFlow | None = None
    ) -> FileContext:
        """Everything linting the file at ``path`` depends on besides its bytes (the project rules left aside
        when ``kind`` is not the kind of any)."""
        rules = self.for_file(path, kind)
        target = self.settings.target_torch if target_torch is None else target_torch
        if flow is not None:
            from aoti_lint.run.file_context import FileContext

            return FileContext(rules, self.project_rules(kind), target, flow)
        # Without a plan, one context per set of rules: a large tree asks for one per file it reads.
        key = (rules, kind, target)
        context = self._contexts.get(key)
        if context is None:
            from aoti_lint.run.file_context import FileContext

            context = self._contexts[key] = FileContext(rules, self.project_rules(kind), target)
        return context

    def for_file(self, path: Path | str, kind: str) -> tuple[type[Rule], ...]:
        if not self._per_file:
            # A warm run asks for every file of the tree: without per-file-ignores, no path to resolve.
            return self._rules_for(kind, _NONE_IGNORED)
        return self._rules_for(kind, self._ignored(path))

    def _ignored(self, path: Path | str) -> frozenset[str]:
        ignored: set[str] = set()
        path = Path(path)
        try:
            rel = path.resolve().relative_to(self.settings.root).as_posix()
        except ValueError:
            rel = path.as_posix()
        for spec, codes in self._per_file:
            if spec.match_file(rel) or spec.match_file(path.name):
                ignored |= codes
        return frozenset(ignored)

    def _rules_for(self, kind: str, ignored: frozenset[str]) -> tuple[type[Rule], ...]:
        # One tuple per kind and set of ignored codes, the same object each time (callers key memos on it).
        key = (kind, ignored)
        rules = self._for_file.get(key)
        if rules is None:
            rules = self._for_file[key] = tuple(
                rule for rule in self.rules if kind in rule.file_kinds and rule.code not in ignored
            )
        return rules
