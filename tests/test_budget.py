"""budget.run_bounded: the analysis thread, its CPU-time budget and cancellation."""

from __future__ import annotations

import threading

import pytest

from advisor.budget import BudgetExceeded, Cancelled, checkpoint, run_bounded


def spin():
    while True:
        pass


def test_pure_python_past_its_budget_is_stopped():
    with pytest.raises(BudgetExceeded):
        run_bounded(spin, 0.1)


def test_a_checkpoint_stops_work_past_a_budget_no_machine_meets():
    def work():
        sum(range(10_000))
        checkpoint()
        return "finished"

    with pytest.raises(BudgetExceeded):
        run_bounded(work, 1e-9)
    assert run_bounded(work, 86_400) == "finished"


def test_cancelled_work_stops():
    asked = []

    def cancelled() -> bool:
        asked.append(1)
        return len(asked) > 2

    with pytest.raises(Cancelled):
        run_bounded(spin, None, cancelled)


def test_values_and_errors_come_back():
    assert run_bounded(lambda: 42, 5) == 42

    def fail():
        raise ValueError("bad input")

    with pytest.raises(ValueError, match="bad input"):
        run_bounded(fail, 5)


def test_many_short_analyses_race_nothing():
    # Each ends before or while it is watched: no stray exception in any thread, none left over.
    errors = []
    previous = threading.excepthook
    threading.excepthook = errors.append
    try:
        for _ in range(2_000):
            assert run_bounded(lambda: 1, 5) == 1
    finally:
        threading.excepthook = previous
    assert errors == []


def test_the_deep_stack_takes_deep_recursion():
    def depth(n):
        return 0 if n == 0 else 1 + depth(n - 1)

    assert run_bounded(lambda: depth(20_000), 60) == 20_000
