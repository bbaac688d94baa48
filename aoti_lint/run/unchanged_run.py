"""The outcome of a whole checking run, kept for the next run over the very same files.

A warm run with no file changed still recalls every file by its stamp (``aoti_lint.run.file_stats``), loads the entries
of those with findings or project data, and plans the migration over them again: on a 20,000-file tree, most of
its time. The memo skips all of that. It keeps the run's findings and file count under a digest of everything
the outcome depends on that the run fingerprint (which names the memo, with the root, the working directory and
the fix options) does not cover: the files found, in order, each with its kind, whether it was named on the
command line, the rules that apply to it and its stamp. A run whose files give the same digest reports what the
memo holds and reads nothing else.

The stamps are taken before any file is read, and a memo is written only when every one of them is more than
``RACY_SECONDS`` older than that moment: a file that changed between its stat and its read has a stamp no later
run matches, and a file modified within the timestamp step of its stat is not memoised (``aoti_lint.run.file_stats``
gives the argument). A run with an error (an unreadable file, an invalid pattern) keeps no memo. A memo that
cannot be read, or is not exactly as written, is no memo: the run goes on file by file.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path

from aoti_lint.run.cache import MEMO_SUFFIX
from aoti_lint.run.cache_encoding import finding_from_json, finding_to_json
from aoti_lint.run.file_stats import RACY_SECONDS

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from aoti_lint.diagnostics import Finding
    from aoti_lint.read.files import Candidate
    from aoti_lint.run.cache import Cache
    from aoti_lint.run.ruleset import RuleSet
    from aoti_lint.settings.run_options import FixOptions

# Bump when the layout changes: a memo of another format is not read.
MEMO_FORMAT = 1


@dataclass
class RunKey:
    """What names and checks a run's memo."""

    name: str
    digest: str
    # Every file's stamp was old enough to trust when it was taken: the run's outcome may be memoised.
    trusted: bool
    # path -> the stat taken for the digest, which the file-by-file recall reuses on a miss.
    stats: dict[str, os.stat_result] = field(default_factory=dict)


def run_key(cache: Cache, candidates: list[Candidate], ruleset: RuleSet, cwd: Path, fix: FixOptions) -> RunKey | None:
    """The key of a run over ``candidates``; None when a file cannot be stat'ed (the run then reads it and says
    why)."""
    import marshal

    from aoti_lint.run.blake2 import blake2b

    started_ns = time.time_ns()
    stats: dict[str, os.stat_result] = {}
    files = []
    newest = 0
    for candidate in candidates:
        where, kind = candidate.where, candidate.kind
        try:
            info = stats[where] = os.stat(where)
        except OSError:
            return None
        mtime, ctime = info.st_mtime_ns, info.st_ctime_ns
        newest = max(newest, mtime, ctime)
        # A file's summary holds its resolved directory (``Cache.key`` hashes it too): a directory symlink
        # re-pointed at hard links of the same files leaves every stat as it was, not what the run links to what.
        place = cache.resolved_directory(where, candidate.link)
        # The rules for the file: the settings' (in the memo's name) for its kind, less what the per-file-ignores
        # switch off for its path. Named by their codes alone, they are not imported.
        rules = ruleset.rules_key(where, kind)
        files.append(
            (where, kind, candidate.explicit, place, rules, info.st_size, mtime, ctime, info.st_ino, info.st_dev)
        )
    # marshal: one C call lays out 20,000 tuples (its format is the interpreter's, in the run fingerprint).
    # Version 2 writes no back-references: equal values, shared or not, give the same bytes.
    digest = blake2b(marshal.dumps(files, 2), digest_size=20).hexdigest()
    name = cache.named_for_run(MEMO_SUFFIX, str(cwd), repr(fix))
    return RunKey(name, digest, newest < started_ns - RACY_SECONDS * 1_000_000_000, stats)


def outside_digest(settings: Any, given: set[str]) -> str:
    """A digest of the stamps of the project's files a run was not given (``given``: their paths): a run that read
    them too (the rest of the project for the flows of the files it was given, the files that are not Python for
    an artifact's name: ``lint._rest_of_project``, ``project.OutsideMentions``) depends on them, and so does its
    memo."""
    import marshal

    from aoti_lint.read.files import Candidate, discover
    from aoti_lint.read.source import kind_of_name
    from aoti_lint.run.blake2 import blake2b

    stamps = []
    for item in discover([settings.root], settings, lambda name, path: kind_of_name(name, path) or "other"):
        if not isinstance(item, Candidate) or item.where in given:
            continue
        try:
            info = os.stat(item.where)
        except OSError:
            continue
        stamps.append((item.where, info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino))
    return blake2b(marshal.dumps(stamps, 2), digest_size=20).hexdigest()


def recall(
    cache: Cache, key: RunKey, settings: Any = None, given: set[str] | None = None
) -> tuple[list[Finding], int] | None:
    """The findings (sorted) and the number of files checked of a run with this key, or None (also where the memo
    depends on the project's other files and they changed)."""
    import json

    # The digest leads the file: a memo of other files is told from its first line, not read whole.
    data = cache.read_beside(key.name, _header(key))
    if data is None:
        return None
    try:
        memo: Any = json.loads(data)
        if not isinstance(memo, dict):
            return None
        checked = memo["files_checked"]
        if type(checked) is not int or checked < 0 or not isinstance(memo["findings"], list):
            return None
        outside = memo.get("outside")
        if outside is not None and (settings is None or outside != outside_digest(settings, given or set())):
            return None
        return [finding_from_json(item, _path(item["path"])) for item in memo["findings"]], checked
    # As for an entry (``Cache.load``): anything not as written, however deep, is a miss.
    except (ValueError, TypeError, KeyError, AttributeError, IndexError, RecursionError):
        return None


def remember(
    cache: Cache, key: RunKey, findings: list[Finding], files_checked: int, outside: str | None = None
) -> None:
    """Keep the outcome of a finished run without errors or fixes, if its stamps may be trusted; ``outside``: the
    ``outside_digest`` of a run that read the project's other files."""
    import json

    if not key.trusted:
        return
    memo: dict[str, object] = {
        "files_checked": files_checked,
        "findings": [{**finding_to_json(finding), "path": finding.path} for finding in findings],
    }
    if outside is not None:
        memo["outside"] = outside
    cache.write_beside(key.name, _header(key) + json.dumps(memo, separators=(",", ":")).encode())


def _path(value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError("not a path")
    return value


def _header(key: RunKey) -> bytes:
    return f"aoti-lint run memo {MEMO_FORMAT} {key.digest}\n".encode()
