"""The default, human-oriented output: each finding with its source line, span, the lines it
refers to, hint and fix."""

from __future__ import annotations

from collections import Counter
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

from rich.console import Console
from rich.markup import escape

from advisor.findings import Applicability, FileProblem, Finding, Severity, location
from advisor.output.advice import shown_hint
from advisor.output.names import printable

_STYLE = {Severity.ERROR: "bold red", Severity.WARNING: "bold yellow", Severity.INFO: "bold blue"}


def _caret_line(line: str, finding: Finding) -> str:
    start = finding.start.column - 1
    if finding.end.row == finding.start.row:
        width = max(1, finding.end.column - finding.start.column)
    else:
        width = max(1, len(line.rstrip()) - start)
    return " " * start + "^" * width


def write_text(
    console: Console,
    findings: List[Finding],
    problems: List[FileProblem],
    sources: Dict[Union[str, Tuple[str, int]], Sequence[str]],
    fix_hint: bool = True,
) -> None:
    for problem in problems:
        console.print(
            f"[bold]{escape(location(printable(problem.filename), problem.cell, problem.row, problem.column))}:[/] "
            f"[bold red]error[/]: {escape(printable(problem.reason))}",
            soft_wrap=True,
        )
    for f in findings:
        style = _STYLE[f.severity]
        console.print(
            f"[bold]{escape(location(printable(f.filename), f.cell, f.start.row, f.start.column))}:[/] [{style}]{f.code}[/] "
            f"{escape(f.message)} [dim]({f.severity.value})[/]",
            soft_wrap=True,
        )
        # Notebook cells are keyed by (filename, cell): their rows count from the cell's start.
        lines = sources.get(f.filename if f.cell is None else (f.filename, f.cell), ())
        # The places the message names ("the epoch loop at line 9"), each under the finding's
        # own line with its source line and label.
        related = []
        for r in f.related:
            where = lines if r.cell == f.cell else sources.get((f.filename, r.cell), ())
            if (r.start.row, r.cell) != (f.start.row, f.cell) and 0 < r.start.row <= len(where):
                label = r.label if r.cell == f.cell else f"{r.label} (cell {r.cell})"
                related.append((r.start.row, where[r.start.row - 1].expandtabs(1), label))
        width = len(str(max([f.start.row] + [row for row, _, _ in related])))
        if 0 < f.start.row <= len(lines):
            line = lines[f.start.row - 1].expandtabs(1)
            gutter = str(f.start.row).rjust(width)
            pad = " " * width
            console.print(f"  [dim]{gutter} │[/] {escape(line)}", soft_wrap=True)
            console.print(f"  [dim]{pad} │[/] [{style}]{_caret_line(line, f)}[/]", soft_wrap=True)
        for row, text, label in related:
            console.print(f"  [dim]{str(row).rjust(width)} │[/] {escape(text)}  [dim]← {escape(label)}[/]",
                          soft_wrap=True)
        hint = shown_hint(f)
        if hint:
            console.print(f"  [dim]hint:[/] {escape(hint)}", soft_wrap=True)
        if f.fix is not None:
            label = "fix" if f.fix.applicability is Applicability.SAFE else "fix (unsafe)"
            console.print(f"  [dim]{label}:[/] {escape(f.fix.message)}")
        if f.measurement is not None:
            console.print(f"  [dim]measured:[/] {escape(measurement_line(f.measurement))}", soft_wrap=True)
        console.print()


def write_summary(console: Console, findings: List[Finding], problems: List[FileProblem], unsafe: bool) -> None:
    if not findings and not problems:
        console.print("[bold green]All checks passed.[/]")
        return
    counts = Counter(f.code for f in findings)
    names = {f.code: f.name for f in findings}
    for code in sorted(counts):
        console.print(f"  {counts[code]:>4}  [bold]{code}[/]  {names[code]}")
    files = len({f.filename for f in findings})
    total = len(findings)
    safe = sum(1 for f in findings if f.fix and f.fix.applicability is Applicability.SAFE)
    unsafe_count = sum(1 for f in findings if f.fix and f.fix.applicability is Applicability.UNSAFE)
    parts = []
    if total:
        parts.append(f"Found {total} finding{'s' if total != 1 else ''} in {files} file{'s' if files != 1 else ''}.")
    if safe:
        parts.append(f"{safe} fixable with `--fix`.")
    if unsafe_count:
        parts.append(f"{unsafe_count} more with `--fix --unsafe-fixes`." if not unsafe else "")
    if problems:
        parts.append(f"{len(problems)} file{'s' if len(problems) != 1 else ''} could not be checked.")
    console.print(" ".join(p for p in parts if p))


# -- `check --measure` ---------------------------------------------------------------------------
_VERDICT_STYLE = {"confirmed": "bold red", "not confirmed": "green"}


def _num(value: Optional[float]) -> str:
    if value is None:
        return "-"
    return f"{value:.4g}"


def measurement_line(m: Dict[str, Any]) -> str:
    """`confirmed (P-SYNC): 1.2 -> 0.9 ms/step, 1.3x, saves 0.3 ms/step; detail`."""
    text = f"{m.get('verdict')} ({m.get('probe')})"
    if m.get("baseline") is not None or m.get("fixed") is not None:
        text += f": {_num(m.get('baseline'))} -> {_num(m.get('fixed'))} {m.get('unit') or ''}".rstrip()
        if m.get("ratio") is not None:
            text += f", {_num(m['ratio'])}x"
        if m.get("saving_per_step") is not None:
            unit = str(m.get("unit") or "")
            text += f", saves {_num(m['saving_per_step'])} {unit.split('/')[0] if '/' in unit else unit}/step"
    if m.get("detail"):
        text += f"; {m['detail']}"
    return text


def write_measurements(console: Console, findings: List[Finding]) -> None:
    """The summary table of `--measure`: one row per measured finding, then the device."""
    measured = [f for f in findings if f.measurement is not None]
    if not measured:
        return
    from rich.table import Table

    table = Table(title="Measurements", box=None, pad_edge=False, header_style="bold", title_justify="left")
    for column in ("Rule", "Location", "Verdict", "Baseline", "Fixed", "Unit", "Ratio", "Saving/step"):
        table.add_column(column, overflow="fold", no_wrap=column not in ("Location", "Unit"))
    for f in measured:
        m = f.measurement
        verdict = str(m.get("verdict"))
        style = _VERDICT_STYLE.get(verdict, "dim")
        table.add_row(f.code, escape(location(printable(f.filename), f.cell, f.start.row, f.start.column)),
                      f"[{style}]{escape(verdict)}[/]", _num(m.get("baseline")), _num(m.get("fixed")),
                      escape(str(m.get("unit") or "")), _num(m.get("ratio")), _num(m.get("saving_per_step")))
    console.print()
    console.print(table)
    device = measured[0].measurement.get("device") or {}
    console.print(f"[dim]device: {escape(str(device.get('name')))}, torch {escape(str(device.get('torch')))}, "
                  f"CUDA {escape(str(device.get('cuda') or 'none'))}[/]")
