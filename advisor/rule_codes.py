"""Which codes exist, answered without importing the rules (libcst and every rule module cost
most of a warm run's start-up): what a selector in `--select` or `[tool.advisor]` may name.

``RULE_CODES`` lists the rules' codes: a new rule's code goes here too, and
tests/test_conventions.py fails until it does (it keeps the list equal to the registry,
`advisor.rules.ALL_RULES`, which cannot be asked here: it imports libcst). ``META_CODES``
are the meta-rules: checks of the tool's own comments rather than of the code, which run only
when a selector names them more precisely than the whole `GPU` prefix (`GPU0`, `GPU001`).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing is not imported at run time: start-up is most of a warm run
    from typing import Dict, Iterable

RULE_CODES = (
    "GPU101", "GPU102", "GPU103", "GPU104", "GPU105", "GPU106",
    "GPU201", "GPU202", "GPU203", "GPU204", "GPU205",
    "GPU301", "GPU302", "GPU303", "GPU304", "GPU305",
    "GPU401", "GPU402", "GPU403", "GPU405", "GPU406",
    "GPU501", "GPU502", "GPU503", "GPU504", "GPU505", "GPU506", "GPU507",
    "GPU601", "GPU602", "GPU603", "GPU604",
    "GPU701", "GPU702", "GPU703", "GPU704", "GPU705", "GPU706",
)

# The prefix every code of this tool starts with: selecting it selects every rule, but no
# meta-rule (those are opt-in).
TOOL_PREFIX = "GPU"


class MetaCode:
    __slots__ = ("code", "name", "summary", "what", "fix")

    def __init__(self, code: str, name: str, summary: str, what: str, fix: str) -> None:
        self.code = code
        self.name = name
        self.summary = summary
        self.what = what
        self.fix = fix


UNUSED_NOQA = "GPU001"

META_CODES: Dict[str, MetaCode] = {
    UNUSED_NOQA: MetaCode(
        UNUSED_NOQA,
        "unused-noqa",
        "a `# noqa` comment lists a GPU code that silences nothing on its line, or that no rule has",
        "A `# noqa: GPU...` comment names a code that hides no finding on its line (the code "
        "was fixed, the line moved, or the rule stopped reporting it), or a code that no rule "
        "has (a typo such as GPU1010, or the reserved GPU404). Such a comment would silently "
        "hide a future finding, or hides nothing while looking as if it did. Only GPU codes of "
        "enabled rules are judged: codes of other tools (E501, F401), of rules this run does "
        "not enable, and blanket `# noqa` comments are left alone.",
        "Safe: the unused and unknown GPU codes are removed from the list; the comment goes when "
        "nothing is left in it. Other tools' codes and any comment after it stay.",
    ),
}


def is_meta(code: str) -> bool:
    return code in META_CODES


def known_codes() -> Iterable[str]:
    return RULE_CODES + tuple(META_CODES)


def selects_something(selector: str) -> bool:
    """Whether ``selector`` (upper case) is a code or a prefix of one, rules and meta-rules."""
    return any(code.startswith(selector) for code in RULE_CODES + tuple(META_CODES))


def enables(selector: str, code: str) -> bool:
    """Whether a select-side ``selector`` turns ``code`` on: a prefix of it, and for a meta-rule
    one longer than the tool's prefix (`GPU` selects every rule, `GPU0` the meta-rules)."""
    if not code.startswith(selector):
        return False
    return not (code in META_CODES and len(selector) <= len(TOOL_PREFIX))
