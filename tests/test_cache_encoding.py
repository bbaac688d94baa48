"""The cache keeps project summaries as allow-listed plain data: round trip, and nothing else rebuilt."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from aoti_lint.read.source import SourceFile
from aoti_lint.run import cache_encoding
from aoti_lint.run.engine import check_source
from aoti_lint.run.ruleset import RuleSet
from aoti_lint.settings.config import Settings

EXPORT = """
import torch
ep = torch.export.export(Model().cuda(), (torch.randn(2, 8, device="cuda"),))
torch._inductor.aoti_compile_and_package(ep, package_path="/srv/model.pt2")  # noqa: AOTI999
"""


def test_project_part_round_trips_through_json():
    ruleset = RuleSet(Settings(root=Path(".")).with_enabled())
    source = SourceFile(Path("export.py"), "export.py", "python", EXPORT.encode())
    part = check_source(source, ruleset.context(source.path, "python")).project
    assert part is not None and part.summaries
    assert cache_encoding.decode(json.loads(json.dumps(cache_encoding.encode(part)))) == part


def test_types_outside_the_allow_list_are_refused():
    with pytest.raises(cache_encoding.DecodeError):
        cache_encoding.decode({"__dataclass__": "subprocess:Popen", "fields": {"args": ["true"]}})
    with pytest.raises(cache_encoding.DecodeError):
        cache_encoding.decode({"__dataclass__": "aoti_lint.run.engine:os.system", "fields": {}})
