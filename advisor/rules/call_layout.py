"""Fix edits that add an argument to a call the way the call's own arguments are laid out."""

from __future__ import annotations

from typing import Tuple

import libcst as cst

from advisor.rules.base import NodeEdit


def _starts_line(call: cst.Call, index: int) -> bool:
    """Argument ``index`` is the first thing on its line (a line break comes right before it)."""
    if index == 0:
        before = call.whitespace_before_args
    else:
        comma = call.args[index - 1].comma
        before = comma.whitespace_after if type(comma) is cst.Comma else None
    return type(before) is cst.ParenthesizedWhitespace


def _comment_after(arg: cst.Arg) -> bool:
    after = arg.comma.whitespace_after if type(arg.comma) is cst.Comma else arg.whitespace_after_arg
    return type(after) is cst.ParenthesizedWhitespace and after.first_line.comment is not None


def append_argument(call: cst.Call, text: str) -> Tuple[NodeEdit, ...]:
    """Edits that add ``text`` (`pin_memory=True`) after the call's last argument (there must be
    one). When that argument starts a line of its own, ``text`` gets a line of its own too, lined
    up with it, and a trailing comma when the call ends with one; otherwise it joins the last
    argument's line. A comment after the last argument keeps ``text`` on that line, in front of
    the comment, so that the comment stays with the argument it was written for."""
    last = call.args[-1]
    if _starts_line(call, len(call.args) - 1) and not _comment_after(last):
        if type(last.comma) is cst.Comma:
            return (NodeEdit(last.comma, f"\n{text},", "after", align=last),)
        return (NodeEdit(last.value, f",\n{text}", "after", align=last),)
    return (NodeEdit(last.value, f", {text}", "after"),)
