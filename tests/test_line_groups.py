"""The rows a `# noqa` joins (line_groups) are found by a regular-expression scan: they must be
the groups Python's tokenizer gives, as flake8 reads them."""

from __future__ import annotations

import io
import tokenize
from pathlib import Path

import pytest

from advisor.line_groups import comment_row, line_groups

ROOT = Path(__file__).resolve().parent.parent


def _tokenizer_groups(text):
    """The groups from the tokenizer: rows between two line ends that span more than one row."""
    groups = {}
    first = last = 0
    for kind, _, (start_row, _), (end_row, _), _ in tokenize.generate_tokens(io.StringIO(text).readline):
        if kind in (tokenize.ENDMARKER, tokenize.DEDENT):
            continue
        first = start_row if not first else min(first, start_row)
        last = max(last, end_row)
        if kind in (tokenize.NL, tokenize.NEWLINE):
            if last > first:
                groups.update(dict.fromkeys(range(first, last + 1), (first, last)))
            first = last = 0
    return groups


CASES = {
    "backslash": "x = 1 + \\\n    2\ny = 3\n",
    "backslash_run": "x = 1 + \\\n    2 + \\\n    3\n",
    "backslash_in_brackets": "x = (1 + \\\n     2,\n     3)\n",
    "docstring": 'def f():\n    """one\n    two\n    """\n    return 1\n',
    "string_in_call": 'f(a,\n  """x\ny""", b)\n',
    "strings_share_a_row": 'x = """a\nb""" + """c\nd"""\n',
    "string_then_backslash": 'x = """a\nb""" + \\\n    1\n',
    "escaped_quote": "x = 'it\\'s' + '''a\\'''\nb'''\n",
    "quote_in_comment": "x = 1  # it's\ny = '''a\nb'''\n",
    "hash_in_string": "x = '#' + '''\n'''\n",
    "crlf": "x = 1 + \\\r\n    2\r\ny = '''a\r\nb'''\r\n",
    "brackets_only": "x = [\n    1,\n    2,\n]\n",
    "fstring": 'x = f"""{a}\n{b}"""\n',
    "prefixes": "x = rb'''\\\n''' + br'a'\n",
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_same_groups_as_the_tokenizer(name):
    text = CASES[name]
    assert line_groups(text) == _tokenizer_groups(text)


@pytest.mark.parametrize(
    "path", sorted([*ROOT.glob("tests/corpus/*.py"), *ROOT.glob("examples/*.py"), *ROOT.glob("advisor/*.py")]),
    ids=lambda p: p.name,
)
def test_same_groups_on_real_files(path):
    text = path.read_text(encoding="utf-8")
    assert line_groups(text) == _tokenizer_groups(text)


def test_comment_row_is_the_groups_last_row():
    groups = line_groups(CASES["backslash_run"])
    assert [comment_row(groups, row) for row in (1, 2, 3)] == [3, 3, 3]
    assert comment_row(groups, 9) == 9


def test_text_that_does_not_tokenize_still_gives_groups():
    assert line_groups("x = '''never closed\ny = 1\n") == {1: (1, 2), 2: (1, 2)}
