"""The fast walk must visit exactly what libcst's own traversal visits (less trivia), in the same
order, and keep the visitor protocol the model builder relies on."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import libcst as cst
import pytest

from advisor.model.walk import TRIVIA, Walker, child_fields, children
from advisor.rules import ALL_RULES
from tests.rule_fixtures import sections

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = sorted(
    [*ROOT.glob("tests/corpus/*.py"), *ROOT.glob("examples/*.py"), ROOT / "tests/data/syntax_tour.py"]
)
RULE_CASES = [section.source for rule in ALL_RULES for section in sections(rule)]


class _Recorder(cst.CSTVisitor):
    def __init__(self) -> None:
        super().__init__()
        self.events = []

    def on_visit(self, node: cst.CSTNode) -> bool:
        if not isinstance(node, TRIVIA):
            self.events.append(("visit", type(node).__name__, id(node)))
        return True

    def on_leave(self, original_node: cst.CSTNode) -> None:
        if not isinstance(original_node, TRIVIA):
            self.events.append(("leave", type(original_node).__name__, id(original_node)))


def _libcst_events(module: cst.Module):
    recorder = _Recorder()
    module.visit(recorder)
    return recorder.events


def _walk_events(module: cst.Module):
    events = []

    def walk(node):
        events.append(("visit", type(node).__name__, id(node)))
        for child in children(node):
            walk(child)
        events.append(("leave", type(node).__name__, id(node)))

    walk(module)
    return events


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name)
def test_children_walk_in_libcsts_order(path):
    module = cst.parse_module(path.read_text(encoding="utf-8"))
    assert _walk_events(module) == _libcst_events(module)


def test_children_walk_in_libcsts_order_on_every_rule_example():
    for source in RULE_CASES:
        module = cst.parse_module(source)
        assert _walk_events(module) == _libcst_events(module), source


def test_field_table_follows_libcsts_own_traversal_order():
    """The order comes from dataclass fields plus a short override table; libcst's traversal
    code names the fields in source order, so compare against that text where it is readable."""
    checked = 0
    for name in dir(cst):
        cls = getattr(cst, name)
        if not (isinstance(cls, type) and issubclass(cls, cst.CSTNode)) or inspect.isabstract(cls):
            continue
        try:
            source = inspect.getsource(cls._visit_and_replace_children)
        except (OSError, TypeError):
            continue
        named = re.findall(r'visit_\w+\(\s*self,\s*"(\w+)"', source)
        ours = child_fields(cls)
        in_order = [f for f in dict.fromkeys(named) if f in ours]
        assert in_order == list(ours), name
        checked += 1
    assert checked > 100


class _Hooks(Walker):
    def __init__(self) -> None:
        self.log = []

    def visit_FunctionDef(self, node):
        self.log.append(f"def {node.name.value}")

    def visit_FunctionDef_body(self, node):
        self.log.append("body{")

    def leave_FunctionDef_body(self, node):
        self.log.append("}body")

    def leave_FunctionDef(self, original_node):
        self.log.append(f"end {original_node.name.value}")

    def visit_Lambda(self, node):
        self.log.append("lambda")
        return False  # its body is skipped

    def leave_Lambda(self, original_node):
        self.log.append("end lambda")

    def visit_Name(self, node):
        self.log.append(node.value)


def test_walker_calls_visit_leave_and_field_hooks_like_libcst():
    walker = _Hooks()
    walker.walk(cst.parse_module("@deco\ndef f(a):\n    g = lambda x: y\n"))
    assert walker.log == [
        "def f", "deco", "f", "a", "body{", "g", "lambda", "end lambda", "}body", "end f",
    ]


def test_children_of_a_leaf_and_of_trivia_are_empty():
    assert children(cst.Name("x")) == []
    assert children(cst.Comma()) == []
    call = cst.parse_expression("f( a ,b )")
    assert [type(c).__name__ for c in children(call)] == ["Name", "Arg", "Arg"]
