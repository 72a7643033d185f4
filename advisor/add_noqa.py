"""`advisor check --add-noqa`: a `# noqa: GPUxxx` comment for every finding, so that a project
can adopt the tool at once and fix its findings over time.

Each code goes to the row where a comment about the finding's row is legal and read: the row
itself, or, for a row of a backslash continuation or multi-line string, the row that ends it
(line_groups; the `# noqa` check reads the group as one line, as flake8 does). A code joins an
existing `# noqa: ...` list there, which keeps its other codes (other tools' too); a blanket
`# noqa` already silences everything. A second run adds nothing.
"""

from __future__ import annotations

from advisor.line_groups import comment_row, line_groups
from advisor.noqa import add_code
from advisor.source import LineIndex, split_lines

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing is not imported at run time: start-up is most of a warm run
    from typing import Dict, List, Sequence, Tuple

    from advisor.findings import Finding


def with_noqa(text: str, findings: Sequence[Finding]) -> Tuple[str, int]:
    """The text with a `# noqa` code for each finding's code, and how many codes were added
    (one per code and row: two findings of one rule on a row need one code)."""
    if not findings:
        return text, 0
    lines = split_lines(text)
    groups = line_groups(text)
    wanted: Dict[int, List[str]] = {}
    for finding in sorted(findings, key=lambda f: f.sort_key):
        row = comment_row(groups, finding.start.row)
        if 0 < row <= len(lines) and finding.code not in wanted.setdefault(row, []):
            wanted[row].append(finding.code)
    index = LineIndex(text)
    edits = []
    added = 0
    for row, codes in wanted.items():
        line = lines[row - 1]
        for code in codes:
            change = add_code(line, code)
            if change is None:
                continue
            start, end, content = change
            line = line[:start] + content + line[end:]
            added += 1
        if line != lines[row - 1]:
            edits.append((index.offset(row, 1), index.offset(row, 1) + len(lines[row - 1]), line))
    out = text
    for start, end, line in sorted(edits, reverse=True):
        out = out[:start] + line + out[end:]
    return out, added
