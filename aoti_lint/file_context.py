"""What linting one file depends on besides its bytes, in one object handed down the lint core."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from aoti_lint.rules.base import ProjectRule, Rule
from aoti_lint.target_torch import DEFAULT_TARGET_TORCH

if TYPE_CHECKING:
    from aoti_lint.analysis.migration_flow import FileFlow


@dataclass(frozen=True)
class FileContext:
    """The rules enabled for the file's path and kind; the project rules to collect the file's project data
    for (per-file-ignores aside: a rule ignored here still needs the file's data to check the other files);
    the oldest torch the code must run on; and the run's migration plan for the file, if any
    (``aoti_lint.analysis.migration_flow.FileFlow``, see ``aoti_lint.project``)."""

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

    def reads(self, data: bytes) -> bool:
        """The prefilter's first stage: whether some rule could match these bytes, or some project rule
        wants the file's data. A file that passes no rule here is settled without being decoded."""
        return any(rule.could_match(data) for rule in self.rules) or any(
            rule.wants_summary(data) for rule in self.project_rules
        )
