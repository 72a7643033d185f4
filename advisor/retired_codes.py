"""Rule codes that no rule holds, and why. A code is never given to a new rule with another
meaning: a `# noqa: GPU404` or a `select` written for one rule must never silence or enable a
different one. Retired codes belonged to a removed rule; reserved ones were never assigned."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing is not imported at run time: start-up is most of a warm run
    from typing import Dict, Optional


class RetiredCode:
    __slots__ = ("code", "status", "family", "reason")

    def __init__(self, code: str, status: str, family: str, reason: str) -> None:
        self.code = code
        self.status = status  # "reserved" (never assigned) or "retired" (its rule was removed)
        self.family = family
        self.reason = reason


RETIRED_CODES: Dict[str, RetiredCode] = {
    entry.code: entry
    for entry in (
        RetiredCode(
            "GPU404",
            "reserved",
            "memory",
            "Never assigned. When the memory rules were numbered, the sequence went from GPU403 "
            "to GPU405, and no rule, release or configuration has ever used GPU404. It stays "
            "reserved, so that it can never come back meaning something else.",
        ),
    )
}


def retired_code(code: str) -> Optional[RetiredCode]:
    return RETIRED_CODES.get(code.upper())
