"""Which files are unchanged since a run read them, by their ``stat`` alone: ruff's warm path.

A warm run that reads every file to hash it pays for reading the whole tree, and for stage one's look at every
file's bytes, again. Instead, like ruff (size, modification time), each run records per file the ``stat`` it read
it with and what it found: ``CLEAN`` (no finding, no project data: nothing to load) or the digest of the bytes,
which names the file's cache entries (``Cache.key``). The next run with the same settings stats each file; a file
whose stamp is unchanged is settled without being opened.

A stamp is (size, mtime, ctime, inode, device), with the rules the file was linted with (per-file-ignores
match its resolved path: a symlink re-pointed leaves the stamp as it was, not the rules). ctime cannot be set
back by a user: a tool that edits a file and restores its mtime (``cp -p``, ``rsync -t``, ``touch -r``) still
changes it. A file modified within the timestamp step of the moment it was read can keep both ("racy git"; one
second on ext3, HFS+ or ext4 with small inodes): a file whose mtime or ctime is less than ``RACY_SECONDS`` older
than the run's start is read, and not stamped, until it is older.
"""

from __future__ import annotations

import os

from aoti_lint.settings.defaults import RACY_SECONDS

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from aoti_lint.rules import Rule

# Bump when the layout changes: a file of another format is not read.
STAMPS_FORMAT = 3
# A file's verdict: nothing to report and nothing for the project pass (stage one settled it, or the later
# stages found nothing); otherwise the hex digest of its bytes.
CLEAN = ""
# Past this many files the stamps of other runs are dropped when this run's are written.
MAX_STAMPS = 200_000


def stamp_of(info: os.stat_result, rules: str) -> str:
    """What an entry holds before its verdict: the stamp's numbers and the rules, as one string.

    One string per file, not a list of numbers: a warm run decodes the whole file first, and JSON decodes
    20,000 strings three times faster than 20,000 lists of seven."""
    return f"{info.st_size}:{info.st_mtime_ns}:{info.st_ctime_ns}:{info.st_ino}:{info.st_dev}:{rules}:"


# (id(rules), id(project rules)) -> (rules, project rules, name). The tuples are kept so that their ids stay
# theirs; hashing two tuples of rule classes per file cost more than a dictionary lookup by ids.
_RULE_NAMES: dict[tuple[int, int], tuple[tuple[type[Rule], ...], tuple[type[Rule], ...], str]] = {}


def rules_named(rules: tuple[type[Rule], ...], project_rules: tuple[type[Rule], ...]) -> str:
    """A short digest of the codes of both sets of rules (what a stamp holds of them)."""
    known = _RULE_NAMES.get((id(rules), id(project_rules)))
    if known is not None and known[0] is rules and known[1] is project_rules:
        return known[2]
    from aoti_lint.run.blake2 import blake2b

    codes = f"{','.join(sorted(rule.code for rule in rules))};{','.join(sorted(r.code for r in project_rules))}"
    name = blake2b(codes.encode(), digest_size=8).hexdigest()
    if len(_RULE_NAMES) >= 64:
        _RULE_NAMES.clear()
    _RULE_NAMES[(id(rules), id(project_rules))] = (rules, project_rules, name)
    return name


def trusted(info: os.stat_result, started_ns: int) -> bool:
    """Whether a file read with ``info`` in a run started at ``started_ns`` may be stamped (see above)."""
    settled = started_ns - RACY_SECONDS * 1_000_000_000
    return info.st_mtime_ns < settled and info.st_ctime_ns < settled


def imports_stamp(paths: tuple[str, ...], started_ns: int | None = None) -> str | None:
    """One digest of the stamps of the project's modules a file imports (``FileOutcome.depends_on``): its findings
    stand while it is unchanged. With ``started_ns`` (the run's start), None when one of them changed too recently
    to trust (see ``trusted``)."""
    from aoti_lint.run.blake2 import blake2b

    digest = blake2b(digest_size=20)
    for path in paths:
        try:
            info = os.stat(path)
        except OSError:
            digest.update(f"{path}\0-\0".encode("utf-8", "surrogateescape"))
            continue
        if started_ns is not None and not trusted(info, started_ns):
            return None
        digest.update(f"{path}\0{stamp_of(info, '')}\0".encode("utf-8", "surrogateescape"))
    return digest.hexdigest()


class Stamps:
    """The stamps of one run fingerprint: path -> "size:mtime:ctime:inode:device:rules:verdict", as the file
    holds them (an entry is checked when it is used: a planted or corrupt one is a miss); those learned this run
    are written back. ``rules``: any text without a colon naming the rules the file was linted with."""

    def __init__(self, recorded: dict[str, Any]) -> None:
        self._recorded = recorded
        self._learned: dict[str, str | None] = {}

    def recall(self, path: str, rules: str, info: os.stat_result | None = None) -> str | None:
        """The verdict for the file at ``path`` if its stamp and rules are unchanged; None if it must be read.
        ``info``: its stat, if the caller took it already (at most the run's start before any file was read;
        a recalled file is never stamped anew, so its age does not matter)."""
        entry = self._recorded.get(path)
        if type(entry) is not str:
            return None
        if info is None:
            try:
                info = os.stat(path)
            except OSError:
                return None
        stamp = stamp_of(info, rules)
        if not entry.startswith(stamp):
            return None
        verdict, *imports = entry[len(stamp) :].split("\0")
        if imports and imports_stamp(tuple(imports[1:])) != imports[0]:
            return None  # a module of the project it imports changed
        return verdict if verdict == CLEAN or _is_digest(verdict) else None

    def learn(
        self,
        path: str,
        info: os.stat_result | None,
        rules: str,
        verdict: str | None,
        started_ns: int,
        imports: tuple[tuple[str, ...], str | None] = ((), ""),
    ) -> None:
        """Record what the run found for the file read with ``info`` under ``rules``; a None verdict forgets it
        (an error, a fix), as does a stamp too recent to trust. ``imports``: the project's modules its findings
        depend on, and ``imports_stamp`` of them (None: too recent to trust)."""
        modules, modules_stamp = imports
        if info is not None and verdict is not None and modules_stamp is not None and trusted(info, started_ns):
            entry = stamp_of(info, rules) + verdict
            if modules:
                entry = "\0".join([entry, modules_stamp, *modules])
            if self._recorded.get(path) != entry:
                self._learned[path] = entry
        elif path in self._recorded:
            self._learned[path] = None

    @property
    def changed(self) -> bool:
        return bool(self._learned)

    def merged(self, on_disk: dict[str, Any]) -> dict[str, Any]:
        """What to write: the stamps now on disk (another run's may have landed meanwhile) with this run's
        over them; past ``MAX_STAMPS``, this run's alone."""
        merged = dict(on_disk)
        for path, entry in self._learned.items():
            if entry is None:
                merged.pop(path, None)
            else:
                merged[path] = entry
        if len(merged) > MAX_STAMPS:
            merged = {path: entry for path, entry in self._learned.items() if entry is not None}
        self._recorded, self._learned = merged, {}
        return merged


def encode(stamps: dict[str, Any]) -> bytes:
    import json

    return json.dumps({"format": STAMPS_FORMAT, "files": stamps}, separators=(",", ":")).encode()


def decode(data: bytes) -> dict[str, Any]:
    """The stamps a file holds, path -> entry; raises ValueError unless it is a stamps file of this format (its
    entries are checked as they are used, by ``Stamps.recall``)."""
    import json

    try:
        document: Any = json.loads(data)
    except RecursionError as exc:
        raise ValueError("too deeply nested") from exc
    if not isinstance(document, dict) or document.get("format") != STAMPS_FORMAT:
        raise ValueError("not a stamps file")
    files = document.get("files")
    if not isinstance(files, dict):
        raise ValueError("not a stamps file")
    return files


def _is_digest(text: str) -> bool:
    return len(text) == 40 and all(c in "0123456789abcdef" for c in text)
