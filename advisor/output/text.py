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


def write_summary(console: Console, findings: List[Finding], problems: List[FileProblem], unsafe: bool,
                  fixed: int = 0, errors: bool = False) -> None:
    """The closing line: "All checks passed.", "Found 5 findings in 2 files.", or after fixes
    "Found 8 findings (3 fixed, 5 remaining)." (ruff's wording). Nothing when nothing was
    checked because of errors: "All checks passed." would be a lie."""
    total = len(findings)
    if not findings and not problems and not fixed:
        if not errors:
            console.print("[bold green]All checks passed.[/]")
        return
    files = len({f.filename for f in findings})
    safe = sum(1 for f in findings if f.fix and f.fix.applicability is Applicability.SAFE)
    unsafe_count = sum(1 for f in findings if f.fix and f.fix.applicability is Applicability.UNSAFE)
    parts = []
    if fixed:
        found = total + fixed
        parts.append(f"Found {found} finding{'s' if found != 1 else ''} ({fixed} fixed, {total} remaining).")
    elif total:
        parts.append(f"Found {total} finding{'s' if total != 1 else ''} in {files} file{'s' if files != 1 else ''}.")
    if safe:
        parts.append(f"{safe} fixable with `--fix`.")
    if unsafe_count:
        parts.append(f"{unsafe_count} more with `--fix --unsafe-fixes`." if not unsafe else "")
    if problems:
        parts.append(f"{len(problems)} file{'s' if len(problems) != 1 else ''} could not be checked.")
    console.print(" ".join(p for p in parts if p))


def write_statistics(console: Console, findings: List[Finding]) -> None:
    """`--statistics`: one row per rule, most frequent first: count, code, a `[*]` where some
    of its findings have a fix `--fix` applies, name."""
    counts = Counter(f.code for f in findings)
    names = {f.code: f.name for f in findings}
    fixable = {f.code for f in findings if f.fix and f.fix.applicability is Applicability.SAFE}
    for code, count in sorted(counts.items(), key=lambda item: (-item[1], item[0])):
        mark = "[*]" if code in fixable else "   "
        console.print(f"{count:>5}  [bold]{code}[/]  {escape(mark)} {names[code]}", soft_wrap=True)


def fixed_by_file(results: Sequence[Any]) -> List[Tuple[str, List[Tuple[str, str, int]]]]:
    """`--show-fixes`: per fixed file, (code, name, how many of its findings were fixed),
    counting the rounds a first fix made possible (a pinned loader's copies, then)."""
    out = []
    for result in results:
        if not result.fixes_applied or not result.fixed:
            continue
        counts = Counter(f.code for f in result.fixed)
        names = {f.code: f.name for f in result.fixed}
        out.append((result.filename, [(code, names[code], count) for code, count in sorted(counts.items())]))
    return out


def write_fixes(console: Console, results: Sequence[Any]) -> None:
    listing = fixed_by_file(results)
    if not listing:
        return
    total = sum(count for _, rows in listing for _, _, count in rows)
    console.print(f"Fixed {total} finding{'s' if total != 1 else ''}:")
    for filename, rows in listing:
        console.print(f"- {escape(filename)}:", soft_wrap=True)
        for code, name, count in rows:
            console.print(f"    {count:>3} × [bold]{code}[/] ({name})")


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
