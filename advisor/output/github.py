"""GitHub Actions workflow commands: one `::warning file=...,line=...::message` per finding.

GitHub shows them as annotations on the pull request's diff. The message escapes `%`, `\\r` and
`\\n`; property values (file, title) also escape `:` and `,`, as the runner's parser expects.
info findings become `notice`; files that could not be checked become `error`. In a notebook,
rows count from the start of the cell, and the message starts with the cell.
"""

from __future__ import annotations


from advisor.findings import FileProblem, Finding, Severity
from advisor.output.names import encodable

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing is not imported at run time: start-up is most of a warm run
    from typing import List, TextIO

_COMMAND = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def _command(kind: str, properties: List[tuple], message: str) -> str:
    props = ",".join(f"{key}={escape_property(str(value))}" for key, value in properties)
    return f"::{kind} {props}::{escape_data(message)}\n"


def write_github(out: TextIO, findings: List[Finding], problems: List[FileProblem]) -> None:
    for p in problems:
        message = p.reason if p.cell is None else f"cell {p.cell}: {p.reason}"
        out.write(_command("error", [("file", encodable(p.filename)), ("line", p.row), ("col", p.column),
                                     ("title", "torch-advisor")], message))
    for f in findings:
        message = f.message if f.cell is None else f"cell {f.cell}: {f.message}"
        if f.hint:
            message += f"\nhint: {f.hint}"
        properties = [("file", encodable(f.filename)), ("line", f.start.row), ("col", f.start.column),
                      ("endLine", f.end.row), ("endColumn", f.end.column), ("title", f.code)]
        out.write(_command(_COMMAND[f.severity], properties, message))
