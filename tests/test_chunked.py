"""Chunked parsing stands in for a whole-file parse: same text, same findings, same positions;
where the split cannot be trusted it declines and the file is parsed whole."""

from __future__ import annotations

import sys
from pathlib import Path

import libcst as cst
import pytest

from advisor.chunked import ChunkCache, parse_chunked, split_points
from advisor.config import Config
from advisor.engine import check_source
from advisor.rules import ALL_RULES
from tests.rule_fixtures import sections

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = sorted(
    [*ROOT.glob("tests/corpus/*.py"), *ROOT.glob("examples/*.py"), ROOT / "tests/data/syntax_tour.py"]
)
SHOW_ALL = Config(show_info=True)


def _starts(text: str):
    """The first line of each chunk, for readable assertions."""
    return [text[p:].split("\n", 1)[0] for p in split_points(text)]


def _whole_file_findings(text: str, monkeypatch):
    import advisor.engine as engine

    with monkeypatch.context() as patch:
        patch.setattr(engine, "parse_chunked", lambda text, cache=None: None)
        return check_source(text, "f.py", SHOW_ALL)


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name)
def test_chunks_print_the_file_and_give_the_same_findings(path, monkeypatch):
    text = path.read_text(encoding="utf-8")
    chunked = parse_chunked(text)
    assert chunked is not None and len(chunked.chunks) > 1
    assert chunked.module.code == text
    assert check_source(text, "f.py", SHOW_ALL).findings == _whole_file_findings(text, monkeypatch).findings


def test_rule_fixtures_give_the_same_findings_chunked_or_whole(monkeypatch):
    for rule in ALL_RULES:
        for section in sections(rule):
            chunked = check_source(section.source, "f.py", SHOW_ALL)
            assert chunked.findings == _whole_file_findings(section.source, monkeypatch).findings, section.source


def test_splits_at_top_level_statements_with_the_comments_above_them():
    text = '"""Doc.\n\nA line at column 0 inside the docstring.\n"""\nimport torch\n\n\n# about f\n@decorator(\n    arg,\n)\n# between\ndef f():\n    pass\n# trailing, indented or not\n    # indented\nx = 1\n'
    assert _starts(text) == ['"""Doc.', "import torch", "", "# trailing, indented or not"]
    chunked = parse_chunked(text)
    assert chunked.module.code == text
    assert [len(c.statements) for c in chunked.chunks] == [1, 1, 1, 1]


def test_clauses_and_closers_at_column_0_stay_with_their_statement():
    text = "if a:\n    pass\nelse:\n    pass\ntry:\n    pass\nexcept E:\n    pass\nfinally:\n    pass\nx = [\n    1,\n]\ny = 1; z = 2\n"
    assert _starts(text) == ["if a:", "try:", "x = [", "y = 1; z = 2"]
    assert parse_chunked(text).module.code == text


def test_strings_and_continuations_never_split():
    text = "s = '''\nimport os\n'''\nt = \"a\\\nb = 1\"\nu = 1 + \\\n2\nv = f'{x}' # ' \"\nw = 2\n"
    assert _starts(text) == ["s = '''", 't = "a\\', "u = 1 + \\", "v = f'{x}' # ' \"", "w = 2"]
    assert parse_chunked(text).module.code == text


def test_a_split_inside_brackets_declines_and_the_whole_file_is_parsed():
    text = "CONFIG = dict(\nlr=1e-3,\n)\nimport torch\nx = torch.ones(1).item()\n"
    assert parse_chunked(text) is None  # `lr=1e-3,` looked like a statement start
    result = check_source(text, "f.py", SHOW_ALL)
    assert result.problem is None


def test_mixed_indentation_between_chunks_declines():
    text = "def f():\n    return 1\ndef g():\n  return 2\n"
    assert parse_chunked(text) is None
    assert cst.parse_module(text).code == text


def test_a_one_statement_file_is_one_chunk_and_an_empty_one_none():
    one = parse_chunked("# header\nclass Trainer:\n    def fit(self):\n        pass\n")
    assert one is not None and len(one.chunks) == 1 and one.module.code.startswith("# header\n")
    assert parse_chunked("") is None
    assert parse_chunked("# only a comment\n") is None


def test_a_repeated_chunk_is_parsed_twice_so_no_node_sits_at_two_places():
    text = "x = 1\nx = 1\n"
    chunked = parse_chunked(text)
    first, second = chunked.module.body
    assert first is not second


def test_the_cache_reuses_unchanged_chunks_and_keeps_only_the_last_version():
    cache = ChunkCache()
    before = parse_chunked("import torch\n\ndef f():\n    return 1\n\ndef g():\n    return 2\n", cache)
    after = parse_chunked("import torch\n\ndef f():\n    return 10\n\ndef g():\n    return 2\n", cache)
    assert after.chunks[0] is before.chunks[0]
    assert after.chunks[1] is not before.chunks[1]
    assert after.chunks[2] is before.chunks[2]
    assert len(cache._chunks) == 3


def test_positions_of_a_reused_chunk_follow_its_new_line(monkeypatch):
    cache = ChunkCache()
    body = "import torch\n\ndef train(model, loader, opt):\n    for x in loader:\n        loss = model(x.cuda())\n        loss.backward()\n        opt.step()\n        print(loss.item())\n"
    first = check_source(body, "f.py", SHOW_ALL, chunks=cache)
    moved = "import os\n# a new line above\n" + body
    second = check_source(moved, "f.py", SHOW_ALL, chunks=cache)
    assert [f.start.row + 2 for f in first.findings] == [f.start.row for f in second.findings]
    assert second.findings == _whole_file_findings(moved, monkeypatch).findings


def _every_statement_alone(text: str):
    """Positions computed statement by statement (as findings get them) against one pass over
    the whole module, for every node the model walk indexes. Returns how many statements were
    printed alone, and how many chunks needed a whole-chunk pass instead."""
    from advisor.model import FileModel
    from advisor.positions import node_spans

    chunked = parse_chunked(text)
    assert chunked is not None
    model = FileModel.build(chunked.module, "f.py")
    whole = node_spans(chunked.module)
    indexed = [key for key, statement in model.statement_of.items() if statement is not None]
    assert indexed
    nodes = {id(n): n for n in _all_nodes(chunked.module)}
    for key in indexed:
        node = nodes[key]
        assert chunked.span(node, None, model.statement_of, model.top_of) == whole[key], type(node).__name__
    alone = sum(1 for c in chunked.chunks for s in c._statement_spans.values() if s is not None)
    return alone, sum(1 for c in chunked.chunks if c.spans is not None)


def _all_nodes(module):
    from advisor.model.walk import children

    stack = [module]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(children(node))


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name)
def test_statement_by_statement_positions_match_the_whole_module(path):
    alone, whole_chunks = _every_statement_alone(path.read_text(encoding="utf-8"))
    # Every statement printed alone matched its text, except where this interpreter's ast
    # cannot read the chunk (the tour's PEP 695 generics before Python 3.12): that chunk
    # falls back to one pass over itself.
    newer_syntax = path.name == "syntax_tour.py" and sys.version_info < (3, 12)
    assert alone > 0 and whole_chunks == (1 if newer_syntax else 0)


@pytest.mark.parametrize("text", [
    "import torch\r\nfor x in loader:\r\n    if x:\r\n        y = x.item()\r\n    elif z:\r\n        pass\r\n",
    "import torch\ndef f(x):\n\tif x:\n\t\treturn x.cpu()\n\treturn (\n\t\tx\n\t)\n",
    "import torch\ncafé = 'é'\nnaïve = f(café, 'ü')  # ü\nwhile True:\n    naïve = g(\n  'é',\n)\n",
    "import torch\nx = 1 + \\\n    2\nif (a and\n        b): pass\ntry:\n    pass\nexcept E:\n    q = 1\nelse:\n    r = 2\nfinally:\n    s = 3\n",
    "import torch\nclass A:\n  # comment\n\n  @deco\n  # between\n  @other\n  def f(self):\n    return 1; 2\n",
    "import torch\nmatch x:\n    case [a, *rest] if a:\n        y = 1\n    case _:\n        pass\n",
], ids=["crlf-elif", "tabs", "non-ascii", "continuations-try", "decorators", "match"])
def test_statement_positions_on_awkward_layouts(text):
    alone, whole_chunks = _every_statement_alone(text)
    assert alone > 0 and whole_chunks == 0


def _table(rows: int, value: str = "(1, 2.5, -3, 'x', torch.float16)") -> str:
    return "TABLE: dict = {\n" + "".join(f"    ({i}, 'k{i}'): {value},\n" for i in range(rows)) + "}\n"


def test_a_long_data_table_is_not_parsed_and_what_follows_keeps_its_positions(monkeypatch):
    from advisor.chunked import DATA_STATEMENT_CHARS, data_stand_in

    table = _table(4000)
    assert len(table) > DATA_STATEMENT_CHARS
    assert data_stand_in(table) == "TABLE = ...\n"
    loop = "for x in loader:\n    loss = model(x.cuda())\n    loss.backward()\n    opt.step()\n    print(loss.item())\n"
    text = "import torch\n" + table + loop
    chunked = parse_chunked(text)
    assert chunked is not None and not chunked.prints_text
    assert [c.stand_in for c in chunked.chunks] == [False, True, False]
    found = check_source(text, "f.py", SHOW_ALL).findings
    assert found and found == _whole_file_findings(text, monkeypatch).findings
    assert all(f.start.row > table.count("\n") + 1 for f in found)


def test_a_long_statement_with_a_call_in_it_is_parsed():
    from advisor.chunked import data_stand_in

    assert data_stand_in(_table(4000, "make(1)")) is None
    assert data_stand_in(_table(10)) is None  # short tables are parsed as usual
    assert data_stand_in("for i in range(3):\n    pass\n" * 20000) is None


def test_a_file_that_is_one_long_table_is_stood_in_for():
    chunked = parse_chunked(_table(4000))
    assert chunked is not None and [c.stand_in for c in chunked.chunks] == [True]
    assert check_source(_table(4000), "f.py", SHOW_ALL).problem is None


def test_edited_scripts_give_the_same_findings_chunked_or_whole(monkeypatch):
    """Seeded edits of the corpus (comments and statements at any indentation, clauses,
    decorators, strings left open): wherever both routes parse, they must agree exactly."""
    import random

    rng = random.Random(20261130)
    texts = [p.read_text(encoding="utf-8") for p in SAMPLES if p.parent.name != "data"]
    odd = ["# c", "", "x = '''", "'''", "else:", "    pass", "@deco", "def g():", 's = "a\\\\', ")", "if x:",
           "\t# tab", "async def h():", "class K:", "y = [", "]", "try:", "except E:", "finally:"]
    plain = ["# note", "x = 1", "print(loss.item())", "torch.cuda.synchronize()", 'z = """doc\nmore"""']
    compared = 0
    for _ in range(120):
        lines = rng.choice(texts).split("\n")
        for _ in range(rng.randint(1, 4)):
            i = rng.randrange(len(lines))
            indent = lines[i][: len(lines[i]) - len(lines[i].lstrip())]
            roll = rng.random()
            if roll < 0.5:
                lines.insert(i, rng.choice(odd) if rng.random() < 0.3 else indent + rng.choice(plain))
            elif roll < 0.7:
                del lines[i]
            else:
                lines[i] = lines[i].lstrip()
        text = ("\r\n" if rng.random() < 0.1 else "\n").join(lines)
        chunked = check_source(text, "f.py", SHOW_ALL)
        whole = _whole_file_findings(text, monkeypatch)
        assert (chunked.problem is None) == (whole.problem is None), text
        if chunked.problem is None:
            compared += 1
            assert chunked.findings == whole.findings, text
    assert compared > 30
