"""The values every face of the tool shares: findings, fixes and the text edits they carry."""

from __future__ import annotations

import enum

from advisor.values import Value

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing is not imported at run time: start-up is most of a warm run
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


class Fixable(str, enum.Enum):
    """What a rule's automatic fixes are, as every face shows it: whether each finding gets one
    ("always") or only some do ("sometimes"), and whether they are safe, unsafe, or either,
    depending on the site. The rule's `fix_safety` doc says when each case applies."""

    NO = "no"
    SAFE = "safe"
    UNSAFE = "unsafe"
    SAFE_OR_UNSAFE = "safe or unsafe"
    SOMETIMES_SAFE = "sometimes, safe"
    SOMETIMES_UNSAFE = "sometimes, unsafe"
    SOMETIMES_SAFE_OR_UNSAFE = "sometimes, safe or unsafe"

    @property
    def always(self) -> bool:
        """Every finding of the rule comes with a fix."""
        return self in (Fixable.SAFE, Fixable.UNSAFE, Fixable.SAFE_OR_UNSAFE)

    @property
    def applicabilities(self) -> Tuple[Applicability, ...]:
        """The applicabilities its fixes may have (none for NO)."""
        value = self.value.rpartition(", ")[2]
        if self is Fixable.NO:
            return ()
        if value == "safe or unsafe":
            return (Applicability.SAFE, Applicability.UNSAFE)
        return (Applicability(value),)


class Position(Value):
    """1-based row and 1-based column counted in code points (as ruff reports them). Immutable,
    ordered by row, then column."""

    __slots__ = ("row", "column")
    _fields = ("row", "column")
    __hash__ = Value.value_hash

    def __init__(self, row: int, column: int) -> None:
        self.row = row
        self.column = column

    def __lt__(self, other: Position) -> bool:
        if other.__class__ is not Position:
            return NotImplemented
        return (self.row, self.column) < (other.row, other.column)

    def __le__(self, other: Position) -> bool:
        if other.__class__ is not Position:
            return NotImplemented
        return (self.row, self.column) <= (other.row, other.column)

    def __gt__(self, other: Position) -> bool:
        if other.__class__ is not Position:
            return NotImplemented
        return (self.row, self.column) > (other.row, other.column)

    def __ge__(self, other: Position) -> bool:
        if other.__class__ is not Position:
            return NotImplemented
        return (self.row, self.column) >= (other.row, other.column)


class Edit(Value):
    """Replace the text between ``start`` (inclusive) and ``end`` (exclusive) with ``content``.
    Immutable."""

    __slots__ = ("start", "end", "content")
    _fields = ("start", "end", "content")
    __hash__ = Value.value_hash

    def __init__(self, start: Position, end: Position, content: str) -> None:
        self.start = start
        self.end = end
        self.content = content


class Fix(Value):
    """Immutable."""

    __slots__ = ("message", "edits", "applicability")
    _fields = ("message", "edits", "applicability")
    __hash__ = Value.value_hash

    def __init__(self, message: str, edits: Tuple[Edit, ...],
                 applicability: Applicability = Applicability.SAFE) -> None:
        self.message = message
        self.edits = edits
        self.applicability = applicability


class Related(Value):
    """Another place a finding points at (the loop that repeats it, the step it pairs with), with
    a short label saying what it is there. In a notebook, rows count from the start of ``cell``.
    Immutable."""

    __slots__ = ("label", "start", "end", "cell")
    _fields = __slots__
    __hash__ = Value.value_hash

    def __init__(self, label: str, start: Position, end: Position, cell: Optional[int] = None) -> None:
        self.label = label
        self.start = start
        self.end = end
        self.cell = cell


class Finding(Value):
    __slots__ = ("code", "name", "message", "severity", "start", "end", "url", "hint", "fix", "filename", "cell",
                 "data", "related", "measurement")
    _fields = __slots__
    _compared = _fields[:-1]  # the measurement is not part of what was found

    def __init__(self, code: str, name: str, message: str, severity: Severity, start: Position, end: Position,
                 url: Optional[str], hint: Optional[str] = None, fix: Optional[Fix] = None, filename: str = "",
                 cell: Optional[int] = None, data: Optional[Dict[str, Any]] = None,
                 related: Tuple[Related, ...] = (), measurement: Optional[Dict[str, Any]] = None) -> None:
        self.code = code
        self.name = name
        self.message = message
        self.severity = severity
        self.start = start
        self.end = end
        self.url = url  # the rule's page under the configured `docs-url`; None without one
        self.hint = hint
        self.fix = fix
        self.filename = filename
        self.cell = cell  # notebooks: 1-based cell; rows and columns are then in that cell
        # The values the message was formatted from, by name (plain JSON values): what outputs
        # and probes read instead of parsing the message.
        self.data = {} if data is None else data
        self.related = related
        # `check --measure`: the probe's verdict and figures (advisor.runtime.measure); None otherwise
        self.measurement = measurement

    @property
    def sort_key(self) -> Tuple[str, int, int, int, str]:
        return (self.filename, self.cell or 0, self.start.row, self.start.column, self.code)


class FileProblem(Value):
    """A file that could not be checked: it is named with the reason, and the run goes on.
    Immutable."""

    __slots__ = ("filename", "reason", "row", "column", "cell")
    _fields = __slots__
    __hash__ = Value.value_hash

    def __init__(self, filename: str, reason: str, row: int = 1, column: int = 1, cell: Optional[int] = None) -> None:
        self.filename = filename
        self.reason = reason
        self.row = row
        self.column = column
        self.cell = cell  # notebooks: the cell the row and column are in


def location(filename: str, cell: Optional[int], row: int, column: int) -> str:
    """`path:row:col`, or `notebook.ipynb:cell 3:row:col` where the row is in cell 3."""
    if cell is None:
        return f"{filename}:{row}:{column}"
    return f"{filename}:cell {cell}:{row}:{column}"


class FileResult(Value):
    """What checking one file gave: its findings, or the problem that stopped it."""

    _fields = ("filename", "findings", "problem", "source", "fixed_text", "fixes_applied", "warnings", "fixed")
    __slots__ = _fields + ("dependencies",)

    def __init__(self, filename: str, findings: Optional[List[Finding]] = None, problem: Optional[FileProblem] = None,
                 source: Optional[SourceText] = None, fixed_text: Optional[str] = None, fixes_applied: int = 0,
                 warnings: Optional[List[FileProblem]] = None) -> None:
        self.filename = filename
        # The project files the findings may depend on (absolute paths; advisor/project): a
        # cached result holds only while they are unchanged.
        self.dependencies: Tuple[str, ...] = ()
        self.findings = [] if findings is None else findings
        self.problem = problem
        self.source = source
        self.fixed_text = fixed_text  # set by --fix/--diff when fixes were applied
        self.fixes_applied = fixes_applied
        # What the file gets wrong about the tool without stopping its check (a `# noqa` code
        # no rule has): one warning line each, not findings, so they do not change the exit code.
        self.warnings = [] if warnings is None else warnings
        self.fixed: List[Finding] = []  # --fix and --diff: the findings whose fixes were applied
