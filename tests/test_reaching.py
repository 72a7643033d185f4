"""Reaching definitions and the tests on a read's path: a name bound under `if rank in [-1, 0]:`
and read later under the same stable test was bound on every path that reaches the read."""

from __future__ import annotations

import re
import textwrap

import libcst as cst
import pytest

from advisor.model import FileModel


def _reach(source: str):
    model = FileModel.build(cst.parse_module(textwrap.dedent(source)), "f.py")
    (site,) = model.facts.calls_by_callee["probe"]
    return model.bindings.reaching("shown", site.ctx, site.order)


@pytest.mark.parametrize("test", ["rank in [-1, 0]", "rank in (-1, 0)", "args.local_rank == -1", "not args.distributed"])
def test_a_binding_under_the_same_test_covers_the_read(test):
    found = _reach(f"""
    def run(rank, args):
        if {test}:
            shown = build()
        for epoch in range(10):
            step()
            if {test}:
                probe(shown)
    """)
    assert found.closed and len(found.assignments) == 1


@pytest.mark.parametrize("source", [
    # another test on the read's path
    """
    def run(rank):
        if rank in [-1, 0]:
            shown = build()
        if rank == 0:
            probe(shown)
    """,
    # the tested name changes between the two tests
    """
    def run(rank):
        if rank in [-1, 0]:
            shown = build()
        rank = other()
        if rank in [-1, 0]:
            probe(shown)
    """,
    # bound in a loop body under the test: the loop may not run
    """
    def run(rank, items):
        if rank in [-1, 0]:
            for item in items:
                shown = item
        if rank in [-1, 0]:
            probe(shown)
    """,
    # a collection that is not all literals
    """
    def run(rank, main):
        if rank in [main, 0]:
            shown = build()
        if rank in [main, 0]:
            probe(shown)
    """,
])
def test_other_paths_stay_open(source):
    assert not _reach(_declared_global(source)).closed


def _declared_global(source: str) -> str:
    """The same code with `shown` declared global: a path without a binding of the function's
    own then reads the module's name, so the bindings found are not all that can reach."""
    return re.sub(r"(def run\(.*\):\n)(\s+)", r"\1\2global shown\n\2", textwrap.dedent(source), count=1)


@pytest.mark.parametrize("handler", ["raise", "return", "sys.exit(1)", "ctx.fail(str(err))", "raise SystemExit(str(err))"])
def test_a_binding_in_a_try_whose_handlers_leave_covers_reads_after_it(handler):
    found = _reach(f"""
    import sys
    def run(ctx):
        try:
            shown = build()
        except ValueError as err:
            print(err)
            {handler}
        probe(shown)
    """)
    assert found.closed and len(found.assignments) == 1


@pytest.mark.parametrize("source", [
    # the handler falls through
    """
    def run():
        try:
            shown = build()
        except ValueError:
            print("no")
        probe(shown)
    """,
    # one handler of two falls through
    """
    def run():
        try:
            shown = build()
        except ValueError:
            raise
        except KeyError:
            pass
        probe(shown)
    """,
    # bound under an `if` inside the body
    """
    def run(flag):
        try:
            if flag:
                shown = build()
        except ValueError:
            raise
        probe(shown)
    """,
    # read inside the handler
    """
    def run():
        try:
            shown = build()
        except ValueError:
            probe(shown)
            raise
    """,
    # `logger.fail(...)` is not click's context
    """
    def run(logger):
        try:
            shown = build()
        except ValueError:
            logger.fail("no")
        probe(shown)
    """,
])
def test_a_try_that_may_fall_through_stays_open(source):
    assert not _reach(_declared_global(source)).closed


LOCAL_ONLY_ON_SOME_PATHS = [
    # an `if`/`elif` with no `else`: the other path raises UnboundLocalError at the read
    """
    def run(dataset):
        if dataset == "a":
            shown = build_a()
        elif dataset == "b":
            shown = build_b()
        probe(shown)
    """,
    # an `else` that raises
    """
    def run(dataset):
        if dataset == "a":
            shown = build_a()
        elif dataset == "b":
            shown = build_b()
        else:
            raise ValueError(dataset)
        probe(shown)
    """,
    # a `try` whose handler falls through
    """
    def run():
        try:
            shown = build_a()
        except ValueError:
            print("no")
        probe(shown)
    """,
]


@pytest.mark.parametrize("source", LOCAL_ONLY_ON_SOME_PATHS)
def test_a_local_name_is_read_from_its_own_bindings_only(source):
    found = _reach(source)
    assert found.closed and found.assignments


@pytest.mark.parametrize("declaration", ["global shown", "nonlocal shown"])
def test_a_name_declared_outside_the_function_stays_open(declaration):
    inner = textwrap.indent(textwrap.dedent(LOCAL_ONLY_ON_SOME_PATHS[0]), "    ")
    inner = re.sub(r"(def run\(.*\):\n)(\s+)", rf"\1\2{declaration}\n\2", inner, count=1)
    source = "def outer():\n    shown = None\n" + inner if declaration.startswith("nonlocal") else inner
    assert not _reach(source).closed


def test_a_binding_in_a_with_body_covers_reads_after_it():
    found = _reach("""
    shown = None
    with open("data.bin", "rb") as f:
        shown = build(f)
    probe(shown)
    """)
    assert found.closed and len(found.assignments) == 1


def test_a_with_that_may_swallow_an_exception_does_not():
    found = _reach("""
    import contextlib
    shown = None
    with contextlib.suppress(ValueError):
        shown = build()
    probe(shown)
    """)
    assert len(found.assignments) == 2


@pytest.mark.parametrize("header, closed", [("", True), ("from helpers import *", False)])
def test_a_module_name_bound_only_under_the_main_test_is_all_a_function_sees(header, closed):
    # unless a star import may bind the name
    found = _reach(f"""
    {header}

    def train():
        probe(shown)

    if __name__ == "__main__":
        shown = build()
        train()
    """)
    assert found.closed is closed and len(found.assignments) == 1
