"""The self-test of a library module: what its `if __name__ == "__main__":` block runs.

A module that other project files import is a library module. What its main block does (and
the functions only that block calls, `def test(): ...` then `test()`) is its author's check on
made-up data, below the default view as test modules are. A block that goes over a data loader
reads real data, and a block that runs a training loop trains: either is the program's own
entry point, even when a sibling script imports a class or a helper from the file (examples
that build on each other's layers, evaluation scripts that import a conversion helper), unless
the project documents how it runs its scripts and never names this one (a copied example whose
text helpers the project borrows)."""
from __future__ import annotations

from typing import FrozenSet

from advisor.model.subtree import node_ids
from advisor.model.value_flow import main_block


def self_test_nodes(model) -> FrozenSet[int]:
    """The ids of the nodes the file's self-test runs; empty when the file has none."""
    return model.shared("self-test-nodes", _self_test_nodes)


def _self_test_nodes(model) -> FrozenSet[int]:
    if not model.facts.main_blocks or model.project is None or not model.project.importers(model):
        return frozenset()
    inside = set().union(*(node_ids(block.body) for block in model.facts.main_blocks))
    for info in model.facts.functions.values():
        if info.class_name is not None or info.ctx is None or info.ctx.function is not None:
            continue
        callers = model.callers(info)
        if callers and all(owner is model and main_block(site.ctx) for owner, site in callers):
            inside |= node_ids(info.node.body)
    if model.real_path is not None and model.project.undocumented_script(model.real_path):
        # A copied example whose helpers the project imports, and whose own run no README or
        # shell script of the project shows: its training main is its authors' own, not a run.
        return frozenset(inside)
    if any(loop.over_loader and id(loop.node) in inside for loop in model.facts.loops):
        return frozenset()
    for site in model.facts.calls:
        if main_block(site.ctx) and any(owner.has_training_loop(target) for owner, target in model.calls.targets(site)):
            # `main()`, whose epoch loop calls another module's `train(...)`: the program's own
            # entry point, whatever other files import from it (a conversion helper).
            return frozenset()
    return frozenset(inside)
