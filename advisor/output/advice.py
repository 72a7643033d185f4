"""What the human-oriented outputs print under a finding: its hint and its fix, once each idea.

A fix line restates the hint when every word of the hint is also in the fix's message: both
then name the same code (`train_sampler.set_epoch(epoch)`) and the hint adds nothing, so only
the fix line is printed, which also says that `--fix` applies it. A hint that says more (where,
when, an alternative) is printed as well. Words are compared without case, a backticked span
counts as one word, and "each" and "every" count as the same word.
"""

from __future__ import annotations

import re

from advisor.findings import Finding

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing is not imported at run time: start-up is most of a warm run
    from typing import Optional, Set

_WORD = re.compile(r"`[^`]*`|[^\s`]+")
_SAME_WORD = {"every": "each"}
_PUNCTUATION = ".,;:()"


def _words(text: str) -> Set[str]:
    out = set()
    for word in _WORD.findall(text):
        if not word.startswith("`"):
            word = word.strip(_PUNCTUATION).lower()
            word = _SAME_WORD.get(word, word)
        if word:
            out.add(word)
    return out


def restates(hint: str, fix_message: str) -> bool:
    """The fix's message says everything the hint says."""
    hint_words = _words(hint)
    return bool(hint_words) and hint_words <= _words(fix_message)


def shown_hint(finding: Finding) -> Optional[str]:
    """The hint to print under the finding: None when there is none, or the fix line says it."""
    if not finding.hint:
        return None
    if finding.fix is not None and restates(finding.hint, finding.fix.message):
        return None
    return finding.hint
