"""Where the time of one file that needs libcst goes: each phase of ``check_source`` timed on its own.

    python benchmarks/phases.py [FILE ...]     # default: a generated module with deprecated AOTI calls

Medians of 5 rounds, in one process (libcst's import is timed once, first).
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

start = time.perf_counter()
import libcst  # noqa: E402  (timed on purpose)
from libcst.metadata import MetadataWrapper, PositionProvider, QualifiedNameProvider  # noqa: E402

IMPORT_SECONDS = time.perf_counter() - start

from aoti_lint.model.name_index import code_index  # noqa: E402
from aoti_lint.read.source import SourceFile  # noqa: E402
from aoti_lint.rules import ALL_RULES  # noqa: E402
from aoti_lint.run.engine import check_source  # noqa: E402
from aoti_lint.run.file_context import FileContext  # noqa: E402
from benchmarks.run import AOTI_FORMS, PLAIN  # noqa: E402


def phases(text: str) -> dict[str, float]:
    rounds: dict[str, list[float]] = {}
    for _ in range(5):
        marks = [time.perf_counter()]
        code_index.__wrapped__(text)  # uncached
        marks.append(time.perf_counter())
        module = libcst.parse_module(text)
        marks.append(time.perf_counter())
        wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
        wrapper.resolve(QualifiedNameProvider)
        marks.append(time.perf_counter())
        wrapper.resolve(PositionProvider)
        marks.append(time.perf_counter())
        check_source(SourceFile(Path("x.py"), "x.py", "python", text.encode()), FileContext.of(ALL_RULES))
        marks.append(time.perf_counter())
        names = ("ast index", "libcst parse", "scope + qualified names", "positions", "whole check_source")
        for name, before, after in zip(names, marks, marks[1:], strict=False):
            rounds.setdefault(name, []).append(after - before)
    return {name: statistics.median(values) for name, values in rounds.items()}


def main() -> None:
    print(f"import libcst: {IMPORT_SECONDS * 1000:.0f} ms")
    texts = {Path(arg).name: Path(arg).read_text() for arg in sys.argv[1:]}
    if not texts:
        generated = PLAIN.format(doc="x", cls="Block", func="run", width=64) + "\n\n" + AOTI_FORMS[0]
        texts = {f"generated module ({len(generated)} bytes)": generated}
    for name, text in texts.items():
        timings = ", ".join(f"{phase} {seconds * 1000:.1f} ms" for phase, seconds in phases(text).items())
        print(f"{name}: {timings}")


if __name__ == "__main__":
    main()
