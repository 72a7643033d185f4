"""GPU602 `evaluation-without-eval-mode`: model evaluated without `model.eval()`."""

from __future__ import annotations
import re
from typing import Iterator, List
import libcst as cst
from advisor.findings import Severity
from advisor.model import CallSite, Context, FileModel, Heat
from advisor.model.file_model import call_argument, literal_bool
from advisor.model.handed_names import handed_sites
from advisor.model.module_layers import layers_mode_free, mode_free
from advisor.model.names import dotted_name
from advisor.model.smoke_tests import shape_check
from advisor.rules.base import Report, Rule, snippet
from advisor.rules.inference.model_calls import TORCH_TEXT, first_per, marker_sites, feeds_training, framework_owned, model_calls, results_feed_training, torch_file


_EVAL_NAME = re.compile(
    r"(^|_)(eval|evaluate|evaluation|validate|validation|val|valid|test|predict|prediction|infer|inference)(_|$)",
    re.IGNORECASE,
)


_STOCHASTIC_LAYERS = (
    "torch.nn.Dropout", "torch.nn.AlphaDropout", "torch.nn.FeatureAlphaDropout", "torch.nn.BatchNorm",
    "torch.nn.SyncBatchNorm", "torch.nn.Transformer", "torch.nn.functional.dropout",
    "torch.nn.functional.batch_norm", "torchvision.models.", "timm.create_model",
)


def _test_file(model: FileModel) -> bool:
    base = model.path.replace("\\", "/").rsplit("/", 1)[-1]
    return base.startswith("test_") or base.endswith("_test.py") or base == "conftest.py"


_TRAINING_DATA = re.compile(r"(^|_)train(ing)?_?(loader|dataloader|data|set|queue)s?$|^loader_train$", re.IGNORECASE)


def _over_training_data(site: CallSite) -> bool:
    """The call sits under no_grad in a loop over the training loader (`for x, y in
    train_loader:`)."""
    loop = site.ctx.loop
    if not site.ctx.no_grad or loop is None or type(loop.node) is not cst.For:
        return False
    iterable = loop.node.iter
    while type(iterable) is cst.Call and type(iterable.func) is cst.Name and iterable.args:
        iterable = iterable.args[0].value  # enumerate(...), tqdm(...)
    name = dotted_name(iterable)
    return name is not None and bool(_TRAINING_DATA.search(name.rsplit(".", 1)[-1]))


def _base_switches_then_calls(model: FileModel, info) -> bool:
    """``info`` overrides a method that a project base class calls as `self.<name>(...)` in a
    function that also calls `.eval()` (`model.eval(); return self._validate(model, loader)`)."""
    cls = model.facts.classes.get(info.class_name or "")
    if cls is None:
        return False
    name = info.node.name.value
    for base in cls.bases:
        owner, found = model, model.facts.classes.get(base)
        if found is None:
            symbol = model.symbol(base) if "." in base else None
            if symbol is None or symbol.kind != "class":
                continue
            owner, found = symbol.model, symbol.info
        evals = {e.ctx.scope for e in owner.method_calls("eval")}
        for site in owner.method_calls(name):
            if site.receiver_name == "self" and site.ctx.class_name == found.name and site.ctx.scope in evals:
                return True
    return False


def _also_run_with_grad(model: FileModel, site: CallSite, info) -> bool:
    """The same function runs the same model with gradients on as well (`logits_s =
    self.model(x_strong)`, then `with torch.no_grad(): logits_w = self.model(x_weak)`): a
    training step that makes its pseudo-labels in training mode on purpose."""
    name = dotted_name(site.node.func)
    if name is None:
        return False
    # The names each function calls with gradients on, once per function: a function of many
    # no_grad calls is not read once per call.
    known = model.shared("gpu602-called-with-grad", lambda m: {})
    called = known.get(id(info))
    if called is None:
        called = known[id(info)] = {
            dotted_name(other.node.func) for other in info.sites if not other.ctx.no_grad
        }
    return name in called


def _result_discarded(model: FileModel, site: CallSite) -> bool:
    """The call is a statement of its own, or bound to `_`: its output is thrown away (a
    forward run once only to materialise sharded weights or to trace; a pass of such calls over
    a loader recomputes batch-norm statistics, and stays reported)."""
    statement = model.statement_of.get(id(site.node))
    if type(statement) is not cst.SimpleStatementLine:
        return False
    for small in statement.body:
        if type(small) is cst.Expr and small.value is site.node:
            return True
        if type(small) is cst.Assign and small.value is site.node and all(
                type(t.target) is cst.Name and t.target.value == "_" for t in small.targets):
            return True
    return False


def _eval_calls(model: FileModel) -> List[CallSite]:
    """`.eval()` and `.train(False)` / `.train(mode=False)` calls."""
    out = [s for s in model.method_calls("eval") if not s.node.args]
    for site in model.method_calls("train"):
        arg = call_argument(site.node, "mode", 0)
        if arg is not None and literal_bool(arg.value) is False:
            out.append(site)
    return out


class EvaluationWithoutEvalMode(Rule):
    code = "GPU602"
    name = "evaluation-without-eval-mode"
    summary = "model evaluated without `model.eval()`"
    what = """
        A model called for evaluation (under `torch.no_grad()`/`inference_mode()`, or in a
        function named like `evaluate`, `validate`, `test_*`, `predict`, `infer`) when no
        `.eval()` (or `.train(False)`) reaches it: none in that function, none in its callers
        (one level up, in this file or in the project files that call it: a decoding helper
        whose caller in the training script switches the model first), and none on the value
        the model name is built from. Only in files that
        train (a training loop, or a `.train()` call) or that construct dropout or batch-norm
        layers (`nn.Dropout`, `nn.BatchNorm*`, `nn.Transformer*`, torchvision or timm models).
        Not when the model is an instance of a project class built only from layers that compute
        the same in both modes (convolutions, linear layers, activations, layer or group norm,
        instance norm, whose per-sample statistics image generators keep at test time on
        purpose, pixel shuffle, and project blocks of those; a `torch.distributions` object its
        `forward` wraps the outputs in, `Categorical(probs)`, is no layer), nor when it is built from such
        torch.nn layers (`model = nn.Linear(784, 10)`, `self.value_net = nn.Linear(64, 1)`): a dropout or batch norm anywhere down its
        blocks, a layer of another library, a layer class handed in, or a `self.training` read
        keeps the report. Nor for a shape check: a model just built in the same function (no
        weights loaded there) and run on random input (`net(torch.randn(1, 3, 32, 32))`).
        Information when the file calls `.eval()` elsewhere, or
        when the pass goes over the training loader under no_grad (batch-norm statistics
        recomputed on purpose, as `swa_utils.update_bn` does). Per-step code of the training loop
        (EMA teachers, target networks), one call outside any loop whose output is thrown
        away (a warm-up forward that makes DeepSpeed gather its sharded weights), a no-grad call of a model that the same function
        also runs with gradients on (pseudo-labels made in a training step), passes whose results a caller hands to a function that
        trains (a memory bank or centroids filled before training), models from
        `from_pretrained` (already in eval mode) under a name the file never puts in training
        mode, generation pipelines of the Hugging Face libraries (`pipeline(prompt)`: no mode of
        their own; so is a project class deriving from diffusers' `DiffusionPipeline`, built by
        its `from_pretrained` or declared by an annotation, `self.model: DepthPipeline = model`), calls that act on a model (`accelerator.unwrap_model(m)`), the methods of
        an `nn.Module` subclass (also one through the project's own base classes: whoever calls
        the module sets its mode), a function handed by name to another call and never called
        directly (a callback: `trainer.eval(evaluate, path)` sets the mode before it runs it),
        Lightning and the Hugging Face Trainer are left alone.
    """
    why = """
        A module starts in training mode and stays there until `.eval()`. In training mode
        dropout keeps zeroing activations at random, and batch norm normalises with the
        statistics of the current batch and updates its running averages with evaluation
        data. Metrics come out noisy and too low, depend on the batch size, and the running
        statistics the checkpoint keeps drift towards the validation set.
    """
    example = """
        @torch.no_grad()
        def evaluate(model, loader):
            return sum((model(x).argmax(1) == y).sum() for x, y in loader)
        for epoch in range(epochs):
            model.train()
            train_one_epoch(model, loader)
            acc = evaluate(model, val_loader)
    """
    instead = """
        @torch.no_grad()
        def evaluate(model, loader):
            model.eval()
            return sum((model(x).argmax(1) == y).sum() for x, y in loader)
        for epoch in range(epochs):
            model.train()
            train_one_epoch(model, loader)
            acc = evaluate(model, val_loader)
    """
    hint = "call `model.eval()` before evaluating (and `model.train()` before training again)"
    fix_safety = """
        No automatic fix. `model.eval()` must be paired with `model.train()` before training
        resumes, and where evaluation starts and ends is the author's structure.
    """
    references = (
        (
            "torch.nn.Module.eval",
            "https://docs.pytorch.org/docs/stable/generated/torch.nn.Module.html#torch.nn.Module.eval",
        ),
        (
            "Autograd mechanics: evaluation mode is not the same as no_grad",
            "https://docs.pytorch.org/docs/stable/notes/autograd.html#locally-disabling-gradient-computation",
        ),
        ("torch.nn.Dropout", "https://docs.pytorch.org/docs/stable/generated/torch.nn.Dropout.html"),
        ("torch.nn.BatchNorm2d", "https://docs.pytorch.org/docs/stable/generated/torch.nn.BatchNorm2d.html"),
    )
    requires = (
        TORCH_TEXT,
        ("eval", "valid", "test", "predict", "infer", "no_grad", "inference_mode"),
        ("train", "backward", "step(", "Dropout", "dropout", "Norm", "batch_norm", "torchvision", "timm", "Transformer"),
    )

    def check(self, model: FileModel) -> Iterator[Report]:
        if not torch_file(model) or model.uses_framework("lightning", "pytorch_lightning") or any(
            q.startswith("transformers.") and q.endswith("Trainer") for q in model.facts.calls_by_qualname
        ):
            return
        stochastic = self._stochastic_layers(model)
        if not stochastic and not (
            model.method_calls("train") or any(model.is_training_loop(loop) for loop in model.facts.loops)
        ):
            return
        evals = _eval_calls(model)
        markers = marker_sites(model)
        # Names put in training mode somewhere: a pretrained model loaded under another name
        # stays in the eval mode `from_pretrained` leaves it in.
        trained = frozenset(
            filter(None, (dotted_name(s.receiver) for s in model.method_calls("train") if s.receiver is not None))
        )
        candidates = []
        for site in model_calls(model):
            info = site.ctx.function
            if not self._is_evaluation(model, site):
                continue
            if framework_owned(model, info) or self._in_step(model, site):
                continue
            if info is not None and (info.direct_marker or model.function_trains(info.key)):
                continue
            if info is not None and results_feed_training(model, info):
                continue
            if info is not None and site.ctx.no_grad and _also_run_with_grad(model, site, info):
                continue
            if info is not None and not model.callers(info) and _handed_to_a_runner(model, info):
                continue  # a callback (`trainer.eval(evaluate, path)`): its runner sets the mode
            if site.ctx.loop is None and _result_discarded(model, site):
                continue  # one warm-up call (`self.model(input_ids=dummy)`): nothing is evaluated
            candidates.append(site)
        key = lambda s: (s.ctx.scope, dotted_name(s.node.func) or "")
        for site in first_per(candidates, key):
            if feeds_training(model, site, markers) and site.ctx.loop is not None and not site.ctx.no_grad:
                continue
            if self._eval_reaches(model, site, evals, trained):
                continue
            called = _module_called(site.node.func)
            if not stochastic and self._local_class(model, called, site.ctx, site.order, 0):
                continue  # built from this file's classes, which hold no dropout or batch norm
            if mode_free(model, called, site.ctx, site.order):
                continue  # a project class with no layer that behaves differently in eval mode
            if layers_mode_free(model, called, site.ctx, site.order):
                continue  # `model = nn.Linear(784, 10)`: no layer that eval mode changes
            if shape_check(model, site.node, site.ctx, site.order):
                continue  # a model just built, run on random input: no trained weights are read
            # A pass over the training data without autograd and without eval mode is how batch
            # norm statistics are recomputed on purpose (`swa_utils.update_bn`, a calibration
            # pass after reparameterising): it may be meant.
            severity = Severity.INFO if evals or _over_training_data(site) else None
            yield self.report(
                site.node,
                "`{model}` is evaluated here but never switched to eval "
                "mode: dropout stays on and batch norm uses (and updates) batch statistics",
                severity=severity,
                data={"model": snippet(model, site.node.func, 24)},
            )

    def _stochastic_layers(self, model: FileModel) -> bool:
        return any(q.startswith(_STOCHASTIC_LAYERS) for q in model.facts.calls_by_qualname)

    def _local_class(self, model: FileModel, expr: cst.BaseExpression, ctx: Context, order: int, depth: int) -> bool:
        """The model is an instance of an `nn.Module` subclass of this file (through `.to()`,
        `.module`, DDP wrappers, assignments and helper parameters)."""
        if depth > 10:
            return False
        if type(expr) is cst.Call:
            func = expr.func
            if type(func) is cst.Attribute and func.attr.value in ("to", "cuda", "half", "float", "bfloat16"):
                return self._local_class(model, func.value, ctx, order, depth + 1)
            if (model.imports.qualify(func) or "").startswith("torch.nn.parallel.") and expr.args:
                return self._local_class(model, expr.args[0].value, ctx, order, depth + 1)
            info = model.facts.classes.get(dotted_name(func) or "")
            return info is not None and any(b.startswith("torch.nn.") for b in info.bases)
        if type(expr) is cst.Attribute and expr.attr.value == "module":
            return self._local_class(model, expr.value, ctx, order, depth + 1)
        name = dotted_name(expr)
        if name is None:
            return False
        reaching = model.reaching_assignment(name, ctx, order)
        if reaching is not None:
            return reaching.value is not None and self._local_class(model, reaching.value, reaching.ctx, reaching.order, depth + 1)
        info = ctx.function
        if info is None or name not in info.params:
            return False
        position = info.params.index(name) - info.receiver_params
        calls = model.call_sites(info)
        args = [call_argument(c.node, name, position) for c in calls]
        return bool(calls) and all(
            a is not None and self._local_class(model, a.value, c.ctx, c.order, depth + 1) for a, c in zip(args, calls)
        )

    def _is_evaluation(self, model: FileModel, site: CallSite) -> bool:
        info = site.ctx.function
        if info is not None and info.node.name.value.startswith("test_") and (not info.params or _test_file(model)):
            return False  # a pytest test checking shapes, not an evaluation
        if site.ctx.no_grad:
            return True
        if info is None:
            return False
        return info.no_grad or bool(_EVAL_NAME.search(info.node.name.value))

    def _in_step(self, model: FileModel, site: CallSite) -> bool:
        """Per-step code of a training loop: EMA teachers, target networks, gated accuracy checks."""
        loop = model.enclosing_training_loop(site.ctx)
        if loop is not None and model.is_hot_loop(loop):
            return True
        info = site.ctx.function
        return info is not None and model.function_heat(info.key) is Heat.HOT

    def _eval_reaches(self, model: FileModel, site: CallSite, evals: List[CallSite], trained: frozenset) -> bool:
        info = site.ctx.function
        scopes = {site.ctx.scope}
        if info is not None:
            for owner, call in model.callers(info):
                if owner is model:
                    scopes.add(call.ctx.scope)
                elif any(e.ctx.scope == call.ctx.scope for e in _eval_calls(owner)):
                    return True  # a caller in another module switches the model first
        if any(e.ctx.scope in scopes for e in evals):
            return True
        if info is not None and _base_switches_then_calls(model, info):
            return True  # a base class's `validate()` switches modes, then calls this override
        if any(t.ctx.scope == site.ctx.scope for t in model.method_calls("train")):
            return True  # the mode is set on purpose here (Monte Carlo dropout, restoring a flag)
        return self._built_in_eval(model, site.node.func, site.ctx, site.order, evals, trained, 0)

    def _built_in_eval(self, model, expr, ctx: Context, order: int, evals, trained: frozenset, depth: int,
                       pretrained: bool = True) -> bool:
        """The value the model name holds was put in eval mode where it was built (`.eval()`,
        `from_pretrained`, which returns a model in eval mode), and is not a name the file puts
        in training mode."""
        if depth > 4:
            return False
        if type(expr) is cst.Call:
            func = expr.func
            if type(func) is cst.Attribute:
                if func.attr.value == "eval":
                    return True
                if func.attr.value == "from_pretrained" or (model.imports.qualify(func) or "").endswith("from_pretrained"):
                    return pretrained
                if func.attr.value in ("to", "cuda", "half", "float", "bfloat16", "compile"):
                    return self._built_in_eval(model, func.value, ctx, order, evals, trained, depth + 1, pretrained)
            qual = model.imports.qualify(func) or ""
            if qual == "torch.jit.load":
                return True
            if qual.startswith("torch.nn.parallel.") or qual == "torch.compile":
                return bool(expr.args) and self._built_in_eval(
                    model, expr.args[0].value, ctx, order, evals, trained, depth + 1, pretrained)
            if type(func) is cst.Name and func.value in model.facts.functions:
                helper = model.facts.functions[func.value]
                return any(e.ctx.function is helper for e in evals)
            return False
        name = dotted_name(expr)
        if name is None:
            return False
        pretrained = pretrained and name not in trained
        found = model.assignments(name, ctx)
        if any(
            a.value is not None
            and self._built_in_eval(model, a.value, a.ctx, a.order, evals, trained, depth + 1, pretrained)
            for a in found
        ):
            return True
        info = ctx.function
        if not found and info is not None and name in info.params:
            position = info.params.index(name) - info.receiver_params
            for call in model.call_sites(info):
                arg = call_argument(call.node, name, position)
                if arg is not None and self._built_in_eval(
                        model, arg.value, call.ctx, call.order, evals, trained, depth + 1, pretrained):
                    return True
        return False


def _module_called(func: cst.BaseExpression) -> cst.BaseExpression:
    """The module a call runs: `self.model` of `self.model.forward(x)` as of `self.model(x)`."""
    if type(func) is cst.Attribute and func.attr.value == "forward":
        return func.value
    return func


# Calls that take a function without setting up anything for it (`map`, `partial`, a thread).
_PLAIN_RUNNERS = ("functools.", "threading.", "multiprocessing.", "concurrent.", "timeit.", "builtins.")


def _handed_to_a_runner(model: FileModel, info) -> bool:
    """The function is handed by name to a method of an object (`trainer.eval(evaluate, path)`)
    or to a function of the project, not to `map`, `partial` or a thread."""
    for site, _ in handed_sites(model).get(id(info), ()):
        qualified = model.imports.qualify(site.node.func) or ""
        if qualified.startswith(_PLAIN_RUNNERS) or (type(site.node.func) is cst.Name and site.node.func.value in
                                                    ("map", "filter", "sorted", "partial")):
            continue
        if site.method is not None or model.calls.targets(site):
            return True
    return False
