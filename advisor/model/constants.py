"""Literal values as the value model tags them, and the answer of "which literals can this be"
(`Literals`): shared by the questions that read values out of settings (`literals.py`,
`containers.py`, `cli_options.py`, `config_objects.py`)."""

from __future__ import annotations

from typing import Any, FrozenSet, Iterable, Optional, Tuple

import libcst as cst

from advisor.model.vocabulary import TORCH_DTYPES

# A value, tagged with its kind: 1, 1.0 and True are equal in Python and must stay apart here.
Tagged = Tuple[str, Any]

# torch's dtype aliases, under the name torch prints for them.
_DTYPE_ALIASES = {
    "half": "float16", "float": "float32", "double": "float64", "long": "int64", "int": "int32",
    "short": "int16", "cfloat": "complex64", "cdouble": "complex128",
}


class Literals:
    __slots__ = ("values", "complete", "option", "settings", "covered")

    def __init__(
        self, values: FrozenSet[Tagged] = frozenset(), complete: bool = False, option: Optional[str] = None,
        settings: FrozenSet[str] = frozenset(), covered: Optional[bool] = None,
    ) -> None:
        self.values = values
        self.complete = complete  # every path gave one of ``values``
        self.option = option  # a command-line option whose default gives a value, if any
        # Settings read on some paths whose value the program does not hold (`cfg["num_workers"]`
        # of a dict loaded from a YAML file, `config.data.num_workers` of an object built
        # elsewhere): the key or attribute read, by name.
        self.settings = settings
        # Every path gave a literal or read such a setting.
        self.covered = complete if covered is None else covered

    def __repr__(self) -> str:
        return (
            f"Literals({sorted(map(repr, self.values))}, complete={self.complete}, option={self.option}, "
            f"settings={sorted(self.settings)}, covered={self.covered})"
        )

    def with_option(self, option: Optional[str]) -> "Literals":
        return Literals(self.values, self.complete, option, self.settings, self.covered)

    @property
    def plain(self) -> Tuple[Any, ...]:
        """The values as Python objects (a dtype as its qualified name, `"torch.float16"`)."""
        return tuple(value for _, value in self.values)

    def ints(self) -> Optional[Tuple[int, ...]]:
        """Every value, when all paths give a known int (bools are not ints here); else None."""
        if not self.complete or not self.values or any(kind != "int" for kind, _ in self.values):
            return None
        return tuple(sorted(value for _, value in self.values))

    def only(self, value: Any) -> bool:
        """Every path gives exactly this value (compared with its kind: True is not 1)."""
        return self.complete and self.values == frozenset({tag(value)})

    def may_be(self, value: Any) -> bool:
        return tag(value) in self.values

    def dtypes(self) -> FrozenSet[str]:
        """The torch dtypes among the values, by name (`"float16"`)."""
        return frozenset(value[len("torch."):] for kind, value in self.values if kind == "dtype")


UNKNOWN = Literals()


def tag(value: Any) -> Tagged:
    if value is None:
        return ("none", None)
    return (type(value).__name__, value)


def constant(model, expr: cst.BaseExpression) -> Optional[Tagged]:
    """The tagged value of a literal written in place, or of a torch dtype (`torch.half` is
    `("dtype", "torch.float16")`); None for anything else."""
    if type(expr) is cst.Name:
        if expr.value in ("True", "False"):
            return tag(expr.value == "True")
        if expr.value == "None":
            return tag(None)
    elif type(expr) in (cst.Integer, cst.Float, cst.SimpleString, cst.ConcatenatedString):
        try:
            value = expr.evaluated_value
        except (ValueError, SyntaxError, MemoryError):  # an int past the digit limit, a bad escape
            return None
        return tag(value) if isinstance(value, (int, float, str)) else None
    elif type(expr) is cst.UnaryOperation and type(expr.operator) in (cst.Minus, cst.Plus):
        inner = constant(model, expr.expression)
        if inner is not None and inner[0] in ("int", "float"):
            return tag(-inner[1] if type(expr.operator) is cst.Minus else inner[1])
        return None
    if type(expr) in (cst.Name, cst.Attribute):
        qual = model.imports.qualify(expr) or ""
        head, _, last = qual.rpartition(".")
        if head == "torch" and last in TORCH_DTYPES:
            return ("dtype", f"torch.{_DTYPE_ALIASES.get(last, last)}")
    return None


def known(values: Iterable[Tagged], option: Optional[str] = None) -> Literals:
    return Literals(frozenset(values), True, option)


def setting_read(name: str) -> Literals:
    """A read of the setting ``name`` whose value the program does not hold."""
    return Literals(frozenset(), False, None, frozenset({name}), True)


def identity_with_string(test: cst.BaseExpression) -> Optional[bool]:
    """The value of `device.type is 'cuda'` (False) or `x.mode is not "train"` (True): a string
    computed at run time (an attribute read, a call's result) is a new object, never the literal
    written in the code, so an identity test against a string literal always fails (Python warns
    about it for that reason). None for any other test, and for a plain name, which may hold the
    same interned literal."""
    if type(test) is not cst.Comparison or len(test.comparisons) != 1:
        return None
    part = test.comparisons[0]
    if type(part.operator) not in (cst.Is, cst.IsNot):
        return None
    left, right = test.left, part.comparator
    if type(left) in (cst.SimpleString, cst.ConcatenatedString):
        left, right = right, left
    if type(right) not in (cst.SimpleString, cst.ConcatenatedString) or type(left) not in (cst.Attribute, cst.Call):
        return None
    return type(part.operator) is cst.IsNot
