"""Edits inside top-level functions and classes: the language server analyses the part of the
file they reach alone and moves every other finding (advisor/lsp/chunk_edits.py). Its answer
must equal a fresh check of the edited text; when the same cut of the last full analysis does
not reproduce that analysis, the edit is analysed in full; and a cut answer that a full check
later contradicts is republished."""

from __future__ import annotations

import asyncio

import pytest

from advisor.lsp import analysis, chunk_edits
from advisor.lsp.analysis import Analyzer
from advisor.suppression import check_text
from tests.test_lsp_comment_edits import CONFIG, _job

HEADER = """\
import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader

DEVICE = "cuda"
"""

BLOCK = """

def train_{n}(model, dataset, epochs=3):
    loader = DataLoader(dataset, batch_size=32, shuffle=True)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    model = model.to(DEVICE)
    for epoch in range(epochs):
        for step, (inputs, targets) in enumerate(loader):
            inputs, targets = inputs.to(DEVICE), targets.to(DEVICE)
            optimizer.zero_grad()
            loss = F.cross_entropy(model(inputs), targets)
            loss.backward()
            optimizer.step()
            if step % 100 == 0:
                print(f"epoch {{epoch}} step {{step}}")
    return model
"""

SCRIPT = HEADER + "".join(BLOCK.format(n=n) for n in range(8))

EDITS = {
    "statement added": ("            optimizer.step()\n", "            optimizer.step()\n            _probe = 0\n"),
    ".item() in the loop": ("            optimizer.step()\n", "            optimizer.step()\n            total = loss.item()\n"),
    "pin_memory added": ("shuffle=True)", "shuffle=True, pin_memory=True)"),
    "line removed": ("            optimizer.zero_grad()\n", ""),
}


def _edited(kind: str, n: int = 5) -> str:
    old, new = EDITS[kind]
    marker = f"def train_{n}("
    head, tail = SCRIPT.split(marker)
    return head + marker + tail.replace(old, new, 1)


def test_an_edit_inside_one_function_keeps_the_others_out_of_the_cut():
    plan = chunk_edits.plan(SCRIPT, _edited("statement added", 5))
    assert plan is not None
    names = [plan.new[i].name for i in plan.kept]
    assert "train_5" in names and "train_4" not in names and "train_6" not in names
    assert [plan.new[i].name for i in plan.changed] == ["train_5"]


@pytest.mark.parametrize("edited", [
    SCRIPT.replace('DEVICE = "cuda"', 'DEVICE = "cpu"'),  # a module-level statement
    SCRIPT.replace("def train_5(", "def train_five("),  # a definition renamed
    SCRIPT + "\n\ndef extra():\n    pass\n",  # a piece added
    SCRIPT.replace("\n", "\r\n"),
], ids=["module level", "renamed", "piece added", "crlf"])
def test_edits_outside_function_bodies_do_not_qualify(edited):
    assert chunk_edits.plan(SCRIPT, edited) is None


def test_the_reach_takes_callers_and_callees_and_what_the_callers_build():
    text = HEADER + """

class Net(torch.nn.Module):
    def forward(self, x):
        return x


def accuracy(logits, targets):
    return (logits.argmax(1) == targets).float().mean()


def unrelated():
    return 1
""" + "".join(f"""

def helper_{n}(values):
    total = 0
    for value in values:
        total += value * {n}
    return total
""" for n in range(6)) + """


def train(loader):
    model = Net().cuda()
    for x, y in loader:
        acc = accuracy(model(x.cuda()), y.cuda())


if __name__ == "__main__":
    train(None)
"""
    plan = chunk_edits.plan(text, text.replace("float().mean()", "float().mean() * 1"))
    assert plan is not None
    names = {plan.new[i].name for i in plan.kept}
    assert {"accuracy", "train", "Net"} <= names and "unrelated" not in names
    main_block = len(plan.new) - 1
    assert main_block in plan.recomputed  # it calls a function of the reach
    assert {plan.new[i].name for i in plan.recomputed} == {"accuracy", "train", None}


@pytest.mark.parametrize("kind", sorted(EDITS))
def test_a_cut_answer_equals_a_fresh_check(kind):
    analyzer = Analyzer()
    try:
        first = analyzer._run(_job(SCRIPT, 1, "train.py"), None)
        assert first.problem is None and first.findings
        edited = _edited(kind)
        served = analyzer._run(_job(edited, 2, "train.py"), None, None, first)
        assert served.reused and served.anchor is first
        assert served.findings == check_text(edited, "train.py", CONFIG).findings
        # a second edit of another function rests on the same full analysis
        again = edited.replace("def train_2(model, dataset, epochs=3):\n",
                               "def train_2(model, dataset, epochs=3):\n    _probe = 1\n")
        served = analyzer._run(_job(again, 3, "train.py"), None, None, served)
        assert served.reused and served.anchor is first
        assert served.findings == check_text(again, "train.py", CONFIG).findings
    finally:
        analyzer.shutdown()


def _in_function(text: str, n: int, line: str) -> str:
    marker = f"def train_{n}(model, dataset, epochs=3):\n"
    return text.replace(marker, marker + line, 1)


def test_edits_spread_over_many_functions_chain_cuts_on_the_answer_before():
    """Without a pause, edits in one function after another each take a cut: past the spread a
    cut of the full analysis allows, the cut rests on the answer to the version before."""
    analyzer = Analyzer()
    try:
        served = first = analyzer._run(_job(SCRIPT, 1, "train.py"), None)
        text = SCRIPT
        for version, n in enumerate([5, 2, 7, 0, 3], start=2):
            line = "    total = 0\n" if n != 7 else "    _probe = torch.zeros(3).cuda().item()\n"
            text = _in_function(text, n, line)
            served = analyzer._run(_job(text, version, "train.py"), None, None, served)
            assert served.reused and served.anchor is first
            assert served.findings == check_text(text, "train.py", CONFIG).findings
            # the ranges carried along the chain (shifted, not worked out again) are the text's
            fresh = Analyzer()
            try:
                again = fresh._run(_job(text, version, "train.py"), None)
            finally:
                fresh.shutdown()
            assert [d.range for d in served.diagnostics] == [d.range for d in again.diagnostics]
    finally:
        analyzer.shutdown()


def test_after_comment_edits_spread_over_many_functions_a_declined_one_takes_a_cut():
    """Comment edits move the findings; one the shortcut declines (a comment line right above a
    finding) is cut on the version before, whose findings were moved, not analysed in full."""
    analyzer = Analyzer()
    try:
        served = first = analyzer._run(_job(SCRIPT, 1, "train.py"), None)
        text = SCRIPT
        for version, n in enumerate([5, 2, 7, 0], start=2):
            head, tail = text.split(f"def train_{n}(", 1)
            text = head + f"def train_{n}(" + tail.replace("    return model\n", "    # a note\n    return model\n", 1)
            served = analyzer._run(_job(text, version, "train.py"), None, None, served)
            assert served.reused and served.anchor is first  # moved: no finding is next to the note
        above = "def train_3(model, dataset, epochs=3):\n"
        text = text.replace(above, above + "    # the loader of the third run\n", 1)
        planned = []
        real_plan = chunk_edits.plan

        def plan(*args):
            planned.append(real_plan(*args))
            return planned[-1]

        chunk_edits.plan, saved = plan, chunk_edits.plan
        try:
            served = analyzer._run(_job(text, 6, "train.py"), None, None, served)
        finally:
            chunk_edits.plan = saved
        assert planned and planned[-1] is not None  # a cut, not the whole text again
        assert served.reused and served.anchor is first
        assert served.findings == check_text(text, "train.py", CONFIG).findings
    finally:
        analyzer.shutdown()


def test_a_confirmed_cut_answer_makes_the_full_check_the_base_of_the_next_cuts():
    analyzer = Analyzer()

    async def run():
        await analyzer.analyse(_job(SCRIPT, 1, "train.py"))
        job = _job(_edited("statement added"), 2, "train.py")
        served = await analyzer.analyse(job)
        assert served.reused
        assert await analyzer.verify(job, served) is None  # the same findings: nothing to republish
        return served

    try:
        served = asyncio.run(run())
        latest = analyzer.latest(served.uri)
        assert latest is not served and not latest.reused and latest.findings == served.findings
    finally:
        analyzer.shutdown()


def _dropping(monkeypatch, when):
    """Analyses of part of the file return no findings when ``when(text)``."""
    real = analysis.check_text

    def fake(text, *args, **options):
        result = real(text, *args, **options)
        if options.get("part") and when(text):
            result.findings = []
        return result

    monkeypatch.setattr(analysis, "check_text", fake)


def test_a_cut_that_does_not_reproduce_the_full_analysis_is_not_used(monkeypatch):
    _dropping(monkeypatch, lambda text: True)
    analyzer = Analyzer()
    try:
        first = analyzer._run(_job(SCRIPT, 1, "train.py"), None)
        edited = _edited(".item() in the loop")
        served = analyzer._run(_job(edited, 2, "train.py"), None, None, first)
        assert not served.reused
        assert served.findings == check_text(edited, "train.py", CONFIG).findings
    finally:
        analyzer.shutdown()


def test_a_cut_answer_that_a_full_check_contradicts_is_replaced(monkeypatch, caplog):
    edited = _edited(".item() in the loop")
    _dropping(monkeypatch, lambda text: "total = loss.item()" in text)
    analyzer = Analyzer()

    async def run():
        await analyzer.analyse(_job(SCRIPT, 1, "train.py"))
        job = _job(edited, 2, "train.py")
        served = await analyzer.analyse(job)
        assert served.reused
        full = await analyzer.verify(job, served)
        return served, full

    try:
        served, full = asyncio.run(run())
    finally:
        analyzer.shutdown()
    fresh = check_text(edited, "train.py", CONFIG).findings
    assert served.findings != fresh
    assert full is not None and full.findings == fresh and analyzer.latest(full.uri) is full
    assert "differ from a full analysis" in caplog.text


def test_splitting_again_only_the_edited_piece_gives_the_whole_split():
    """`pieces_after` re-splits one piece when an edit stays inside it, and must agree with a
    split of the whole text for any edit: strings opened, decorators left open, lines that join
    the piece above, blank lines that go with the piece below."""
    import random
    from pathlib import Path

    root = Path(__file__).parent
    files = sorted((root / "corpus").rglob("*.py"))[::7] + sorted((root.parent / "examples").rglob("*.py"))
    rng = random.Random(3)
    inserts = ["    x = 1\n", "x", "(", ")", '"""', "'", "\\\n", "# c\n", "\n", "def g():\n    pass\n", "@dec\n",
               "else:\n", "    # note\n", "", "    y = (1,\n"]
    edits = 0
    for path in files:
        text = path.read_text(encoding="utf-8", errors="replace")
        if not text or "\r" in text:
            continue
        pieces = chunk_edits.pieces_of(text)
        for _ in range(8):
            start = rng.randrange(len(text) + 1)
            stop = min(len(text), start + rng.choice([0, 0, 1, 5, 40]))
            new = text[:start] + rng.choice(inserts) + text[stop:]
            assert chunk_edits.pieces_after(text, pieces, new) == chunk_edits.pieces_of(new), (path, start, stop)
            edits += 1
    assert edits > 300


@pytest.mark.parametrize("old, new", [
    # a decorator whose definition line was edited away takes the next definition
    ('@cache\ndef f(x):\n    return x\n\n\ndef g():\n    pass\n', '@cache\ndef_f(x):\n    return x\n\n\ndef g():\n    pass\n'),
    # a piece whose first line is now indented joins the piece above
    ('import os\n\n\ndef f():\n    a = 1\n    return a\n', 'import os\n\n\n    x = 1\n    a = 1\n    return a\n'),
    # a comment as the piece's last line goes with the piece below
    ('def f():\n    return 1\n\n\ndef g():\n    pass\n', 'def f():\n    return 1\n# note\n\n\ndef g():\n    pass\n'),
    # the newline that ended the piece is gone
    ('import os\n\n\ndef f():\n    pass\n', 'import os)\n\ndef f():\n    pass\n'),
    # a string opened inside the piece runs into the next one
    ('def f():\n    return 1\n\n\ndef g():\n    return 2\n', 'def f():\n    return """1\n\n\ndef g():\n    return 2\n'),
])
def test_edits_that_move_a_boundary_split_the_whole_text(old, new):
    assert chunk_edits.pieces_after(old, chunk_edits.pieces_of(old), new) == chunk_edits.pieces_of(new)
