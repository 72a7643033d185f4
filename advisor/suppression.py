"""`# noqa` beyond a finding's own row: every face that checks a file for the CLI or an editor
calls ``check_text``, the engine's check followed by what the comments of the file say.

- A `# noqa` on any row of a backslash continuation or multi-line string silences findings on
  every row of it, as flake8 reads such rows as one (line_groups); the engine has already
  applied the comments of each finding's own row.
- A GPU code listed in a `# noqa` that no rule has (a typo, the reserved GPU404) is a warning
  on the result (``FileResult.warnings``): it silences nothing, and the user should know.
- GPU001 (unused-noqa, a meta-rule, opt-in): the file is checked once more with its `# noqa`
  comments blanked out, for the rules the comments name only, to learn which codes silence
  something; the others are reported with a safe fix that removes them.

Only GPU codes are judged: other tools' codes (E501, F401) and blanket `# noqa` comments are
none of this tool's business.
"""

from __future__ import annotations

from pathlib import Path

from advisor.config import DEFAULT_CONFIG, Config
from advisor.findings import Applicability, Edit, FileProblem, FileResult, Finding, Fix, Position, Severity
from advisor.line_groups import line_groups
from advisor.noqa import NOQA, NoqaComment, blanked, may_hold_noqa, parse, remove_codes
from advisor.retired_codes import retired_code
from advisor.rule_codes import META_CODES, TOOL_PREFIX, UNUSED_NOQA
from advisor.source import split_lines

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing is not imported at run time: start-up is most of a warm run
    from typing import Any, Dict, List, Optional, Set, Tuple

def check_text(text: str, filename: str = "<stdin>", config: Config = DEFAULT_CONFIG, **options: Any) -> FileResult:
    """``engine.check_source`` (``options`` go to it: ``path``, ``chunks``, ...), then the
    `# noqa` comments of the file as described above."""
    from advisor.engine import check_source

    result = check_source(text, filename, config, **options)
    if result.problem is not None or not may_hold_noqa(text):
        return result
    lines = split_lines(text)
    comments: Dict[int, NoqaComment] = {}
    for row, line in enumerate(lines, 1):
        if may_hold_noqa(line):
            comment = parse(line)
            if comment is not None:
                comments[row] = comment
    if not comments:
        return result
    path: Optional[Path] = options.get("path")
    audit_enabled = config.is_enabled(UNUSED_NOQA, path)
    groups = line_groups(text) if result.findings or audit_enabled else {}
    if result.findings and groups:
        result.findings = [f for f in result.findings if not _silenced_in_group(f, groups, comments)]
    unknown = {row: _unknown_codes(comment) for row, comment in comments.items()}
    if audit_enabled:
        audit = _unused(text, lines, filename, config, comments, unknown, groups, options)
        if audit:
            result.findings = sorted(result.findings + audit, key=lambda f: f.sort_key)
        return result
    for row, codes in sorted(unknown.items()):
        line = lines[row - 1]
        for code, why in codes:
            column = line.upper().find(code, NOQA.search(line).start()) + 1
            result.warnings.append(FileProblem(filename, f"`# noqa` lists {code}, {why}; it silences nothing",
                                               row, max(column, 1)))
    return result


def _silenced_in_group(finding: Finding, groups: Dict[int, Tuple[int, int]], comments: Dict[int, NoqaComment]) -> bool:
    group = groups.get(finding.start.row)
    if group is None:
        return False
    return any(row in comments and comments[row].silences(finding.code) for row in range(group[0], group[1] + 1))


def _is_ours(code: str) -> bool:
    return code.startswith(TOOL_PREFIX)


def _unknown_codes(comment: NoqaComment) -> List[Tuple[str, str]]:
    """(code, why) for each GPU code of the comment that no rule has and is no prefix of one."""
    from advisor.rules import ALL_RULES

    found = []
    for code in comment.codes:
        if not _is_ours(code):
            continue
        entry = retired_code(code)
        if entry is not None:
            found.append((code, f"which is {entry.status} (no rule has it)"))
        elif not any(rule.code.startswith(code) for rule in ALL_RULES) and not any(
                meta.startswith(code) for meta in META_CODES):
            found.append((code, "which no rule has"))
    return found


def _blanked(lines: List[str], rows: Set[int], newline: str) -> str:
    """The text with the `noqa` word of those rows' comments changed (same length), so that
    the engine's own filter keeps every finding."""
    out = list(lines)
    for row in rows:
        out[row - 1] = blanked(out[row - 1])
    return newline.join(out)


def _newline(text: str) -> str:
    return "\r\n" if "\r\n" in text else ("\r" if "\r" in text and "\n" not in text else "\n")


def _unused(text: str, lines: List[str], filename: str, config: Config, comments: Dict[int, NoqaComment],
            unknown: Dict[int, List[Tuple[str, str]]], groups: Dict[int, Tuple[int, int]],
            options: Dict[str, Any]) -> List[Finding]:
    """GPU001 findings: the GPU codes of `# noqa` lists that silence nothing."""
    from advisor.engine import active_rules, check_source

    path = options.get("path")
    audited = {row: comment for row, comment in comments.items()
               if any(_is_ours(code) for code in comment.codes)
               and not any(UNUSED_NOQA.startswith(code) for code in comment.codes)}  # `# noqa: GPU001` keeps it
    if not audited:
        return []
    enabled = active_rules(config, path)
    named = [rule for rule in enabled
             if any(rule.code.startswith(code) for comment in audited.values() for code in comment.codes)]
    used: Set[Tuple[int, str]] = set()
    if named:
        # Every finding the named rules make, silenced or not, info included (a comment kept
        # for an info finding is in use even while info findings are hidden).
        blank = _blanked(lines, set(audited), _newline(text))
        again = check_source(blank, filename, config.replace(show_info=True), rules=named, path=path)
        for finding in again.findings:
            group = groups.get(finding.start.row, (finding.start.row, finding.start.row))
            for row in range(group[0], group[1] + 1):
                comment = audited.get(row)
                if comment is None:
                    continue
                used.update((row, code) for code in comment.codes if finding.code.startswith(code))
    out = []
    for row, comment in sorted(audited.items()):
        why = dict(unknown.get(row, ()))
        unused = []
        for code in comment.codes:
            if not _is_ours(code) or (row, code) in used or code in unused:
                continue
            if code in why or any(rule.code.startswith(code) for rule in enabled):
                unused.append(code)
        if unused:
            out.append(_finding(lines[row - 1], row, unused, why, filename))
    return out


def _label(code: str) -> str:
    entry = retired_code(code)
    return entry.status if entry is not None else "unknown"


def _finding(line: str, row: int, unused: List[str], why: Dict[str, str], filename: str) -> Finding:
    match = NOQA.search(line)
    listed = [f"`{code}` ({_label(code) if code in why else 'silences nothing here'})" for code in unused]
    start, end, content = remove_codes(line, unused)
    fix = Fix(f"remove {', '.join(unused)} from the `# noqa` comment",
              (Edit(Position(row, start + 1), Position(row, end + 1), content),), Applicability.SAFE)
    codes_end = match.start("codes") + len(match.group("codes").rstrip(", \t"))
    return Finding(
        code=UNUSED_NOQA,
        name=META_CODES[UNUSED_NOQA].name,
        message=f"unused `# noqa` code{'s' if len(unused) > 1 else ''}: {', '.join(listed)}",
        severity=Severity.WARNING,
        start=Position(row, match.start() + 1),
        end=Position(row, codes_end + 1),
        url=None,
        fix=fix,
        filename=filename,
        data={"unused": [c for c in unused if c not in why], "unknown": [c for c in unused if c in why]},
    )
