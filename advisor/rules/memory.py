"""GPU memory and gradient bookkeeping (GPU4xx)."""

from __future__ import annotations

import re
from typing import Iterator, List, Optional, Set

import libcst as cst

from advisor.findings import Applicability, Severity
from advisor.model import CallSite, Context, FileModel, Heat, LoopInfo
from advisor.model.facts import Assignment, FunctionInfo
from advisor.model.file_model import call_argument, literal_bool, star_kwargs
from advisor.model.names import dotted_name
from advisor.model.subtree import iter_names
from advisor.model.walk import children
from advisor.rules.base import Case, FixSpec, NodeEdit, Report, Rule, snippet

_TRAINING_TEXT = ("backward", ".step(")
_MAX_DEPTH = 6


def _walk(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """Every node of one small subtree (a call's arguments, one function's body)."""
    stack: List[cst.CSTNode] = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(children(current))


def _no_grad(ctx: Context) -> bool:
    return ctx.no_grad or (ctx.function is not None and ctx.function.no_grad)


def _receiver_target(expr: Optional[cst.BaseExpression]) -> Optional[str]:
    """`history` for `history["loss"]`, `self.losses` for `self.losses`: what a method call mutates."""
    while isinstance(expr, cst.Subscript):
        expr = expr.value
    return dotted_name(expr) if expr is not None else None


def _referenced_names(node: cst.CSTNode) -> Set[str]:
    """Dotted names read in a small subtree: `self.losses` and `self` for `self.losses[0]`, but
    not the attribute part `losses` on its own."""
    names: Set[str] = set()
    stack: List[cst.CSTNode] = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, (cst.Name, cst.Attribute)):
            dotted = dotted_name(current)
            if dotted is not None:
                names.add(dotted)
            if isinstance(current, cst.Attribute):
                stack.append(current.value)
            continue
        stack.extend(children(current))
    return names


# -- GPU401 ------------------------------------------------------------------------------------

_GRAD_ACCUMULATING_METHODS = frozenset({"add_", "copy_", "addcmul_", "addcdiv_", "sub_"})
_CUDA_GRAPH_NAMES = ("torch.cuda.graph", "torch.cuda.CUDAGraph", "torch.cuda.make_graphed_callables")


def _grad_path(name: Optional[str]) -> Optional[str]:
    """`p` for `p.grad` and `p.grad.data`; None for anything else."""
    if name is None:
        return None
    parts = name.split(".")
    if len(parts) >= 2 and parts[-1] == "data":
        parts = parts[:-1]
    if len(parts) == 2 and parts[1] == "grad":
        return parts[0]
    return None


def _iterates_parameters(model: FileModel, loop: LoopInfo) -> bool:
    """`for p in model.parameters()`, `named_parameters()`, `group["params"]`, or a name bound to one."""
    node = loop.node
    if not isinstance(node, cst.For):
        return False
    sources: List[cst.CSTNode] = [node.iter]
    name = dotted_name(node.iter)
    if name is not None:
        sources.extend(a.value for a in model.assignments(name, loop.ctx) if a.value is not None)
    for source in sources:
        for current in _walk(source):
            if isinstance(current, cst.Attribute) and current.attr.value in ("parameters", "named_parameters"):
                return True
            if isinstance(current, cst.SimpleString) and current.evaluated_value == "params":
                return True
    return False


class GradientsZeroedNotFreed(Rule):
    code = "GPU401"
    name = "gradients-zeroed-not-freed"
    summary = "`zero_grad(set_to_none=False)` or a manual `p.grad.zero_()` loop"
    what = """
        `optimizer.zero_grad(set_to_none=False)` and `model.zero_grad(set_to_none=False)` with
        a literal False, and loops over `model.parameters()` that zero every gradient by hand
        (`p.grad.zero_()`, `p.grad.data.zero_()`, `p.grad = torch.zeros_like(p)`). A plain
        `zero_grad()` is reported only when the configured minimum torch is older than 2.0,
        where it still zeroed in place. Scripts that add into `.grad` themselves
        (`p.grad += ...`, `p.grad.add_(...)`) or capture CUDA graphs are left alone: they
        need the gradient tensors to stay allocated.
    """
    why = """
        Zeroing launches a memset kernel for every parameter, and the next backward then has to
        read the zeros and add to them instead of writing the new gradient directly. Setting
        gradients to None skips both, and frees their memory between the step and the next
        backward. This has been the default since torch 2.0.
    """
    example = """
        for x, y in loader:
            optimizer.zero_grad(set_to_none=False)
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()
    """
    instead = """
        for x, y in loader:
            optimizer.zero_grad(set_to_none=True)  # the default since torch 2.0
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()
    """
    hint = "use `zero_grad(set_to_none=True)` (the default since torch 2.0), or set `p.grad = None`"
    fixable = "sometimes"
    requires = (("zero_grad", ".grad"),)

    VALID = [
        Case(
            """
            for x, y in loader:
                optimizer.zero_grad()
                loss = criterion(model(x), y)
                loss.backward()
                optimizer.step()
            """,
            note="plain zero_grad() frees gradients since torch 2.0",
        ),
        Case(
            """
            import torch
            for x, y in loader:
                optimizer.zero_grad(set_to_none=True)
                loss = criterion(model(x), y)
                loss.backward()
                for p in model.parameters():
                    if p.grad is not None:
                        p.grad = None
                optimizer.step()
            """,
            note="gradients released by hand",
        ),
        Case(
            """
            import torch
            model.zero_grad(set_to_none=False)
            for x, y in loader:
                loss = criterion(model(x), y)
                loss.backward()
                for p, shadow in zip(model.parameters(), shadow_grads):
                    shadow.add_(p.grad)
                    p.grad += noise_scale * torch.randn_like(p.grad)
                optimizer.step()
            """,
            note="adds into .grad on purpose (DP noise)",
        ),
        Case(
            """
            import torch
            g = torch.cuda.CUDAGraph()
            optimizer.zero_grad(set_to_none=False)
            with torch.cuda.graph(g):
                static_loss = criterion(model(static_x), static_y)
                static_loss.backward()
                optimizer.step()
            for x, y in loader:
                static_x.copy_(x)
                g.replay()
            """,
            note="CUDA graph capture needs static gradient buffers",
        ),
        Case(
            """
            import torch
            for x, y in loader:
                optimizer.zero_grad(set_to_none=True)
                loss = criterion(model(x), y)
                loss.backward()
                optimizer.step()
                buffer.zero_()
                for p in model.parameters():
                    p.data.zero_() if reset else None
            """,
            note="zeroing other tensors",
        ),
        Case(
            """
            import torch
            zero_kwargs = {"set_to_none": False}
            for x, y in loader:
                optimizer.zero_grad(**zero_kwargs)
                loss = criterion(model(x), y)
                loss.backward()
                optimizer.step()
            """,
            note="arguments from a dict",
        ),
        Case(
            """
            import torch
            for x, y in loader:
                opt.zero_grad(set_to_none=True)
                loss = criterion(model(x), y)
                loss.backward()
                for p in model.parameters():
                    p.grad.data.add_(p.data, alpha=weight_decay)
                opt.step()
            """,
            note="manual decoupled weight decay adds into gradients",
        ),
    ]
    INVALID = [
        Case(
            """
            for x, y in loader:
                optimizer.zero_grad(set_to_none=False)  # expect: GPU401
                loss = criterion(model(x), y)
                loss.backward()
                optimizer.step()
            """,
            fixed="""
            for x, y in loader:
                optimizer.zero_grad(set_to_none=True)  # expect: GPU401
                loss = criterion(model(x), y)
                loss.backward()
                optimizer.step()
            """,
        ),
        Case(
            """
            def train_step(model, batch, opt):
                model.zero_grad(False)  # expect: GPU401
                loss = model(batch).mean()
                loss.backward()
                opt.step()

            for batch in loader:
                train_step(model, batch, opt)
            """,
            fixed="""
            def train_step(model, batch, opt):
                model.zero_grad(True)  # expect: GPU401
                loss = model(batch).mean()
                loss.backward()
                opt.step()

            for batch in loader:
                train_step(model, batch, opt)
            """,
            note="positional argument on a module",
        ),
        Case(
            """
            for x, y in loader:
                for p in model.parameters():
                    if p.grad is not None:
                        p.grad.detach_()
                        p.grad.zero_()  # expect: GPU401
                loss = criterion(model(x), y)
                loss.backward()
                optimizer.step()
            """,
            note="manual zeroing loop",
        ),
        Case(
            """
            import torch
            class Trainer:
                def zero_grads(self):
                    for name, param in self.model.named_parameters():
                        param.grad = torch.zeros_like(param)  # expect: GPU401

                def fit(self, loader):
                    for batch in loader:
                        self.zero_grads()
                        self.model(batch).mean().backward()
                        self.optimizer.step()
            """,
            note="fresh zero tensors in a helper",
        ),
        Case(
            """
            for x, y in loader:
                loss = criterion(model(x), y)
                loss.backward()
                grad_norm = sum(p.grad.norm() ** 2 for p in model.parameters()) ** 0.5
                optimizer.step()
                optimizer.zero_grad(set_to_none=False)  # expect: GPU401
            """,
            fixed="""
            for x, y in loader:
                loss = criterion(model(x), y)
                loss.backward()
                grad_norm = sum(p.grad.norm() ** 2 for p in model.parameters()) ** 0.5
                optimizer.step()
                optimizer.zero_grad(set_to_none=True)  # expect: GPU401
            """,
            note="gradients are read: the fix is offered as unsafe",
        ),
        Case(
            """
            for group in optimizer.param_groups:
                pass
            for x, y in loader:
                for group in optimizer.param_groups:
                    for p in group["params"]:
                        p.grad.data.zero_()  # expect: GPU401
                loss = criterion(model(x), y)
                loss.backward()
                optimizer.step()
            """,
            note="param groups",
        ),
        Case(
            """
            import torch
            gen_opt.zero_grad(set_to_none=False)  # expect: GPU401
            for real in loader:
                gen_opt.zero_grad(set_to_none = False)  # expect: GPU401
                g_loss = -critic(generator(z)).mean()
                g_loss.backward()
                gen_opt.step()
            """,
            fixed="""
            import torch
            gen_opt.zero_grad(set_to_none=True)  # expect: GPU401
            for real in loader:
                gen_opt.zero_grad(set_to_none = True)  # expect: GPU401
                g_loss = -critic(generator(z)).mean()
                g_loss.backward()
                gen_opt.step()
            """,
            note="spacing around the keyword",
        ),
    ]

    def check(self, model: FileModel) -> Iterator[Report]:
        if model.calls_to(*_CUDA_GRAPH_NAMES) or self._adds_into_grad(model):
            return
        for site in model.method_calls("zero_grad"):
            call = site.node
            if star_kwargs(call) or any(a.star == "*" for a in call.args):
                continue
            arg = call_argument(call, "set_to_none", 0)
            if arg is not None:
                if literal_bool(arg.value) is not False:
                    continue
                edit = NodeEdit(arg.value, "True")
                message = "`zero_grad(set_to_none=False)` writes zeros into every gradient instead of freeing it"
            elif not call.args and model.torch_version < (2, 0):
                edit = NodeEdit(call, f"{model.code(call.func)}(set_to_none=True)")
                message = "before torch 2.0, `zero_grad()` writes zeros into every gradient instead of freeing it"
            else:
                continue
            fix = None
            if model.torch_version >= (1, 7):  # `set_to_none` exists since 1.7
                applicability = Applicability.UNSAFE if self._reads_grad(model, site) else Applicability.SAFE
                fix = FixSpec("pass `set_to_none=True`", (edit,), applicability)
            yield self.report(call, message, fix=fix)
        if not model.trains_anywhere:
            return
        for site in model.method_calls("zero_", "fill_"):
            param = _grad_path(site.receiver_name)
            if param is None or (site.method == "fill_" and not self._zero_literal(site.node)):
                continue
            if self._in_parameter_loop(model, site.ctx, param):
                yield self.report(site.node, f"`{snippet(model, site.node)}` zeroes gradients one parameter at a time")
        for (_, target), found in model.facts.assignments.items():
            param = _grad_path(target)
            if param is None:
                continue
            for assignment in found:
                value = assignment.value
                if assignment.augmented or not isinstance(value, cst.Call) or assignment.statement is None:
                    continue
                if model.imports.qualify(value.func) not in ("torch.zeros_like", "torch.zeros"):
                    continue
                if self._in_parameter_loop(model, assignment.ctx, param):
                    yield self.report(
                        assignment.statement, f"`{target} = {snippet(model, value, 30)}` allocates zeroed gradients"
                    )

    def _zero_literal(self, call: cst.Call) -> bool:
        return len(call.args) == 1 and isinstance(call.args[0].value, (cst.Integer, cst.Float)) and (
            float(call.args[0].value.value) == 0.0
        )

    def _in_parameter_loop(self, model: FileModel, ctx: Context, param: str) -> bool:
        loop = ctx.loop
        return loop is not None and param in loop.targets and _iterates_parameters(model, loop)

    def _adds_into_grad(self, model: FileModel) -> bool:
        """The script accumulates into `.grad` itself: it needs the tensors to exist."""
        for (_, target), found in model.facts.assignments.items():
            if _grad_path(target) is not None and any(a.augmented for a in found):
                return True
        for method in _GRAD_ACCUMULATING_METHODS:
            for site in model.facts.calls_by_method.get(method, ()):
                if _grad_path(site.receiver_name) is not None:
                    return True
        return False

    def _reads_grad(self, model: FileModel, site: CallSite) -> bool:
        """Whether `.grad` may be read where None would now appear (if unsure: yes).

        Looks at the function (or module-level loop) around the call and the same-module
        functions it calls, one level deep, plus the receivers of every recorded call."""
        roots: List[cst.CSTNode] = []
        info = site.ctx.function
        if info is not None:
            roots.append(info.node)
            callees = info.callees
        else:
            loop = site.ctx.loop
            while loop is not None and loop.parent is not None:
                loop = loop.parent
            if loop is None:
                return True
            roots.append(loop.node)
            callees = loop.callees
        for key in callees:
            callee = model.resolve(key)
            if callee is not None:
                roots.append(callee.node)
        for root in roots:
            if any(isinstance(n, cst.Attribute) and n.attr.value == "grad" for n in _walk(root)):
                return True
        return any("grad" in (s.receiver_name or "").split(".") for s in model.facts.calls)


# -- GPU402 ------------------------------------------------------------------------------------

# Tensor methods whose result still belongs to the autograd graph of their input.
_KEEPS_GRAPH = frozenset(
    """mean sum cpu to cuda float half double bfloat16 clone view reshape squeeze unsqueeze flatten
    softmax log_softmax abs sqrt pow exp log norm std var contiguous permute transpose t sigmoid
    relu tanh max min prod cumsum expand repeat type_as view_as add sub mul div neg clamp square
    chunk split narrow select masked_fill logsumexp""".split()
)
# Methods whose result has no graph (or is not a tensor at all).
_DROPS_GRAPH = frozenset(
    """detach detach_ item tolist numpy argmax argmin long int bool eq ne gt lt ge le isnan isinf
    numel size dim nonzero""".split()
)
_TORCH_GRAPH_FUNCTIONS = frozenset(
    """stack cat mean sum matmul mm bmm einsum exp log sigmoid softmax log_softmax tanh relu clamp
    abs sqrt norm where logsumexp""".split()
)
_MODEL_CALLEE = re.compile(
    r"(criterion|loss_fn|loss_func|lossfn|loss_function|loss_module|(^|_)(model|net|network|encoder|decoder"
    r"|generator|discriminator|critic|policy|actor|backbone|loss)$|cross_entropy)",
    re.IGNORECASE,
)
_SCALAR_BUILTINS = frozenset({"float", "int", "bool", "len", "round", "str", "repr"})


class GraphRetainedAcrossIterations(Rule):
    code = "GPU402"
    name = "graph-kept-across-iterations"
    summary = "a loss or model output accumulated across training steps without `.detach()`"
    what = """
        In the training loop, a tensor that still belongs to the autograd graph (a loss, a
        model output, or arithmetic on them) is added to a running total (`total += loss`,
        `total = total + loss`) or appended to a list (`history.append(loss)`,
        `outputs.append(model(x))`) that lives across iterations. Values already turned into
        numbers (`.item()`, `float()`) or detached, code under `torch.no_grad()`, scripts that
        differentiate through graphs on purpose (`create_graph=True`, `retain_graph=True`),
        and lists rebuilt every iteration or backpropagated through are left alone.
    """
    why = """
        A tensor with a graph keeps every intermediate activation it was computed from alive,
        because backward might still need them. Accumulating it holds on to every iteration's
        graph: memory grows step after step until the run fails with out-of-memory, often
        hours in. The running total only needs the value: `.detach()` keeps it on the GPU
        without the graph and without a sync (unlike `.item()`).
    """
    example = """
        total_loss = 0.0
        for x, y in loader:
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()
            total_loss += loss
    """
    instead = """
        total_loss = 0.0
        for x, y in loader:
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()
            total_loss += loss.detach()
    """
    hint = "accumulate `loss.detach()`: the value stays on the GPU and the graph is freed"
    fixable = "safe"
    requires = (("+", "append"), _TRAINING_TEXT)

    VALID = [
        Case(
            """
            total_loss = 0.0
            for x, y in loader:
                loss = criterion(model(x), y)
                loss.backward()
                optimizer.step()
                total_loss += loss.detach()
            """,
            note="already detached",
        ),
        Case(
            """
            history = []
            for x, y in loader:
                loss = criterion(model(x), y)
                loss.backward()
                optimizer.step()
                history.append(loss.item())
                running = running + float(loss)
            """,
            note="Python numbers",
        ),
        Case(
            """
            import torch
            for batch in loader:
                losses = []
                for head in heads:
                    losses.append(head(model(batch)).mean())
                torch.stack(losses).mean().backward()
                optimizer.step()
            """,
            note="per-step list rebuilt every iteration",
        ),
        Case(
            """
            import torch
            val_outputs = []
            for x, y in loader:
                loss = criterion(model(x), y)
                loss.backward()
                optimizer.step()
                with torch.no_grad():
                    val_outputs.append(model(x_val))
            """,
            note="under no_grad",
        ),
        Case(
            """
            import torch
            meta_loss = 0.0
            for task in tasks:
                fast = inner_adapt(model, task)
                grads = torch.autograd.grad(fast.loss, model.parameters(), create_graph=True)
                meta_loss += fast.query_loss
                meta_loss.backward(retain_graph=True)
                meta_opt.step()
            """,
            note="meta-learning keeps graphs on purpose",
        ),
        Case(
            """
            correct = torch.zeros((), device="cuda")
            preds = []
            for x, y in loader:
                logits = model(x)
                loss = criterion(logits, y)
                loss.backward()
                optimizer.step()
                correct += (logits.argmax(1) == y).sum()
                preds.append(logits.argmax(1))
            """,
            note="comparisons and argmax carry no graph",
        ),
        Case(
            """
            chunk_losses = []
            for i, batch in enumerate(loader):
                chunk_losses.append(model(batch).loss)
                if (i + 1) % accum == 0:
                    torch.stack(chunk_losses).mean().backward()
                    optimizer.step()
                    chunk_losses = []
            """,
            note="the list is what gets backpropagated",
        ),
        Case(
            """
            for epoch in range(epochs):
                for x, y in loader:
                    loss = criterion(model(x), y)
                    loss.backward()
                    optimizer.step()
                epoch_losses.append(loss)
            """,
            note="once per epoch keeps one graph at most",
        ),
        Case(
            """
            for batch in loader:
                total = 0
                for micro in batch.split(8):
                    total += model(micro).mean()
                total.backward()
                optimizer.step()
            """,
            note="graph summed on purpose within one step",
        ),
        Case(
            """
            import torch.nn.functional as F
            for x, y in loader:
                x = x + 0.1 * refine_net(x)
                loss = F.mse_loss(model(x), y)
                loss.backward()
                optimizer.step()
            """,
            note="the loop variable is rebound by the `for` itself",
        ),
    ]
    INVALID = [
        Case(
            """
            total_loss = 0.0
            for x, y in loader:
                loss = criterion(model(x), y)
                loss.backward()
                optimizer.step()
                total_loss += loss  # expect: GPU402
            """,
            fixed="""
            total_loss = 0.0
            for x, y in loader:
                loss = criterion(model(x), y)
                loss.backward()
                optimizer.step()
                total_loss += loss.detach()  # expect: GPU402
            """,
        ),
        Case(
            """
            import torch.nn.functional as F

            def train_epoch(model, loader, optimizer):
                history, outputs = [], []
                for x, y in loader:
                    out = model(x)
                    loss = F.cross_entropy(out, y)
                    loss.backward()
                    optimizer.step()
                    history.append(loss)  # expect: GPU402
                    outputs.append(model(x).softmax(-1))  # expect: GPU402
                return history, outputs
            """,
            fixed="""
            import torch.nn.functional as F

            def train_epoch(model, loader, optimizer):
                history, outputs = [], []
                for x, y in loader:
                    out = model(x)
                    loss = F.cross_entropy(out, y)
                    loss.backward()
                    optimizer.step()
                    history.append(loss.detach())  # expect: GPU402
                    outputs.append(model(x).softmax(-1).detach())  # expect: GPU402
                return history, outputs
            """,
            note="lists built before the loop",
        ),
        Case(
            """
            epoch_loss = 0
            for i, (x, y) in enumerate(loader):
                loss = criterion(model(x), y)
                loss.backward()
                optimizer.step()
                epoch_loss = epoch_loss + loss * x.size(0)  # expect: GPU402
            """,
            fixed="""
            epoch_loss = 0
            for i, (x, y) in enumerate(loader):
                loss = criterion(model(x), y)
                loss.backward()
                optimizer.step()
                epoch_loss = epoch_loss + loss.detach() * x.size(0)  # expect: GPU402
            """,
            note="re-assignment form, weighted",
        ),
        Case(
            """
            class Trainer:
                def __init__(self):
                    self.losses = {"train": []}
                    self.running = 0.0

                def step(self, batch):
                    outputs = self.model(**batch)
                    outputs.loss.backward()
                    self.optimizer.step()
                    self.losses["train"].append(outputs.loss)  # expect: GPU402
                    self.running += outputs.loss  # expect: GPU402

                def fit(self, loader):
                    for batch in loader:
                        self.step(batch)
            """,
            fixed="""
            class Trainer:
                def __init__(self):
                    self.losses = {"train": []}
                    self.running = 0.0

                def step(self, batch):
                    outputs = self.model(**batch)
                    outputs.loss.backward()
                    self.optimizer.step()
                    self.losses["train"].append(outputs.loss.detach())  # expect: GPU402
                    self.running += outputs.loss.detach()  # expect: GPU402

                def fit(self, loader):
                    for batch in loader:
                        self.step(batch)
            """,
            note="state on the trainer object, step in a method",
        ),
        Case(
            """
            running = 0.0
            for step, (x, y) in enumerate(loader):
                loss = criterion(model(x), y)
                loss.backward()
                optimizer.step()
                running += loss  # expect: GPU402
                if step % 100 == 0:
                    print(running / 100)
                    running = 0.0
            """,
            fixed="""
            running = 0.0
            for step, (x, y) in enumerate(loader):
                loss = criterion(model(x), y)
                loss.backward()
                optimizer.step()
                running += loss.detach()  # expect: GPU402
                if step % 100 == 0:
                    print(running / 100)
                    running = 0.0
            """,
            note="reset only every N steps: N graphs alive",
        ),
        Case(
            """
            def compute_loss(model, batch):
                logits = model(batch["x"])
                return F.cross_entropy(logits, batch["y"])

            losses = []
            for i, batch in enumerate(loader):
                loss = compute_loss(model, batch)
                loss.backward()
                optimizer.step()
                if i % 10 == 0:
                    losses.append(loss)  # expect: GPU402 info
            """,
            fixed="""
            def compute_loss(model, batch):
                logits = model(batch["x"])
                return F.cross_entropy(logits, batch["y"])

            losses = []
            for i, batch in enumerate(loader):
                loss = compute_loss(model, batch)
                loss.backward()
                optimizer.step()
                if i % 10 == 0:
                    losses.append(loss.detach())  # expect: GPU402 info
            """,
            note="loss from a helper; every 10 steps is info",
        ),
    ]

    def check(self, model: FileModel) -> Iterator[Report]:
        if self._keeps_graphs_on_purpose(model):
            return
        backpropagated = self._backpropagated_names(model)
        for found in model.facts.assignments.values():
            for assignment in found:
                report = self._check_assignment(model, assignment, backpropagated)
                if report is not None:
                    yield report
        for site in model.method_calls("append"):
            if len(site.node.args) != 1 or site.node.args[0].keyword is not None or site.node.args[0].star:
                continue
            heat = model.heat(site.ctx)
            target = _receiver_target(site.receiver)
            if heat is None or target is None or target in backpropagated:
                continue
            value = site.node.args[0].value
            leaves = self._graph_leaves(model, value, site.ctx, site.order)
            if not leaves or not self._outlives_iteration(model, target, site.ctx):
                continue
            yield self.report(
                site.node,
                f"`{snippet(model, site.node)}` keeps every step's autograd graph alive",
                severity=self.severity_for(heat),
                fix=self._fix(model, leaves),
            )

    def _check_assignment(self, model: FileModel, assignment: Assignment, backpropagated: Set[str]) -> Optional[Report]:
        statement, value, target = assignment.statement, assignment.value, assignment.target
        if value is None or statement is None or target in backpropagated:
            return None
        if assignment.augmented:
            if not isinstance(statement, cst.AugAssign) or not isinstance(statement.operator, cst.AddAssign):
                return None
            added = value
        else:
            added = self._self_sum_operand(value, target)
            if added is None:
                return None
        heat = model.heat(assignment.ctx)
        if heat is None:
            return None
        leaves = self._graph_leaves(model, added, assignment.ctx, assignment.order)
        if not leaves or not self._outlives_iteration(model, target, assignment.ctx):
            return None
        return self.report(
            statement,
            f"`{target}` sums tensors that carry autograd graphs, keeping every step's graph alive",
            severity=self.severity_for(heat),
            fix=self._fix(model, leaves),
        )

    @staticmethod
    def _self_sum_operand(value: cst.BaseExpression, target: str) -> Optional[cst.BaseExpression]:
        """`loss` in `total = total + loss` (or `loss + total`)."""
        if not isinstance(value, cst.BinaryOperation) or not isinstance(value.operator, cst.Add):
            return None
        if dotted_name(value.left) == target:
            return value.right
        if dotted_name(value.right) == target:
            return value.left
        return None

    def _keeps_graphs_on_purpose(self, model: FileModel) -> bool:
        for site in model.facts.calls:
            for arg in site.node.args:
                if arg.keyword is not None and arg.keyword.value in ("create_graph", "retain_graph"):
                    if literal_bool(arg.value) is not False:
                        return True
        return False

    def _backpropagated_names(self, model: FileModel) -> Set[str]:
        """Names a backward runs through (`torch.stack(losses).mean().backward()`): their graphs
        are wanted. Follows one assignment (`total = sum(parts); total.backward()`)."""
        names: Set[str] = set()
        sites = model.method_calls("backward") + model.calls_to("torch.autograd.backward")
        for site in sites:
            roots = [a.value for a in site.node.args]
            if site.receiver is not None and site.qualname is None:
                roots.append(site.receiver)
            for root in roots:
                for name in _referenced_names(root):
                    if name in names:
                        continue
                    names.add(name)
                    for assignment in model.assignments(name, site.ctx):
                        if assignment.value is not None:
                            names.update(_referenced_names(assignment.value))
        return names

    def _outlives_iteration(self, model: FileModel, target: str, ctx: Context) -> bool:
        """The container or total is bound outside the training loop (or kept on an object),
        and not rebound on every iteration."""
        loop = model.enclosing_training_loop(ctx)
        current = ctx.loop
        while current is not None:
            if target in current.targets:
                return False  # the `for` statement rebinds it on every iteration
            if current is loop:
                break
            current = current.parent
        bindings = [
            a for a in model.assignments(target, ctx) if not a.augmented and self._self_sum_operand_of(a) is None
        ]
        if loop is not None:
            inside = [a for a in bindings if a.ctx.function is ctx.function and (a.ctx.loop is not None and a.ctx.loop.within(loop))]
        else:
            inside = [a for a in bindings if a.ctx.function is ctx.function and ctx.function is not None]
        if any(not a.ctx.gated for a in inside):
            return False  # rebuilt every iteration
        if target.startswith("self."):
            return True
        if any(a not in inside for a in bindings):
            return True
        return ctx.function is not None and target in ctx.function.params and loop is not None

    def _self_sum_operand_of(self, assignment: Assignment) -> Optional[cst.BaseExpression]:
        return None if assignment.value is None else self._self_sum_operand(assignment.value, assignment.target)

    # -- does a value carry an autograd graph? ------------------------------------------------
    def _graph_leaves(
        self, model: FileModel, expr: cst.BaseExpression, ctx: Context, order: int
    ) -> List[cst.BaseExpression]:
        """The operands of ``expr`` that carry a graph: where `.detach()` goes."""
        if isinstance(expr, cst.BinaryOperation):
            return self._graph_leaves(model, expr.left, ctx, order) + self._graph_leaves(model, expr.right, ctx, order)
        if isinstance(expr, cst.UnaryOperation) and not isinstance(expr.operator, cst.Not):
            return self._graph_leaves(model, expr.expression, ctx, order)
        return [expr] if self._has_graph(model, expr, ctx, order) else []

    def _has_graph(self, model: FileModel, expr: cst.BaseExpression, ctx: Context, order: int, depth: int = 0) -> bool:
        if depth > _MAX_DEPTH or _no_grad(ctx):
            return False
        if isinstance(expr, (cst.Name, cst.Attribute)):
            if isinstance(expr, cst.Attribute) and expr.attr.value in ("data", "grad", "shape", "dtype", "device"):
                return False
            name = dotted_name(expr)
            found = model.reaching_assignment(name, ctx, order) if name is not None else None
            if found is not None:
                return self._assignment_has_graph(model, found, depth)
            if isinstance(expr, cst.Attribute) and not (name or "").startswith("self."):
                return self._has_graph(model, expr.value, ctx, order, depth + 1)  # `outputs.loss`
            return False
        if isinstance(expr, cst.Subscript):
            return self._has_graph(model, expr.value, ctx, order, depth + 1)
        if isinstance(expr, cst.Call):
            return self._call_has_graph(model, expr, ctx, order, depth)
        if isinstance(expr, cst.BinaryOperation):
            return self._has_graph(model, expr.left, ctx, order, depth + 1) or self._has_graph(
                model, expr.right, ctx, order, depth + 1
            )
        if isinstance(expr, cst.UnaryOperation) and not isinstance(expr.operator, cst.Not):
            return self._has_graph(model, expr.expression, ctx, order, depth + 1)
        if isinstance(expr, cst.IfExp):
            return self._has_graph(model, expr.body, ctx, order, depth + 1) or self._has_graph(
                model, expr.orelse, ctx, order, depth + 1
            )
        return False

    def _assignment_has_graph(self, model: FileModel, assignment: Assignment, depth: int) -> bool:
        value = assignment.value
        if value is None or _no_grad(assignment.ctx):
            return False
        if assignment.augmented:
            earlier = model.reaching_assignment(assignment.target, assignment.ctx, assignment.order)
            if earlier is not None and earlier is not assignment:
                if self._assignment_has_graph(model, earlier, depth + 1):
                    return True
        if assignment.index is not None:
            if isinstance(value, (cst.Tuple, cst.List)):
                if assignment.index >= len(value.elements):
                    return False
                value = value.elements[assignment.index].value
            elif isinstance(value, cst.Call):
                info = self._local_function(model, value.func, assignment.ctx)
                if info is not None:
                    return self._returns_graph(model, info, depth, assignment.index)
            else:
                return False
        return self._has_graph(model, value, assignment.ctx, assignment.order, depth + 1)

    def _call_has_graph(self, model: FileModel, call: cst.Call, ctx: Context, order: int, depth: int) -> bool:
        func = call.func
        qual = model.imports.qualify(func)
        if qual is not None:
            head, _, last = qual.rpartition(".")
            if qual.startswith("torch.nn.functional.") or (head == "torch" and last in _TORCH_GRAPH_FUNCTIONS):
                return any(self._arg_has_graph(model, a.value, ctx, order, depth) for a in call.args)
            return False
        if isinstance(func, cst.Attribute):
            method = func.attr.value
            if method in _DROPS_GRAPH:
                return False
            if method in _KEEPS_GRAPH:
                return self._has_graph(model, func.value, ctx, order, depth + 1)
        elif isinstance(func, cst.Name) and func.value in _SCALAR_BUILTINS:
            return False
        info = self._local_function(model, func, ctx)
        if info is not None:
            return self._returns_graph(model, info, depth, None)
        name = dotted_name(func)
        if name is None:
            return False
        kinds = model.kinds(func, ctx, order)
        return "module" in kinds or "ddp" in kinds or bool(_MODEL_CALLEE.search(name.rsplit(".", 1)[-1]))

    def _arg_has_graph(self, model: FileModel, expr: cst.BaseExpression, ctx: Context, order: int, depth: int) -> bool:
        if isinstance(expr, (cst.List, cst.Tuple)):
            return any(self._has_graph(model, e.value, ctx, order, depth + 1) for e in expr.elements)
        return self._has_graph(model, expr, ctx, order, depth + 1)

    def _local_function(self, model: FileModel, func: cst.BaseExpression, ctx: Context) -> Optional[FunctionInfo]:
        if isinstance(func, cst.Name):
            return model.function(func.value) if model.imports.qualify(func) is None else None
        if isinstance(func, cst.Attribute) and dotted_name(func.value) in ("self", "cls") and ctx.class_name:
            return model.resolve(f"{ctx.class_name}.{func.attr.value}")
        return None

    def _returns_graph(self, model: FileModel, info: FunctionInfo, depth: int, index: Optional[int]) -> bool:
        if info.no_grad:
            return False
        body = Context(function=info, class_name=info.class_name)
        for value in info.returns:
            if index is not None:
                if not isinstance(value, (cst.Tuple, cst.List)) or index >= len(value.elements):
                    continue
                value = value.elements[index].value
            if self._has_graph(model, value, body, 1 << 30, depth + 1):
                return True
        return False

    def _fix(self, model: FileModel, leaves: List[cst.BaseExpression]) -> FixSpec:
        edits = []
        for leaf in leaves:
            if isinstance(leaf, (cst.Name, cst.Attribute, cst.Call, cst.Subscript)):
                edits.append(NodeEdit(leaf, ".detach()", "after"))
            else:
                edits.append(NodeEdit(leaf, f"({model.code(leaf).strip()}).detach()"))
        return FixSpec("accumulate the detached value", tuple(edits))


# -- GPU403 ------------------------------------------------------------------------------------

_EMPTY_CACHE = ("torch.cuda.empty_cache", "torch.cuda.memory.empty_cache")
_EVALUATION = re.compile(r"eval|valid", re.IGNORECASE)


def _inside_handler(root: cst.CSTNode, target: cst.CSTNode) -> bool:
    """Whether ``target`` sits in an `except` clause of the subtree ``root``."""
    stack = [(root, False)]
    while stack:
        node, handled = stack.pop()
        if node is target:
            return handled
        handled = handled or isinstance(node, cst.ExceptHandler)
        stack.extend((child, handled) for child in children(node))
    return False


class EmptyCacheInTrainingLoop(Rule):
    code = "GPU403"
    name = "empty-cache-in-training-loop"
    summary = "`torch.cuda.empty_cache()` on every training step"
    what = """
        `torch.cuda.empty_cache()` inside the innermost training loop, directly or in a
        function that loop calls. Under a periodic condition (every N steps) or another `if`
        the finding is only informational; in an `except` clause (out-of-memory recovery),
        next to an evaluation pass, or between epochs it is not reported.
    """
    why = """
        PyTorch's caching allocator keeps freed GPU memory to hand it out again without asking
        the driver. `empty_cache()` returns all of it, so the next step has to `cudaMalloc`
        its activations again, and releasing and allocating device memory synchronises with
        the GPU. It does not make more memory available to the same process; it only helps
        other processes sharing the GPU.
    """
    example = """
        for x, y in loader:
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()
            torch.cuda.empty_cache()
    """
    instead = """
        for x, y in loader:
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()
        # fragmentation from varying shapes: PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
    """
    hint = "remove it; for fragmentation set `expandable_segments:True` in the allocator config"
    requires = (("empty_cache",), _TRAINING_TEXT)

    VALID = [
        Case(
            """
            import torch
            for epoch in range(epochs):
                for x, y in loader:
                    loss = criterion(model(x), y)
                    loss.backward()
                    optimizer.step()
                torch.cuda.empty_cache()
            """,
            note="between epochs",
        ),
        Case(
            """
            import torch
            for epoch in range(epochs):
                train_one_epoch(model, loader)
                evaluate(model, val_loader)
                torch.cuda.empty_cache()

            def train_one_epoch(model, loader):
                for x, y in loader:
                    criterion(model(x), y).backward()
                    optimizer.step()
            """,
            note="after evaluation, once per epoch",
        ),
        Case(
            """
            import torch
            for batch in loader:
                try:
                    loss = model(batch).loss
                    loss.backward()
                    optimizer.step()
                except torch.cuda.OutOfMemoryError:
                    optimizer.zero_grad(set_to_none=True)
                    torch.cuda.empty_cache()
            """,
            note="out-of-memory recovery",
        ),
        Case(
            """
            import torch
            for step, batch in enumerate(loader):
                loss = model(batch).loss
                loss.backward()
                optimizer.step()
                if step % args.eval_steps == 0:
                    metrics = evaluate(model, eval_loader)
                    torch.cuda.empty_cache()
            """,
            note="after a periodic evaluation",
        ),
        Case(
            """
            import torch
            @torch.no_grad()
            def generate_all(model, prompts):
                for p in prompts:
                    yield model.generate(p)
                    torch.cuda.empty_cache()
            """,
            note="inference",
        ),
        Case(
            """
            import gc, torch
            def free_memory():
                gc.collect()
                torch.cuda.empty_cache()

            for trial in range(n_trials):
                model = build(trial)
                train(model)
                free_memory()

            def train(model):
                for x, y in loader:
                    criterion(model(x), y).backward()
                    optimizer.step()
            """,
            note="between hyper-parameter trials",
        ),
        Case(
            """
            for x, y in loader:
                loss = criterion(model(x), y)
                loss.backward()
                optimizer.step()
                cache.empty_cache()
                tokenizer_cache.clear()
            """,
            note="some other cache",
        ),
    ]
    INVALID = [
        Case(
            """
            import torch
            for x, y in loader:
                loss = criterion(model(x), y)
                loss.backward()
                optimizer.step()
                torch.cuda.empty_cache()  # expect: GPU403
            """
        ),
        Case(
            """
            from torch.cuda import empty_cache

            def train_step(model, batch, optimizer):
                loss = model(**batch).loss
                loss.backward()
                optimizer.step()
                optimizer.zero_grad()
                empty_cache()  # expect: GPU403

            for epoch in range(3):
                for batch in train_loader:
                    train_step(model, batch, optimizer)
            """,
            note="imported name, helper",
        ),
        Case(
            """
            import torch
            for step, (x, y) in enumerate(loader):
                loss = criterion(model(x), y)
                loss.backward()
                optimizer.step()
                if step % 50 == 0:
                    torch.cuda.empty_cache()  # expect: GPU403 info
            """,
            note="every N steps",
        ),
        Case(
            """
            import torch
            class Trainer:
                def train_epoch(self, loader):
                    for batch in loader:
                        torch.cuda.empty_cache()  # expect: GPU403
                        out = self.model(batch)
                        out.loss.backward()
                        self.optimizer.step()
            """,
            note="method, at the start of the step",
        ),
        Case(
            """
            import torch
            import gc
            for batch in loader:
                loss = model(batch).loss
                loss.backward()
                optimizer.step()
                del loss
                gc.collect()
                if torch.cuda.memory_reserved() > limit:
                    torch.cuda.empty_cache()  # expect: GPU403 info
            """,
            note="behind a memory threshold",
        ),
        Case(
            """
            import torch as th
            it = 0
            while it < max_iters:
                x, y = get_batch()
                loss = model(x, y)
                loss.backward()
                opt.step()
                th.cuda.memory.empty_cache()  # expect: GPU403
                it += 1
            """,
            note="while loop, memory module spelling",
        ),
    ]

    def check(self, model: FileModel) -> Iterator[Report]:
        for site in model.calls_to(*_EMPTY_CACHE):
            heat = model.heat(site.ctx)
            if heat is None or self._in_except(model, site):
                continue
            if heat is Heat.GATED and self._next_to_evaluation(model, site):
                continue
            if heat is Heat.GATED or site.ctx.conditional:
                when, severity = "in the training loop", Severity.INFO
            else:
                when, severity = "on every training step", self.severity
            yield self.report(
                site.node,
                f"`empty_cache()` {when} returns cached memory that the next steps must allocate again",
                severity=severity,
            )

    def _in_except(self, model: FileModel, site: CallSite) -> bool:
        root: Optional[cst.CSTNode] = None
        if site.ctx.function is not None:
            root = site.ctx.function.node
        else:
            loop = site.ctx.loop
            while loop is not None:
                root, loop = loop.node, loop.parent
        return root is not None and _inside_handler(root, site.node)

    def _next_to_evaluation(self, model: FileModel, site: CallSite) -> bool:
        block = site.stmt[0]
        for other in model.facts.calls:
            if other.stmt[0] != block or other is site:
                continue
            name = other.method or dotted_name(other.node.func) or ""
            if _EVALUATION.search(name):
                return True
            info = model.resolve(name) if other.method is None else None
            if info is not None and info.no_grad:
                return True
        return False


# -- GPU405 ------------------------------------------------------------------------------------

_CHECKPOINT = ("torch.utils.checkpoint.checkpoint", "torch.utils.checkpoint.checkpoint_sequential")


class CheckpointWithoutUseReentrant(Rule):
    code = "GPU405"
    name = "checkpoint-without-use-reentrant"
    summary = "`torch.utils.checkpoint` called without `use_reentrant=`"
    what = """
        Calls to `torch.utils.checkpoint.checkpoint(...)` and `checkpoint_sequential(...)`,
        however they were imported, that do not pass `use_reentrant`. Calls that forward a
        `**kwargs` dict are left alone, since it may hold the argument.
    """
    why = """
        Activation checkpointing has two implementations. Without `use_reentrant`, torch
        warns on every call that the default is going away (it has said it will become an
        error) and still uses the older reentrant one, which does not support keyword
        arguments to the checkpointed function, breaks when no input requires grad, and works
        poorly with `torch.compile` and DDP's static-graph features. `use_reentrant=False` is the
        recommended choice.
    """
    example = """
        from torch.utils.checkpoint import checkpoint

        def forward(self, x):
            for block in self.blocks:
                x = checkpoint(block, x)
            return x
    """
    instead = """
        from torch.utils.checkpoint import checkpoint

        def forward(self, x):
            for block in self.blocks:
                x = checkpoint(block, x, use_reentrant=False)
            return x
    """
    hint = "pass `use_reentrant=False` (recommended) or `use_reentrant=True` explicitly"
    fixable = "unsafe"
    requires = (("checkpoint",),)

    VALID = [
        Case(
            """
            from torch.utils.checkpoint import checkpoint
            def forward(self, x):
                for block in self.blocks:
                    x = checkpoint(block, x, use_reentrant=False)
                return x
            """,
            note="explicit non-reentrant",
        ),
        Case(
            """
            import torch.utils.checkpoint as cp
            y = cp.checkpoint(self.layer, x, use_reentrant=True)
            """,
            note="explicit reentrant",
        ),
        Case(
            """
            import torch
            ckpt_kwargs = {"use_reentrant": False} if torch.__version__ >= "1.11" else {}
            def forward(self, x):
                return torch.utils.checkpoint.checkpoint(self.block, x, **ckpt_kwargs)
            """,
            note="arguments from a version-dependent dict",
        ),
        Case(
            """
            from deepspeed.checkpointing import checkpoint
            def forward(self, x):
                return checkpoint(self.block, x)
            """,
            note="DeepSpeed's checkpoint",
        ),
        Case(
            """
            import torch
            def save_checkpoint(model, path):
                torch.save({"model": model.state_dict()}, path)
            save_checkpoint(model, "checkpoint.pt")
            model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
            """,
            note="saving checkpoints, HF gradient checkpointing",
        ),
        Case(
            """
            from torch.distributed.algorithms._checkpoint.checkpoint_wrapper import checkpoint_wrapper
            model.blocks = [checkpoint_wrapper(b) for b in model.blocks]
            """,
            note="checkpoint_wrapper",
        ),
    ]
    INVALID = [
        Case(
            """
            from torch.utils.checkpoint import checkpoint
            def forward(self, x):
                for block in self.blocks:
                    x = checkpoint(block, x)  # expect: GPU405
                return x
            """,
            fixed="""
            from torch.utils.checkpoint import checkpoint
            def forward(self, x):
                for block in self.blocks:
                    x = checkpoint(block, x, use_reentrant=False)  # expect: GPU405
                return x
            """,
        ),
        Case(
            """
            import torch
            def forward(self, hidden, mask):
                return torch.utils.checkpoint.checkpoint(self.attn, hidden, mask, preserve_rng_state=False)  # expect: GPU405
            """,
            fixed="""
            import torch
            def forward(self, hidden, mask):
                return torch.utils.checkpoint.checkpoint(self.attn, hidden, mask, preserve_rng_state=False, use_reentrant=False)  # expect: GPU405
            """,
            note="fully qualified, other keywords",
        ),
        Case(
            """
            import torch.utils.checkpoint as cp
            out = cp.checkpoint_sequential(model.layers, 4, x)  # expect: GPU405
            """,
            fixed="""
            import torch.utils.checkpoint as cp
            out = cp.checkpoint_sequential(model.layers, 4, x, use_reentrant=False)  # expect: GPU405
            """,
            note="checkpoint_sequential through a module alias",
        ),
        Case(
            """
            from torch.utils.checkpoint import checkpoint as ckpt
            def custom_forward(*inputs):
                return module(*inputs)
            hidden = ckpt(  # expect: GPU405
                custom_forward,
                hidden,
                attention_mask,
            )
            """,
            fixed="""
            from torch.utils.checkpoint import checkpoint as ckpt
            def custom_forward(*inputs):
                return module(*inputs)
            hidden = ckpt(  # expect: GPU405
                custom_forward,
                hidden,
                attention_mask, use_reentrant=False,
            )
            """,
            note="aliased, multi-line with a trailing comma",
        ),
        Case(
            """
            from torch.utils import checkpoint
            class Encoder(nn.Module):
                def forward(self, x):
                    if self.grad_ckpt and self.training:
                        return checkpoint.checkpoint(self._forward, x)  # expect: GPU405
                    return self._forward(x)
            """,
            fixed="""
            from torch.utils import checkpoint
            class Encoder(nn.Module):
                def forward(self, x):
                    if self.grad_ckpt and self.training:
                        return checkpoint.checkpoint(self._forward, x, use_reentrant=False)  # expect: GPU405
                    return self._forward(x)
            """,
            note="`from torch.utils import checkpoint`",
        ),
        Case(
            """
            import torch.utils.checkpoint
            def run(blocks, *args):
                for block in blocks:
                    args = torch.utils.checkpoint.checkpoint(block, *args)  # expect: GPU405
                return args
            """,
            fixed="""
            import torch.utils.checkpoint
            def run(blocks, *args):
                for block in blocks:
                    args = torch.utils.checkpoint.checkpoint(block, *args, use_reentrant=False)  # expect: GPU405
                return args
            """,
            note="star arguments",
        ),
    ]

    def check(self, model: FileModel) -> Iterator[Report]:
        for site in model.calls_to(*_CHECKPOINT):
            call = site.node
            if not call.args or star_kwargs(call) or call_argument(call, "use_reentrant", None) is not None:
                continue
            fix = None
            if model.torch_version >= (1, 11):  # the argument exists since 1.11
                # Unsafe: the two implementations differ for inputs that do not require grad,
                # keyword arguments, and code that relies on reentrant backward semantics.
                fix = FixSpec(
                    "pass `use_reentrant=False`",
                    (NodeEdit(call.args[-1].value, ", use_reentrant=False", "after"),),
                    Applicability.UNSAFE,
                )
            yield self.report(
                call,
                f"`{snippet(model, call.func)}` without `use_reentrant=` warns on every call and will "
                "have to choose explicitly",
                fix=fix,
            )


# -- GPU406 ------------------------------------------------------------------------------------

_OPTIMIZER_RECEIVER = re.compile(r"optim|(^|_)opt($|_)|scaler", re.IGNORECASE)
_ACCUMULATION_NAME = re.compile(r"accum|grad_acc|gradient_acc", re.IGNORECASE)
_NOT_ACCUMULATION = re.compile(r"log|print|eval|save|ckpt|checkpoint|report|sample|display", re.IGNORECASE)


def _modulus(test: cst.BaseExpression) -> Optional[cst.BaseExpression]:
    for node in _walk(test):
        if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Modulo):
            return node.right
    return None


class AccumulatedLossNotScaled(Rule):
    code = "GPU406"
    name = "accumulated-loss-not-scaled"
    summary = "gradient accumulation without dividing the loss by the number of micro-batches"
    what = """
        A hot loop that runs `backward()` on every iteration but steps the optimizer only under
        `if (i + 1) % k == 0` (or `step % k == 0`), where the loss is never divided by `k`: no
        `loss / k` in the backward expression, no `loss = loss / k` or `loss /= k`, no division
        by that name in the assignments leading to the loss or in a same-module helper that
        computes it. Reported at the backward call. Criteria with `reduction="sum"`, Accelerate
        (which divides inside `accelerator.backward`), DeepSpeed and Lightning are left alone.
    """
    why = """
        Gradients of successive backward calls add up. Without the division the accumulated
        gradient is `k` times the mean gradient of the large batch it stands for, so every
        update is `k` times too large: the effective learning rate silently depends on the
        accumulation setting, and with Adam-free optimizers (SGD) training often diverges.
        Gradient clipping then also clips at the wrong scale.
    """
    example = """
        for i, (x, y) in enumerate(loader):
            loss = criterion(model(x), y)
            loss.backward()
            if (i + 1) % accum_steps == 0:
                optimizer.step()
                optimizer.zero_grad()
    """
    instead = """
        for i, (x, y) in enumerate(loader):
            loss = criterion(model(x), y) / accum_steps
            loss.backward()
            if (i + 1) % accum_steps == 0:
                optimizer.step()
                optimizer.zero_grad()
    """
    hint = "divide the loss by the accumulation count before backward (`loss = loss / k`)"
    requires = (("%",), ("backward",), (".step(",))

    VALID = [
        Case(
            """
            for i, (x, y) in enumerate(loader):
                loss = criterion(model(x), y) / accum_steps
                loss.backward()
                if (i + 1) % accum_steps == 0:
                    optimizer.step()
                    optimizer.zero_grad()
            """,
            note="divided where the loss is computed",
        ),
        Case(
            """
            for step, batch in enumerate(loader):
                loss = model(**batch).loss
                loss /= args.gradient_accumulation_steps
                scaler.scale(loss).backward()
                if step % args.gradient_accumulation_steps == 0:
                    scaler.step(optimizer)
                    scaler.update()
                    optimizer.zero_grad()
            """,
            note="in-place division, scaler",
        ),
        Case(
            """
            accum = cfg.train.accum
            for i, batch in enumerate(loader):
                outputs = model(batch)
                (outputs.loss / accum).backward()
                if (i + 1) % accum == 0:
                    optimizer.step()
                    optimizer.zero_grad()
            """,
            note="division in the backward expression",
        ),
        Case(
            """
            def compute_loss(model, batch, accum_steps):
                logits = model(batch["x"])
                return F.cross_entropy(logits, batch["y"]) / accum_steps

            for i, batch in enumerate(loader):
                loss = compute_loss(model, batch, k)
                loss.backward()
                if (i + 1) % k == 0:
                    optimizer.step()
                    optimizer.zero_grad()
            """,
            note="division in a helper",
        ),
        Case(
            """
            from accelerate import Accelerator
            accelerator = Accelerator(gradient_accumulation_steps=4)
            for i, batch in enumerate(loader):
                with accelerator.accumulate(model):
                    loss = model(**batch).loss
                    accelerator.backward(loss)
                    optimizer.step()
                    optimizer.zero_grad()
                if i % 4 == 0:
                    optimizer.step()
            """,
            note="Accelerate divides the loss itself",
        ),
        Case(
            """
            import torch.nn as nn
            criterion = nn.CrossEntropyLoss(reduction="sum")
            for i, (x, y) in enumerate(loader):
                loss = criterion(model(x), y)
                loss.backward()
                if (i + 1) % k == 0:
                    for p in model.parameters():
                        p.grad /= k * x.size(0)
                    optimizer.step()
                    optimizer.zero_grad()
            """,
            note="sum reduction, gradients rescaled by hand",
        ),
        Case(
            """
            for i, (x, y) in enumerate(loader):
                loss = criterion(model(x), y)
                loss.backward()
                optimizer.step()
                optimizer.zero_grad()
                if i % args.log_interval == 0:
                    print(f"step {i}")
                    scheduler.step()
            """,
            note="step every iteration; only the scheduler is periodic",
        ),
        Case(
            """
            import lightning as L
            trainer = L.Trainer(accumulate_grad_batches=8)
            for i, batch in enumerate(loader):
                loss = model(batch)
                loss.backward()
                if i % 8 == 0:
                    optimizer.step()
            """,
            note="Lightning accumulates itself",
        ),
        Case(
            """
            for i, (real, _) in enumerate(loader):
                d_loss = critic(generator(z).detach()).mean() - critic(real).mean()
                d_loss.backward()
                opt_d.step()
                opt_d.zero_grad()
                if i % n_critic == 0:
                    g_loss = -critic(generator(z)).mean()
                    g_loss.backward()
                    opt_g.step()
                    opt_g.zero_grad()
            """,
            note="WGAN: the generator steps every n_critic iterations with its own backward",
        ),
    ]
    INVALID = [
        Case(
            """
            for i, (x, y) in enumerate(loader):
                loss = criterion(model(x), y)
                loss.backward()  # expect: GPU406
                if (i + 1) % accum_steps == 0:
                    optimizer.step()
                    optimizer.zero_grad()
            """
        ),
        Case(
            """
            for step, batch in enumerate(train_dataloader):
                outputs = model(**batch)
                loss = outputs.loss
                scaler.scale(loss).backward()  # expect: GPU406
                if step % args.gradient_accumulation_steps == 0:
                    scaler.step(optimizer)
                    scaler.update()
                    optimizer.zero_grad()
            """,
            note="scaler, HF-style names",
        ),
        Case(
            """
            ACCUM = 8
            def train(model, loader, opt):
                for it, (x, y) in enumerate(loader):
                    loss = model(x, y)
                    loss = loss.mean()
                    loss.backward()  # expect: GPU406
                    if (it + 1) % ACCUM == 0 or it + 1 == len(loader):
                        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                        opt.step()
                        opt.zero_grad(set_to_none=True)
            """,
            note="module constant, last-batch condition",
        ),
        Case(
            """
            class Trainer:
                def train_epoch(self, loader):
                    for i, batch in enumerate(loader):
                        loss = self.compute_loss(batch)
                        loss.backward()  # expect: GPU406
                        if (i + 1) % self.cfg.accum == 0:
                            self.optimizer.step()
                            self.optimizer.zero_grad()

                def compute_loss(self, batch):
                    return self.criterion(self.model(batch["x"]), batch["y"])
            """,
            note="loss from a method that does not divide",
        ),
        Case(
            """
            for i, (x, y) in enumerate(loader):
                loss = criterion(model(x), y) / x.size(0)
                loss.backward()  # expect: GPU406
                if (i + 1) % 4 == 0:
                    optimizer.step()
                    optimizer.zero_grad()
            """,
            note="divided by something else; literal k",
        ),
        Case(
            """
            for i, (x, y) in enumerate(loader):
                out = model(x)
                (criterion(out, y) + 0.1 * aux_loss(out)).backward()  # expect: GPU406
                if i % k == 0:
                    opt.step()
                    opt.zero_grad()
            """,
            note="expression backpropagated directly",
        ),
    ]

    def check(self, model: FileModel) -> Iterator[Report]:
        if model.uses_framework("accelerate", "deepspeed", "lightning", "pytorch_lightning"):
            return
        if self._sum_reduction(model):
            return
        reported: Set[int] = set()
        for step in model.method_calls("step"):
            test = step.ctx.gate_test
            receiver = (step.receiver_name or "").rsplit(".", 1)[-1]
            if test is None or not _OPTIMIZER_RECEIVER.search(receiver) or "sched" in receiver.lower():
                continue
            loop = model.enclosing_training_loop(step.ctx)
            if loop is None or loop.function is not step.ctx.function or not model.is_hot_loop(loop):
                continue
            if self._steps_every_iteration(model, loop):
                continue  # another optimizer steps every iteration (a GAN critic): its backward
            k = _modulus(test)
            if k is None or (isinstance(k, cst.Integer) and k.evaluated_value <= 1):
                continue
            k_name = dotted_name(k)
            if k_name is not None and _NOT_ACCUMULATION.search(k_name.rsplit(".", 1)[-1]):
                continue
            names = self._divisor_names(model, k, step.ctx)
            for backward in model.method_calls("backward"):
                ctx = backward.ctx
                if id(backward.node) in reported or ctx.function is not loop.function or ctx.gated:
                    continue
                if model.enclosing_training_loop(ctx) is not loop:
                    continue
                value = self._backward_value(backward)
                if value is None or self._scaled(model, value, ctx, names, k):
                    continue
                reported.add(id(backward.node))
                shown = model.code(k).strip()
                yield self.report(
                    backward.node,
                    f"gradients accumulate over `{shown}` micro-batches but the loss is not divided by "
                    f"`{shown}`: each update is `{shown}` times too large",
                )

    def _steps_every_iteration(self, model: FileModel, loop: LoopInfo) -> bool:
        for site in model.method_calls("step"):
            receiver = (site.receiver_name or "").rsplit(".", 1)[-1]
            if not _OPTIMIZER_RECEIVER.search(receiver) or "sched" in receiver.lower():
                continue
            if site.ctx.function is loop.function and not site.ctx.gated and (site.ctx.loop is not None and site.ctx.loop.within(loop)):
                if model.enclosing_training_loop(site.ctx) is loop:
                    return True
        return False

    def _sum_reduction(self, model: FileModel) -> bool:
        for site in model.facts.calls:
            arg = call_argument(site.node, "reduction", None)
            if arg is not None and isinstance(arg.value, cst.SimpleString) and arg.value.evaluated_value == "sum":
                return True
            if call_argument(site.node, "accumulate_grad_batches", None) is not None:
                return True
        return bool(model.method_calls("accumulate"))

    @staticmethod
    def _backward_value(site: CallSite) -> Optional[cst.BaseExpression]:
        call = site.node
        if call.args and call.args[0].keyword is None:
            return call.args[0].value
        receiver = site.receiver
        if isinstance(receiver, cst.Call) and isinstance(receiver.func, cst.Attribute):
            if receiver.func.attr.value == "scale" and receiver.args:
                return receiver.args[0].value
        return receiver

    def _divisor_names(self, model: FileModel, k: cst.BaseExpression, ctx: Context) -> Set[str]:
        """Spellings of the accumulation count: `accum`, `args.accum_steps` and their last parts."""
        names: Set[str] = set()
        dotted = dotted_name(k)
        if dotted is None:
            return names
        spellings = [dotted]
        for assignment in model.assignments(dotted, ctx):
            other = dotted_name(assignment.value) if assignment.value is not None else None
            if other is not None:
                spellings.append(other)
        for spelling in spellings:
            names.add(spelling)
            names.add(spelling.rsplit(".", 1)[-1])
        return names

    def _mentions(self, node: cst.CSTNode, names: Set[str], k: cst.BaseExpression) -> bool:
        for current in _walk(node):
            if isinstance(current, (cst.Name, cst.Attribute)):
                dotted = dotted_name(current) or ""
                last = dotted.rsplit(".", 1)[-1]
                if dotted in names or last in names or _ACCUMULATION_NAME.search(last):
                    return True
            elif isinstance(current, cst.Integer) and isinstance(k, cst.Integer):
                if current.evaluated_value == k.evaluated_value:
                    return True
        return False

    def _divides(self, node: cst.CSTNode, names: Set[str], k: cst.BaseExpression) -> bool:
        """A division (or `.div()`, `* (1 / k)`) by the accumulation count inside ``node``."""
        for current in _walk(node):
            if isinstance(current, cst.BinaryOperation) and isinstance(
                current.operator, (cst.Divide, cst.FloorDivide, cst.Multiply)
            ):
                if self._mentions(current.right, names, k) or (
                    isinstance(current.operator, cst.Multiply) and self._mentions(current.left, names, k)
                ):
                    return True
            elif isinstance(current, cst.Call) and isinstance(current.func, cst.Attribute):
                if current.func.attr.value in ("div", "div_", "true_divide", "mul", "mul_"):
                    if any(self._mentions(a.value, names, k) for a in current.args):
                        return True
        return False

    def _scaled(
        self, model: FileModel, value: cst.BaseExpression, ctx: Context, names: Set[str], k: cst.BaseExpression
    ) -> bool:
        if self._divides(value, names, k):
            return True
        seen: Set[str] = set()
        pending = [(name, 0) for name in iter_names(value)]
        while pending:
            name, depth = pending.pop()
            if name in seen or depth > 3:
                continue
            seen.add(name)
            for assignment in model.assignments(name, ctx):
                statement, assigned = assignment.statement, assignment.value
                if assigned is None:
                    continue
                if isinstance(statement, cst.AugAssign) and isinstance(
                    statement.operator, (cst.DivideAssign, cst.MultiplyAssign)
                ):
                    if self._mentions(assigned, names, k):
                        return True
                if self._divides(assigned, names, k) or self._helper_divides(model, assigned, ctx, names, k):
                    return True
                pending.extend((n, depth + 1) for n in iter_names(assigned))
        return False

    def _helper_divides(
        self, model: FileModel, value: cst.BaseExpression, ctx: Context, names: Set[str], k: cst.BaseExpression
    ) -> bool:
        """A same-module function computing the loss (one level deep) that is handed the count or
        divides by something that is not a literal: give it the benefit of the doubt."""
        for current in _walk(value):
            if not isinstance(current, cst.Call):
                continue
            info = self._local_function(model, current.func, ctx)
            if info is None:
                continue
            if any(self._mentions(a.value, names, k) for a in current.args):
                return True
            for node in _walk(info.node.body):
                if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Divide):
                    if not isinstance(node.right, (cst.Integer, cst.Float)):
                        return True
                if isinstance(node, cst.AugAssign) and isinstance(node.operator, cst.DivideAssign):
                    return True
        return False

    @staticmethod
    def _local_function(model: FileModel, func: cst.BaseExpression, ctx: Context) -> Optional[FunctionInfo]:
        if isinstance(func, cst.Name):
            return model.function(func.value) if model.imports.qualify(func) is None else None
        if isinstance(func, cst.Attribute) and dotted_name(func.value) in ("self", "cls") and ctx.class_name:
            return model.resolve(f"{ctx.class_name}.{func.attr.value}")
        return None
