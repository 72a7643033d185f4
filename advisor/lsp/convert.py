"""Positions, diagnostics and edits between the engine's terms and the protocol's.

The engine counts 1-based rows and 1-based columns in code points. The protocol counts 0-based
lines and 0-based characters in the negotiated encoding (utf-16 unless the client offers
another), so every column that crosses the boundary goes through `to_units`/`from_units`
with the text of its own line.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from lsprotocol import types
from pygls.uris import to_fs_path

from advisor.findings import Applicability, Edit, FileProblem, Finding, Fix, Position, Related, Severity

SOURCE = "advisor"
UTF8, UTF16, UTF32 = "utf-8", "utf-16", "utf-32"

_SEVERITY = {
    Severity.ERROR: types.DiagnosticSeverity.Error,
    Severity.WARNING: types.DiagnosticSeverity.Warning,
    Severity.INFO: types.DiagnosticSeverity.Information,
}


def uri_path(uri: str) -> Optional[Path]:
    """The file a document URI names; None for untitled buffers (they get the default
    configuration)."""
    if not uri.startswith("file:"):
        return None
    fs_path = to_fs_path(uri)
    return Path(fs_path) if fs_path else None


def _units(char: str, encoding: str) -> int:
    point = ord(char)
    if encoding == UTF8:
        return 1 if point < 0x80 else 2 if point < 0x800 else 3 if point < 0x10000 else 4
    if encoding == UTF16:
        return 2 if point >= 0x10000 else 1
    return 1


def to_units(line: str, column: int, encoding: str) -> int:
    """0-based code-point column on ``line`` -> 0-based column in the client's code units."""
    column = max(0, min(column, len(line)))
    prefix = line[:column]
    if encoding == UTF32 or prefix.isascii():
        return column
    if encoding == UTF8:
        return len(prefix.encode("utf-8"))
    return len(prefix.encode("utf-16-le")) // 2


def from_units(line: str, units: int, encoding: str) -> int:
    """0-based column in client code units -> 0-based code-point column, clamped to the line.

    A position inside a character (half of a surrogate pair) snaps to the character's end, as
    the specification asks clients and servers to do with positions between code units."""
    if units <= 0:
        return 0
    if encoding == UTF32 or line.isascii():
        return min(units, len(line))
    counted = 0
    for index, char in enumerate(line):
        if counted >= units:
            return index
        counted += _units(char, encoding)
    return len(line)


def lsp_position(lines: Sequence[str], position: Position, encoding: str) -> types.Position:
    """An engine position (1-based, code points) as a protocol position."""
    row = position.row - 1
    if row >= len(lines):  # past the end (an edit appending to the file): the end of the text
        last = len(lines) - 1
        return types.Position(line=max(last, 0), character=to_units(lines[last], len(lines[last]), encoding) if lines else 0)
    return types.Position(line=max(row, 0), character=to_units(lines[row], position.column - 1, encoding))


def engine_position(lines: Sequence[str], position: types.Position, encoding: str) -> Position:
    """A protocol position as an engine position (1-based, code points), clamped to the text."""
    if not lines:
        return Position(1, 1)
    if position.line >= len(lines):
        return Position(len(lines), len(lines[-1]) + 1)
    line = lines[position.line]
    return Position(position.line + 1, from_units(line, position.character, encoding) + 1)


def lsp_range(lines: Sequence[str], start: Position, end: Position, encoding: str) -> types.Range:
    return types.Range(start=lsp_position(lines, start, encoding), end=lsp_position(lines, end, encoding))


def text_edit(lines: Sequence[str], edit: Edit, encoding: str) -> types.TextEdit:
    return types.TextEdit(range=lsp_range(lines, edit.start, edit.end, encoding), new_text=edit.content)


# -- fixes travel in Diagnostic.data ---------------------------------------------------------------
# The fix is kept in engine terms (code points) with the document version it was computed for, so
# that a code action converts it against the text it belongs to, and refuses it for another text.
def fix_to_data(fix: Fix) -> Dict[str, Any]:
    return {
        "message": fix.message,
        "applicability": fix.applicability.value,
        "edits": [
            {"start": [e.start.row, e.start.column], "end": [e.end.row, e.end.column], "content": e.content}
            for e in fix.edits
        ],
    }


def fix_from_data(data: Any) -> Optional[Fix]:
    try:
        edits = tuple(
            Edit(Position(*map(int, e["start"])), Position(*map(int, e["end"])), str(e["content"]))
            for e in data["edits"]
        )
        return Fix(str(data["message"]), edits, Applicability(data["applicability"]))
    except (KeyError, TypeError, ValueError):
        return None


# Where a related place is: its document's URI and lines (a notebook's related place may be in
# another cell), or None when it cannot be shown.
Locate = Callable[[Related], Optional[Tuple[str, Sequence[str]]]]


def related_information(finding: Finding, locate: Locate, encoding: str) -> List[types.DiagnosticRelatedInformation]:
    out = []
    for related in finding.related:
        where = locate(related)
        if where is None:
            continue
        uri, lines = where
        out.append(types.DiagnosticRelatedInformation(
            location=types.Location(uri=uri, range=lsp_range(lines, related.start, related.end, encoding)),
            message=related.label,
        ))
    return out


def diagnostic(
    finding: Finding, lines: Sequence[str], encoding: str, version: Optional[int], href: Optional[str],
    locate: Optional[Locate] = None, known_range: Optional[types.Range] = None,
) -> types.Diagnostic:
    """``locate`` finds the related places (None: the client takes no related information);
    ``known_range``: the finding's range, worked out before on the same lines."""
    data: Dict[str, Any] = {"version": version, "name": finding.name, "fields": finding.data}
    if finding.fix is not None:
        data["fix"] = fix_to_data(finding.fix)
    related = related_information(finding, locate, encoding) if locate is not None else []
    return types.Diagnostic(
        range=known_range or lsp_range(lines, finding.start, finding.end, encoding),
        message=finding.message,
        severity=_SEVERITY[finding.severity],
        code=finding.code,
        code_description=types.CodeDescription(href=href) if href else None,
        source=SOURCE,
        related_information=related or None,
        data=data,
    )


def _position_json(position: types.Position) -> Dict[str, int]:
    return {"line": position.line, "character": position.character}


def _range_json(span: types.Range) -> Dict[str, Dict[str, int]]:
    return {"start": _position_json(span.start), "end": _position_json(span.end)}


def diagnostic_json(diag: types.Diagnostic) -> Dict[str, Any]:
    """``diag`` as the protocol's JSON, as the protocol library's converter writes it, without
    its per-field dispatch: a publish of a large file's diagnostics spent most of its time on the
    event loop there (15 ms for 572 diagnostics), which every keystroke waited for. ``data`` goes
    as it is: it holds plain JSON values (a finding's fields, which `--format json` writes as
    they are, and its fix), and the JSON writer hands anything else to the converter."""
    out: Dict[str, Any] = {"range": _range_json(diag.range), "message": diag.message}
    if diag.severity is not None:
        out["severity"] = diag.severity.value
    if diag.code is not None:
        out["code"] = diag.code
    if diag.code_description is not None:
        out["codeDescription"] = {"href": diag.code_description.href}
    if diag.source is not None:
        out["source"] = diag.source
    if diag.tags is not None:
        out["tags"] = [tag.value for tag in diag.tags]
    if diag.related_information is not None:
        out["relatedInformation"] = [
            {"location": {"uri": item.location.uri, "range": _range_json(item.location.range)}, "message": item.message}
            for item in diag.related_information]
    if diag.data is not None:
        out["data"] = diag.data
    return out


def problem_diagnostic(problem: FileProblem, lines: Sequence[str], encoding: str) -> types.Diagnostic:
    """One diagnostic for a file the engine could not analyse (a syntax error mid-edit)."""
    row = min(max(problem.row, 1), max(len(lines), 1))
    line = lines[row - 1] if lines else ""
    column = min(max(problem.column, 1), len(line) + 1)
    # Up to the end of the line, so that the squiggle is visible even at the end of a line.
    end = len(line) + 1 if column <= len(line) else column
    return types.Diagnostic(
        range=lsp_range(lines, Position(row, column), Position(row, end), encoding),
        message=problem.reason,
        severity=types.DiagnosticSeverity.Error,
        source=SOURCE,
        data={"problem": True},
    )


def minimal_edit(old: str, new: str) -> Optional[Edit]:
    """One edit turning ``old`` into ``new`` that spans only what differs, so that an editor
    applying a fix-all keeps the cursor and folds outside the changed region."""
    if old == new:
        return None
    start = 0
    limit = min(len(old), len(new))
    while start < limit and old[start] == new[start]:
        start += 1
    end_old, end_new = len(old), len(new)
    while end_old > start and end_new > start and old[end_old - 1] == new[end_new - 1]:
        end_old -= 1
        end_new -= 1
    # Never split a \r\n pair: the protocol counts it as one line break.
    if start > 0 and old[start - 1] == "\r" and start < len(old) and old[start] == "\n":
        start -= 1
    if end_old < len(old) and old[end_old - 1 : end_old + 1] == "\r\n" and end_old > start:
        end_old += 1
        end_new += 1
    return Edit(_position_at(old, start), _position_at(old, end_old), new[start:end_new])


def _position_at(text: str, offset: int) -> Position:
    from advisor.source import split_lines

    before = split_lines(text[:offset])
    return Position(len(before), len(before[-1]) + 1)


def lines_of(text: str) -> List[str]:
    from advisor.source import split_lines

    return split_lines(text)
