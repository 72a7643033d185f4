"""SARIF 2.1.0, the format GitHub code scanning (`github/codeql-action/upload-sarif`) reads.

One run: the tool with every rule (id, name, descriptions, help text and link), one result per
finding (level error, warning or note), paths relative to the working directory under the
`%SRCROOT%` base, columns counted in code points as the other formats count them. Safe and
unsafe fixes travel as SARIF `fixes` for Python files. Files that could not be checked become
tool execution notifications. In a notebook, rows count from the start of the finding's cell
(SARIF has no notion of cells): the cell is in the result's `properties` and in its message.
A finding's related places become `relatedLocations`, labelled; the values its message was
formatted from are in the result's `properties` as `data`.
"""

from __future__ import annotations

import json
import os
import textwrap
from pathlib import Path
from urllib.parse import quote

from advisor import __version__
from advisor.findings import FileProblem, Finding, Position, Related, Severity

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing is not imported at run time: start-up is most of a warm run
    from typing import Any, Dict, List, Optional, TextIO

SCHEMA_URI = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}


def _uri(filename: str) -> Dict[str, str]:
    """A relative URI under %SRCROOT% where the file is below the working directory. The name's
    bytes are percent-encoded as they are, those that are not UTF-8 included."""
    path = Path(filename)
    if path.is_absolute():
        try:
            path = path.resolve().relative_to(Path.cwd().resolve())
        except (ValueError, OSError):
            return {"uri": path.as_uri()}
    return {"uri": quote(os.fsencode(path.as_posix())), "uriBaseId": "%SRCROOT%"}


def _region(start: Position, end: Position) -> Dict[str, int]:
    return {"startLine": start.row, "startColumn": start.column, "endLine": end.row, "endColumn": end.column}


def _rule(rule, docs_url: Optional[str]) -> Dict[str, Any]:
    from advisor.rule_docs import sarif_help

    what = textwrap.dedent(rule.what).strip()
    why = textwrap.dedent(rule.why).strip()
    entry = {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": f"{what}\n\n{why}"},
        "help": sarif_help(rule),
        "defaultConfiguration": {"level": _LEVEL[rule.severity]},
        "properties": {"family": rule.family, "fix": rule.fixable.value, "tags": ["performance", rule.family]},
    }
    # SARIF wants absolute URLs: only a configured `docs-url` gives one (the help text is there anyway).
    if docs_url:
        entry["helpUri"] = rule.url_for(docs_url)
    return entry


def _result(f: Finding, rule_index: Dict[str, int]) -> Dict[str, Any]:
    message = f.message if f.cell is None else f"cell {f.cell}: {f.message}"
    if f.hint:
        message += f" (hint: {f.hint})"
    result: Dict[str, Any] = {
        "ruleId": f.code,
        "level": _LEVEL[f.severity],
        "message": {"text": message},
        "locations": [
            {"physicalLocation": {"artifactLocation": _uri(f.filename), "region": _region(f.start, f.end)}}
        ],
    }
    if f.related:
        result["relatedLocations"] = [_related_location(i, r, f) for i, r in enumerate(f.related)]
    if f.data:  # the values the message was formatted from, for tools that read SARIF
        result["properties"] = {"data": dict(f.data)}
    if f.code in rule_index:
        result["ruleIndex"] = rule_index[f.code]
    if f.cell is not None:
        result.setdefault("properties", {})["cell"] = f.cell
    elif f.fix is not None:
        result["fixes"] = [
            {
                "description": {"text": f.fix.message + ("" if f.fix.applicability.value == "safe" else " (unsafe)")},
                "artifactChanges": [
                    {
                        "artifactLocation": _uri(f.filename),
                        "replacements": [
                            {"deletedRegion": _region(e.start, e.end), "insertedContent": {"text": e.content}}
                            for e in f.fix.edits
                        ],
                    }
                ],
            }
        ]
    return result


def _related_location(index: int, r: Related, f: Finding) -> Dict[str, Any]:
    label = r.label if r.cell is None or r.cell == f.cell else f"cell {r.cell}: {r.label}"
    return {
        "id": index,
        "physicalLocation": {"artifactLocation": _uri(f.filename), "region": _region(r.start, r.end)},
        "message": {"text": label},
    }


def _notification(p: FileProblem) -> Dict[str, Any]:
    reason = p.reason if p.cell is None else f"cell {p.cell}: {p.reason}"
    return {
        "level": "error",
        "message": {"text": reason},
        "locations": [
            {
                "physicalLocation": {
                    "artifactLocation": _uri(p.filename),
                    "region": {"startLine": max(1, p.row), "startColumn": max(1, p.column)},
                }
            }
        ],
    }


def sarif_log(findings: List[Finding], problems: List[FileProblem], docs_url: Optional[str] = None) -> Dict[str, Any]:
    from advisor.rules import ALL_RULES

    rules = [_rule(r, docs_url) for r in ALL_RULES]
    rule_index = {r["id"]: i for i, r in enumerate(rules)}
    root = Path.cwd().resolve().as_uri().rstrip("/") + "/"
    log = {
        "$schema": SCHEMA_URI,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "torch-advisor",
                        "version": __version__,
                        "semanticVersion": __version__,
                        "rules": rules,
                    }
                },
                "invocations": [
                    {
                        "executionSuccessful": True,
                        "toolExecutionNotifications": [_notification(p) for p in problems],
                    }
                ],
                "originalUriBaseIds": {"%SRCROOT%": {"uri": root}},
                "columnKind": "unicodeCodePoints",
                "results": [_result(f, rule_index) for f in findings],
            }
        ],
    }
    if docs_url:
        base = docs_url.split("{code}")[0].rstrip("/") or docs_url
        log["runs"][0]["tool"]["driver"]["informationUri"] = base
    return log


def write_sarif(
    out: TextIO, findings: List[Finding], problems: List[FileProblem], docs_url: Optional[str] = None
) -> None:
    json.dump(sarif_log(findings, problems, docs_url), out, indent=2, ensure_ascii=False)
    out.write("\n")

