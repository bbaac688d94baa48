"""The libcst codemod command: ``python -m libcst.tool codemod migrate_aoti.MigrateAotiCommand PATH``.

It imports ``libcst.codemod``, which a lint run never pays for: the migration itself is ``codemods.migration``.
"""

from __future__ import annotations

import argparse

import libcst as cst
from libcst.codemod import CodemodCommand, CodemodContext
from libcst.metadata import MetadataWrapper

from aoti_lint.codemods.migration import migrate, selected_sites
from aoti_lint.codemods.migration_plan import MigrationPlan
from aoti_lint.fixes.module_facts import ModuleFacts
from aoti_lint.settings.target_torch import DEFAULT_TARGET_TORCH, DEFAULT_TARGET_TORCH_TEXT, parse_target_torch


class MigrateAotiCommand(CodemodCommand):
    """libcst codemod command: migrate a module off torch._export.aot_compile / aot_load."""

    DESCRIPTION = "Migrate torch._export.aot_compile/aot_load to aoti_compile_and_package/aoti_load_package."

    def __init__(
        self, context: CodemodContext, unsafe: bool = False, target_torch: str = DEFAULT_TARGET_TORCH_TEXT
    ) -> None:
        super().__init__(context)
        self.unsafe = unsafe
        self.target_torch = parse_target_torch(target_torch) or DEFAULT_TARGET_TORCH

    @staticmethod
    def add_args(arg_parser: argparse.ArgumentParser) -> None:
        arg_parser.add_argument("--unsafe", action="store_true", help="also apply unsafe fixes")
        arg_parser.add_argument(
            "--target-torch", default=DEFAULT_TARGET_TORCH_TEXT, help="oldest torch the code must run on"
        )

    def transform_module_impl(self, tree: cst.Module) -> cst.Module:
        facts = ModuleFacts(MetadataWrapper(tree, unsafe_skip_copy=True))
        plan = MigrationPlan(facts, self.target_torch, path=self.context.filename or "")
        targets = selected_sites(plan, self.unsafe)
        if not targets:
            return tree
        return cst.parse_module(migrate(plan, targets))
