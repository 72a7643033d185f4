"""The value classes written without dataclasses behave as the dataclasses they replaced."""

from __future__ import annotations

import copy
import pickle

import pytest

from advisor.config import Config
from advisor.findings import Applicability, Edit, FileProblem, FileResult, Finding, Fix, Position, Severity
from advisor.notebook import NotebookResult
from advisor.runner import Job


def finding(**changes):
    values = dict(code="GPU101", name="item-in-loop", message="m", severity=Severity.WARNING,
                  start=Position(3, 5), end=Position(3, 9), url="u")
    values.update(changes)
    return Finding(**values)


def test_equality_is_field_by_field_and_by_class():
    assert Position(1, 2) == Position(1, 2)
    assert Position(1, 2) != Position(2, 1)
    assert Position(1, 2) != (1, 2)
    assert FileResult("a.py") == FileResult("a.py", [])
    assert FileResult("a.py") != NotebookResult("a.py")
    assert finding() == finding()
    assert finding() != finding(hint="h")


def test_the_measurement_is_not_compared():
    assert finding(measurement={"verdict": "confirmed"}) == finding()


def test_immutable_values_hash_and_mutable_ones_do_not():
    assert len({Position(1, 2), Position(1, 2), Position(2, 2)}) == 2
    edit = Edit(Position(1, 1), Position(1, 2), "x")
    assert hash(Fix("m", (edit,))) == hash(Fix("m", (edit,), Applicability.SAFE))
    assert hash(Config()) == hash(Config())
    assert hash(FileProblem("a.py", "why")) == hash(FileProblem("a.py", "why"))
    for mutable in (finding(), FileResult("a.py")):
        with pytest.raises(TypeError):
            hash(mutable)


def test_positions_order_by_row_then_column():
    assert sorted([Position(2, 1), Position(1, 9), Position(1, 2)]) == [Position(1, 2), Position(1, 9), Position(2, 1)]
    assert Position(1, 2) < Position(1, 3) <= Position(1, 3) < Position(2, 0)
    assert max(Position(4, 1), Position(3, 8)) == Position(4, 1)
    with pytest.raises(TypeError):
        Position(1, 1) < (1, 2)


def test_replace_copies_and_refuses_unknown_fields():
    config = Config()
    changed = config.replace(select=("GPU1",))
    assert changed.select == ("GPU1",) and config.select == ("GPU",)
    assert changed.replace(select=("GPU",)) == config
    with pytest.raises(TypeError, match="no field 'selekt'"):
        config.replace(selekt=())
    moved = finding().replace(start=Position(1, 1), cell=2)
    assert (moved.start, moved.cell, moved.code) == (Position(1, 1), 2, "GPU101")


def test_defaults_are_not_shared():
    one, two = FileResult("a.py"), FileResult("b.py")
    one.findings.append(finding())
    assert two.findings == []
    assert NotebookResult("n.ipynb").fixed_sources == {}


def test_repr_names_every_field():
    assert repr(Position(1, 2)) == "Position(row=1, column=2)"
    assert repr(FileProblem("a.py", "why")) == "FileProblem(filename='a.py', reason='why', row=1, column=1, cell=None)"


def test_values_survive_pickling_and_copying():
    """Jobs and results cross to worker processes and back."""
    values = [
        finding(fix=Fix("m", (Edit(Position(1, 1), Position(1, 2), "x"),), Applicability.UNSAFE)),
        FileResult("a.py", [finding()], FileProblem("a.py", "why")),
        NotebookResult("n.ipynb", fixed_sources={1: "x = 1\n"}),
        Job("a.py", Config(select=("GPU1",))),
        Config(exclude=("build",)),
    ]
    for value in values:
        assert pickle.loads(pickle.dumps(value)) == value
        assert copy.deepcopy(value) == value
        assert copy.copy(value) == value


def test_as_dict():
    assert FileProblem("a.py", "why", 3, 4).as_dict() == {"filename": "a.py", "reason": "why", "row": 3, "column": 4,
                                                           "cell": None}
