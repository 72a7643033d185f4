"""Reading `# expect: GPU101[ info][, GPU102]` marks from example and corpus sources."""

from __future__ import annotations

import re
from typing import Set, Tuple

_EXPECT = re.compile(r"#\s*expect:\s*(?P<body>.*)$")
_ITEM = re.compile(r"(GPU\d{3})(\s+info)?")


def expected_findings(source: str, code_prefix: str = "GPU") -> Set[Tuple[int, str, bool]]:
    """(row, code, is_info) for every mark in the source."""
    out = set()
    for row, line in enumerate(source.splitlines(), start=1):
        match = _EXPECT.search(line)
        if not match:
            continue
        for item in _ITEM.finditer(match.group("body")):
            if item.group(1).startswith(code_prefix):
                out.add((row, item.group(1), bool(item.group(2))))
    return out


def actual_findings(findings, code_prefix: str = "GPU") -> Set[Tuple[int, str, bool]]:
    return {
        (f.start.row, f.code, f.severity.value == "info") for f in findings if f.code.startswith(code_prefix)
    }
