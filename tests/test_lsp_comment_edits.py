"""The language server's shortcut for edits of comment and blank lines (advisor/lsp/comment_edits):
on every realistic script of the corpus and every example, edits around sampled top-level
statements; wherever the server would move the previous findings instead of analysing, they
equal a full check of the edited text (codes, rows, columns, messages, fixes, related places)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from advisor.chunked import parse_chunked
from advisor.config import Config
from advisor.lsp import convert
from advisor.lsp.analysis import Analyzer, Job
from advisor.lsp.comment_edits import Reused, changed_region, reuse_findings
from advisor.suppression import check_text

ROOT = Path(__file__).resolve().parent.parent
FILES = sorted([*ROOT.glob("tests/corpus/*.py"), *ROOT.glob("examples/*.py")])
CONFIG = Config(show_info=True)
CHUNKS_PER_FILE = 4  # sampled evenly, first and last included


def _job(text: str, version: int, name: str) -> Job:
    return Job(uri=f"file:///corpus/{name}", text=text, version=version, key=(version,), filename=name, path=None,
               config=CONFIG, excluded=False, encoding=convert.UTF16, href=lambda code: None, wanted=lambda: True)


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip(" \t"))]


def _edits(lines, first: int, last: int):
    """(kind, new lines) for a chunk spanning lines first..last - 1 (0-based)."""
    middle = min(last - 1, first + (last - first) // 2)
    inside = _indent(lines[middle])
    yield "comment above", lines[:first] + ["# a note"] + lines[first:]
    yield "comment inside", lines[:middle] + [inside + "# a note"] + lines[middle:]
    yield "blank inside", lines[:middle] + [""] + lines[middle:]
    yield "two comments", lines[:middle] + ["# one", "", inside + "# two"] + lines[middle:]
    yield "comment naming cuda", lines[:middle] + [inside + "# runs on cuda"] + lines[middle:]
    yield "noqa comment", lines[:middle] + [inside + "# noqa: GPU101"] + lines[middle:]
    yield "statement", lines[:middle] + [inside + "_probe = 0"] + lines[middle:]
    yield "statement at module level", lines[:first] + ["_probe = 0"] + lines[first:]
    yield "line deleted", lines[:middle] + lines[middle + 1 :]
    for row in range(first, last):
        if re.search(r"\d", lines[row]) and not lines[row].lstrip().startswith("#"):
            yield "literal changed", lines[:row] + [re.sub(r"\d", lambda m: str((int(m.group()) + 1) % 10),
                                                            lines[row], count=1)] + lines[row + 1 :]
            break
    for row in range(first, last):
        if lines[row].lstrip().startswith("#"):
            yield "comment changed", lines[:row] + [_indent(lines[row]) + "# reworded"] + lines[row + 1 :]
            yield "comment deleted", lines[:row] + lines[row + 1 :]
            break


def _sample(count: int, per_file: int = CHUNKS_PER_FILE):
    """``per_file`` chunk indexes out of ``count``, evenly spread, first and last included."""
    if count <= per_file:
        return list(range(count))
    return sorted({round(i * (count - 1) / (per_file - 1)) for i in range(per_file)})


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_moved_findings_equal_a_full_check(path):
    text = path.read_text(encoding="utf-8")
    analyzer = Analyzer()
    try:
        first = analyzer._run(_job(text, 1, path.name), None)
        chunked = parse_chunked(text)
        if first.problem is not None or chunked is None:
            pytest.skip("not analysable in chunks")
        assert first.boundaries == tuple(chunked.first_lines)
        lines = text.split("\n")
        starts = [row - 1 for row in chunked.first_lines] + [len(lines)]
        reused = 0
        for index in _sample(len(chunked.first_lines)):
            for kind, new_lines in _edits(lines, starts[index], starts[index + 1]):
                new = "\n".join(new_lines)
                moved = analyzer._reused(_job(new, 2, path.name), first)
                if moved is None:
                    continue
                reused += 1
                assert kind not in ("noqa comment", "statement", "statement at module level", "literal changed")
                full = check_text(new, path.name, CONFIG)
                assert moved.findings == full.findings, f"{kind} in chunk {index}"
        assert reused, "the shortcut never applied: the comparison tested nothing"
    finally:
        analyzer.shutdown()


def test_a_chain_of_comment_edits_stays_exact():
    """Each moved result is the base of the next edit, as in an editor: its statement starts
    (``boundaries``) are moved too."""
    path = ROOT / "examples" / "family_pipeline.py"
    text = path.read_text(encoding="utf-8")
    analyzer = Analyzer()
    previous = analyzer._run(_job(text, 1, path.name), None)
    lines = text.split("\n")
    for version, pick in enumerate((1, -1, 2, 0), 2):
        row = previous.boundaries[pick] - 1
        lines[row:row] = ["# note", ""]
        new = "\n".join(lines)
        moved = analyzer._reused(_job(new, version, path.name), previous)
        assert moved is not None and moved.reused
        assert moved.findings == check_text(new, path.name, CONFIG).findings
        # each is where a top-level statement, or the comments above one, starts
        real = parse_chunked(new).first_lines
        for row in moved.boundaries:
            start = max(r for r in real if r <= row)
            assert all(not line.strip() or line.lstrip().startswith("#") for line in lines[start - 1 : row - 1])
        previous = moved
    analyzer.shutdown()


@pytest.mark.parametrize("old, new, expected", [
    ("a\nb\nc", "a\nb\nc", (3, 3, 3)),
    ("a\nb\nc", "a\n# x\nb\nc", (1, 1, 2)),
    ("a\n# x\nb", "a\nb", (1, 2, 1)),
    ("a\na\na", "a\na\na\na", (3, 3, 4)),
])
def test_changed_region(old, new, expected):
    assert changed_region(old.split("\n"), new.split("\n")) == expected


@pytest.mark.parametrize("source, edited", [
    # inside a call's brackets, a comment shapes the fixes that add an argument
    ("f(a,\n  b)\n", "f(a,\n  # c\n  b)\n"),
    # inside a string, a "comment" is text
    ('s = """\nx\n"""\n', 's = """\n# c\nx\n"""\n'),
    # after a backslash, the statement breaks
    ("x = 1 + \\\n    2\n", "x = 1 + \\\n# c\n    2\n"),
])
def test_comments_that_are_not_between_statements_are_analysed(source, edited):
    assert reuse_findings(source, edited, [], [], ()) is None
    assert reuse_findings(source, "# top\n" + source, [], [], ()) is not None


# -- the server's check of a moved result ----------------------------------------------------------
SCRIPT = '''\
import torch
from torch.utils.data import DataLoader

model = torch.nn.Linear(4, 2).cuda()
loader = DataLoader(samples, batch_size=8)

for batch in loader:
    loss = model(batch.cuda()).sum()
    print(loss.item())
'''


class _Doc:
    def __init__(self, text: str, version: int) -> None:
        self.uri, self.text, self.version = "file:///corpus/train.py", text, version


def _server(analyzer: Analyzer, doc: _Doc, published: list):
    from advisor.lsp.server import AdvisorServer

    server = AdvisorServer.__new__(AdvisorServer)  # only what publishing a checked result reads
    server.analyzer = analyzer
    server.pull = False
    server.documents = {doc.uri: doc}
    server.snapshot = lambda d: (d.text, d.version)
    server.text_document_publish_diagnostics = published.append
    return server


def _verified(monkeypatch, wrong: bool):
    """Publishes version 2 (a comment added) as the server does, with the moved findings
    replaced by none at all when ``wrong``; returns the published diagnostics, in order."""
    import asyncio

    from advisor.lsp import analysis

    if wrong:
        monkeypatch.setattr(analysis, "reuse_findings", lambda *args: Reused([], ()))
    edited = SCRIPT.replace("\nfor batch", "\n# each batch\n\nfor batch")
    doc = _Doc(edited, 2)
    analyzer = Analyzer()
    published: list = []

    async def run():
        await analyzer.analyse(_job(SCRIPT, 1, "train.py"))
        job = _job(edited, 2, "train.py")
        first = await analyzer.analyse(job)
        assert first.reused
        published.append(first.diagnostics)
        await _server(analyzer, doc, published)._verify(doc, job, first)
        return analyzer.latest(job.uri)

    try:
        latest = asyncio.run(run())
    finally:
        analyzer.shutdown()
    full = check_text(edited, "train.py", CONFIG).findings
    assert full and latest.findings == full  # what hover and code actions read afterwards
    return [p if isinstance(p, list) else p.diagnostics for p in published], full


def test_a_moved_result_that_a_full_check_confirms_is_published_once(monkeypatch):
    published, full = _verified(monkeypatch, wrong=False)
    assert len(published) == 1
    assert [(d.code, d.range.start.line + 1) for d in published[0]] == [(f.code, f.start.row) for f in full]


def test_a_moved_result_that_differs_is_republished_from_the_full_check(monkeypatch, caplog):
    published, full = _verified(monkeypatch, wrong=True)
    assert published[0] == []
    assert [(d.code, d.range.start.line + 1) for d in published[1]] == [(f.code, f.start.row) for f in full]
    assert "differ from a full analysis" in caplog.text
