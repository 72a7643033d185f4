"""The parse that skips libcst's node validation builds the same trees as libcst's own parse,
still refuses what libcst's Name check refuses, and leaves validation on for nodes built
anywhere else (fixes)."""

from __future__ import annotations

import threading
from pathlib import Path

import libcst as cst
import pytest

from advisor.trusted_parse import parse_module

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = sorted([*ROOT.glob("tests/corpus/*.py"), *ROOT.glob("examples/*.py"), ROOT / "tests/data/syntax_tour.py"])


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name)
def test_same_tree_as_libcst(path):
    text = path.read_text(encoding="utf-8")
    trusted = parse_module(text)
    assert trusted.code == text
    assert trusted.deep_equals(cst.parse_module(text))


# Characters libcst's tokenizer takes into a name that are not identifier characters: its Name
# check is what refuses such a file, and the trusted parse keeps that check.
@pytest.mark.parametrize("source", ["x\u0897 = 1\n", "\u1c89x = 1\n"])
def test_names_are_still_checked(source):
    with pytest.raises(cst.CSTValidationError):
        cst.parse_module(source)
    with pytest.raises(cst.CSTValidationError):
        parse_module(source)


def test_nodes_built_outside_a_parse_are_validated():
    parse_module("x = 1\n")
    with pytest.raises(cst.CSTValidationError):
        cst.Name("")
    with pytest.raises(cst.CSTValidationError):
        cst.Subscript(value=cst.Name("a"), slice=[])  # an empty subscript


def test_other_threads_keep_validation_while_a_parse_runs(monkeypatch):
    """The switch is per thread: a node a language-server request builds while the analysis
    thread parses is still checked."""
    import advisor.trusted_parse as trusted

    outcome = []
    started, release = threading.Event(), threading.Event()

    def other():
        started.wait(10)
        try:
            cst.Name("")
        except cst.CSTValidationError:
            outcome.append("validated")
        release.set()

    thread = threading.Thread(target=other)
    thread.start()
    real = cst.parse_module

    def slow_parse(text):
        started.set()
        release.wait(10)
        return real(text)

    monkeypatch.setattr(trusted.cst, "parse_module", slow_parse)
    parse_module("x = 1\n")
    thread.join(10)
    assert outcome == ["validated"]
