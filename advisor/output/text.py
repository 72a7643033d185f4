"""The default, human-oriented output: each finding with its source line, span, hint and fix."""

from __future__ import annotations

from collections import Counter
from typing import Dict, List, Sequence, Tuple, Union

from rich.console import Console
from rich.markup import escape

from advisor.findings import Applicability, FileProblem, Finding, Severity, location

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
            f"[bold]{escape(location(problem.filename, problem.cell, problem.row, problem.column))}:[/] [bold red]error[/]: "
            f"{escape(problem.reason)}",
            soft_wrap=True,
        )
    for f in findings:
        style = _STYLE[f.severity]
        console.print(
            f"[bold]{escape(location(f.filename, f.cell, f.start.row, f.start.column))}:[/] [{style}]{f.code}[/] "
            f"{escape(f.message)} [dim]({f.severity.value})[/]",
            soft_wrap=True,
        )
        # Notebook cells are keyed by (filename, cell): their rows count from the cell's start.
        lines = sources.get(f.filename if f.cell is None else (f.filename, f.cell), ())
        if 0 < f.start.row <= len(lines):
            line = lines[f.start.row - 1].expandtabs(1)
            gutter = str(f.start.row)
            pad = " " * len(gutter)
            console.print(f"  [dim]{gutter} │[/] {escape(line)}", soft_wrap=True)
            console.print(f"  [dim]{pad} │[/] [{style}]{_caret_line(line, f)}[/]", soft_wrap=True)
        if f.hint:
            console.print(f"  [dim]hint:[/] {escape(f.hint)}", soft_wrap=True)
        if f.fix is not None:
            label = "fix" if f.fix.applicability is Applicability.SAFE else "fix (unsafe)"
            console.print(f"  [dim]{label}:[/] {escape(f.fix.message)}")
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
