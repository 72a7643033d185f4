"""Edits inside top-level functions and classes: the part of the file they can reach is analysed
again on its own, and every other top-level statement keeps the findings it had.

A keystroke in one function of a 5,000-line file should not cost the analysis of 5,000 lines.
The file is cut where ``chunked.split_points`` cuts it (top-level statements with the comments
above them). An edit qualifies when the file keeps its number of pieces and every piece that
changed is a ``def`` or ``class`` that keeps its name (at most ``MOST_CHANGED`` of them since
the last full analysis; past that, since the version before, when a cut answered it: see
"Chains" below). Then:

- the *reach* of the changed pieces is every function and class that calls them, directly or
  through others, and every one they call, directly or through others (a word of a piece that
  names another top-level ``def`` or ``class`` is a call, whatever the syntax: an over-estimate);
- the pieces that are no ``def`` or ``class`` (imports, constants, the ``__main__`` block) are
  always kept: they are the module's context;
- the kept pieces, in order, make a smaller module, which the engine analyses in full, in the
  file's project; the findings on the pieces of the reach, and on the module-level pieces that
  name one of them, replace the previous ones there; every other piece keeps its findings,
  moved to its new rows.

What the smaller module leaves out can change a verdict (a helper that builds the loader a caller
uses, evidence of CUDA placement elsewhere in the file). So the cut is tried first on the last
fully analysed version of the file: the smaller module of that version must give exactly the
findings the full analysis gave on the same pieces, or the edit is analysed in full. And what
the edit changes beyond its reach (another function's verdict that leans on it) is caught by
the full analysis the language server runs after a pause in typing, which republishes when it
differs, as after a comment edit (analysis.py). A reach larger than half the file is analysed
in full at once: the cut would save little.

Chains. Edits that jump from one function to the next without a pause would otherwise pay a
full analysis every ``MOST_CHANGED + 1`` keystrokes. So once the edits since the full analysis
are too spread out, the plan is made from the version before, when a cut answered it: its
findings are carried and only the reach of the latest edit is analysed again. The same cut is
still tried on the full analysis. Each link can carry a verdict that an earlier edit changed
beyond its reach; the full check after a pause corrects it, and when it agrees it becomes the
base of the next cuts (analysis.Analyzer.verify). A version whose findings were moved after a
comment edit (comment_edits) can be the base in the same way.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Callable, Dict, FrozenSet, List, Optional, Sequence, Set, Tuple

from advisor.chunked import split_points
from advisor.text_spans import blocked_spans
from advisor.findings import Finding
from advisor.lsp.comment_edits import moved_finding
from advisor.lsp.convert import lsp_range

_WORD = re.compile(r"[A-Za-z_][A-Za-z_0-9]*")
_DEFINES = re.compile(r"(?:async[ \t]+)?(?:def|class)[ \t]+([A-Za-z_][A-Za-z_0-9]*)")
_LINE_REFERENCE = re.compile(r"\blines? (\d+)")
# A reach over this share of the file's pieces (by size) is analysed in full.
MOST_OF_THE_FILE = 0.5
# Edits in more definitions than this since the last full analysis are analysed in full (that
# analysis is then the base of the next edits): each new cut is checked against the base, and
# edits spread over a file without a pause would pay that check on every keystroke.
MOST_CHANGED = 2


@dataclass(frozen=True)
class Piece:
    text: str
    first_row: int  # 1-based row of its first line in the file
    name: Optional[str]  # the name a top-level def or class defines; None for other statements


@lru_cache(maxsize=8192)
def _words(text: str) -> FrozenSet[str]:
    return frozenset(_WORD.findall(text))


@lru_cache(maxsize=8192)
def _defined_name(text: str) -> Optional[str]:
    """The name a def or class piece defines (after its comments and decorators), else None."""
    for line in text.split("\n"):
        if not line or line[0] in " \t\x0c#\r":
            continue  # blank, comment, or a decorator's continuation line
        if line[0] == "@":
            continue
        match = _DEFINES.match(line)
        return match.group(1) if match else None
    return None


def pieces_of(text: str) -> List[Piece]:
    points = split_points(text)
    out: List[Piece] = []
    row = 1
    for start, stop in zip(points, [*points[1:], len(text)]):
        piece_text = text[start:stop]
        out.append(Piece(piece_text, row, _defined_name(piece_text)))
        row += piece_text.count("\n")
    return out


def pieces_after(old_text: str, old_pieces: Sequence[Piece], new_text: str) -> List[Piece]:
    """``pieces_of(new_text)``, splitting again only the piece of ``old_text`` that an edit stays
    inside. That piece's new text must split into one piece and end with a line of code outside
    any string or continuation, so that the scan meets the text after it in the state it met it
    before: then every other boundary stays where it was, moved by the edit's length. Any other
    edit splits the whole text."""
    common = _common_prefix(old_text, new_text)
    tail = _common_suffix(old_text, new_text, min(len(old_text), len(new_text)) - common)
    old_end = len(old_text) - tail
    offset = 0
    for index, piece in enumerate(old_pieces):
        end = offset + len(piece.text)
        if offset < common and old_end <= end:
            break
        if end > common:
            return pieces_of(new_text)  # the edit starts at a boundary, or spans pieces
        offset = end
    else:
        return pieces_of(new_text)
    text = new_text[offset:end + len(new_text) - len(old_text)]
    # Its last line is code (a blank or comment line there would go with the piece below).
    last = (text[:-1] if text.endswith("\n") else text).rsplit("\n", 1)[-1].strip()
    if (not last or last[0] == "#" or (not text.endswith("\n") and index + 1 < len(old_pieces))
            or split_points("pass\n" + text) != [0, 5]  # one piece, which starts a statement
            or any(e > len(text) for _, e in blocked_spans(text))
            or _open_decorators(text)):
        return pieces_of(new_text)
    rows = text.count("\n") - old_pieces[index].text.count("\n")
    edited = Piece(text, old_pieces[index].first_row, _defined_name(text))
    after = [Piece(p.text, p.first_row + rows, p.name) for p in old_pieces[index + 1:]] if rows else list(old_pieces[index + 1:])
    return [*old_pieces[:index], edited, *after]


def _open_decorators(text: str) -> bool:
    """A decorator line at the top level that no `def` or `class` line follows: the scan would
    take the next piece's definition as the one it decorates."""
    decorated = False
    for line in text.split("\n"):
        if line.startswith("@"):
            decorated = True
        elif decorated and _DEFINES.match(line):
            decorated = False
    return decorated


def _common_prefix(a: str, b: str) -> int:
    """The length of the longest common prefix, by halving (each comparison runs in C)."""
    low, high = 0, min(len(a), len(b))
    while low < high:
        middle = (low + high + 1) // 2
        if a[low:middle] == b[low:middle]:
            low = middle
        else:
            high = middle - 1
    return low


def _common_suffix(a: str, b: str, most: int) -> int:
    """The length of the longest common suffix, at most ``most``."""
    low, high = 0, most
    while low < high:
        middle = (low + high + 1) // 2
        if a[len(a) - middle:len(a) - low] == b[len(b) - middle:len(b) - low]:
            low = middle
        else:
            high = middle - 1
    return low


@dataclass
class Plan:
    """How an edit is re-analysed: which pieces make the smaller module, and whose findings it
    gives."""

    old: List[Piece]
    new: List[Piece]
    kept: Tuple[int, ...]  # pieces of the smaller module, in order
    recomputed: FrozenSet[int]  # pieces whose findings come from it
    changed: FrozenSet[int]


def plan(old_text: str, new_text: str, old_pieces: Optional[List[Piece]] = None,
         new_pieces: Optional[List[Piece]] = None) -> Optional[Plan]:
    """The plan for the edit from ``old_text`` to ``new_text``, or None when it does not qualify
    (see the module's docstring). ``old_pieces``, ``new_pieces``: their ``pieces_of``, when known."""
    if "\r" in old_text or "\r" in new_text:
        return None  # rows are counted by "\n" alone
    old = old_pieces if old_pieces is not None else pieces_of(old_text)
    new = new_pieces if new_pieces is not None else pieces_of(new_text)
    if len(old) != len(new):
        return None
    changed = [i for i, (a, b) in enumerate(zip(old, new)) if a.text != b.text]
    if not changed or len(changed) > MOST_CHANGED:
        return None
    if any(old[i].name is None or old[i].name != new[i].name for i in changed):
        return None
    definers: Dict[str, List[int]] = {}
    for i, piece in enumerate(new):
        if piece.name is not None:
            definers.setdefault(piece.name, []).append(i)
    names = frozenset(definers)

    def words(i: int) -> FrozenSet[str]:
        found = _words(new[i].text)
        return found | _words(old[i].text) if i in changed_set else found

    changed_set = set(changed)
    # Who names which top-level definitions: worked out for the definitions only.
    named_by: Dict[int, FrozenSet[str]] = {i: words(i) & names for i, p in enumerate(new) if p.name is not None}
    callers: Dict[str, List[int]] = {}
    for i, named in named_by.items():
        for name in named:
            if name != new[i].name:
                callers.setdefault(name, []).append(i)
    def callees(i: int) -> List[int]:
        return [j for name in named_by[i] for j in definers[name]]

    def closure(follow) -> Set[int]:
        frontier = list(changed)
        seen = set(changed)
        while frontier:
            for j in follow(frontier.pop()):
                if j not in seen:
                    seen.add(j)
                    frontier.append(j)
        return seen

    # Upwards: who calls the changed pieces, and who calls those; downwards: what they call.
    upwards = closure(lambda i: [j for j in callers.get(new[i].name, ())])
    reach = upwards | closure(callees)
    # What the callers call besides is context: the classes they build and the helpers whose
    # results they hand on make the values the changed pieces receive.
    kept_definitions = reach | {j for i in upwards for j in callees(i)}
    if sum(len(new[i].text) for i in kept_definitions) > MOST_OF_THE_FILE * len(new_text):
        return None
    reach_names = {new[i].name for i in reach}
    context = [i for i, p in enumerate(new) if p.name is None]
    naming = {i for i in context if words(i) & reach_names}
    kept = tuple(sorted(kept_definitions | set(context)))
    return Plan(old, new, kept, frozenset(reach | naming), frozenset(changed))


def smaller_module(pieces: Sequence[Piece], kept: Sequence[int]) -> Tuple[str, Callable[[int], int]]:
    """The text of the kept pieces, and the map from its rows to the file's."""
    starts: List[int] = []
    firsts: List[int] = []
    row = 1
    parts = []
    for i in kept:
        piece = pieces[i]
        starts.append(row)
        firsts.append(piece.first_row)
        parts.append(piece.text)
        row += piece.text.count("\n")
    text = "".join(parts)

    def to_file(r: int) -> int:
        k = bisect.bisect_right(starts, r) - 1
        if k < 0:
            return r
        return firsts[k] + (r - starts[k])

    return text, to_file


def _piece_index(pieces: Sequence[Piece]) -> Callable[[int], int]:
    firsts = [p.first_row for p in pieces]
    return lambda row: max(0, bisect.bisect_right(firsts, row) - 1)


def _rows_named(finding: Finding) -> List[int]:
    rows = [finding.start.row, finding.end.row]
    rows += [r for related in finding.related for r in (related.start.row, related.end.row)]
    if finding.fix is not None:
        rows += [r for e in finding.fix.edits for r in (e.start.row, e.end.row)]
    for text in (finding.message, finding.hint or "", finding.fix.message if finding.fix is not None else ""):
        rows += [int(n) for n in _LINE_REFERENCE.findall(text)]
    return rows


def findings_on(findings: Sequence[Finding], pieces: Sequence[Piece], wanted: FrozenSet[int]) -> List[Finding]:
    where = _piece_index(pieces)
    return [f for f in findings if where(f.start.row) in wanted]


def mapped(findings: Sequence[Finding], to_file: Callable[[int], int]) -> List[Finding]:
    """Findings of the smaller module, placed on the file's rows."""
    return [moved_finding(f, to_file) for f in findings]


class Placed:
    """The findings of a full analysis with the pieces each starts on and names (its places,
    related places, fix edits and "line 12" in its texts): worked out once per analysis, read
    on every edit after it."""

    def __init__(self, findings: Sequence[Finding], pieces: Sequence[Piece],
                 ranges_from: Optional["Placed"] = None, known: Optional[Dict[int, Tuple[int, FrozenSet[int]]]] = None) -> None:
        """``known``: the pieces of findings carried from another `Placed` on the same pieces
        (by id), which a carry leaves unchanged."""
        where = _piece_index(pieces)
        self.pieces = list(pieces)
        known = known or {}
        self.entries = [
            (f, *known[id(f)]) if id(f) in known else (f, where(f.start.row), frozenset(where(row) for row in _rows_named(f)))
            for f in findings
        ]
        self._own = {id(f) for f in findings}
        self._ranges: Dict[Tuple[int, str], object] = {}
        # The full analysis these findings were carried from: a finding of its own that is still
        # here was never moved, so the range worked out there holds.
        self._ranges_from = ranges_from

    def known_range(self, finding: Finding, encoding: str):
        """The range already worked out for one of these findings, if any."""
        key = (id(finding), encoding)
        if self._ranges_from is not None and id(finding) in self._ranges_from._own:
            return self._ranges_from._ranges.get(key)
        return self._ranges.get(key) if id(finding) in self._own else None

    def take_ranges(self, base: "Placed", moves: Sequence[Tuple[Finding, Finding, int]], encoding: str) -> None:
        """Ranges of findings carried from ``base``, moved by whole rows over text that did not
        change: the range ``base`` worked out, shifted (`(new, old, rows)` per finding)."""
        for new, old, rows in moves:
            found = base.known_range(old, encoding)
            if found is None or (self._ranges_from is not None and id(new) in self._ranges_from._own):
                continue
            if rows:
                found = type(found)(start=type(found.start)(line=found.start.line + rows, character=found.start.character),
                                    end=type(found.end)(line=found.end.line + rows, character=found.end.character))
            self._ranges[(id(new), encoding)] = found

    def range_of(self, finding: Finding, lines: Sequence[str], encoding: str):
        """The protocol range of one of these findings, kept while it is carried unmoved (its rows'
        lines are then the same); None for another finding."""
        if self._ranges_from is not None and id(finding) in self._ranges_from._own:
            return self._ranges_from.range_of(finding, lines, encoding)
        if id(finding) not in self._own:
            return None
        key = (id(finding), encoding)
        known = self._ranges.get(key)
        if known is None:
            known = self._ranges[key] = lsp_range(lines, finding.start, finding.end, encoding)
        return known


def carried(placed: Placed, plan_: Plan) -> Optional[List[Finding]]:
    """The findings of the pieces outside the recomputed ones, moved to their new rows; None
    when one of them names a row of a changed piece (a related place, a fix, "line 12")."""
    entries = carried_entries(placed, plan_)
    return None if entries is None else [entry[0] for entry in entries]


def carried_entries(placed: Placed, plan_: Plan) -> Optional[List[Tuple[Finding, int, FrozenSet[int], Finding, Optional[int]]]]:
    """`carried`, each finding with the pieces it starts on and names (the same on the new
    pieces), the finding it was carried from, and the rows its range moved by (None when the
    pieces it names moved by different amounts)."""
    old, new = plan_.old, plan_.new
    offsets = [b.first_row - a.first_row for a, b in zip(old, new)]
    where = _piece_index(old)

    def moved(row: int) -> int:
        return row + offsets[where(row)]

    out: List[Tuple[Finding, int, FrozenSet[int], Finding, Optional[int]]] = []
    for finding, start, named in placed.entries:
        if start in plan_.recomputed:
            continue
        if named & plan_.changed:
            return None
        shifts = {offsets[k] for k in named} | {offsets[start]}
        rows = next(iter(shifts)) if len(shifts) == 1 else None
        if any(offsets[k] for k in named):
            out.append((moved_finding(finding, moved), start, named, finding, rows))
        else:
            out.append((finding, start, named, finding, rows))  # nothing it names moved
    return out
