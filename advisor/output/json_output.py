"""A JSON list shaped like ruff's `--output-format json`, plus `severity`, `name`, `hint`,
`data` (the values the message was formatted from, by name) and `related` (other places the
finding points at, each with its label). docs/json-output.schema.json describes it.

In a notebook, `cell` is the 1-based cell and rows are counted in that cell (null elsewhere);
a related place names its own cell.

Files that could not be checked appear as entries whose `code` is null, as ruff does for
syntax errors.
"""

from __future__ import annotations

import json

from advisor.findings import FileProblem, Finding, Fix, Position, Related
from advisor.output.names import encodable

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing is not imported at run time: start-up is most of a warm run
    from typing import Any, Dict, List, Optional, TextIO


def _location(pos: Position) -> Dict[str, int]:
    return {"row": pos.row, "column": pos.column}


def _fix(fix: Optional[Fix]) -> Optional[Dict[str, Any]]:
    if fix is None:
        return None
    return {
        "applicability": fix.applicability.value,
        "message": fix.message,
        "edits": [
            {"content": e.content, "location": _location(e.start), "end_location": _location(e.end)}
            for e in fix.edits
        ],
    }


def _related(r: Related) -> Dict[str, Any]:
    return {"label": r.label, "cell": r.cell, "location": _location(r.start), "end_location": _location(r.end)}


def finding_to_dict(f: Finding) -> Dict[str, Any]:
    out = _finding_fields(f)
    if f.measurement is not None:  # `check --measure`: verdict, figures, device and parameters
        out["measurement"] = dict(f.measurement)
    return out


def _finding_fields(f: Finding) -> Dict[str, Any]:
    return {
        "code": f.code,
        "name": f.name,
        "message": f.message,
        "severity": f.severity.value,
        "filename": encodable(f.filename),
        "cell": f.cell,
        "location": _location(f.start),
        "end_location": _location(f.end),
        "noqa_row": f.start.row,
        "fix": _fix(f.fix),
        "url": f.url,
        "hint": f.hint,
        "data": dict(f.data),
        "related": [_related(r) for r in f.related],
    }


def problem_to_dict(p: FileProblem) -> Dict[str, Any]:
    return {
        "code": None,
        "name": None,
        "message": p.reason,
        "severity": "error",
        "filename": encodable(p.filename),
        "cell": p.cell,
        "location": {"row": p.row, "column": p.column},
        "end_location": {"row": p.row, "column": p.column},
        "noqa_row": None,
        "fix": None,
        "url": None,
        "hint": None,
        "data": None,
        "related": [],
    }


def write_json(out: TextIO, findings: List[Finding], problems: List[FileProblem]) -> None:
    items = [problem_to_dict(p) for p in problems] + [finding_to_dict(f) for f in findings]
    json.dump(items, out, indent=2, ensure_ascii=False)
    out.write("\n")


def write_statistics_json(out: TextIO, findings: List[Finding]) -> None:
    """`--statistics --format json`: one object per rule, most frequent first."""
    counts: Dict[str, Dict[str, Any]] = {}
    for f in findings:
        entry = counts.setdefault(f.code, {"code": f.code, "name": f.name, "count": 0, "fixable": False})
        entry["count"] += 1
        entry["fixable"] = entry["fixable"] or (f.fix is not None and f.fix.applicability.value == "safe")
    rows = sorted(counts.values(), key=lambda e: (-e["count"], e["code"]))
    json.dump(rows, out, indent=2)
    out.write("\n")
