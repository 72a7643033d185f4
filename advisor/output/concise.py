"""flake8's `path:row:col: CODE message`, one finding per line. Warnings, the usual severity,
read exactly so; an info or error finding says so in brackets before its message
(`GPU305 [info] ...`, `GPU205 [error] ...`), so that an info finding does not pass for a
warning, and tools that split flake8 lines at the code still find the code where they expect it."""

from __future__ import annotations


from advisor.findings import FileProblem, Finding, Severity, location
from advisor.output.names import printable

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing is not imported at run time: start-up is most of a warm run
    from typing import List, TextIO


def severity_tag(finding: Finding) -> str:
    """`[info] ` or `[error] ` before the message; nothing for a warning."""
    return "" if finding.severity is Severity.WARNING else f"[{finding.severity.value}] "


def write_concise(out: TextIO, findings: List[Finding], problems: List[FileProblem]) -> None:
    for problem in problems:
        where = location(printable(problem.filename), problem.cell, problem.row, problem.column)
        out.write(f"{where}: error: {printable(problem.reason)}\n")
    for f in findings:
        out.write(f"{location(printable(f.filename), f.cell, f.start.row, f.start.column)}: {f.code} "
                  f"{severity_tag(f)}{f.message}\n")
