"""The values every face of the tool shares: findings, fixes and the text edits they carry."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

from advisor.source import SourceText


class Severity(str, enum.Enum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


class Applicability(str, enum.Enum):
    # A safe fix keeps the program's meaning apart from the performance or correctness
    # problem it removes; an unsafe one may change behaviour and needs a human look.
    SAFE = "safe"
    UNSAFE = "unsafe"


@dataclass(frozen=True, order=True)
class Position:
    """1-based row and 1-based column counted in code points (as ruff reports them)."""

    row: int
    column: int


@dataclass(frozen=True)
class Edit:
    """Replace the text between ``start`` (inclusive) and ``end`` (exclusive) with ``content``."""

    start: Position
    end: Position
    content: str


@dataclass(frozen=True)
class Fix:
    message: str
    edits: Tuple[Edit, ...]
    applicability: Applicability = Applicability.SAFE


@dataclass
class Finding:
    code: str
    name: str
    message: str
    severity: Severity
    start: Position
    end: Position
    url: str
    hint: Optional[str] = None
    fix: Optional[Fix] = None
    filename: str = field(default="")
    cell: Optional[int] = None  # notebooks: 1-based cell; rows and columns are then in that cell
    # `check --measure`: the probe's verdict and figures (advisor.runtime.measure); None otherwise
    measurement: Optional[Dict[str, Any]] = field(default=None, compare=False)

    @property
    def sort_key(self) -> Tuple[str, int, int, int, str]:
        return (self.filename, self.cell or 0, self.start.row, self.start.column, self.code)


@dataclass(frozen=True)
class FileProblem:
    """A file that could not be checked: it is named with the reason, and the run goes on."""

    filename: str
    reason: str
    row: int = 1
    column: int = 1
    cell: Optional[int] = None  # notebooks: the cell the row and column are in


def location(filename: str, cell: Optional[int], row: int, column: int) -> str:
    """`path:row:col`, or `notebook.ipynb:cell 3:row:col` where the row is in cell 3."""
    if cell is None:
        return f"{filename}:{row}:{column}"
    return f"{filename}:cell {cell}:{row}:{column}"


@dataclass
class FileResult:
    """What checking one file gave: its findings, or the problem that stopped it."""

    filename: str
    findings: List[Finding] = field(default_factory=list)
    problem: Optional[FileProblem] = None
    source: Optional[SourceText] = None
    fixed_text: Optional[str] = None  # set by --fix/--diff when fixes were applied
    fixes_applied: int = 0
