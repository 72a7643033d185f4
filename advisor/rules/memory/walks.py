"""Helpers shared by the memory rules."""

from __future__ import annotations
from typing import Iterator, List
import libcst as cst
from advisor.model.vocabulary import TRAINING_TEXT  # noqa: F401  (re-exported for the memory rules)
from advisor.model.walk import children


def walk(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """Every node of one small subtree (a call's arguments, one function's body)."""
    stack: List[cst.CSTNode] = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(children(current))
