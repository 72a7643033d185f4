"""Applying the text edits that findings carry, shared by `--fix`, `--diff` and the editor."""

from __future__ import annotations

import difflib
from typing import Iterable, List, Optional, Tuple

from advisor.findings import Applicability, Edit, Finding
from advisor.source import LineIndex


def _span(index: LineIndex, edit: Edit) -> Tuple[int, int]:
    return index.offset(edit.start.row, edit.start.column), index.offset(edit.end.row, edit.end.column)


def eligible(finding: Finding, unsafe: bool) -> bool:
    return finding.fix is not None and (unsafe or finding.fix.applicability is Applicability.SAFE)


def apply_fixes(text: str, findings: Iterable[Finding], unsafe: bool = False,
                applied: Optional[List[Finding]] = None) -> Tuple[str, int]:
    """Applies the fixes whose edits do not overlap an earlier fix's; returns (text, count).
    ``applied``, when given, receives the findings whose fixes went in.

    Overlapping fixes are left for the next round (the caller re-checks and calls again).
    A round whose result no longer parses is dropped as a whole: a fix never breaks a file.
    """
    index = LineIndex(text)
    taken: List[Tuple[int, int]] = []
    chosen: List[Tuple[int, int, str]] = []
    count = 0
    fixed: List[Finding] = []
    for finding in findings:
        if not eligible(finding, unsafe):
            continue
        spans = [(*_span(index, e), e.content) for e in finding.fix.edits]
        if any(_overlaps(s, e, taken) for s, e, _ in spans):
            continue
        taken.extend((s, e) for s, e, _ in spans)
        chosen.extend(spans)
        fixed.append(finding)
        count += 1
    if not chosen:
        return text, 0
    out = text
    for start, end, content in sorted(chosen, key=lambda item: (item[0], item[1]), reverse=True):
        out = out[:start] + content + out[end:]
    import libcst as cst  # here, not at the top: a run served from the cache never parses

    try:
        cst.parse_module(out)
    except Exception:  # noqa: BLE001 - any failure means we keep the original text
        return text, 0
    if applied is not None:
        applied.extend(fixed)
    return out, count


def _overlaps(start: int, end: int, taken: List[Tuple[int, int]]) -> bool:
    for s, e in taken:
        if start < e and s < end:
            return True
        if start == end == s == e:  # two insertions at one point: order would be ambiguous
            return True
    return False


def unified_diff(old: str, new: str, filename: str) -> str:
    return "".join(
        difflib.unified_diff(
            old.splitlines(keepends=True),
            new.splitlines(keepends=True),
            fromfile=filename,
            tofile=filename,
        )
    )


def fix_until_stable(
    text: str, check, unsafe: bool = False, max_rounds: int = 10, checked: Optional[object] = None,
    applied: Optional[List[Finding]] = None,
) -> Tuple[str, int, Optional[object]]:
    """Re-checks and re-applies until no eligible fix is left. ``check(text)`` returns a
    FileResult; the last one (describing the final text) is returned with the count.
    ``checked``: the result of ``check(text)`` where the caller already has it, so that the
    text is not analysed a second time. ``applied`` receives the findings fixed, round by round."""
    total = 0
    result = checked if checked is not None else check(text)
    for _ in range(max_rounds):
        if result.problem is not None:
            break
        new_text, count = apply_fixes(text, result.findings, unsafe, applied)
        if not count:
            break
        total += count
        text = new_text
        result = check(text)
    return text, total, result
