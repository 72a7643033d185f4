"""Branches that run only on a torch older than the project supports.

`if version.parse(torch.__version__) < version.parse("1.2.0"):` (also with `LooseVersion`,
`parse_version`, the bare strings, or the Hugging Face helper `is_torch_version("<", "1.2.0")`)
guards a fallback for old releases. Below the oldest torch
the project is configured for (`torch-version`, 2.4 by default) such a branch never runs, and
what is reported there is left out, as for `if False:`. The `else` of a test that holds on new
releases (`>=`, `>`) is the same branch. Both sides must go through a version parser: bare
strings compare as text (`"2.10" < "2.2"`), so such a test says nothing certain.
"""

from __future__ import annotations

import re
from typing import List, Optional, Tuple

import libcst as cst

from advisor.model.names import ImportTable

Version = Tuple[int, ...]
_NUMBERS = re.compile(r"\d+")


def old_torch_arm(test: cst.BaseExpression, imports: ImportTable) -> Optional[Tuple[str, Version, bool]]:
    """("body" or "orelse", V, inclusive) when the arm runs only on torch older than V (or at
    most V when ``inclusive``); None for any other test."""
    if type(test) is cst.Call:
        return _version_helper_arm(test, imports)
    if type(test) is not cst.Comparison or len(test.comparisons) != 1:
        return None
    operator = type(test.comparisons[0].operator)
    left, right = test.left, test.comparisons[0].comparator
    if _is_torch_version(left, imports):
        version = _literal_version(right)
        older = {cst.LessThan: ("body", False), cst.LessThanEqual: ("body", True),
                 cst.GreaterThanEqual: ("orelse", False), cst.GreaterThan: ("orelse", True)}.get(operator)
    elif _is_torch_version(right, imports):
        version = _literal_version(left)
        older = {cst.GreaterThan: ("body", False), cst.GreaterThanEqual: ("body", True),
                 cst.LessThanEqual: ("orelse", False), cst.LessThan: ("orelse", True)}.get(operator)
    else:
        return None
    if version is None or older is None or not (_parsed(left) and _parsed(right)):
        return None  # bare strings compare as text: "2.10" < "2.2"
    return older[0], version, older[1]


# The version helpers of the Hugging Face libraries: `is_torch_version(">=", "1.11.0")` parses
# both sides itself, so it compares versions, not text.
_VERSION_HELPERS = ("diffusers.utils.is_torch_version", "transformers.utils.is_torch_version",
                    "diffusers.utils.import_utils.is_torch_version", "transformers.utils.import_utils.is_torch_version")
_HELPER_ARMS = {"<": ("body", False), "<=": ("body", True), ">=": ("orelse", False), ">": ("orelse", True)}


def _version_helper_arm(test: cst.Call, imports: ImportTable) -> Optional[Tuple[str, Version, bool]]:
    """`is_torch_version(">=", "1.11.0")`: the `else` runs only below 1.11 (diffusers' blocks
    keep such a fallback for gradient checkpointing without `use_reentrant`)."""
    if imports.qualify(test.func) not in _VERSION_HELPERS or len(test.args) != 2:
        return None
    if any(a.keyword is not None or a.star for a in test.args):
        return None
    operator, value = test.args[0].value, test.args[1].value
    if type(operator) is not cst.SimpleString or not isinstance(operator.evaluated_value, str):
        return None
    arm = _HELPER_ARMS.get(operator.evaluated_value.strip())
    version = _literal_version(value)
    if arm is None or version is None:
        return None
    return arm[0], version, arm[1]


def never_runs(version: Version, inclusive: bool, oldest: Tuple[int, int]) -> bool:
    """The arm runs only below ``version`` (at or below when ``inclusive``), and the project
    supports no torch that old."""
    return oldest > version if inclusive else oldest >= version


def _parsed(expr: cst.BaseExpression) -> bool:
    """Handed to a version parser (`version.parse(...)`, `LooseVersion(...)`), not compared as text."""
    return type(expr) is cst.Call and len(expr.args) == 1


def _unwrapped(expr: cst.BaseExpression) -> cst.BaseExpression:
    """The argument of a version parser (`version.parse(x)`, `LooseVersion(x)`), or ``expr``."""
    if type(expr) is cst.Call and len(expr.args) == 1 and expr.args[0].keyword is None and not expr.args[0].star:
        return expr.args[0].value
    return expr


def _is_torch_version(expr: cst.BaseExpression, imports: ImportTable) -> bool:
    return imports.qualify(_unwrapped(expr)) == "torch.__version__"


def _literal_version(expr: cst.BaseExpression) -> Optional[Version]:
    value = _unwrapped(expr)
    if type(value) is not cst.SimpleString:
        return None
    text = value.evaluated_value
    if not isinstance(text, str):
        return None
    numbers: List[int] = [int(n) for n in _NUMBERS.findall(text.split("+")[0])[:3]]
    return tuple(numbers) if numbers else None
