"""What a call receives for one of its parameters: given in the call (by keyword or position),
through the dicts it unpacks with `**`, on which paths, and as which literals.

`DataLoader(ds, **kwargs)` after `kwargs = {"num_workers": 2}` and `if use_cuda:
kwargs.update(pin_memory=True)` receives `pin_memory=True` on the CUDA path (``path="cuda"``)
and sometimes on any path; `DataLoader(ds, num_workers=args.workers)` receives the default of
`--workers` unless the run gives another.
"""

from __future__ import annotations

from typing import Optional, Tuple

from advisor.model.constants import UNKNOWN as UNKNOWN_LITERALS, Literals
from advisor.model.containers import ABSENT, PRESENT, SOMETIMES, UNKNOWN, Value, kwargs_entry, literals_of
from advisor.model.facts import CallSite
from advisor.model.literals import LITERALS
from advisor.model.value_flow import argument

__all__ = ("ABSENT", "PRESENT", "SOMETIMES", "UNKNOWN", "Option", "call_option")


class Option:
    __slots__ = ("state", "arg", "values", "_literals")

    def __init__(self, state: str, arg=None, values: Tuple[Value, ...] = ()) -> None:
        self.state = state  # PRESENT, ABSENT, SOMETIMES (on some paths) or UNKNOWN
        self.arg = arg  # the argument, when the call itself passes it
        self.values = values  # the expressions it may hold
        self._literals: Optional[Literals] = None

    @property
    def literals(self) -> Literals:
        """The literals it may hold (unknown unless PRESENT)."""
        if self._literals is None:
            self._literals = literals_of(LITERALS, self.values) if self.state == PRESENT else UNKNOWN_LITERALS
        return self._literals

    @property
    def value(self):
        """The one expression it holds, when there is only one."""
        return self.values[0].expr if len(self.values) == 1 else None


def call_option(model, site: CallSite, keyword: str, position: Optional[int], path: Optional[str] = None) -> Option:
    """``keyword`` (or positional argument ``position``) of the call at ``site``; with ``path``
    ("cuda"), a key a `**kwargs` dict gets on that path only counts as there."""
    arg = argument(site.node, keyword, position)
    if arg is not None:
        return Option(PRESENT, arg, (Value(arg.value, site.ctx, site.order, model.values),))
    if any(a.star == "*" for a in site.node.args):
        return Option(UNKNOWN)
    state, values = kwargs_entry(model, site, keyword, path)
    return Option(state, None, values)
