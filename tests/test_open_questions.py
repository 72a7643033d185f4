"""Answers found while a question further up was still open (a cycle of questions) are not kept
past that question: a later ask sees its final answer, whatever order the questions came in."""

from __future__ import annotations

import pytest

from advisor.model import open_questions
from advisor.model.open_questions import remembered

GRAPH = {"a": ["b"], "b": ["c"], "c": ["a"], "d": ["c"]}


def _reach(memo, node):
    """The nodes reachable from ``node`` (itself included), with a recursion guard."""
    return remembered(memo, node, lambda: frozenset({node}).union(*(_reach(memo, n) for n in GRAPH[node])),
                      guard=frozenset())


@pytest.mark.parametrize("first", ["a", "b", "c", "d"])
def test_every_answer_is_the_same_whichever_question_comes_first(first):
    open_questions.new_check()
    memo = {}
    _reach(memo, first)
    assert {n: _reach(memo, n) for n in "abcd"} == {
        "a": {"a", "b", "c"}, "b": {"a", "b", "c"}, "c": {"a", "b", "c"}, "d": {"a", "b", "c", "d"}}


def test_a_question_stopped_half_way_leaves_nothing_open():
    memo = {}

    def boom():
        _reach(memo, "a")
        raise RuntimeError("budget")

    with pytest.raises(RuntimeError):
        remembered(memo, "x", boom, guard=None)
    tracker = open_questions.current()
    assert tracker.frames == [] and tracker.leaning == {}
    assert "x" not in memo


def test_an_answer_forgotten_once_is_kept_the_second_time():
    # A question asked inside one cycle after another is answered twice at most: cost stays linear.
    open_questions.new_check()
    memo = {}

    def probe(head):  # "p" reads the question `head` while it is open
        return remembered(memo, "p", lambda: remembered(memo, head, lambda: 1, guard=0))

    remembered(memo, "x", lambda: probe("x"), guard=0)
    assert "p" not in memo
    remembered(memo, "y", lambda: probe("y"), guard=0)
    assert memo["p"] == 0
    open_questions.new_check()
    assert open_questions.current().retried == set()
