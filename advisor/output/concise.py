"""flake8's `path:row:col: CODE message`, one finding per line."""

from __future__ import annotations


from advisor.findings import FileProblem, Finding, location
from advisor.output.names import printable

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing is not imported at run time: start-up is most of a warm run
    from typing import List, TextIO


def write_concise(out: TextIO, findings: List[Finding], problems: List[FileProblem]) -> None:
    for problem in problems:
        where = location(printable(problem.filename), problem.cell, problem.row, problem.column)
        out.write(f"{where}: error: {printable(problem.reason)}\n")
    for f in findings:
        out.write(f"{location(printable(f.filename), f.cell, f.start.row, f.start.column)}: {f.code} {f.message}\n")
