"""Which bindings a read can see: reaching definitions over the model's block contexts.

Python code is structured, so a binding made in a block on the read's chain of enclosing
blocks (the same block, or one it is nested in) has always run before the read: it dominates
the read, and nothing older can reach past it. A binding in a sibling block (an `if` body, a
loop body, an `except` handler) may or may not have run, so the search goes on past it. Inside
a loop, the bindings later in the loop body reach the read through the back edge, unless one
inside the loop already dominates the read. The `if` tests on the read's path then rule some of
them out (`paths.py`): the other arm of the same `if`, or a block whose test was found false,
or a binding replaced on every path where the read's tests hold.

Every read is answered by walking back from the read over the bindings of that one name in that
one scope, and stops at the first dominating binding: cost does not grow with how often a name is
rebound elsewhere in the file (generated or concatenated code repeats the same names hundreds of
times).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from typing import Dict, List, Optional, Sequence, Set, Tuple

import libcst as cst

from advisor.model.facts import MODULE_SCOPE, Assignment, CallSite, Context, Facts, FunctionInfo
from advisor.model.paths import PathFilter
from advisor.model.walk import children


class Reach:
    """What a read of a name may see.

    ``assignments``: the bindings of the name that may reach the read, oldest first.
    ``parameter``: the function whose parameter (of that name) may reach it, if any.
    ``closed``: some binding of this file dominates the read; otherwise the value may also
    come from elsewhere (an unbound or global name, a name of another module)."""

    __slots__ = ("assignments", "parameter", "closed")

    def __init__(self, assignments: List[Assignment], parameter: Optional[FunctionInfo], closed: bool) -> None:
        self.assignments = assignments
        self.parameter = parameter
        self.closed = closed

    def __bool__(self) -> bool:
        return bool(self.assignments) or self.parameter is not None


_NOWHERE = Reach([], None, False)


class Bindings:
    def __init__(self, facts: Facts) -> None:
        self.facts = facts
        self._orders: Dict[Tuple[str, str], List[int]] = {}
        self._chains: Dict[int, Set[int]] = {}
        self._callers: Optional[Dict[int, List[CallSite]]] = None
        self._defs: Dict[str, tuple] = {}
        self._method_index: Optional[Dict[Tuple[str, str], FunctionInfo]] = None
        self._outer_names: Dict[int, frozenset] = {}
        self.paths = PathFilter(facts)

    # -- reads of names --------------------------------------------------------------------
    def reaching(self, name: str, ctx: Context, order: int) -> Reach:
        """The bindings of ``name`` a read at ``order`` in ``ctx`` may see."""
        facts = self.facts
        if name.startswith("self.") and ctx.class_scope:
            return self._attribute(name, ctx, order)
        function = ctx.function
        if function is not None:
            key = (function.scope, name)
            if key in facts.assignments:
                found, dominated = self._flow(key, ctx, order)
                if dominated:
                    return Reach(found, None, True)
                if name in function.params:
                    return Reach(found, function, True)
                # A name the function binds is local to all of it: on a path where none of its
                # bindings ran, the read raises UnboundLocalError, so only those found reach it
                # (`if dataset == "a": loader = ... elif ...: loader = ...` with no `else`).
                return Reach(found, None, bool(found) and not self._declared_outer(function, name))
            if name in function.params:
                return Reach([], function, True)
            return self._free(name, function)
        key = (MODULE_SCOPE, name)
        if key not in facts.assignments:
            return _NOWHERE
        found, dominated = self._flow(key, ctx, order)
        return Reach(found, None, dominated)

    def _declared_outer(self, function: FunctionInfo, name: str) -> bool:
        """``name`` is declared `global` or `nonlocal` in the function: its bindings are not local."""
        names = self._outer_names.get(id(function))
        if names is None:
            names = self._outer_names[id(function)] = _outer_declarations(function.node)
        return name in names

    def _attribute(self, name: str, ctx: Context, order: int) -> Reach:
        """`self.x`: flow inside the reading method, then what the class's other methods bind."""
        key = (ctx.class_scope, name)
        every = self.facts.assignments.get(key)
        if not every:
            return _NOWHERE
        function = ctx.function
        own = [a for a in every if a.ctx.function is function]
        if own:
            found, dominated = self._flow(key, ctx, order, own)
            if dominated:
                return Reach(found, None, True)
        else:
            found = []
        others = [a for a in every if a.ctx.function is not function]
        return Reach(others + found, None, bool(others))

    def _free(self, name: str, function: FunctionInfo) -> Reach:
        """A name a function reads but does not bind: a nested function's closure (what the
        enclosing function binds, once its top level has run: a nested function is called, as a
        rule, after the names it reads are made), else a module-level name."""
        outer = function.ctx.function if function.ctx is not None and function.class_name is None else None
        while outer is not None:
            found = self.facts.assignments.get((outer.scope, name))
            if found:
                out: List[Assignment] = []
                for assignment in reversed(found):
                    out.append(assignment)
                    ctx = assignment.ctx
                    if ctx.function is outer and ctx.loop is None and not ctx.conditional:
                        out.reverse()
                        return Reach(out, None, True)
                out.reverse()
                return Reach(out, outer if name in outer.params else None, name in outer.params)
            if name in outer.params:
                return Reach([], outer, True)
            outer = outer.ctx.function if outer.ctx is not None and outer.class_name is None else None
        return self.module_end(name)

    def module_end(self, name: str) -> Reach:
        """A module-level name read inside a function: what it holds once the module has run
        (functions are called after their module's top level, as a rule)."""
        found = self.facts.assignments.get((MODULE_SCOPE, name))
        if not found:
            return _NOWHERE
        out: List[Assignment] = []
        for assignment in reversed(found):
            out.append(assignment)
            ctx = assignment.ctx
            if ctx.function is None and ctx.loop is None and not ctx.conditional:
                out.reverse()
                return Reach(out, None, True)
        out.reverse()
        # Bound only under tests (`if __name__ == "__main__": loader = ...`): a function that
        # reads the name runs after one of them did, or fails with NameError; unless a star
        # import may bind it too.
        return Reach(out, None, bool(out) and not self.facts.star_import)

    def _flow(
        self, key: Tuple[str, str], ctx: Context, order: int, found: Optional[Sequence[Assignment]] = None
    ) -> Tuple[List[Assignment], bool]:
        if found is None:
            found = self.facts.assignments[key]
            orders = self._orders.get(key)
            if orders is None or len(orders) != len(found):
                orders = self._orders[key] = [a.order for a in found]
        else:
            orders = [a.order for a in found]
        chain = self._chain(ctx)
        out: List[Assignment] = []
        dominating: Optional[Assignment] = None
        i = bisect_left(orders, order) - 1
        while i >= 0:
            assignment = found[i]
            if id(assignment.ctx) in chain or self._sealed(assignment.ctx, chain, order):
                out.append(assignment)
                dominating = assignment
                break
            # A binding that a later one of an enclosing block (or the same block) follows on
            # every path is overwritten before the read: `if n > 1: loss = reduce(loss)` and
            # then `loss = loss.item()` in the same arm.
            # Both looks are bounded (the bindings seen last, a few of them) so that a name bound
            # thousands of times costs what it did.
            if not any(self._overwrites(later, assignment) for later in out[-_NEAR:]):
                out.append(assignment)
                if 1 < len(out) <= _NEAR and assignment.ctx.guard is not None and _covered(out[::-1], chain):
                    break  # every arm of an if/else binds it: nothing earlier reaches the read
            i -= 1
        out.reverse()
        covered = dominating is not None or _covered(out, chain)
        # Back edges: the outermost enclosing loop that no binding inside it already dominates
        # the read in brings the bindings made after the read in its body.
        loop, widest = ctx.loop, None
        while loop is not None and (dominating is None or dominating.order <= loop.start):
            widest = loop
            loop = loop.parent
        if widest is not None:
            j = bisect_right(orders, order)
            while j < len(found) and found[j].order <= widest.end:
                out.append(found[j])
                j += 1
        if len(out) > 1 or (out and dominating is None):
            out = self.paths.feasible(out, ctx, order, chain)
        if not covered and out:
            covered = self.paths.implied(out, ctx, order, chain)
        return out, covered

    def _sealed(self, ctx: Context, chain: Set[int], order: float) -> bool:
        """A binding at the top of a `try` body whose handlers all leave, or of a `with` body,
        read after that statement in the block around it: the read runs only when the body ran
        to its end."""
        end = self.facts.sealed_tries.get(id(ctx))
        return end is not None and order > end and ctx.outer is not None and id(ctx.outer) in chain

    def _overwrites(self, later: Assignment, earlier: Assignment) -> bool:
        """``later`` runs after ``earlier`` on every path: it sits in ``earlier``'s block or one
        enclosing it, in the same function, with no early exit between them."""
        if later.ctx.function is not earlier.ctx.function or later.order <= earlier.order:
            return False
        if id(later.ctx) not in self._chain(earlier.ctx):
            return False
        ctx: Optional[Context] = earlier.ctx
        while ctx is not None and ctx is not later.ctx:
            if ctx.guard is not None and ctx.guard.exits:
                return False
            ctx = ctx.outer
        return True

    def _chain(self, ctx: Context) -> Set[int]:
        chain = self._chains.get(id(ctx))
        if chain is None:
            chain = set()
            current: Optional[Context] = ctx
            while current is not None:
                chain.add(id(current))
                current = current.outer
            self._chains[id(ctx)] = chain
        return chain

    # -- calls of this file's functions ------------------------------------------------------
    def function(self, name: str, ctx: Context, order: int) -> Optional[FunctionInfo]:
        """The `def` a plain name calls: the one bound before a module-level call, the last one
        of the module for a call inside a function (it runs once the module has run)."""
        defs = self.facts.function_defs.get(name)
        if not defs:
            return None
        if len(defs) == 1:
            return defs[0] if defs[0].class_name is None else None
        top, orders, nested = self._definitions(name, defs)
        if ctx.function is not None:
            inner = nested.get(id(ctx.function))
            return inner[-1] if inner else (top[-1] if top else None)
        i = bisect_left(orders, order)
        return top[i - 1] if i > 0 else None

    def _definitions(self, name: str, defs: List[FunctionInfo]):
        """Per name: the module-level defs with their orders, and the nested ones per function."""
        cached = self._defs.get(name)
        if cached is None:
            top = [d for d in defs if d.class_name is None and d.ctx is not None and d.ctx.function is None]
            nested: Dict[int, List[FunctionInfo]] = {}
            for d in defs:
                if d.class_name is None and d.ctx is not None and d.ctx.function is not None:
                    nested.setdefault(id(d.ctx.function), []).append(d)
            cached = self._defs[name] = (top, [d.order for d in top], nested)
        return cached

    def callee(self, site: CallSite) -> Optional[FunctionInfo]:
        """The definition a call runs: `train(...)`, or `self.step(...)` in the same class."""
        func = site.node.func
        if site.qualname is not None:
            return None
        if type(func) is cst.Name:
            return self.function(func.value, site.ctx, site.order)
        if site.receiver_name in ("self", "cls") and site.ctx.class_scope and site.method:
            return self.method(site.ctx.class_scope, site.method)
        return None

    def method(self, class_scope: str, name: str) -> Optional[FunctionInfo]:
        """The method ``name`` defined in that class body (not inherited)."""
        return self._methods().get((class_scope, name))

    def _methods(self) -> Dict[Tuple[str, str], FunctionInfo]:
        if self._method_index is None:
            self._method_index = {
                (info.class_scope, info.node.name.value): info
                for defs in self.facts.function_defs.values()
                for info in defs
                if info.class_scope is not None
            }
        return self._method_index

    def callers(self, info: FunctionInfo) -> List[CallSite]:
        """The calls of plain names that run ``info`` (see `callee`)."""
        if self._callers is None:
            callers: Dict[int, List[CallSite]] = {}
            for key, defs in self.facts.function_defs.items():
                if len(defs) < 2:
                    continue
                for site in self.facts.calls_by_callee.get(key, ()):
                    found = self.callee(site)
                    if found is not None:
                        callers.setdefault(id(found), []).append(site)
            self._callers = callers
        defs = self.facts.function_defs.get(info.key, ())
        if len(defs) < 2:
            return list(self.facts.calls_by_callee.get(info.key, ()))
        return list(self._callers.get(id(info), ()))


# How many of the bindings found so far, walking back from a read, are compared with the next.
_NEAR = 8


def _covered(before: Sequence[Assignment], chain: Set[int]) -> bool:
    """Bindings made before the read in every arm of an `if`/`else` (its `elif`s included, and
    nested ones) that the read follows: together they dominate it. An arm left by `if bad:
    return` counts as bound when the binding comes after that exit."""
    if len(before) < 2:
        return False
    arms: Dict[Tuple[int, int], Set[bool]] = {}
    seen: Set[int] = set()
    stack = [a.ctx for a in before]
    while stack:
        ctx = _past_exits(stack.pop(), chain)
        if ctx is None or id(ctx) in seen:
            continue
        if id(ctx) in chain:
            return True
        seen.add(id(ctx))
        guard, outer = ctx.guard, ctx.outer
        if guard is None or guard.exits or outer is None or ctx.loop is not outer.loop or ctx.function is not outer.function:
            continue  # a loop body, a `try` block, a handler: it may not run to the end
        found = arms.setdefault((id(outer), id(guard.test)), set())
        found.add(guard.positive)
        if len(found) == 2:
            stack.append(outer)
    return False


def _past_exits(ctx: Optional[Context], chain: Set[int]) -> Optional[Context]:
    """The block a context continues after `if bad: return` exits (the same block, read on)."""
    while ctx is not None and id(ctx) not in chain and ctx.guard is not None and ctx.guard.exits:
        ctx = ctx.outer
    return ctx



_NESTED_SCOPES = (cst.FunctionDef, cst.ClassDef, cst.Lambda)


def _outer_declarations(node: cst.FunctionDef) -> frozenset:
    """The names a function's own body declares `global` or `nonlocal` (not its nested scopes')."""
    names: Set[str] = set()
    stack = list(children(node.body))
    while stack:
        current = stack.pop()
        kind = type(current)
        if kind is cst.Global or kind is cst.Nonlocal:
            names.update(item.name.value for item in current.names)
        elif kind not in _NESTED_SCOPES:
            stack.extend(children(current))
    return frozenset(names)
