"""Jupyter notebooks: their code cells checked as one program, findings and fixes mapped back.

The code cells are joined into one Python text, each cell preceded by a marker comment line, so
that names defined in one cell are known in the next (as they are when the notebook runs top
to bottom). IPython syntax that is not Python (line magics ``%time x``, cell magics
``%%bash``, shell escapes ``!pip install``, help ``obj?``, and line magics written without
their ``%`` on a line that is not Python, ``cd repo``) becomes a placeholder statement of
the same indentation, one line for one line, so that rows map back and no magic can cause a
syntax error. Findings get a ``cell`` (1-based, counting every cell of the notebook, as an
editor shows them) and rows and columns relative to that cell.

Fixes are applied to the joined program; the program is then split at the markers, the
placeholders are put back to the original lines, and only the changed cells' ``source`` is
replaced in the notebook's JSON text (`notebook_json`): every other character of the file,
outputs, metadata, layout and escapes included, stays as it was. The caller writes the file.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Set, Tuple

from advisor.config import DEFAULT_CONFIG, Config
from advisor.findings import Edit, FileProblem, FileResult, Finding, Fix, Position, Related
from advisor.fixes import fix_until_stable, unified_diff
from advisor.discovery import NOTEBOOK_SUFFIX, is_notebook  # noqa: F401 - re-exported

_MARKER = "# torch-advisor notebook cell {index}"
_MARKER_RE = re.compile(r"^# torch-advisor notebook cell (\d+)$")
_PLACEHOLDER = "pass  # torch-advisor magic {index}"
_PLACEHOLDER_RE = re.compile(r"^(\s*)pass  # torch-advisor magic (\d+)$")
# Cell magics whose body is Python: the first line becomes a placeholder, the body is checked.
_PYTHON_CELL_MAGICS = frozenset({"time", "timeit", "capture", "prun"})
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
# `%magic`, `!cmd`, `x = !cmd`, `x = %magic`, `?obj`, `obj?`, `obj??`.
_ESCAPE = re.compile(r"^\s*(?:[%!?]|[A-Za-z_][\w.]*(?:\s*,\s*[A-Za-z_][\w.]*)*\s*=\s*[%!])")
_HELP = re.compile(r"^\s*[A-Za-z_][\w.]*\?{1,2}\s*$")
# Line magics IPython runs without their `%` (automagic: `cd repo`, `pip install x`,
# `load_ext autoreload`), recognised only on a line that is not Python on its own.
_AUTOMAGIC = re.compile(
    r"^\s*(?:cd|ls|pwd|pip|conda|load_ext|reload_ext|unload_ext|autoreload|matplotlib|env|set_env|cat|mkdir|rm|cp|mv"
    r"|run|pushd|popd|less|man|pycat|history|who|whos|config|store|xmode|time|timeit|alias)"
    r"\s+(?:-[A-Za-z-]|[A-Za-z0-9_~./'\"])"  # an argument or an option, not an operator (`config = {`)
)
# For the triple-quoted-string scan: strings, comments and the quotes that open a long string.
_TOKENS = re.compile(r"#.*|\"\"\"|'''|\"(?:\\.|[^\"\\])*\"?|'(?:\\.|[^'\\])*'?|\\.|[()\[\]{}]")


class NotebookError(Exception):
    """The file is not a notebook this tool can read (broken JSON, no cell list)."""


@dataclass
class CodeCell:
    index: int  # 1-based position among all the notebook's cells
    lines: List[str]  # the cell's source lines, without line ends
    trailing_newline: bool


@dataclass
class Program:
    """The joined code cells and the table that maps its rows back to (cell, row in cell)."""

    text: str
    rows: List[Tuple[int, int]]  # program row - 1 -> (cell index, 1-based row), (0, 0) on markers
    magics: Dict[int, str]  # placeholder number -> the original line
    cells: List[CodeCell]
    placeholder_rows: Set[int] = field(default_factory=set)  # program rows that stand in for a magic

    def locate(self, pos: Position) -> Tuple[Optional[int], Position]:
        if 0 < pos.row <= len(self.rows):
            cell, row = self.rows[pos.row - 1]
            if cell:
                return cell, Position(row, pos.column)
            # A marker row (the position just after a cell's last line): the next cell's row 1.
            nxt = pos.row
            while nxt < len(self.rows) and not self.rows[nxt][0]:
                nxt += 1
            if nxt < len(self.rows):
                return self.rows[nxt][0], Position(1, 1)
        return None, pos


def _automagic(line: str) -> bool:
    if not _AUTOMAGIC.match(line):
        return False
    try:
        compile(line.strip(), "<cell>", "exec")
    except (SyntaxError, ValueError):
        return True  # `cd articulated-animation`: not Python, so IPython's magic
    return False  # `time = 3` or `ls - x`: Python after all


_CELL_BODY = "cell"  # a line of a cell magic's body that is not Python (truthy, as True is)


def _magic_lines(lines: List[str]) -> List[object]:
    """Which lines of one cell are IPython escapes (not inside a triple-quoted string)."""
    flags: List[object] = [False] * len(lines)
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    if first is not None and lines[first].lstrip().startswith("%%"):
        name = lines[first].lstrip()[2:].split(None, 1)
        if name and name[0] in _PYTHON_CELL_MAGICS:
            flags[first] = True  # the body is Python: check it
            rest = _magic_lines(lines[first + 1:])
            return flags[: first + 1] + rest
        # %%bash, %%writefile, ...: the whole cell is not Python, and its indentation (YAML, a
        # shell script) is none of Python's: every placeholder goes at the cell magic's.
        return [_CELL_BODY] * len(lines)
    in_string: Optional[str] = None
    depth = 0
    continued = False  # a magic line ending in a backslash goes on on the next line
    python_continued = False
    for i, line in enumerate(lines):
        starts_statement = in_string is None and depth == 0 and not python_continued
        if continued or (starts_statement and (_ESCAPE.match(line) or _HELP.match(line) or _automagic(line))):
            flags[i] = True
            continued = line.endswith("\\")
            continue
        continued = False
        in_string, depth = _scan(line, in_string, depth)
        python_continued = in_string is None and line.endswith("\\")
    return flags


def _scan(line: str, in_string: Optional[str], depth: int) -> Tuple[Optional[str], int]:
    """The triple quote still open and the bracket depth at the end of ``line``."""
    pos = 0
    while pos < len(line):
        if in_string is not None:
            end = line.find(in_string, pos)
            while end > 0 and _escaped(line, end):
                end = line.find(in_string, end + 1)
            if end < 0:
                return in_string, depth
            pos, in_string = end + 3, None
            continue
        match = _TOKENS.search(line, pos)
        if match is None:
            break
        token = match.group()
        if token.startswith("#"):
            break
        if token in ('"""', "'''"):
            in_string = token
        elif token in "([{":
            depth += 1
        elif token in ")]}":
            depth = max(0, depth - 1)
        pos = match.end()
    return in_string, depth


def _escaped(line: str, at: int) -> bool:
    slashes = 0
    while at - slashes - 1 >= 0 and line[at - slashes - 1] == "\\":
        slashes += 1
    return slashes % 2 == 1


def cell_source(cell: Dict[str, Any]) -> str:
    source = cell.get("source", "")
    if isinstance(source, list):
        return "".join(s for s in source if isinstance(s, str))
    return source if isinstance(source, str) else ""


def build_program(cells: Sequence[Tuple[int, str]]) -> Program:
    """``cells``: (1-based index, source text) of each code cell, in order."""
    out: List[str] = []
    rows: List[Tuple[int, int]] = []
    magics: Dict[int, str] = {}
    placeholder_rows: Set[int] = set()
    code_cells: List[CodeCell] = []
    for index, text in cells:
        lines = _LINE_BREAK.split(text)
        trailing = len(lines) > 1 and lines[-1] == ""
        if trailing:
            lines.pop()
        if lines == [""]:
            lines = []
        code_cells.append(CodeCell(index, lines, trailing))
        out.append(_MARKER.format(index=index))
        rows.append((0, 0))
        indent, continued = "", False
        for row, (line, magic) in enumerate(zip(lines, _magic_lines(lines)), start=1):
            if magic:
                number = len(magics) + 1
                magics[number] = line
                if magic is _CELL_BODY:
                    indent = ""
                elif not continued:  # a continuation line keeps the indentation of its magic
                    indent = line[: len(line) - len(line.lstrip())]
                continued = line.endswith("\\")
                line = indent + _PLACEHOLDER.format(index=number)
                placeholder_rows.add(len(out) + 1)
            else:
                continued = False
            out.append(line)
            rows.append((index, row))
    return Program("\n".join(out) + "\n", rows, magics, code_cells, placeholder_rows)


def split_program(program: Program, text: str) -> Optional[Dict[int, str]]:
    """The cell sources of a (fixed) program text, magics restored; None if the markers or the
    placeholders did not all survive exactly once and in order."""
    lines = _LINE_BREAK.split(text)
    if lines and lines[-1] == "":
        lines.pop()
    by_cell: Dict[int, List[str]] = {}
    current: Optional[int] = None
    seen_magics = set()
    order = [c.index for c in program.cells]
    found_order: List[int] = []
    for line in lines:
        marker = _MARKER_RE.match(line)
        if marker:
            current = int(marker.group(1))
            found_order.append(current)
            by_cell[current] = []
            continue
        if current is None:
            return None
        placeholder = _PLACEHOLDER_RE.match(line)
        if placeholder:
            number = int(placeholder.group(2))
            if number not in program.magics or number in seen_magics:
                return None
            seen_magics.add(number)
            line = program.magics[number]
        by_cell[current].append(line)
    if found_order != order or len(seen_magics) != len(program.magics):
        return None
    result: Dict[int, str] = {}
    for cell in program.cells:
        body = "\n".join(by_cell[cell.index])
        result[cell.index] = body + "\n" if cell.trailing_newline and body else body
    return result


def to_cells(program: Program, finding: Finding) -> Finding:
    """A program-coordinate finding as the user sees it: cell, and rows in that cell."""
    cell, start = program.locate(finding.start)
    end_cell, end = program.locate(finding.end)
    if end_cell != cell:
        end = start
    fix = finding.fix
    if fix is not None:
        edits = []
        for e in fix.edits:
            _, s = program.locate(e.start)
            _, t = program.locate(e.end)
            edits.append(Edit(s, t, e.content))
        fix = Fix(fix.message, tuple(edits), fix.applicability)
    related = []
    places: Dict[str, str] = {}
    for r in finding.related:
        r_cell, r_start = program.locate(r.start)
        r_end_cell, r_end = program.locate(r.end)
        if r_cell is not None:  # a related place on a cell marker or outside every cell is left out
            related.append(Related(r.label, r_start, r_end if r_end_cell == r_cell else r_start, r_cell))
            places[str(r.start.row)] = (f"line {r_start.row}" if r_cell == cell
                                        else f"line {r_start.row} of cell {r_cell}")
    # Messages name a related place by its row in the joined program ("the epoch loop at line
    # 180"): in a notebook that row means nothing to the reader. One pass, so that a row already
    # rewritten is never rewritten again.
    message = _ROW.sub(lambda m: places.get(m.group(1), m.group(0)), finding.message) if places else finding.message
    return finding.replace(start=start, end=end, fix=fix, cell=cell, related=tuple(related), message=message)


_ROW = re.compile(r"\bline (\d+)\b")


def cell_fix(program: Program, finding: Finding) -> Optional[Fix]:
    """A program-coordinate finding's fix as edits in the finding's own cell; None when an
    edit reaches another cell, a cell marker or a magic's placeholder. An editor's quick fix
    edits one cell document, where `advisor check --fix` rewrites the notebook file whole."""
    if finding.fix is None:
        return None
    cell, _ = program.locate(finding.start)
    edits = []
    for edit in finding.fix.edits:
        rows = range(edit.start.row, edit.end.row + 1)
        if any(not 0 < r <= len(program.rows) or not program.rows[r - 1][0] or r in program.placeholder_rows
               for r in rows):
            return None
        start_cell, start = program.locate(edit.start)
        end_cell, end = program.locate(edit.end)
        if start_cell != cell or end_cell != cell:
            return None
        edits.append(Edit(start, end, edit.content))
    return Fix(finding.fix.message, tuple(edits), finding.fix.applicability)


def problem_to_cells(program: Program, problem: FileProblem) -> FileProblem:
    cell, pos = program.locate(Position(problem.row, problem.column))
    if cell is None:
        return problem
    return problem.replace(row=pos.row, column=pos.column, cell=cell)


# -- the notebook file -----------------------------------------------------------------------------
@dataclass
class Notebook:
    data: Dict[str, Any]
    raw: str

    @classmethod
    def parse(cls, raw: str) -> "Notebook":
        if not raw.strip():
            # An empty placeholder file named `.ipynb`: Jupyter shows it as a notebook with no
            # cells, and there is nothing to check.
            return cls({"cells": []}, raw)
        try:
            data = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise NotebookError(f"not a valid notebook: invalid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})") from None
        except RecursionError:
            raise NotebookError("not a valid notebook: JSON nested too deeply") from None
        if not isinstance(data, dict) or not isinstance(data.get("cells"), list):
            raise NotebookError("not a valid notebook: no `cells` list at the top level")
        return cls(data, raw)

    @property
    def is_python(self) -> bool:
        meta = self.data.get("metadata")
        if not isinstance(meta, dict):
            return True
        info = meta.get("language_info")
        if isinstance(info, dict) and isinstance(info.get("name"), str):
            return info["name"].lower() == "python"
        kernel = meta.get("kernelspec")
        if isinstance(kernel, dict) and isinstance(kernel.get("language"), str):
            return kernel["language"].lower() == "python"
        return True

    def code_cells(self) -> List[Tuple[int, str]]:
        cells = []
        for number, cell in enumerate(self.data["cells"], start=1):
            if isinstance(cell, dict) and cell.get("cell_type") == "code":
                cells.append((number, cell_source(cell)))
        return cells

    def cell_text(self, index: int) -> str:
        return cell_source(self.data["cells"][index - 1])

    def with_sources(self, sources: Dict[int, str]) -> str:
        """The notebook's JSON text with the given cells' sources replaced and every other
        character kept. Raises notebook_json.LayoutError where that cannot be done."""
        from advisor.notebook_json import replace_sources

        return replace_sources(self.raw, self.data, sources)


class NotebookResult(FileResult):
    """A FileResult whose findings are in cell coordinates; ``fixed_text`` is the new JSON, and
    ``unfixed`` then the result of the notebook as it was read (reported if the fixes cannot be
    written)."""

    __slots__ = ("notebook", "fixed_sources", "unfixed")
    _fields = FileResult._fields + __slots__

    def __init__(self, filename: str, findings: Optional[List[Finding]] = None, problem: Optional[FileProblem] = None,
                 source: Any = None, fixed_text: Optional[str] = None, fixes_applied: int = 0,
                 notebook: Optional[Notebook] = None, fixed_sources: Optional[Dict[int, str]] = None,
                 unfixed: Optional["NotebookResult"] = None) -> None:
        super().__init__(filename, findings, problem, source, fixed_text, fixes_applied)
        self.notebook = notebook
        self.fixed_sources = {} if fixed_sources is None else fixed_sources
        self.unfixed = unfixed

    def cell_lines(self) -> Dict[Tuple[str, int], List[str]]:
        """Each cell's current lines, keyed by (filename, cell), for the text renderer."""
        if self.notebook is None:
            return {}
        out: Dict[Tuple[str, int], List[str]] = {}
        for index, text in self.notebook.code_cells():
            text = self.fixed_sources.get(index, text)
            out[(self.filename, index)] = _LINE_BREAK.split(text)
        return out

    def diff(self) -> str:
        if self.notebook is None:
            return ""
        parts = []
        for index, new in sorted(self.fixed_sources.items()):
            old = self.notebook.cell_text(index)
            if new != old:
                label = f"{self.filename}:cell {index}"
                parts.append(unified_diff(_ensure_newline(old), _ensure_newline(new), label))
        return "".join(parts)


def _ensure_newline(text: str) -> str:
    return text if not text or text.endswith("\n") else text + "\n"


def check_notebook_text(
    raw: str, filename: str, config: Config = DEFAULT_CONFIG, path: Optional[Path] = None
) -> Tuple[NotebookResult, Optional[Program]]:
    """Findings in cell coordinates, and the program they were computed on."""
    result, program, _ = _check_text(raw, filename, config, path)
    return result, program


def _check_text(
    raw: str, filename: str, config: Config, path: Optional[Path]
) -> Tuple[NotebookResult, Optional[Program], Optional[FileResult]]:
    """``check_notebook_text``, and the program's own result (program coordinates)."""
    result = NotebookResult(filename)
    try:
        notebook = Notebook.parse(raw)
    except NotebookError as exc:
        result.problem = FileProblem(filename, str(exc))
        return result, None, None
    result.notebook = notebook
    if not notebook.is_python:
        return result, None, None
    from advisor.suppression import check_text  # imported on use: see cli.py

    program = build_program(notebook.code_cells())
    checked = check_text(program.text, filename, config, path=path)
    result.findings = [to_cells(program, f) for f in checked.findings]
    if checked.problem is not None:
        result.problem = problem_to_cells(program, checked.problem)
    result.warnings = [problem_to_cells(program, w) for w in checked.warnings]
    return result, program, checked


def check_notebook(
    path: Path, config: Config = DEFAULT_CONFIG, display: Optional[str] = None,
    fix: bool = False, unsafe: bool = False,
) -> NotebookResult:
    """`advisor check` on one notebook: read and check it, and with ``fix`` compute its fixes
    (``fixed_text``: the new file, which the caller writes)."""
    from advisor.source import SourceText

    filename = display if display is not None else str(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        return NotebookResult(filename, problem=FileProblem(filename, f"cannot read: {exc.strerror or exc}"))
    try:
        raw = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        return NotebookResult(filename, problem=FileProblem(filename, f"cannot decode: not UTF-8 ({exc.reason})"))
    result, program, checked = _check_text(raw, filename, config, path)
    result.source = SourceText(raw, "utf-8-sig" if data.startswith(b"\xef\xbb\xbf") else "utf-8")
    if not fix or program is None or result.problem is not None:
        return result

    from advisor.notebook_json import LayoutError
    from advisor.suppression import check_text

    def check(text: str) -> FileResult:
        return check_text(text, filename, config, path=path)

    done: List[Finding] = []
    new_program, applied, final = fix_until_stable(program.text, check, unsafe=unsafe, checked=checked, applied=done)
    if not applied:
        return result
    sources = split_program(program, new_program)
    if sources is None:
        result.problem = FileProblem(filename, "internal error: the fixed cells could not be mapped back; not fixed")
        return result
    notebook = result.notebook
    changed = {i: t for i, t in sources.items() if t != notebook.cell_text(i)}
    try:
        new_json = notebook.with_sources(changed)
    except LayoutError as exc:
        result.problem = FileProblem(filename, f"internal error: the fixed cells could not be written into the "
                                               f"notebook's JSON ({exc}); not fixed")
        return result
    fixed = NotebookResult(filename, source=result.source, notebook=notebook, fixed_sources=changed,
                           fixed_text=new_json, fixes_applied=applied, unfixed=result)
    # Findings left after the fixes, in the new cells' coordinates.
    after = build_program([(i, sources.get(i, t)) for i, t in notebook.code_cells()])
    fixed.findings = [to_cells(after, f) for f in final.findings]
    if final.problem is not None:
        fixed.problem = problem_to_cells(after, final.problem)
    fixed.warnings = [problem_to_cells(after, w) for w in final.warnings]
    fixed.fixed = done
    return fixed


def notebook_with_noqa(result: NotebookResult) -> Tuple[Optional[str], int]:
    """`--add-noqa` for a notebook: the new JSON text with a `# noqa` code for each finding in
    its cell, and how many were added; (None, 0) when the cells could not be mapped back. The
    comments are placed on the joined program, where a backslash or a string can span rows as
    in a file, then split into the cells as fixes are."""
    from advisor.add_noqa import with_noqa
    from advisor.notebook_json import LayoutError

    notebook = result.notebook
    if notebook is None:
        return None, 0
    program = build_program(notebook.code_cells())
    program_row = {cell_row: row for row, cell_row in enumerate(program.rows, 1) if cell_row[0]}
    findings = [f.replace(start=Position(program_row[(f.cell, f.start.row)], f.start.column), cell=None)
                for f in result.findings if (f.cell, f.start.row) in program_row]
    text, count = with_noqa(program.text, findings)
    if not count:
        return result.source.text if result.source is not None else None, 0
    sources = split_program(program, text)
    if sources is None:
        return None, 0
    changed = {i: t for i, t in sources.items() if t != notebook.cell_text(i)}
    try:
        return notebook.with_sources(changed), count
    except LayoutError:
        return None, 0
