"""Rule selectors: codes, code prefixes (``AOTI0``, ``AOTI``) and ``ALL``, resolved as ruff does."""

from __future__ import annotations

from collections.abc import Iterable

from aoti_lint.rule_manifest import RULE_CODES


class SelectorError(ValueError):
    pass


def expand(selector: str) -> set[str]:
    """The codes a selector names; raises SelectorError for one that names no rule."""
    token = selector.strip().upper()
    if token == "ALL":
        return set(RULE_CODES)
    codes = {code for code in RULE_CODES if code.startswith(token)}
    if not codes or not token:
        known = [*RULE_CODES, "ALL"]
        import difflib  # only to word an error

        hint = difflib.get_close_matches(token, known, n=1)
        suggestion = f" (did you mean `{hint[0]}`?)" if hint else ""
        raise SelectorError(f"unknown rule selector `{selector}`{suggestion}")
    return codes


def validate(selectors: Iterable[str]) -> None:
    for selector in selectors:
        expand(selector)


def resolve(select: Iterable[str], extend_select: Iterable[str], ignore: Iterable[str]) -> frozenset[str]:
    """The enabled codes. As in ruff, a more specific selector wins over a less specific one."""
    ranked: dict[str, tuple[int, bool]] = {}
    for enabled, selectors in ((True, select), (True, extend_select), (False, ignore)):
        for selector in selectors:
            specificity = 0 if selector.strip().upper() == "ALL" else len(selector.strip())
            for code in expand(selector):
                previous = ranked.get(code)
                if previous is None or specificity >= previous[0]:
                    ranked[code] = (specificity, enabled)
    return frozenset(code for code, (_, enabled) in ranked.items() if enabled)
