"""Helpers shared by the memory rules."""

from __future__ import annotations
from typing import Iterator, List
import libcst as cst
from advisor.model.walk import children


TRAINING_TEXT = ("backward", ".step(")


def walk(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """Every node of one small subtree (a call's arguments, one function's body)."""
    stack: List[cst.CSTNode] = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(children(current))
