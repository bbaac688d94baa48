"""The plain ignore patterns (``read.ignores.PlainPattern``) match exactly what pathspec's ``GitIgnoreSpec`` matches,
files and directories alike; any other form is left to pathspec."""

from __future__ import annotations

import itertools
import random

import pytest

from aoti_lint.read.ignores import PlainPattern, plain_spec

# Pieces of gitignore lines and of paths: globs, classes, anchors, trailing slashes, names that nearly match;
# classes and `?` joined to what follows, so that one may stand where a path has its `/` (`a[!x]b`, `a[.-b]b`).
_PATTERN_NAMES = ["a", "b.py", "*.py", "*", "?", "a*", "*a", "b?py", "*.py[cod]", "[ab]", "[!a]", "[a-c]*", "x_[0-9]"]
_PATTERN_NAMES += ["a[!x]b", "a[^x]b", "a[.-b]b", "a?b", "a*b", "a[ab]b"]
_PATH_NAMES = ["a", "b.py", "b.pyc", "ab", "ba", "x_1", "c", ".a", "bxpy", "a.py", "aab", "axb"]


def _patterns(rng: random.Random) -> str:
    names = [rng.choice(_PATTERN_NAMES) for _ in range(rng.choice((1, 1, 2, 3)))]
    return ("/" if rng.random() < 0.25 else "") + "/".join(names) + ("/" if rng.random() < 0.3 else "")


@pytest.mark.parametrize("seed", range(4))
def test_ignore_patterns_match_as_pathspec_matches(seed):
    """Each line read as a plain pattern matches exactly the paths (and directories, written with a trailing `/`)
    pathspec's GitIgnoreSpec matches."""
    from aoti_lint.read.ignores import gitignore_spec

    rng = random.Random(seed)
    paths = ["/".join(p) for n in (1, 2, 3) for p in itertools.product(_PATH_NAMES, repeat=n)]
    paths += [path + "/" for path in paths]
    compared = 0
    for _ in range(150):
        line = _patterns(rng)
        pattern = PlainPattern.of(line)
        if pattern is None:
            continue
        spec, problems = gitignore_spec([line])
        assert not problems, line
        for path in [*rng.sample(paths, 120), "a/b", "a/a/b", "x/a/b", "a/", "a/b/", "x/a/b/"]:
            assert pattern.matches(path) == spec.match_file(path), (line, path)
            compared += 1
    assert compared > 10_000


@pytest.mark.parametrize("line", ["a[!x]b", "a[^x]b", "a[.-b]b", "*[^A]Z", "b[!b]?"])
def test_a_class_that_may_match_the_separator_is_not_read(line):
    """pathspec's class is a regular expression's: negated, or a range around `/`, it matches `a/b` (found in
    review); matched a name at a time, it could not."""
    assert PlainPattern.of(line) is None


@pytest.mark.parametrize("line", ["!a.py", "a\\ b", "**/a", "a/**", " a", "a ", "[z-a]", "[]a]", "a//b", "[a", "/"])
def test_other_ignore_forms_are_not_read(line):
    assert PlainPattern.of(line) is None


def test_an_ignore_file_of_plain_patterns_is_read_without_pathspec():
    spec = plain_spec(["# generated", "", "*.py[cod]", "__pycache__/", "/dist", "gen_*.py"])
    assert spec is not None and len(spec.patterns) == 4
    assert spec.match_file("pkg/gen_x.py") and spec.match_file("dist/") and not spec.match_file("src/dist/x.py")
    assert plain_spec(["*.pyc", "!keep.pyc"]) is None
