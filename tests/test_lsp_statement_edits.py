"""Statement edits in the language server: the file is analysed again, with the parsed chunks of
the previous version and what is kept with them (their positions). On every realistic script of the corpus and every example, a deterministic
sample of chunks and kinds of statement edit: the server's result equals a fresh check of the
edited text with nothing kept (codes, rows, columns, messages, fixes, related places)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from advisor.chunked import parse_chunked
from advisor.config import Config
from advisor.lsp.analysis import Analyzer
from advisor.model import FileModel
from advisor.model.value_flow import _comprehension_reads, comprehension_reads
from advisor.suppression import check_text
from tests.test_lsp_comment_edits import _indent, _job, _sample

ROOT = Path(__file__).resolve().parent.parent
FILES = sorted([*ROOT.glob("tests/corpus/*.py"), *ROOT.glob("examples/*.py")])
CONFIG = Config(show_info=True)
CHUNKS_PER_FILE = 2

NEW_FUNCTION = [
    "def _probe_step(model, batch, optimizer):",
    "    loss = model(batch).sum()",
    "    loss.backward()",
    "    optimizer.step()",
    "    return loss.item()",
    "",
    "",
]


def _is_simple(line: str) -> bool:
    """An indented one-line statement (no block, no bracket left open)."""
    body = line.strip()
    return (bool(_indent(line)) and bool(body) and not body.startswith(("#", "@", "return", "yield"))
            and not body.endswith((":", "(", "[", "{", ",", "\\")) and body.count("(") == body.count(")"))


def _edits(lines, first: int, last: int):
    """(kind, new lines) for a chunk spanning lines first..last - 1 (0-based)."""
    middle = min(last - 1, first + (last - first) // 2)
    rows = range(first, last)
    simple = [row for row in rows if _is_simple(lines[row])]
    if simple:
        row = simple[len(simple) // 2]
        yield "statement added", lines[:row] + [_indent(lines[row]) + "_probe = 0"] + lines[row:]
        yield "statement removed", lines[:row] + [_indent(lines[row]) + "pass"] + lines[row + 1 :]
    for row in rows:
        found = re.match(r"\s+([A-Za-z_]\w*) = ", lines[row])
        if found:
            name = found.group(1)
            renamed = [re.sub(rf"\b{name}\b", name + "_renamed", line) for line in lines[first:last]]
            yield "local renamed", lines[:first] + renamed + lines[last:]
            break
    for row in rows:
        if re.search(r"\d", lines[row]) and not lines[row].lstrip().startswith("#"):
            yield "literal changed", lines[:row] + [re.sub(r"\d", lambda m: str((int(m.group()) + 1) % 10),
                                                            lines[row], count=1)] + lines[row + 1 :]
            break
    for row in rows:
        if re.match(r"\s*(async\s+)?for .*:\s*$", lines[row]) and row + 1 < last:
            inside = _indent(lines[row + 1])
            if len(inside) > len(_indent(lines[row])):
                yield ".item() in a loop", lines[: row + 1] + [inside + "_probe = loss.item()"] + lines[row + 1 :]
                break
    module_level = [row for row in rows if re.match(r"[A-Za-z_]\w* = ", lines[row])]
    if module_level:
        row = module_level[0]
        yield "module-level assignment changed", lines[:row] + [lines[row].split("=")[0] + "= None"] + lines[row + 1 :]
    yield "module-level statement added", lines[:first] + ["_probe = 0"] + lines[first:]
    yield "import added", lines[:first] + ["import numpy as np"] + lines[first:]
    yield "cudnn.benchmark set", lines[:first] + ["torch.backends.cudnn.benchmark = True"] + lines[first:]
    yield "function added", lines[:first] + NEW_FUNCTION + lines[first:]
    yield "statement inside", lines[:middle] + [_indent(lines[middle]) + "print(loss.item())"] + lines[middle:]


def _chunked(path: Path):
    text = path.read_text(encoding="utf-8")
    chunked = parse_chunked(text)
    if chunked is None:
        pytest.skip("not analysable in chunks")
    return text, chunked


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_statement_edits_with_kept_chunks_equal_a_fresh_check(path):
    text, chunked = _chunked(path)
    analyzer = Analyzer()
    try:
        previous = analyzer._run(_job(text, 1, path.name), None)
        assert previous.problem is None
        lines = text.split("\n")
        starts = [row - 1 for row in chunked.first_lines] + [len(lines)]
        compared = 0
        version = 1
        for index in _sample(len(chunked.first_lines), CHUNKS_PER_FILE):
            for kind, new_lines in _edits(lines, starts[index], starts[index + 1]):
                version += 1
                new = "\n".join(new_lines)
                # as in an editor: each version follows the one before, whose chunks are kept
                served = analyzer._run(_job(new, version, path.name), None, None, previous)
                fresh = check_text(new, path.name, CONFIG)
                assert served.problem == fresh.problem, f"{kind} in chunk {index}"
                assert served.findings == fresh.findings, f"{kind} in chunk {index}"
                compared += fresh.problem is None and not served.reused
                previous = served
        assert compared >= 10, "too few edits analysed: the comparison tested little"
    finally:
        analyzer.shutdown()


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_comprehension_reads_kept_per_chunk_equal_one_walk_of_the_module(path):
    chunked = _chunked(path)[1]
    model = FileModel.build(chunked.module, path.name)
    model.chunked = chunked
    assert comprehension_reads(model) == _comprehension_reads([chunked.module])


def test_comprehension_reads_of_a_kept_chunk_follow_an_edit_elsewhere():
    from advisor.chunked import ChunkCache

    before = "xs = [1, 2]\nys = [x * 2 for x in xs]\n\n\ndef f(pairs):\n    return [a for a, b in pairs]\n"
    after = before.replace("x * 2 for x in xs", "y for y, z in zip(xs, xs) if z")
    cache = ChunkCache()
    for text in (before, after, before):
        chunked = parse_chunked(text, cache)
        model = FileModel.build(chunked.module, "f.py")
        model.chunked = chunked
        reads = comprehension_reads(model)
        assert reads == _comprehension_reads([chunked.module])
        assert sorted(name for name, _, _ in reads.values()) == sorted(
            ["a", "x"] if text == before else ["a", "y", "z"])
