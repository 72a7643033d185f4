"""The one follower: what can an expression hold, and where did it come from.

A question (is it a DataLoader? a tensor? on which device?) looks at an expression and either
answers it or lets the follower go one step back to where the value came from:

- a name: the bindings that reach the read (`bindings.py`), and the function's callers for a
  parameter;
- a call of a function of this file: the values it returns (element ``index`` of a returned tuple
  for `a, b = f()`);
- a conditional expression: both branches;
- a tuple unpack of a literal: the element.

Each question is a small class: `terminal` answers what it recognises, `combine` merges the
answers of several paths, `unknown` stands for a path nobody can see (a value from another
module, a loop variable, a parameter nobody passes). Answers are memoised per expression and
read position, and a path that leads back to itself answers `unknown`, so each question costs
at most one visit per reachable expression.
"""

from __future__ import annotations

from typing import Any, Dict, Generic, List, Optional, Sequence, Tuple, TypeVar

import libcst as cst

from advisor.model import open_questions
from advisor.model.constants import identity_with_string
from advisor.model.text_calls import called_by_name
from advisor.model.facts import Assignment, CallSite, Context, FunctionInfo
from advisor.model.framework_wrappers import keeps_batches, wrapped_arguments
from advisor.model.names import dotted_name, is_main_test
from advisor.model.walk import children

A = TypeVar("A")
# Start processes that run a function with the process index, then the `args` tuple.
SPAWNERS = ("torch.multiprocessing.spawn", "torch.multiprocessing.start_processes")
_PENDING = object()
_SELF = object()  # an augmented binding read through its own loop back edge
# What a lookup of a key finds (in a dict, in a call's `**` spreads): there on every path, on
# none, on some, or it cannot tell.
PRESENT, ABSENT, SOMETIMES, UNKNOWN = "present", "absent", "sometimes", "unknown"


class Question(Generic[A]):
    """Subclasses set ``key`` and ``unknown`` and override what they need."""

    key: str
    unknown: A
    # What `x += v` in a loop reads of x through its own back edge: the answer of the other
    # bindings decides (a question whose answers must all hold sets it to its neutral value).
    self_edge: Optional[A] = None
    # A name imported from another module of the project (`from config import LOADER_KWARGS`) is
    # followed to its module-level bindings there, for questions that set this.
    follows_imports = False
    # Bindings made in code no run reaches (a branch of a string setting no construction
    # passes: guards.GuardKinds.dead) are left out of the answer.
    skips_dead = False
    # A binding under a flag no run turns on gives nothing either (`cql_alpha_loss =
    # torch.FloatTensor([0.0])`, then a device value only under `if self.with_lagrange:`).
    skips_switched_off = False
    # Where a value lives (host or device) rather than what it is: the calls of a module's
    # `if __name__ == "__main__":` demo do not speak for the callers of the modules that import it.
    placement = False
    # `accelerator.prepare(a, b)` hands back a and b (`framework_wrappers.py`): followed through,
    # unless the question is about what the wrapping changes (a loader's batches as they come,
    # before the framework copies them to the device).
    through_wrappers = True
    # A parameter of a function no call of the project is seen to make takes its default (a
    # class built by a registry), and a spread of a caller's own `*args`/`**kwargs` from a
    # function nobody calls passes nothing: the run as the project's own code makes it.
    uncalled_default = False
    # A `None` a call passes (or leaves as the default) says nothing of what the parameter holds
    # when it holds something: `ignore=None` at one call and a mask tensor at another is a tensor
    # where the function uses it. Such calls are left out, unless every call is one.
    none_means_absent = False

    def terminal(self, flow: "ValueFlow", expr: cst.BaseExpression, ctx: Context, order: int) -> Optional[A]:
        """An answer for what this question recognises, or None to let the follower go on."""
        return None

    def combine(self, answers: Sequence[A]) -> A:
        """The answer when the value may come from any of these paths."""
        raise NotImplementedError

    def combine_callers(self, answers: Sequence[A]) -> A:
        """A parameter: the arguments its callers pass."""
        return self.combine(answers)

    def unbound(self, flow: "ValueFlow", assignment: Assignment) -> A:
        """A binding with no value expression (a loop target)."""
        return self.unknown

    def element(
        self, flow: "ValueFlow", expr: cst.BaseExpression, index: int, ctx: Context, order: int
    ) -> Optional[A]:
        """An answer for element ``index`` of what ``expr`` gives (`a, b = expr`), or None to let
        the follower go on."""
        return None

    def refine(self, flow: "ValueFlow", expr: cst.BaseExpression, ctx: Context, order: int, answer: A) -> A:
        """A last look at a followed expression, with what its paths answered."""
        return answer

    def callers(self, flow: "ValueFlow", info: FunctionInfo, sites: List[CallSite]) -> List[CallSite]:
        """The calls whose arguments a parameter of ``info`` takes its value from."""
        return sites

    def chosen_calls(self, info: FunctionInfo) -> Optional[List[Tuple[Any, CallSite]]]:
        """The one call (model, site) whose arguments a parameter of ``info`` takes, when the
        question is asked about that call only (a generator's items where it is called); None:
        every call of the function."""
        return None

    def augmented(self, flow: "ValueFlow", assignment: Assignment, before: A, value: A) -> A:
        """`x += value`: what x held before, combined with the value."""
        return self.combine([before, value])

    def drawn(self, flow: "ValueFlow", call: cst.Call, ctx: Context, order: int, index: Optional[int]) -> Optional[A]:
        """`next(iterator)` (element ``index`` of it, for `x, y = next(it)`): an item drawn from
        the iterator. None lets the follower go on (it knows nothing of builtins)."""
        return None


class ValueFlow:
    def __init__(self, model) -> None:
        self.model = model
        self.bindings = model.bindings
        self._memo: Dict[Tuple[str, int, Optional[int], int], Any] = {}
        # Reads made up to follow a value into its callers (`args.distributed` at a call that
        # passes `args`): kept, so that their ids, the memo's keys, stay theirs.
        self._made_reads: Dict[Tuple[int, str], cst.BaseExpression] = {}
        self.through_depth = 0

    def made_read(self, value: cst.BaseExpression, rest: str) -> cst.BaseExpression:
        """`value.<rest>` as an expression (`args.distributed` for the argument `args`)."""
        key = (id(value), rest)
        read = self._made_reads.get(key)
        if read is None:
            read = value
            for part in rest.split("."):
                read = cst.Attribute(value=read, attr=cst.Name(part))
            self._made_reads[key] = read
        return read

    def ask(
        self, question: Question[A], expr: cst.BaseExpression, ctx: Context, order: int, index: Optional[int] = None
    ) -> A:
        key = (question.key, id(expr), index, order)
        memo = self._memo
        known = memo.get(key)
        tracker = open_questions.current()
        if known is not None:
            if tracker.leaning:
                tracker.read(memo, key)
            return question.unknown if known is _PENDING else known
        return open_questions.remembered(memo, key, lambda: self._answer(question, expr, ctx, order, index), _PENDING)

    def _answer(self, question: Question[A], expr, ctx: Context, order: int, index: Optional[int]) -> A:
        if type(expr) is cst.Call and (question.through_wrappers or keeps_batches(self.model, expr)):
            handed = wrapped_arguments(self.model, expr)
            if handed is not None:
                # `model, opt, loader = accelerator.prepare(model, opt, loader)`
                if index is None and len(handed) == 1:
                    return self.ask(question, handed[0], ctx, order)
                if index is not None and index < len(handed):
                    return self.ask(question, handed[index], ctx, order)
        if type(expr) is cst.Call and self.drawn_from(expr, ctx, order) is not None:
            drawn = question.drawn(self, expr, ctx, order, index)
            if drawn is not None:
                return drawn
        if index is not None:
            answer = question.element(self, expr, index, ctx, order)
            if answer is not None:
                return answer
            if type(expr) in (cst.Tuple, cst.List):
                elements = expr.elements
                if index >= len(elements) or any(type(e) is cst.StarredElement for e in elements[: index + 1]):
                    return question.unknown
                return self.ask(question, elements[index].value, ctx, order)
            if type(expr) is cst.Call:
                found = self.callee(expr, ctx, order)
                return self.returned(question, found[1], index, found[0], call=expr) if found is not None else question.unknown
            name = dotted_name(expr)
            if name is not None:
                return self.name(question, name, ctx, order, index)  # `x, y = pair`
            return question.unknown
        answer = question.terminal(self, expr, ctx, order)
        if answer is not None:
            return answer
        if type(expr) is cst.IfExp:
            decided = identity_with_string(expr.test)
            if decided is not None:
                # `{...} if device.type is 'cuda' else {}`: the identity test never holds.
                return self.ask(question, expr.body if decided else expr.orelse, ctx, order)
            return question.combine(
                [self.ask(question, expr.body, ctx, order), self.ask(question, expr.orelse, ctx, order)]
            )
        if type(expr) is cst.Call:
            found = self.callee(expr, ctx, order)
            return self.returned(question, found[1], None, found[0], call=expr) if found is not None else question.unknown
        if type(expr) is cst.Name:
            bound = self.model.shared("comprehension-reads", comprehension_reads).get(id(expr))
            if bound is not None:
                # `[x[m] for x, m in zip(xs, masks)]`: a target of the comprehension, like a loop's.
                target, index, iterable = bound
                return question.unbound(
                    self, Assignment(target, None, ctx, order, index, "loop-target", iterable=iterable)
                )
        name = dotted_name(expr)
        if name is None:
            return question.unknown
        return question.refine(self, expr, ctx, order, self.name(question, name, ctx, order))

    def name(self, question: Question[A], name: str, ctx: Context, order: int, index: Optional[int] = None) -> A:
        """What a read of ``name`` may see (element ``index`` of it, for `x, y = name`)."""
        reach = self.bindings.reaching(name, ctx, order)
        assignments = reach.assignments
        if question.skips_dead and len(assignments) + (reach.parameter is not None) > 1:
            live = [a for a in assignments if not self.model.guards.dead(a.ctx)]
            assignments = live if live or reach.parameter is not None else assignments
        if question.skips_switched_off and len(assignments) > 1:
            on = [a for a in assignments if self.model.guards.switched_off(a.ctx) is None]
            assignments = on or assignments
        answers: List[A] = [self.assigned(question, a, index) for a in assignments]
        if reach.parameter is not None:
            answers.append(self.passed(question, reach.parameter, name, index))
        if not answers and question.follows_imports:
            imported = self.imported(question, name, index)
            if imported is not None:
                return imported
        if not answers and not reach.closed and ctx.class_scope and name.startswith("self.") and name.count(".") == 1:
            inherited = self.inherited(question, name, ctx.class_scope, index)
            if inherited is not None:
                return inherited
        if not answers and not reach.closed and name.count(".") == 1 and not name.startswith("self."):
            held = self.held_attribute(question, name, ctx, order, index)
            if held is not None:
                return held
        if not reach.closed or not answers:
            answers.append(question.unknown)
        return answers[0] if len(answers) == 1 else question.combine(answers)

    def held_attribute(self, question: Question[A], name: str, ctx: Context, order: int,
                       index: Optional[int]) -> Optional[A]:
        """`pipeline.model` read outside the class, where `pipeline` is bound once to
        `Pipeline(model, ...)` of a project class that binds `self.model` in `__init__` only:
        what those bindings hold, a parameter stored as it is (`self.model = model`) being the
        argument this construction passes. None when the instance or the binding is not that
        plain (another method may rebind the attribute; a spread hides the argument)."""
        head, attr = name.split(".")
        reach = self.bindings.reaching(head, ctx, order)
        if reach.parameter is not None or not reach.closed or len(reach.assignments) != 1:
            return None
        built = reach.assignments[0]
        call = built.value
        if built.index is not None or type(call) is not cst.Call or any(a.star for a in call.args):
            return None
        found = self.built_class(call)
        if found is None:
            return None
        owner, cls = found
        init = owner.facts.functions.get(f"{cls.name}.__init__")
        stores = owner.facts.assignments.get((cls.scope, "self." + attr))
        if init is None or not stores or any(s.ctx.function is not init or s.augmented for s in stores):
            return None
        answers: List[A] = []
        for store in stores:
            value = store.value
            stored = value.value if type(value) is cst.Name and store.index is None else None
            if stored is None or stored not in init.params[init.receiver_params:] or owner.bindings.reaching(
                stored, store.ctx, store.order
            ).assignments:
                answers.append(owner.values.assigned(question, store, index))
                continue
            arg = argument(call, stored, init.params.index(stored) - init.receiver_params)
            if arg is not None:
                answers.append(self.ask(question, arg.value, built.ctx, built.order, index))
                continue
            default = parameter_default(init, stored)
            answers.append(question.unknown if default is None else owner.values.ask(question, default, init.ctx, init.order, index))
        return answers[0] if len(answers) == 1 else question.combine(answers)

    def built_class(self, call: cst.Call):
        """The project class a call builds, as (model of its file, ClassInfo), or None."""
        model = self.model
        qual = model.imports.qualify(call.func)
        if qual is None and type(call.func) is cst.Name:
            local = model.facts.classes.get(call.func.value)
            return None if local is None else (model, local)
        symbol = model.symbol(qual) if qual is not None else None
        if symbol is None or symbol.kind != "class":
            return None
        return symbol.model, symbol.info

    def inherited(self, question: Question[A], name: str, class_scope: str, index: Optional[int],
                  depth: int = 0) -> Optional[A]:
        """`self.args` that a class never binds and a base class of the project binds
        (`TrainerBase.__init__` in another module stores `self.args = args`, the subclass calls
        `super().__init__(args, ...)`): what the base's bindings hold. None when no base of the
        project binds it (or the bases are too deep to follow)."""
        if depth > 3:
            return None
        info = next((c for c in self.model.facts.classes.values() if c.scope == class_scope), None)
        if info is None:
            return None
        answers: List[A] = []
        for base in info.bases:
            local = self.model.facts.classes.get(base)
            if local is not None and local is not info:
                owner, cls = self.model, local
            else:
                symbol = self.model.symbol(base) if "." in base else None
                if symbol is None or symbol.kind != "class":
                    continue
                owner, cls = symbol.model, symbol.info
            bound = owner.facts.assignments.get((cls.scope, name))
            if bound:
                answers.extend(owner.values.assigned(question, a, index) for a in bound)
                continue
            deeper = owner.values.inherited(question, name, cls.scope, index, depth + 1)
            if deeper is not None:
                answers.append(deeper)
        if not answers:
            return None
        return answers[0] if len(answers) == 1 else question.combine(answers)

    def imported(self, question: Question[A], name: str, index: Optional[int]) -> Optional[A]:
        """A name bound in another module of the project (`from config import CFG`, `config.CFG`):
        what it holds once that module has run; None when it is not such a name."""
        qual = self.model.imports.qualify_dotted(name)
        if qual is None:
            return None
        symbol = self.model.symbol(qual)
        if symbol is None or symbol.kind != "value":
            return None
        owner = symbol.model
        reach = owner.bindings.module_end(symbol.name)
        answers: List[A] = [owner.values.assigned(question, a, index) for a in reach.assignments]
        if not reach.closed or not answers:
            answers.append(question.unknown)
        return answers[0] if len(answers) == 1 else question.combine(answers)

    def assigned(self, question: Question[A], assignment: Assignment, index: Optional[int] = None) -> A:
        key = (question.key, id(assignment), index, -1)
        memo = self._memo
        known = memo.get(key)
        tracker = open_questions.current()
        if known is not None:
            if tracker.leaning:
                tracker.read(memo, key)
            if known is _SELF:
                return question.unknown if question.self_edge is None else question.self_edge
            return question.unknown if known is _PENDING else known
        return open_questions.remembered(memo, key, lambda: self._binding(question, assignment, index), _PENDING)

    def _binding(self, question: Question[A], assignment: Assignment, index: Optional[int]) -> A:
        if assignment.value is None:
            repeated = self._repeated(assignment)
            if repeated is not None:
                return self.ask(question, repeated, assignment.ctx, assignment.order, index)
            return question.unbound(self, assignment)
        if index is not None and assignment.index is not None:
            return question.unknown  # an element of an element: not followed
        found = self._unpacked_call(question, assignment) if index is None else None
        if found is not None:
            # `loss, metrics = step(...)`: only the returns of two elements can reach it.
            value = self.returned(question, found[1], assignment.index, found[0], found[2],
                                  call=assignment.value if type(assignment.value) is cst.Call else None)
        else:
            value = self.ask(question, assignment.value, assignment.ctx, assignment.order, assignment.index if index is None else index)
        if not assignment.augmented:
            return value
        # The target is read just before the statement binds it (through the loop's back edge,
        # that may be this same binding, one iteration earlier).
        key = (question.key, id(assignment), index, -1)
        pending = self._memo.get(key)
        self._memo[key] = _SELF
        try:
            before = self.name(question, assignment.target, assignment.ctx, assignment.order - 0.5)
        finally:
            self._memo[key] = pending
        return question.augmented(self, assignment, before, value)

    def _repeated(self, assignment: Assignment) -> Optional[cst.BaseExpression]:
        """`for loader in itertools.repeat(data_loader):` binds the loader itself on every turn
        (an endless batch generator's outer loop): the object ``assignment``'s loop repeats."""
        iterable = assignment.iterable
        if assignment.index is not None or type(iterable) is not cst.Call or not iterable.args:
            return None
        first = iterable.args[0]
        if first.keyword is not None or first.star:
            return None
        qual = self.model.imports.qualify(iterable.func)
        return first.value if qual == "itertools.repeat" else None

    def _unpacked_call(self, question: Question[A], assignment: Assignment):
        """(model, FunctionInfo, N) when the binding is one of N names unpacked from a call of a
        project function that neither `next` nor the question's `element` answers for."""
        arity = _unpacked_into(assignment)
        if arity is None:
            return None
        call, ctx, order = assignment.value, assignment.ctx, assignment.order
        if self.drawn_from(call, ctx, order) is not None or question.element(self, call, assignment.index, ctx, order) is not None:
            return None
        found = self.callee(call, ctx, order)
        return None if found is None else (found[0], found[1], arity)

    def passed(self, question: Question[A], info: FunctionInfo, name: str, index: Optional[int] = None) -> A:
        """A parameter's value: the arguments of every call of the function, or its default
        (element ``index`` of them, for `train_loader, eval_loader = loaders`)."""
        position = info.params.index(name) - info.receiver_params
        answers: List[A] = []
        chosen = question.chosen_calls(info)
        if chosen is not None:
            callers = list(chosen)
        else:
            local = question.callers(self, info, self.model.call_sites(info))
            callers = [(self.model, s) for s in local]
            if question.callers(self, info, local) is local or not local:
                # Calls from the project files that import this one count too (a filter on
                # callers names this file's own calls only).
                callers += [(m, s) for m, s in self.model.callers(info) if m is not self.model]
            if not callers and not local and question.callers(self, info, local) is local:
                callers = self.model.calls.constructions(info, through_subclasses=True)  # `__init__`: where instances are built
            if question.uncalled_default and callers and not self.model.is_test_code:
                # The run as the project makes it: a test that builds the block with a flag on
                # (`ResNet(with_cp=True)` in tests/) is not a run.
                callers = [(m, s) for m, s in callers if not m.is_test_code]
            if question.callers(self, info, local) is local:
                spawned = self._spawned(question, info, position)
                answers.extend(spawned if index is None else [question.unknown for _ in spawned])
        if not callers and not answers and index is None:
            configured = self.model.configured_argument(question, info, name)
            if configured is not None:
                return configured
        if not callers:
            if answers:
                return question.combine_callers(answers)
            default = None
            if question.uncalled_default and index is None and not called_by_name(self.model, info):
                default = parameter_default(info, name)
            return question.unknown if default is None else self.ask(question, default, info.ctx, info.order)
        if question.placement and chosen is None and self._demo_only(callers):
            answers.append(question.unknown)
        default = parameter_default(info, name)
        nones = 0
        for model, site in callers:
            arg = argument(site.node, name, position)
            if arg is not None:
                if question.none_means_absent and _is_none(arg.value):
                    nones += 1
                    continue
                answers.append(model.values.ask(question, arg.value, site.ctx, site.order, index))
                continue
            spread = spread_argument(model, site, position) if any(a.star == "*" for a in site.node.args) else None
            if spread is not None:
                answers.append(model.values.ask(question, spread[0], spread[1], spread[2], index))
                continue
            if index is not None:
                answers.append(question.unknown)  # an element of a spread or of a default: not followed
                continue
            spread = (PRESENT, ()) if any(a.star == "*" for a in site.node.args) else (ABSENT, ())
            if spread[0] == ABSENT and any(a.star == "**" for a in site.node.args):
                # `training_loop(**c)`: the key of that name in the dicts it unpacks.
                spread = model.spread_keyword(site, name)
            state, values = spread
            if state in (PRESENT, SOMETIMES) and values:
                answers.extend(v.flow.ask(question, v.expr, v.ctx, v.order) for v in values)
            if question.uncalled_default and state in (UNKNOWN, PRESENT) and not values and _forwards_uncalled(model, site):
                state = ABSENT  # `super().__init__(model, *args, **kwargs)` of a subclass nobody builds
            elif state in (UNKNOWN, PRESENT) and not values:
                # `super().__init__(model, *args, **kwargs)` of a subclass built as
                # `LearnedDiffusion(model)`: what its own callers put in those spreads.
                handed = _handed_on(model, site, name)
                if handed is not None:
                    for owner, call, arg in handed:
                        if arg is not None:
                            answers.append(owner.values.ask(question, arg.value, call.ctx, call.order))
                        else:
                            answers.append(question.unknown if default is None else self.ask(question, default, info.ctx, info.order))
                    continue
            if state == UNKNOWN or (state == PRESENT and not values):
                answers.append(question.unknown)  # `f(*args)`: it may be in there
            elif state in (ABSENT, SOMETIMES):
                if question.none_means_absent and state == ABSENT and default is not None and _is_none(default):
                    nones += 1
                    continue
                answers.append(question.unknown if default is None else self.ask(question, default, info.ctx, info.order))
        if nones and not answers:
            return question.unknown
        return question.combine_callers(answers)

    def _demo_only(self, callers) -> bool:
        """Every call seen is in this module's `if __name__ == "__main__":` block (a smoke test
        on made-up inputs), and other project files import the module: their calls, which the
        call graph did not find, may pass values that live elsewhere."""
        if not all(m is self.model and main_block(s.ctx) for m, s in callers):
            return False
        project = self.model.project
        return project is not None and bool(project.importers(self.model))

    def _spawned(self, question: Question[A], info: FunctionInfo, position: int) -> List[A]:
        """`mp.spawn(main_worker, args=(cfg,))` runs `main_worker(rank, cfg)` in each process: a
        parameter after the first takes its value from the `args` tuple."""
        answers: List[A] = []
        if info.class_name is not None:
            return answers
        for site in self.model.calls_to(*SPAWNERS):
            target = argument(site.node, "fn", 0)
            if target is None or not type(target.value) is cst.Name:
                continue
            if self.bindings.function(target.value.value, site.ctx, site.order) is not info:
                continue
            passed = argument(site.node, "args", 1)
            elements = passed.value.elements if passed is not None and type(passed.value) is cst.Tuple else None
            if position < 1 or elements is None or any(type(e) is cst.StarredElement for e in elements):
                answers.append(question.unknown)
            elif position - 1 < len(elements):
                answers.append(self.ask(question, elements[position - 1].value, site.ctx, site.order))
            else:
                answers.append(question.unknown)
        return answers

    def returned(
        self, question: Question[A], info: FunctionInfo, index: Optional[int], owner=None, arity: Optional[int] = None,
        call: Optional[cst.Call] = None,
    ) -> A:
        """What calling ``info`` gives (element ``index`` of it); ``owner`` is the model of the
        file that defines it (another project module's), when not this one. With ``arity``, the
        result is unpacked into that many names: a tuple of another length never gets there.
        With ``call``, a return under a test of a parameter the call passes a constant for
        (`if train: return DataLoader(train_set, ...)` for `create_loader(cfg, True)`) counts
        only on the arm that constant takes."""
        sites = info.return_sites
        flow = self if owner is None or owner is self.model else owner.values
        if call is not None and len(sites) > 1:
            sites = _arm_taken(info, sites, call) or sites
        if arity is not None:
            sites = [s for s in sites if flow.result_length(s.value, s.ctx, s.order) in (None, arity)] or sites
        if not sites:
            return question.unknown
        answers = [flow.ask(question, s.value, s.ctx, s.order, index) for s in sites]
        return answers[0] if len(answers) == 1 else question.combine(answers)

    def result_length(self, value: cst.BaseExpression, ctx: Context, order: int, depth: int = 0) -> Optional[int]:
        """How many elements unpacking ``value`` gives, where the code says: a tuple display, a
        name bound to one, or a call of a project function whose returns all have that length
        (`return _build_loader(config)` in a dispatcher); -1 for an instance of a library class
        (`return DataLoader(...)`), which no tuple unpacking of N names takes apart; None when
        unknown."""
        length = _length(value)
        if length is not None or depth > 2:
            return length
        if type(value) is cst.Name:
            reach = self.bindings.reaching(value.value, ctx, order)
            if not reach.closed or reach.parameter is not None or not reach.assignments:
                return None
            found = {
                None if a.value is None or a.index is not None
                else self.result_length(a.value, a.ctx, a.order, depth + 1)
                for a in reach.assignments
            }
            return found.pop() if len(found) == 1 else None
        if type(value) is not cst.Call:
            return None
        found_callee = self.callee(value, ctx, order)
        if found_callee is not None:
            owner, info = found_callee
            flow = self if owner is self.model else owner.values
            lengths = {flow.result_length(s.value, s.ctx, s.order, depth + 1) for s in info.return_sites}
            return lengths.pop() if len(lengths) == 1 else None
        qual = self.model.imports.qualify(value.func)
        if qual is not None and qual.rsplit(".", 1)[-1][:1].isupper():
            return -1
        return None

    def callee(self, call: cst.Call, ctx: Context, order: int):
        """(model, FunctionInfo) of the function a call runs, in this file (`function_called`)
        or imported from another module of the project; None when neither."""
        info = self.function_called(call, ctx, order)
        if info is not None:
            return self.model, info
        if type(call.func) is cst.Attribute and type(call.func.value) is cst.Call:
            # `Options().init(parser)`: the method of the class the call graph finds built there.
            targets = self.model.calls.targets_of_expression(call, ctx, order)
            return targets[0] if len(targets) == 1 else None
        qual = self.model.imports.qualify(call.func)
        if qual is None and type(call.func) is cst.Name:
            # `get_tensor_data(...)` of a file that says `from utils_glue import *`
            symbol = self.model.calls.star_symbol_at(call.func.value, ctx, order)
            if symbol is not None and symbol.kind == "function" and symbol.info is not None:
                return symbol.model, symbol.info
            return None
        if qual is None and type(call.func) is cst.Attribute and dotted_name(call.func.value) is not None:
            # `opts = options.parse()` where `options = Options()`, a class of another module:
            # the method of the one class the instance is of.
            targets = self.model.calls.targets_of_expression(call, ctx, order)
            return targets[0] if len(targets) == 1 else None
        if qual is None:
            return None
        symbol = self.model.symbol(qual)
        if symbol is not None and symbol.kind == "function" and symbol.info is not None:
            return symbol.model, symbol.info
        return None

    def drawn_from(self, call: cst.Call, ctx: Context, order: int) -> Optional[cst.BaseExpression]:
        """The iterator a call advances: `it` in `next(it)` (Python's own `next`), or in the
        old spelling `it.next()` / `it.__next__()`; None for any other call."""
        if self.builtin_next(call, ctx, order):
            return call.args[0].value
        func = call.func
        if type(func) is cst.Attribute and func.attr.value in ("next", "__next__") and not call.args:
            return func.value
        return None

    def builtin_next(self, call: cst.Call, ctx: Context, order: int) -> bool:
        """`next(iterator)` or `next(iterator, default)`, with Python's own `next`."""
        func = call.func
        return (
            type(func) is cst.Name
            and func.value == "next"
            and bool(call.args)
            and call.args[0].keyword is None
            and not call.args[0].star
            and self.model.imports.qualify(func) is None
            and self.bindings.function("next", ctx, order) is None
        )

    def function_called(self, call: cst.Call, ctx: Context, order: int) -> Optional[FunctionInfo]:
        """The function of this file a call runs: `helper(...)`, `self.method(...)`, or
        `obj.method(...)` when exactly one class of the file defines that method."""
        func = call.func
        model = self.model
        if model.imports.qualify(func) is not None:
            return None
        if type(func) is cst.Name:
            return self.bindings.function(func.value, ctx, order)
        if type(func) is cst.Attribute:
            receiver = dotted_name(func.value)
            if receiver in ("self", "cls") and ctx.class_scope:
                found = self.bindings.method(ctx.class_scope, func.attr.value)
                return found if found is not None else model.resolve(f"{ctx.class_name}.{func.attr.value}")
            if receiver is not None:
                local = model.resolve(f".{func.attr.value}")
                if local is not None and self._runs_elsewhere(call, ctx, order, local):
                    return None
                return local
        return None

    def _runs_elsewhere(self, call: cst.Call, ctx: Context, order: int, local: FunctionInfo) -> bool:
        """`loaders.run()` where `loaders` is built from another module's class: the call graph
        knows the instance's class, and this file's own `run` method (of some other class) is
        not the one it runs."""
        targets = self.model.calls.targets_of_expression(call, ctx, order)
        return bool(targets) and all(info is not local for _, info in targets)


_COMPREHENSIONS = (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)


def comprehension_reads(model) -> Dict[int, Tuple[str, Optional[int], cst.BaseExpression]]:
    """For each read of a name a comprehension binds (`x` in `[x[m] for x, m in pairs]`, in the
    element, the `if` clauses and the later `for` clauses): the target name, its index in the
    target tuple, and what that `for` iterates. The innermost comprehension wins. The
    comprehensions are those the model's walk recorded (outer before inner), and those in
    lambdas, which that walk does not enter, found by a walk of the lambdas alone: no second
    walk of the file, cold or after an edit (a whole-file walk here was a seventh of the model
    and rules of a cold check)."""
    reads: Dict[int, Tuple[str, Optional[int], cst.BaseExpression]] = {}
    for node in model.facts.comprehensions:
        _mark_comprehension(node, reads)
    for node in comprehensions_under(model.facts.lambdas):
        _mark_comprehension(node, reads)
    return reads


def _comprehension_reads(nodes: Sequence[cst.CSTNode]) -> Dict[int, Tuple[str, Optional[int], cst.BaseExpression]]:
    """The same, found by a walk of these subtrees (what `comprehension_reads` answers for the
    module, without the walk)."""
    reads: Dict[int, Tuple[str, Optional[int], cst.BaseExpression]] = {}
    for node in comprehensions_under(nodes):
        _mark_comprehension(node, reads)
    return reads


def comprehensions_under(roots: Sequence[cst.CSTNode]):
    """The comprehensions in these subtrees, each before those inside it."""
    stack: List[cst.CSTNode] = list(roots)
    while stack:
        node = stack.pop()
        stack.extend(children(node))
        if isinstance(node, _COMPREHENSIONS):
            yield node


def _mark_comprehension(node, reads) -> None:
    clauses: List[cst.CompFor] = []
    clause: Optional[cst.CompFor] = node.for_in
    while clause is not None:
        clauses.append(clause)
        clause = clause.inner_for_in
    results = [node.key, node.value] if type(node) is cst.DictComp else [node.elt]
    for position, clause in enumerate(clauses):
        bound = dict(_comprehension_targets(clause.target, None))
        scope: List[cst.CSTNode] = [*clause.ifs, *results]
        for later in clauses[position + 1:]:
            scope.extend((later.iter, *later.ifs))
        for part in scope:
            _mark_reads(part, bound, clause.iter, reads)


def _comprehension_targets(target: cst.BaseExpression, index: Optional[int]):
    if type(target) in (cst.Tuple, cst.List):
        for i, element in enumerate(target.elements):
            value = element.value
            yield from _comprehension_targets(value.value if type(value) is cst.StarredElement else value, i if index is None else index)
    elif type(target) is cst.Name:
        yield target.value, index


def _mark_reads(node: cst.CSTNode, bound: Dict[str, Optional[int]], iterable, reads) -> None:
    stack = [node]
    while stack:
        current = stack.pop()
        if type(current) is cst.Name and current.value in bound:
            reads[id(current)] = (current.value, bound[current.value], iterable)
        elif type(current) is cst.Attribute:
            stack.append(current.value)  # `x.attr`: `attr` is no read of a name
            continue
        elif type(current) in (cst.Lambda, cst.FunctionDef, cst.ClassDef):
            continue
        else:
            stack.extend(children(current))


def _length(value: cst.BaseExpression) -> Optional[int]:
    """How many elements a tuple or list display has (None when not one, or starred)."""
    if not type(value) in (cst.Tuple, cst.List) or any(type(e) is cst.StarredElement for e in value.elements):
        return None
    return len(value.elements)


def _unpacked_into(assignment: Assignment) -> Optional[int]:
    """N for `a, b, ... = call(...)` binding one of N plain targets from a call."""
    statement = assignment.statement
    if assignment.index is None or not type(statement) is cst.Assign or len(statement.targets) != 1:
        return None
    if not type(assignment.value) is cst.Call:
        return None
    return _length(statement.targets[0].target)


def main_block(ctx: Context) -> bool:
    """The code runs under `if __name__ == "__main__":` (the module run as a script)."""
    current: Optional[Context] = ctx
    while current is not None:
        guard = current.guard
        if guard is not None and guard.positive and not guard.exits and is_main_test(guard.test):
            return True
        current = current.outer
    return False


def _arm_taken(info: FunctionInfo, sites: list, call: cst.Call) -> list:
    """The return sites whose tests of the function's own parameters (`if train:`, `if not
    training:`, and the rest of the block after `if train: return ...`) hold for the constants
    the call passes; every site when the call passes none."""
    constants = {}
    for position, name in enumerate(info.params[info.receiver_params:]):
        arg = argument(call, name, position)
        if arg is not None and type(arg.value) is cst.Name and arg.value.value in ("True", "False", "None"):
            constants[name] = arg.value.value == "True"
    if not constants:
        return sites
    kept = []
    for site in sites:
        ctx, taken = site.ctx, True
        while ctx is not None and ctx.function is info and taken:
            guard = ctx.guard
            if guard is not None:
                test, negated = guard.test, False
                if type(test) is cst.UnaryOperation and type(test.operator) is cst.Not:
                    test, negated = test.expression, True
                if type(test) is cst.Name and test.value in constants:
                    taken = (constants[test.value] != negated) == guard.positive
            ctx = ctx.outer
        if taken:
            kept.append(site)
    return kept


def argument(call: cst.Call, keyword: str, position: Optional[int]) -> Optional[cst.Arg]:
    """The argument passed for a parameter, by keyword or by position (None when absent, or
    when a `*spread` before it leaves its position unknown)."""
    positional = 0
    spread = False
    for arg in call.args:
        if arg.keyword is not None:
            if arg.keyword.value == keyword:
                return arg
        elif arg.star == "*":
            spread = True
        elif arg.star == "":
            if position is not None and positional == position and not spread:
                return arg
            positional += 1
    return None


def spread_argument(model, site, position: int):
    """`train_epoch(*params, epoch)` where `params = (loader, model, ...)`, bound once to a
    tuple or list written out: the expression at ``position`` (with where it is read), or None."""
    items = []
    for arg in site.node.args:
        if arg.keyword is not None or arg.star == "**":
            continue
        if arg.star == "*":
            if type(arg.value) is not cst.Name:
                return None
            reach = model.bindings.reaching(arg.value.value, site.ctx, site.order)
            if not reach.closed or reach.parameter is not None or len(reach.assignments) != 1:
                return None
            bound = reach.assignments[0]
            value = bound.value
            if bound.index is not None or bound.augmented or type(value) not in (cst.Tuple, cst.List):
                return None
            if any(type(e) is cst.StarredElement for e in value.elements):
                return None
            items.extend((e.value, bound.ctx, bound.order) for e in value.elements)
        else:
            items.append((arg.value, site.ctx, site.order))
    return items[position] if 0 <= position < len(items) else None


def _spreads_own(info, site) -> bool:
    """The call has spreads, and each is the calling function's own `*args` or `**kwargs`."""
    params = info.node.params
    own = {p.name.value for p in (params.star_arg, params.star_kwarg) if isinstance(p, cst.Param)}
    spreads = [a for a in site.node.args if a.star]
    return bool(spreads) and all(type(a.value) is cst.Name and a.value.value in own for a in spreads)


def _handed_on(model, site, name: str):
    """Every spread of the call hands on the calling function's own `*args`/`**kwargs`: what
    each call of that function puts there for the keyword ``name``, as (model, call, Arg or None
    when absent). None when a call may put it there unseen (a spread of its own, positional
    arguments beyond the named parameters), or when no call is seen."""
    info = site.ctx.function
    if info is None or not _spreads_own(info, site) or name in info.params:
        return None
    params = info.node.params
    building = info.node.name.value == "__init__" and info.class_name is not None
    calls = model.calls.constructions(info, through_subclasses=True) if building else model.callers(info)
    if not calls:
        return None
    room = len(params.posonly_params) + len(params.params) - info.receiver_params
    out = []
    for owner, call in calls:
        if any(a.star for a in call.node.args):
            return None
        if sum(1 for a in call.node.args if a.keyword is None) > room:
            return None  # extra positional arguments land in `*args`
        out.append((owner, call, argument(call.node, name, None)))
    return out


def _forwards_uncalled(model, site) -> bool:
    """Every spread of the call hands on the calling function's own `*args`/`**kwargs`, and no
    call or construction of the project runs that function."""
    info = site.ctx.function
    if info is None or not _spreads_own(info, site):
        return False
    return (not model.call_sites(info) and not model.callers(info) and not model.calls.constructions(info)
            and not called_by_name(model, info))


def parameter_default(info: FunctionInfo, name: str) -> Optional[cst.BaseExpression]:
    params = info.node.params
    for param in (*params.posonly_params, *params.params, *params.kwonly_params):
        if param.name.value == name:
            return param.default
    return None


def _is_none(expr: cst.BaseExpression) -> bool:
    return type(expr) is cst.Name and expr.value == "None"
