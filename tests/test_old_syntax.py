"""Python 2 and 3.6-era source read in today's spelling (advisor/old_syntax.py), and what the
engine makes of such a file: findings, at their rows, and no fixes."""

from __future__ import annotations

import ast

import pytest

from advisor.config import Config
from advisor.engine import check_source
from advisor.old_syntax import lift


@pytest.mark.parametrize("old, new", [
    ("print 'loss', loss\n", "print('loss', loss)\n"),
    ("print\n", None),
    ("print('already a call')\n", None),
    ("if verbose: print x  # why\n", "if verbose: print(x)  # why\n"),
    ("print >>f, 'a', b\n", "print('a', b, file=f)\n"),
    ("print 'a',\n", "print('a',)\n"),
    ("try:\n    f()\nexcept IOError, e:\n    pass\n", "try:\n    f()\nexcept IOError as e:\n    pass\n"),
    ("raise ValueError, 'bad'\n", "raise ValueError('bad')\n"),
    ("x = y.cuda(async=True)\n", "x = y.cuda(non_blocking=True)\n"),
    ("if a <> b: pass\n", "if a != b: pass\n"),
    ("print 'first', (a,\n       b)\n", "print('first', (a,\n       b))\n"),
])
def test_lift_spells_old_statements_as_today(old, new):
    assert lift(old) == new
    if new is not None:
        ast.parse(new)


def test_lift_keeps_every_row():
    old = "import torch\n\nfor x in loader:\n    print 'x', x.size()\n    y = x.cuda(async=True)\n"
    lifted = lift(old)
    assert lifted is not None and lifted.count("\n") == old.count("\n")
    assert lifted.splitlines()[3] == "    print('x', x.size())"


def test_lift_leaves_what_it_cannot_read():
    assert lift("x = `y`\n") is None  # a backquote
    assert lift("def f(:\n") is None  # no old statement to lift
    assert lift("x = (\n") is None  # tokens that never close


def test_a_python_2_training_script_is_checked_without_fixes():
    text = (
        "import torch\n"
        "for epoch in range(10):\n"
        "    for x, y in loader:\n"
        "        loss = criterion(model(x.cuda()), y.cuda())\n"
        "        optimizer.zero_grad()\n"
        "        loss.backward()\n"
        "        optimizer.step()\n"
        "        print 'loss', loss.item()\n"
    )
    result = check_source(text, "train.py", Config(show_info=True))
    assert result.problem is None
    found = {(f.code, f.start.row) for f in result.findings}
    assert ("GPU101", 8) in found
    assert all(f.fix is None for f in result.findings)


def test_a_file_that_stays_broken_keeps_its_syntax_error():
    text = "import torch\nfor x in loader:\n    loss.backward()\n    print 'a'\nx = (\n"
    result = check_source(text, "broken.py")
    assert result.problem is not None and "syntax" in result.problem.reason
