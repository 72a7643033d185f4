"""Source written for Python 2 or for Python 3.6 and older, read as current Python.

Training scripts from PyTorch's first years are still cloned and read: `print loss.data[0]`,
`except IOError, e:`, `x.cuda(async=True)` (the old name of `non_blocking`, a keyword since
Python 3.7). Such a file does not parse today, so nothing in it would be checked. ``lift`` turns
those statements into their current spelling, line for line, so that the file can be analysed;
every other line keeps its text, and an edited line keeps its row (its columns may move after
the edit). The engine reads a lifted file's findings but offers no fix for it: a fix would
write the lifted text back.

Only shapes that are certain are lifted; anything else (backquotes, old octal literals,
tuple parameters) leaves the file as it was, and its syntax error is reported as before.
"""
import io
import tokenize
from typing import List, Optional, Tuple

_SKIPPED = (tokenize.NL, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT)
# Statements that were statements in Python 2 and are calls now.
_STATEMENT_CALLS = ("print", "exec")
# Tokens after `print` that make it a name, not a statement: `print(...)`, `print = f`, `print.x`.
_NOT_A_STATEMENT = ("(", "=", ".", "[", ")", ",", ";", ":")

Edit = Tuple[int, int, int, str]  # row (1-based), first column, column after, new text


def lift(text: str) -> Optional[str]:
    """The text with its old statements in today's spelling, or None when it holds none this
    module knows (or cannot be read as tokens)."""
    try:
        return _lift(text)
    except (tokenize.TokenError, SyntaxError, ValueError, IndexError, RecursionError):
        return None  # odd input: the file's own syntax error is reported instead


def _lift(text: str) -> Optional[str]:
    if "print" not in text and "except" not in text and "async" not in text and "raise" not in text \
            and "<>" not in text and "exec" not in text:
        return None
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, SyntaxError, ValueError):
        return None
    edits: List[Edit] = []
    for statement in _statements(tokens):
        if not _lift_statement(statement, edits):
            return None
    for at, token in enumerate(tokens):
        if token.type == tokenize.NAME and token.string == "async" and at + 1 < len(tokens) \
                and tokens[at + 1].string == "=" and _in_call(tokens, at):
            edits.append((token.start[0], token.start[1], token.end[1], "non_blocking"))
        elif token.type == tokenize.OP and token.string == "<>":
            edits.append((token.start[0], token.start[1], token.end[1], "!="))
        elif token.string == "<" and at + 1 < len(tokens) and tokens[at + 1].string == ">" \
                and tokens[at + 1].start == token.end:
            edits.append((token.start[0], token.start[1], tokens[at + 1].end[1], "!="))
    if not edits:
        return None
    return _applied(text, edits)


def _statements(tokens: List[tokenize.TokenInfo]) -> List[List[tokenize.TokenInfo]]:
    """The simple statements, each as its significant tokens: a logical line splits at `;` and
    after the `:` of a one-line compound statement (`if x: print y`), both outside brackets."""
    out: List[List[tokenize.TokenInfo]] = []
    current: List[tokenize.TokenInfo] = []
    depth = 0
    for token in tokens:
        if token.type in _SKIPPED:
            continue
        if token.type in (tokenize.NEWLINE, tokenize.ENDMARKER):
            if current:
                out.append(current)
            current, depth = [], 0
            continue
        if token.type == tokenize.ERRORTOKEN and token.string.strip():
            return [[token]]  # a backquote or a stray character: not a shape to lift
        if token.type == tokenize.OP:
            if token.string in "([{":
                depth += 1
            elif token.string in ")]}":
                depth = max(0, depth - 1)
            elif depth == 0 and token.string == ";":
                if current:
                    out.append(current)
                current = []
                continue
            elif depth == 0 and token.string == ":" and current and current[0].string in _COMPOUND:
                current.append(token)
                out.append(current)
                current = []
                continue
        current.append(token)
    if current:
        out.append(current)
    return out


_COMPOUND = ("if", "elif", "else", "for", "while", "try", "except", "finally", "with", "def", "class")


def _lift_statement(statement: List[tokenize.TokenInfo], edits: List[Edit]) -> bool:
    """Adds the edits one statement needs; False for a token no lift can read."""
    first = statement[0]
    if first.type == tokenize.ERRORTOKEN:
        return False
    if first.type != tokenize.NAME or len(statement) < 2:
        return True
    if first.string in _STATEMENT_CALLS and statement[1].string not in _NOT_A_STATEMENT:
        _call_edits(statement, edits)
    elif first.string == "except":
        comma = _top_level(statement, ",")
        if comma is not None:  # `except IOError, e:`
            edits.append((comma.start[0], comma.start[1], comma.end[1], " as"))
    elif first.string == "raise":
        comma = _top_level(statement, ",")
        if comma is not None:  # `raise ValueError, "message"`
            last, after = statement[-1], statement[statement.index(comma) + 1:]
            end = after[0].start[1] if after and after[0].start[0] == comma.start[0] else comma.end[1]
            edits.append((comma.start[0], comma.start[1], end, "("))
            edits.append((last.end[0], last.end[1], last.end[1], ")"))
    return True


def _call_edits(statement: List[tokenize.TokenInfo], edits: List[Edit]) -> None:
    """`print x, y` -> `print(x, y)`; `print >>f, x` -> `print(x, file=f)`."""
    name, after, last = statement[0], statement[1], statement[-1]
    if after.string == ">>" and name.string == "print":
        comma = _top_level(statement, ",")
        if comma is None:
            target = _source(statement[2:])
            edits.append((name.end[0], name.end[1], last.end[1] if last.end[0] == name.end[0] else name.end[1],
                          f"(file={target})"))
            return
        target = _source(statement[2:statement.index(comma)])
        rest = statement[statement.index(comma) + 1:]
        if not rest or comma.start[0] != name.end[0] or rest[0].start[0] != name.end[0]:
            return
        edits.append((name.end[0], name.end[1], rest[0].start[1], "("))
        edits.append((last.end[0], last.end[1], last.end[1], f", file={target})"))
        return
    row, col = name.end
    if after.start[0] == row and after.start[1] > col:
        edits.append((row, col, col + 1, "("))  # the space after the name: columns stay
    else:
        edits.append((row, col, col, "("))
    edits.append((last.end[0], last.end[1], last.end[1], ")"))


def _top_level(statement: List[tokenize.TokenInfo], mark: str) -> Optional[tokenize.TokenInfo]:
    depth = 0
    for token in statement[1:]:
        if token.type == tokenize.OP:
            if token.string in "([{":
                depth += 1
            elif token.string in ")]}":
                depth -= 1
            elif depth == 0 and token.string == mark:
                return token
    return None


def _in_call(tokens: List[tokenize.TokenInfo], at: int) -> bool:
    """The token sits right inside parentheses, after `(` or `,` (a keyword argument)."""
    before = tokens[at - 1] if at else None
    return before is not None and before.type == tokenize.OP and before.string in ("(", ",")


def _source(tokens: List[tokenize.TokenInfo]) -> str:
    """The text of tokens on one line, spaced as written."""
    if not tokens:
        return ""
    parts, end = [], tokens[0].start
    for token in tokens:
        if token.start[0] != end[0]:
            parts.append(" ")
        else:
            parts.append(" " * (token.start[1] - end[1]))
        parts.append(token.string)
        end = token.end
    return "".join(parts).strip()


def _applied(text: str, edits: List[Edit]) -> str:
    lines = text.splitlines(keepends=True)
    for row, start, end, new in sorted(edits, key=lambda e: (e[0], e[1], e[2]), reverse=True):
        if row - 1 >= len(lines):
            continue
        line = lines[row - 1]
        lines[row - 1] = line[:start] + new + line[end:]
    return "".join(lines)
