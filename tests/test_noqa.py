"""`# noqa` is read in one module (advisor/noqa.py) by the engine and the language server alike."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from advisor import noqa

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize(
    "line, code, silenced",
    [
        ("x.item()  # noqa", "GPU101", True),
        ("x.item()  # NOQA", "GPU101", True),
        ("x.item()  # noqa: GPU101", "GPU101", True),
        ("x.item()  #noqa:GPU102 GPU101", "GPU101", True),
        ("x.item()  # noqa: GPU1", "GPU101", True),  # a prefix silences the family
        ("x.item()  # noqa: GPU102", "GPU101", False),
        ("x.item()  # noqa: E501, gpu101", "GPU101", True),
        ("x.item()  # no qa", "GPU101", False),
        ("x.item()", "GPU101", False),
    ],
)
def test_is_suppressed_reads_flake8s_syntax(line, code, silenced):
    assert noqa.is_suppressed(line, code) is silenced


def test_parse_gives_the_codes_and_where_they_are():
    line = "y = f(x)  # noqa: GPU101, GPU2  # why"
    comment = noqa.parse(line)
    assert comment.codes == ("GPU101", "GPU2") and not comment.blanket
    start, end = comment.codes_span
    assert line[start:end].strip() == "GPU101, GPU2"
    assert noqa.parse("y  # noqa").blanket and noqa.parse("y") is None


def test_add_code_merges_or_appends():
    assert noqa.add_code("x.item()", "GPU101") == (8, 8, "  # noqa: GPU101")
    start, end, text = noqa.add_code("x  # noqa: GPU102, gpu102  # keep", "GPU101")
    assert text == "GPU102, GPU101  "
    assert noqa.add_code("x  # noqa: GPU1", "GPU101") is None
    assert noqa.add_code("y = a + \\", "GPU101") is None and noqa.add_code("   ", "GPU101") is None


def test_no_other_module_parses_noqa_comments():
    """One pattern: any other module of advisor/ that spells a noqa regex has grown a copy."""
    pattern = re.compile(r"noqa\(\?|#\\s\*noqa|re\.compile\([^)]*noqa", re.IGNORECASE)
    copies = [str(path.relative_to(ROOT)) for path in sorted((ROOT / "advisor").rglob("*.py"))
              if path.name != "noqa.py" and pattern.search(path.read_text(encoding="utf-8"))]
    assert copies == []


def test_engine_and_language_server_use_it():
    from advisor import engine
    from advisor.lsp import actions

    assert engine.is_suppressed is noqa.is_suppressed
    assert actions.noqa is noqa
