"""Walks over small subtrees (one call's arguments, one function's body) that rules may do
without a second pass over the module."""

from __future__ import annotations

from typing import Iterable, Set

import libcst as cst

from advisor.model.walk import children


def contains(tree: cst.CSTNode, node: cst.CSTNode) -> bool:
    """``node`` is ``tree`` or one of its descendants (compared by identity)."""
    stack = [tree]
    while stack:
        current = stack.pop()
        if current is node:
            return True
        stack.extend(children(current))
    return False


def node_ids(tree: cst.CSTNode) -> Set[int]:
    """The ids of ``tree`` and all its descendants: for many `contains` questions at once."""
    out: Set[int] = set()
    stack = [tree]
    while stack:
        current = stack.pop()
        out.add(id(current))
        stack.extend(children(current))
    return out


def iter_names(node: cst.CSTNode) -> Iterable[str]:
    """Every Name in a small subtree (used on call arguments, never on whole files)."""
    stack = [node]
    while stack:
        current = stack.pop()
        if type(current) is cst.Name:
            yield current.value
        else:
            stack.extend(children(current))


def reads_any(tree: cst.CSTNode, names: Set[str]) -> bool:
    """Some plain name in the subtree is one of ``names`` (`output` in `hm = output["hm"]`)."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if type(node) is cst.Name:
            if node.value in names:
                return True
        else:
            stack.extend(children(node))
    return False
