"""Python code with its prose blanked: a word in a comment or a sentence names nothing the code
builds, while a string without spaces (a dotted path, a registry key) may."""

from __future__ import annotations

import re

# Comments, and string literals: a word in a sentence (`"a Practical Degradation Model for
# ..."`, a docstring) names no class; a string without spaces (`"losses.SmoothedLoss"`, a
# registry key) may.
_PROSE = re.compile(r'(?s)[rRbBuUfF]{0,2}("""|\'\'\')(.*?)\1|[rRbBuUfF]{0,2}"((?:\\.|[^"\\\n])*)"|[rRbBuUfF]{0,2}\'((?:\\.|[^\'\\\n])*)\'|#[^\n]*')


def without_prose(text: str) -> str:
    """``text`` with its comments and the string literals that hold whitespace blanked."""
    def blank(match: "re.Match[str]") -> str:
        found = match.group(0)
        if found.startswith("#"):
            return ""
        inner = next((g for g in match.groups()[1:] if g is not None), "")
        return found if not any(c.isspace() for c in inner) else '""'

    return _PROSE.sub(blank, text)
