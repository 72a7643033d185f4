"""Inference and evaluation (GPU6xx)."""

from __future__ import annotations

import re
from typing import Iterator, List, Optional, Set, Tuple

import libcst as cst

from advisor.findings import Applicability, Severity
from advisor.model import CallSite, Context, FileModel, FunctionInfo, Heat, LoopInfo
from advisor.model.file_model import call_argument, literal_bool
from advisor.model.names import dotted_name, last_segment, root_name
from advisor.model.subtree import iter_names
from advisor.model.walk import children
from advisor.rules.base import Case, FixSpec, NodeEdit, Report, Rule, snippet
from advisor.rules.distributed import LoaderResolver, kwargs_value

# What a model is called: `model`, `net`, `self.model`, `ema_model`, `q_net`, `classifier`.
_MODEL_NAME = re.compile(r"(^|_)(model|net|network|classifier|backbone|encoder|decoder)$", re.IGNORECASE)
# Modules that are not models: losses, metrics and parameter-free layers.
_NOT_A_MODEL = re.compile(r"loss|criterion|crit$|metric|act|pool|drop|norm|softmax|sigmoid|relu", re.IGNORECASE)
_MODEL_FACTORIES = ("torchvision.models.", "timm.create_model", "torch.hub.load", "torch.jit.load")
# What `from_pretrained` also builds that is not a network.
_NOT_A_NETWORK = re.compile(r"Tokenizer|Processor|Config|Extractor|Pipeline|Dataset|Scheduler", re.IGNORECASE)
# Lightning and the Hugging Face Trainer call these with autograd and train/eval mode set for you.
_FRAMEWORK_METHODS = frozenset(
    {"training_step", "validation_step", "test_step", "predict_step", "prediction_step", "evaluation_loop", "forward"}
)
_FRAMEWORK_PACKAGES = ("lightning", "pytorch_lightning", "transformers")


_TORCH_PACKAGES = ("torch", "transformers", "torchvision", "timm", "lightning", "pytorch_lightning", "accelerate")


_TORCH_TEXT = _TORCH_PACKAGES  # the import statement names one of them


def torch_file(model: FileModel) -> bool:
    """Only PyTorch code: a `model(x)` in a JAX or Keras script is none of our business."""
    return model.uses_framework(*_TORCH_PACKAGES)


def _class_bases(model: FileModel, info: Optional[FunctionInfo]) -> Tuple[str, ...]:
    if info is None or info.class_name is None:
        return ()
    found = model.facts.classes.get(info.class_name)
    return found.bases if found is not None else ()


def framework_owned(model: FileModel, info: Optional[FunctionInfo]) -> bool:
    """A model's own `forward`, or a method of a Lightning module, an `nn.Module` or an HF Trainer."""
    if info is None:
        return False
    if info.node.name.value in _FRAMEWORK_METHODS:
        return True
    for base in _class_bases(model, info):
        if base.startswith(_FRAMEWORK_PACKAGES) or base in ("torch.nn.Module", "torch.nn.modules.module.Module"):
            return True
    return False


def _built_as_model(model: FileModel, value: cst.BaseExpression) -> bool:
    """`Net()` for an nn.Module subclass of the file, `resnet50()`, `AutoModel.from_pretrained(...)`,
    `torch.jit.load(...)`, and `.to()`/`.cuda()`/`.eval()` chains on them."""
    while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and value.func.attr.value in (
        "to", "cuda", "eval", "half", "float", "bfloat16", "train"
    ):
        value = value.func.value
    if not isinstance(value, cst.Call):
        return False
    qual = model.imports.qualify(value.func) or ""
    if _NOT_A_NETWORK.search(qual):
        return False
    if isinstance(value.func, cst.Attribute) and value.func.attr.value == "from_pretrained":
        return not _NOT_A_NETWORK.search(dotted_name(value.func) or "")
    if qual.startswith(_MODEL_FACTORIES):
        return True
    name = dotted_name(value.func)
    info = model.facts.classes.get(name or "")
    return info is not None and any(b.startswith("torch.nn.") or b.endswith("Module") for b in info.bases)


def is_model(model: FileModel, func: cst.BaseExpression, ctx: Context, order: int) -> bool:
    """The callee of a call is a model: named like one, a DDP/nn module, or built as one."""
    name = dotted_name(func)
    if name is None or name in ("self", "cls") or model.imports.qualify(func) is not None:
        return False
    if name in model.facts.functions:
        return False  # a function of the file (`convert_model(...)`), not a network
    last = last_segment(name)
    if _MODEL_NAME.search(last):
        return True
    if _NOT_A_MODEL.search(last):
        return False
    kinds = model.kinds(func, ctx, order)
    if "ddp" in kinds or "module" in kinds:
        return True
    return any(a.value is not None and _built_as_model(model, a.value) for a in model.assignments(name, ctx))


def model_calls(model: FileModel) -> List[CallSite]:
    """Calls of a model (`model(x)`, `self.net(x)`, `model.forward(x)`), in source order.
    Four rules ask; the answer is computed once per file."""
    return model.shared("inference.model_calls", _find_model_calls)


def _find_model_calls(model: FileModel) -> List[CallSite]:
    out = []
    for site in model.facts.calls:
        if site.qualname is not None:
            continue
        func = site.node.func
        if site.method == "forward" and site.receiver is not None:
            func = site.receiver
        if is_model(model, func, site.ctx, site.order):
            out.append(site)
    return out


def _grad_off_call(model: FileModel, ctx: Context) -> bool:
    """`torch.set_grad_enabled(False)` called as a statement in the same function or at module level."""
    for qual, sites in model.facts.calls_by_qualname.items():
        if not qual.endswith("set_grad_enabled"):
            continue
        for site in sites:
            if site.with_item or not site.node.args or literal_bool(site.node.args[0].value) is not False:
                continue
            if site.ctx.function is None or site.ctx.function is ctx.function:
                return True
    return False


def grad_disabled(model: FileModel, ctx: Context) -> Optional[bool]:
    """Autograd is off here: a no-grad `with`, a decorated function, or every caller (one level up)
    under one. None when the function has no caller in the file to look at."""
    if ctx.no_grad or _grad_off_call(model, ctx):
        return True
    info = ctx.function
    if info is None:
        return False
    if info.no_grad:
        return True
    callers = model.call_sites(info)
    if not callers:
        return None
    return all(c.ctx.no_grad or (c.ctx.function is not None and c.ctx.function.no_grad) for c in callers)


def _marker_sites(model: FileModel) -> List[CallSite]:
    return model.method_calls("backward") + model.calls_to("torch.autograd.backward", "torch.autograd.grad")


def feeds_training(model: FileModel, site: CallSite, markers: List[CallSite]) -> bool:
    """The call may be part of a training computation: in a training loop or in code that runs
    every step, or in a function (or module) that backpropagates outside any loop afterwards
    (REINFORCE-style rollouts whose log-probabilities are used after the loop)."""
    loop = site.ctx.loop
    while loop is not None:
        if model.is_training_loop(loop):
            if model.is_hot_loop(loop) and not site.ctx.gated:
                return True
            if loop is site.ctx.loop:
                return True
        loop = loop.parent
    info = site.ctx.function
    if info is not None:
        if model.function_heat(info.key) is Heat.HOT:
            return True
        if info.direct_marker and any(m.ctx.function is info and m.ctx.loop is None for m in markers):
            return True
        if any(m.qualname == "torch.autograd.grad" and m.ctx.function is info for m in markers):
            return True
        for key in info.callees:
            callee = model.resolve(key)
            if callee is not None and model.function_trains(callee.key) and not model.function_has_training_loop(callee.key):
                if any(c.ctx.function is info and c.ctx.loop is None for c in model.call_sites(callee)):
                    return True
        return False
    return any(m.ctx.function is None and m.ctx.loop is None for m in markers)


def _first_per(sites: List[CallSite], key) -> List[CallSite]:
    seen: Set = set()
    out = []
    for site in sites:
        k = key(site)
        if k in seen:
            continue
        seen.add(k)
        out.append(site)
    return out


def _input_grads(model: FileModel) -> bool:
    """The file asks for input gradients or freezes the weights: `x.requires_grad_()`,
    `p.requires_grad = False`, `torch.autograd.grad`: autograd is used on purpose, or records nothing."""
    if model.method_calls("requires_grad_") or model.calls_to("torch.autograd.grad"):
        return True
    return any(target.endswith(".requires_grad") for _, target in model.facts.assignments)


class InferenceWithoutNoGrad(Rule):
    code = "GPU601"
    name = "inference-without-no-grad"
    summary = "model called in an evaluation or inference loop with autograd on"
    what = """
        A call of a model (a name bound to an `nn.Module` or DDP model, or called `model`,
        `net`, `self.model`, `*_model`, ...) inside a loop that never runs `backward()` or an
        optimizer step, when neither the loop's `with` blocks, nor its function's decorator,
        nor every caller of its function (one level up) turns autograd off with
        `torch.no_grad()` or `torch.inference_mode()`. Loops whose outputs may still be
        backpropagated (inside the per-step training code, or before a `backward()` in the
        same function), code that asks for input gradients (`torch.autograd.grad`,
        `requires_grad_()`), `model.generate(...)` (already gradient-free), a model's own
        `forward`, and Lightning or Hugging Face Trainer hooks are left alone. Information when
        the function has no caller in the file.
    """
    why = """
        With autograd on, every forward pass records the graph and keeps each layer's
        activations alive for a backward pass that never comes. Evaluation then needs several
        times the memory it should (smaller batches, or out-of-memory errors) and spends time
        bookkeeping; `inference_mode()` also skips version counting.
    """
    example = """
        def evaluate(model, loader):
            model.eval()
            correct = 0
            for x, y in loader:
                correct += (model(x.cuda()).argmax(1) == y.cuda()).sum()
            return correct
    """
    instead = """
        @torch.no_grad()
        def evaluate(model, loader):
            model.eval()
            correct = 0
            for x, y in loader:
                correct += (model(x.cuda()).argmax(1) == y.cuda()).sum()
            return correct
    """
    hint = "wrap evaluation in `with torch.no_grad():` or decorate the function with `@torch.no_grad()`"
    fixable = "sometimes (unsafe)"
    requires = (_TORCH_TEXT, ("model", "net", "Model", "Net", "torch", "encoder", "decoder", "classifier", "backbone"))

    VALID = [
        Case(
            """
            import torch
            @torch.no_grad()
            def evaluate(model, loader):
                model.eval()
                return sum((model(x).argmax(1) == y).sum() for x, y in loader)
            def evaluate_loop(model, loader):
                model.eval()
                with torch.inference_mode():
                    for x, y in loader:
                        preds = model(x)
            """,
            note="decorator and inference_mode",
        ),
        Case(
            """
            import torch
            def run_batches(model, loader):
                outs = []
                for x, _ in loader:
                    outs.append(model(x))
                return outs
            def main():
                with torch.no_grad():
                    outs = run_batches(model, val_loader)
            """,
            note="the only caller disables grad",
        ),
        Case(
            """
            import torch
            def fgsm(model, loader, eps):
                adv = []
                for x, y in loader:
                    x.requires_grad_(True)
                    loss = criterion(model(x), y)
                    grad, = torch.autograd.grad(loss, x)
                    adv.append(x + eps * grad.sign())
                return adv
            """,
            note="adversarial examples need input gradients",
        ),
        Case(
            """
            import torch
            def train(model, loader, optimizer):
                for x, y in loader:
                    loss = criterion(model(x), y)
                    loss.backward()
                    optimizer.step()
            """,
            note="a training loop",
        ),
        Case(
            """
            import torch
            def reinforce(policy_net, env, optimizer):
                log_probs, rewards = [], []
                obs = env.reset()
                for t in range(500):
                    dist = policy_net(obs)
                    action = dist.sample()
                    log_probs.append(dist.log_prob(action))
                    obs, reward, done, _ = env.step(action)
                    rewards.append(reward)
                loss = -(torch.stack(log_probs) * returns(rewards)).sum()
                loss.backward()
                optimizer.step()
            """,
            note="rollout whose log-probabilities are backpropagated after the loop",
        ),
        Case(
            """
            import pytorch_lightning as pl
            class LitModel(pl.LightningModule):
                def validation_step(self, batch, batch_idx):
                    for x in batch:
                        self.model(x)
            """,
            note="Lightning disables grad in validation_step",
        ),
        Case(
            """
            from transformers import AutoModelForCausalLM
            for prompt in prompts:
                ids = tokenizer(prompt, return_tensors="pt").input_ids.cuda()
                out = model.generate(ids, max_new_tokens=64)
                print(tokenizer.decode(out[0]))
            """,
            note="generate is gradient-free already",
        ),
        Case(
            """
            import torch.nn as nn
            class Stack(nn.Module):
                def forward(self, x):
                    for _ in range(self.depth):
                        x = self.net(x)
                    return x
            """,
            note="a model's own forward",
        ),
        Case(
            """
            import torch
            torch.set_grad_enabled(False)
            model = load_model()
            for x in batches:
                print(model(x).argmax())
            """,
            note="grad turned off for the whole script",
        ),
    ]
    INVALID = [
        Case(
            """
            import torch
            def evaluate(model, loader):
                model.eval()
                correct = 0
                for x, y in loader:
                    correct += (model(x.cuda()).argmax(1) == y.cuda()).sum()  # expect: GPU601
                return correct.item()
            for epoch in range(10):
                train_one_epoch(model, train_loader)
                print(evaluate(model, val_loader))
            """,
            fixed="""
            import torch
            @torch.no_grad()
            def evaluate(model, loader):
                model.eval()
                correct = 0
                for x, y in loader:
                    correct += (model(x.cuda()).argmax(1) == y.cuda()).sum()  # expect: GPU601
                return correct.item()
            for epoch in range(10):
                train_one_epoch(model, train_loader)
                print(evaluate(model, val_loader))
            """,
        ),
        Case(
            """
            import torch
            model = torch.jit.load("model.pt").cuda().eval()
            preds = []
            for images in loader:
                preds.append(model(images.cuda()).argmax(dim=1))  # expect: GPU601
            """,
            note="module-level inference script",
        ),
        Case(
            """
            import torch
            def predict(model, loader):
                outs = []
                for batch in loader:
                    outs.append(model(batch).softmax(-1))  # expect: GPU601
                return outs
            with torch.no_grad():
                a = predict(model, loader_a)
            b = predict(model, loader_b)
            """,
            fixed="""
            import torch
            @torch.no_grad()
            def predict(model, loader):
                outs = []
                for batch in loader:
                    outs.append(model(batch).softmax(-1))  # expect: GPU601
                return outs
            with torch.no_grad():
                a = predict(model, loader_a)
            b = predict(model, loader_b)
            """,
            note="one caller has grad on",
        ),
        Case(
            """
            import torch
            class Trainer:
                def train_epoch(self):
                    for x, y in self.train_loader:
                        loss = self.criterion(self.model(x), y)
                        loss.backward()
                        self.optimizer.step()
                def validate(self):
                    self.model.eval()
                    total = 0.0
                    for x, y in self.val_loader:
                        total += self.criterion(self.model(x), y)  # expect: GPU601
                    return total
                def fit(self):
                    for epoch in range(self.epochs):
                        self.train_epoch()
                        self.validate()
            """,
            fixed="""
            import torch
            class Trainer:
                def train_epoch(self):
                    for x, y in self.train_loader:
                        loss = self.criterion(self.model(x), y)
                        loss.backward()
                        self.optimizer.step()
                @torch.no_grad()
                def validate(self):
                    self.model.eval()
                    total = 0.0
                    for x, y in self.val_loader:
                        total += self.criterion(self.model(x), y)  # expect: GPU601
                    return total
                def fit(self):
                    for epoch in range(self.epochs):
                        self.train_epoch()
                        self.validate()
            """,
            note="a trainer method",
        ),
        Case(
            """
            import torch
            for epoch in range(epochs):
                for x, y in train_loader:
                    loss = criterion(model(x), y)
                    loss.backward()
                    optimizer.step()
                val_loss = 0
                for x, y in val_loader:
                    val_loss += criterion(model(x), y)  # expect: GPU601
            """,
            note="validation loop in the epoch loop",
        ),
        Case(
            """
            import torch
            def embed_corpus(encoder, batches):
                return [encoder(b) for b in batches]
            def embed_all(text_encoder, batches):
                vectors = []
                for b in batches:
                    vectors.append(text_encoder(b).cpu())  # expect: GPU601 info
                return vectors
            """,
            note="no caller in the file",
        ),
        Case(
            """
            import torch
            for step, (x, y) in enumerate(train_loader):
                loss = criterion(model(x), y)
                loss.backward()
                optimizer.step()
                if step % 1000 == 0:
                    hits = 0
                    for vx, vy in val_loader:
                        hits += (model(vx).argmax(1) == vy).sum()  # expect: GPU601
            """,
            note="periodic evaluation inside the training loop",
        ),
    ]

    def check(self, model: FileModel) -> Iterator[Report]:
        if not torch_file(model) or _input_grads(model):
            return
        markers = _marker_sites(model)
        candidates = [s for s in model_calls(model) if s.ctx.loop is not None]
        fixed: Set[int] = set()
        for site in _first_per(candidates, lambda s: id(s.ctx.loop)):
            info = site.ctx.function
            if framework_owned(model, info) or feeds_training(model, site, markers):
                continue
            disabled = grad_disabled(model, site.ctx)
            if disabled:
                continue
            fix = None
            if (
                info is not None
                and id(info) not in fixed
                and info.node.asynchronous is None  # no_grad does not follow a coroutine's awaits
                and model.imports.aliases.get("torch") == "torch"
            ):
                fixed.add(id(info))
                fix = FixSpec(
                    f"decorate `{info.node.name.value}` with `@torch.no_grad()`",
                    (NodeEdit(info.node, "@torch.no_grad()", "line_before"),),
                    Applicability.UNSAFE,
                )
            yield self.report(
                site.node,
                f"`{snippet(model, site.node)}` runs in a loop that never trains, with autograd on: every "
                "call records a graph and keeps its activations",
                severity=Severity.INFO if disabled is None else None,
                fix=fix,
            )


_EVAL_NAME = re.compile(
    r"(^|_)(eval|evaluate|evaluation|validate|validation|val|valid|test|predict|prediction|infer|inference)(_|$)",
    re.IGNORECASE,
)
_STOCHASTIC_LAYERS = (
    "torch.nn.Dropout", "torch.nn.AlphaDropout", "torch.nn.FeatureAlphaDropout", "torch.nn.BatchNorm",
    "torch.nn.SyncBatchNorm", "torch.nn.InstanceNorm", "torch.nn.Transformer", "torch.nn.functional.dropout",
    "torch.nn.functional.batch_norm", "torchvision.models.", "timm.create_model",
)


def _test_file(model: FileModel) -> bool:
    base = model.path.replace("\\", "/").rsplit("/", 1)[-1]
    return base.startswith("test_") or base.endswith("_test.py") or base == "conftest.py"


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
        (one level up), and none on the value the model name is built from. Only in files that
        train (a training loop, or a `.train()` call) or that construct dropout or batch-norm
        layers (`nn.Dropout`, `nn.BatchNorm*`, `nn.Transformer*`, torchvision or timm models).
        Information when the file calls `.eval()` elsewhere. Per-step code of the training loop
        (EMA teachers, target networks), models from `from_pretrained` (already in eval mode)
        in files that never call `.train()`, Lightning and the Hugging Face Trainer are left
        alone.
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
    requires = (
        _TORCH_TEXT,
        ("eval", "valid", "test", "predict", "infer", "no_grad", "inference_mode"),
        ("train", "backward", "step(", "Dropout", "dropout", "Norm", "batch_norm", "torchvision", "timm", "Transformer"),
    )

    VALID = [
        Case(
            """
            import torch

            def load_torch_model(name):
                return torch.hub.load("repo", name)

            for name in names:
                torch_model = load_torch_model(name)
                export(torch_model)
            """,
            note="a function of the file whose name ends in _model",
        ),
        Case(
            """
            import torch
            @torch.no_grad()
            def evaluate(model, loader):
                model.eval()
                return sum((model(x).argmax(1) == y).sum() for x, y in loader)
            for epoch in range(10):
                model.train()
                train_one_epoch(model, loader)
                evaluate(model, val_loader)
            """,
            note="eval in the evaluation function",
        ),
        Case(
            """
            import torch
            @torch.no_grad()
            def evaluate(model, loader):
                return [model(x) for x, _ in loader]
            for epoch in range(10):
                model.train()
                train_one_epoch(model, loader)
                model.eval()
                evaluate(model, val_loader)
            """,
            note="eval in the caller",
        ),
        Case(
            """
            import torch
            import torch.nn as nn
            def load_model(path):
                model = Net()
                model.load_state_dict(torch.load(path))
                return model.cuda().eval()
            @torch.no_grad()
            def predict(model, loader):
                return [model(x.cuda()) for x in loader]
            model = load_model("best.pt")
            model = nn.DataParallel(model)
            predict(model, loader)
            model.train()
            """,
            note="eval in the helper that builds the model",
        ),
        Case(
            """
            import torch
            for x, y in loader:
                loss = criterion(model(x), y)
                loss.backward()
                optimizer.step()
                with torch.no_grad():
                    ema_out = ema_model(x)
            """,
            note="per-step code in the training loop",
        ),
        Case(
            """
            import torch
            from transformers import AutoModelForCausalLM
            model = AutoModelForCausalLM.from_pretrained("gpt2").cuda()
            drop = torch.nn.Dropout(0.1)
            with torch.inference_mode():
                logits = model(input_ids).logits
            """,
            note="from_pretrained returns a model in eval mode",
        ),
        Case(
            """
            import pytorch_lightning as pl
            import torch.nn as nn
            class Lit(pl.LightningModule):
                def __init__(self):
                    super().__init__()
                    self.net = nn.Sequential(nn.Linear(8, 8), nn.Dropout(0.2))
                def validation_step(self, batch, batch_idx):
                    return self.net(batch)
            """,
            note="Lightning switches modes itself",
        ),
        Case(
            """
            import torch
            @torch.no_grad()
            def predict(model, batch):
                return model(batch).argmax(-1)
            model = torch.jit.load("model.pt")
            print(predict(model, batch))
            """,
            note="no training and no dropout or batch norm in sight",
        ),
        Case(
            """
            import torch
            def validate(model, loader):
                was_training = model.training
                model.train(False)
                with torch.no_grad():
                    out = [model(x) for x in loader]
                model.train(was_training)
                return out
            model.train()
            """,
            note="train(False)",
        ),
    ]
    INVALID = [
        Case(
            """
            import torch
            @torch.no_grad()
            def evaluate(model, loader):
                correct = 0
                for x, y in loader:
                    correct += (model(x).argmax(1) == y).sum()  # expect: GPU602
                return correct
            for epoch in range(10):
                model.train()
                for x, y in train_loader:
                    criterion(model(x), y).backward()
                    optimizer.step()
                evaluate(model, val_loader)
            """,
        ),
        Case(
            """
            import torch
            import torch.nn as nn
            net = nn.Sequential(nn.Linear(32, 64), nn.BatchNorm1d(64), nn.ReLU(), nn.Linear(64, 2))
            net.load_state_dict(torch.load("net.pt"))
            with torch.no_grad():
                for x in batches:
                    print(net(x).argmax(1))  # expect: GPU602
            """,
            note="batch norm, module-level inference",
        ),
        Case(
            """
            import torch
            class Trainer:
                def train_epoch(self):
                    self.model.train()
                    for x, y in self.loader:
                        self.criterion(self.model(x), y).backward()
                        self.optimizer.step()
                def validate(self):
                    losses = []
                    for x, y in self.val_loader:
                        losses.append(self.criterion(self.model(x), y).detach())  # expect: GPU602
                    return losses
            """,
            note="method named validate",
        ),
        Case(
            """
            import torch
            import torch.nn.functional as F
            def train(args, model, device, train_loader, optimizer, epoch):
                model.train()
                for data, target in train_loader:
                    optimizer.zero_grad()
                    loss = F.nll_loss(model(data.to(device)), target.to(device))
                    loss.backward()
                    optimizer.step()
            def test(model, device, test_loader):
                test_loss = 0
                with torch.no_grad():
                    for data, target in test_loader:
                        output = model(data.to(device))  # expect: GPU602
                        test_loss += F.nll_loss(output, target.to(device), reduction="sum").item()
                return test_loss
            def main():
                model = Net().to(device)
                for epoch in range(1, args.epochs + 1):
                    train(args, model, device, train_loader, optimizer, epoch)
                    test(model, device, test_loader)
            """,
            note="the classic MNIST test()",
        ),
        Case(
            """
            import torch
            import torch.nn as nn
            class Net(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.body = nn.Sequential(nn.Linear(10, 10), nn.Dropout(0.5))
                def forward(self, x):
                    return self.body(x)
            def export_predictions(model, loader):
                model.eval()
            @torch.inference_mode()
            def infer(model, batch):
                return model(batch)  # expect: GPU602 info
            model = Net()
            infer(model, batch)
            """,
            note="eval called elsewhere, not on the way: info",
        ),
        Case(
            """
            import torch
            def run_validation(ddp_model, val_loader):
                with torch.no_grad():
                    return [ddp_model(x) for x, _ in val_loader]  # expect: GPU602
            for epoch in range(epochs):
                ddp_model.train()
                train(ddp_model)
                run_validation(ddp_model, val_loader)
            """,
            note="comprehension in a validation helper",
        ),
    ]

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
        markers = _marker_sites(model)
        trains_somewhere = bool(model.method_calls("train"))
        candidates = []
        for site in model_calls(model):
            info = site.ctx.function
            if not self._is_evaluation(model, site):
                continue
            if framework_owned(model, info) or self._in_step(model, site):
                continue
            if info is not None and (info.direct_marker or model.function_trains(info.key)):
                continue
            candidates.append(site)
        key = lambda s: (s.ctx.scope, dotted_name(s.node.func) or "")
        for site in _first_per(candidates, key):
            if feeds_training(model, site, markers) and site.ctx.loop is not None and not site.ctx.no_grad:
                continue
            if self._eval_reaches(model, site, evals, trains_somewhere):
                continue
            if not stochastic and self._local_class(model, site.node.func, site.ctx, site.order, 0):
                continue  # built from this file's classes, which hold no dropout or batch norm
            severity = Severity.INFO if evals else None
            yield self.report(
                site.node,
                f"`{snippet(model, site.node.func, 24)}` is evaluated here but never switched to eval "
                "mode: dropout stays on and batch norm uses (and updates) batch statistics",
                severity=severity,
            )

    def _stochastic_layers(self, model: FileModel) -> bool:
        return any(q.startswith(_STOCHASTIC_LAYERS) for q in model.facts.calls_by_qualname)

    def _local_class(self, model: FileModel, expr: cst.BaseExpression, ctx: Context, order: int, depth: int) -> bool:
        """The model is an instance of an `nn.Module` subclass of this file (through `.to()`,
        `.module`, DDP wrappers, assignments and helper parameters)."""
        if depth > 10:
            return False
        if isinstance(expr, cst.Call):
            func = expr.func
            if isinstance(func, cst.Attribute) and func.attr.value in ("to", "cuda", "half", "float", "bfloat16"):
                return self._local_class(model, func.value, ctx, order, depth + 1)
            if (model.imports.qualify(func) or "").startswith("torch.nn.parallel.") and expr.args:
                return self._local_class(model, expr.args[0].value, ctx, order, depth + 1)
            info = model.facts.classes.get(dotted_name(func) or "")
            return info is not None and any(b.startswith("torch.nn.") for b in info.bases)
        if isinstance(expr, cst.Attribute) and expr.attr.value == "module":
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
        position = info.params.index(name) - (1 if info.class_name else 0)
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

    def _eval_reaches(self, model: FileModel, site: CallSite, evals: List[CallSite], trains: bool) -> bool:
        info = site.ctx.function
        scopes = {site.ctx.scope}
        if info is not None:
            scopes.update(c.ctx.scope for c in model.call_sites(info))
        if any(e.ctx.scope in scopes for e in evals):
            return True
        if any(t.ctx.scope == site.ctx.scope for t in model.method_calls("train")):
            return True  # the mode is set on purpose here (Monte Carlo dropout, restoring a flag)
        return self._built_in_eval(model, site.node.func, site.ctx, site.order, evals, trains, 0)

    def _built_in_eval(self, model, expr, ctx: Context, order: int, evals, trains: bool, depth: int) -> bool:
        """The value the model name holds was put in eval mode where it was built."""
        if depth > 4:
            return False
        if isinstance(expr, cst.Call):
            func = expr.func
            if isinstance(func, cst.Attribute):
                if func.attr.value == "eval":
                    return True
                if func.attr.value == "from_pretrained" or (model.imports.qualify(func) or "").endswith("from_pretrained"):
                    return not trains
                if func.attr.value in ("to", "cuda", "half", "float", "bfloat16", "compile"):
                    return self._built_in_eval(model, func.value, ctx, order, evals, trains, depth + 1)
            qual = model.imports.qualify(func) or ""
            if qual == "torch.jit.load":
                return True
            if qual.startswith("torch.nn.parallel.") or qual == "torch.compile":
                return bool(expr.args) and self._built_in_eval(model, expr.args[0].value, ctx, order, evals, trains, depth + 1)
            if isinstance(func, cst.Name) and func.value in model.facts.functions:
                helper = model.facts.functions[func.value]
                return any(e.ctx.function is helper for e in evals)
            return False
        name = dotted_name(expr)
        if name is None:
            return False
        found = model.assignments(name, ctx)
        if any(
            a.value is not None and self._built_in_eval(model, a.value, a.ctx, a.order, evals, trains, depth + 1)
            for a in found
        ):
            return True
        info = ctx.function
        if not found and info is not None and name in info.params:
            position = info.params.index(name) - (1 if info.class_name else 0)
            for call in model.call_sites(info):
                arg = call_argument(call.node, name, position)
                if arg is not None and self._built_in_eval(model, arg.value, call.ctx, call.order, evals, trains, depth + 1):
                    return True
        return False


def _singleton_batch(expr: cst.BaseExpression) -> Optional[cst.BaseExpression]:
    """The per-sample value under `x.unsqueeze(0)`, `x[None]`, `x.view(1, ...)`, `torch.unsqueeze(x, 0)`
    somewhere in a chain like `img.unsqueeze(0).to(device)`; None when there is none."""
    node = expr
    while True:
        if isinstance(node, cst.Call):
            func = node.func
            if isinstance(func, cst.Attribute):
                method = func.attr.value
                args = node.args
                if method == "unsqueeze" and args and _is_zero(args[0].value):
                    return func.value
                if method in ("view", "reshape") and len(args) >= 2 and _is_one(args[0].value):
                    return func.value
                if method == "unsqueeze" and not isinstance(func.value, (cst.Call, cst.Attribute, cst.Subscript, cst.Name)):
                    return None
                if last_segment(dotted_name(func)) == "unsqueeze" and len(args) == 2 and _is_zero(args[1].value):
                    return args[0].value  # torch.unsqueeze(x, 0)
                node = func.value
                continue
            return None
        if isinstance(node, cst.Subscript):
            first = node.slice[0].slice if node.slice else None
            if isinstance(first, cst.Index) and isinstance(first.value, cst.Name) and first.value.value == "None":
                return node.value
            node = node.value
            continue
        if isinstance(node, cst.Attribute):
            node = node.value
            continue
        return None


def _singleton(model: FileModel, expr: cst.BaseExpression, site: CallSite) -> Optional[cst.BaseExpression]:
    """The per-sample value batched alone in ``expr``, or in the value of the name ``expr`` is,
    when that name was bound in the same loop (`x = tf(img).unsqueeze(0).cuda(); model(x)`)."""
    inner = _singleton_batch(expr)
    if inner is None and isinstance(expr, cst.Name) and site.ctx.loop is not None:
        reaching = model.reaching_assignment(expr.value, site.ctx, site.order)
        if reaching is not None and reaching.value is not None and (reaching.ctx.loop is not None and reaching.ctx.loop.within(site.ctx.loop)):
            inner = _singleton_batch(reaching.value)
    return inner


_COMPREHENSIONS = (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)


def _comprehension_targets(info: FunctionInfo, call: cst.Call) -> Set[str]:
    """The names bound by the comprehensions around ``call`` (walks one function's body)."""
    stack: List[Tuple[cst.CSTNode, frozenset]] = [(info.node.body, frozenset())]
    while stack:
        node, names = stack.pop()
        if node is call:
            return set(names)
        if isinstance(node, _COMPREHENSIONS):
            bound = set(names)
            for_in: Optional[cst.CompFor] = node.for_in
            while for_in is not None:
                bound.update(iter_names(for_in.target))
                for_in = for_in.inner_for_in
            names = frozenset(bound)
        if isinstance(node, (cst.FunctionDef, cst.ClassDef)):
            continue
        stack.extend((child, names) for child in children(node))
    return set()


def _is_zero(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Integer) and expr.value == "0"


def _is_one(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Integer) and expr.value == "1"


_CACHE_KEYWORDS = frozenset({"past_key_values", "past", "use_cache", "cache", "kv_cache", "layer_past", "start_pos", "cache_position"})


def _grown_names(model: FileModel, loop: LoopInfo) -> Set[str]:
    """Names the loop grows by concatenation: `ids = torch.cat([ids, next_token], dim=-1)`."""
    out: Set[str] = set()
    for site in model.calls_to("torch.cat", "torch.concat", "torch.concatenate"):
        target = site.assigned_to
        if target is None or not (site.ctx.loop is not None and site.ctx.loop.within(loop)) or not site.node.args:
            continue
        first = site.node.args[0].value
        if isinstance(first, (cst.List, cst.Tuple)) and any(
            isinstance(e.value, cst.Name) and e.value.value == target for e in first.elements
        ):
            out.add(target)
    return out


def _derived_from(model: FileModel, expr: cst.BaseExpression, names: Set[str], ctx: Context, order: int) -> bool:
    """The expression is one of ``names``, or a name bound in the loop to an expression over them
    (`idx_cond = idx[:, -block_size:]`)."""
    root = root_name(expr)
    if root is None:
        return False
    if root in names:
        return True
    reaching = model.reaching_assignment(root, ctx, order)
    return (
        reaching is not None
        and reaching.value is not None
        and reaching.ctx.loop is not None
        and any(n in names for n in iter_names(reaching.value))
    )


class PerSampleInference(Rule):
    code = "GPU603"
    name = "per-sample-inference"
    summary = "model called one sample at a time in an inference loop"
    what = """
        Outside training code, a model called inside a loop on a single sample made into a
        batch of one (`model(x.unsqueeze(0))`, `model(x[None])`, `model(x.view(1, ...))`),
        where `x` comes from the loop's own items (its target, or an item indexed by it).
        Also, as information, a `DataLoader(..., batch_size=1)` iterated with autograd off by a
        loop that calls a model. Autoregressive decoding (calls passing a cache, or growing the
        input with `torch.cat`) and reinforcement-learning loops that step an environment are
        left alone.
    """
    why = """
        A GPU runs a batch of one nearly as slowly as a batch of hundreds: each call is a chain
        of small kernel launches and tiny matrix products that leave most of the device idle,
        so the loop is bound by Python and launch overhead. Stacking the samples (or letting a
        DataLoader batch them) runs the same work in a few large calls.
    """
    example = """
        with torch.no_grad():
            preds = [model(img.unsqueeze(0).cuda()).argmax(1) for img in images]
            for img in images:
                preds.append(model(img.unsqueeze(0).cuda()).argmax(1))
    """
    instead = """
        loader = DataLoader(images, batch_size=256)
        with torch.no_grad():
            preds = [model(batch.cuda()).argmax(1) for batch in loader]
    """
    hint = "batch the samples (`torch.stack`, or a DataLoader with a real batch size) and call the model once per batch"
    requires = (_TORCH_TEXT, ("unsqueeze", "None", "view(1", "reshape(1", "DataLoader"))

    VALID = [
        Case(
            """
            import torch
            with torch.no_grad():
                for x, y in loader:
                    preds = model(x.cuda()).argmax(1)
            """,
            note="batched",
        ),
        Case(
            """
            import torch
            @torch.no_grad()
            def greedy_decode(model, ids, steps):
                past = None
                for _ in range(steps):
                    out = model(input_ids=ids[:, -1:].unsqueeze(0), past_key_values=past, use_cache=True)
                    past = out.past_key_values
                    ids = torch.cat([ids, out.logits[:, -1:].argmax(-1)], dim=-1)
                return ids
            """,
            note="decoding with a cache",
        ),
        Case(
            """
            import torch
            for x, y in dataset:
                loss = criterion(model(x.unsqueeze(0)), y.unsqueeze(0))
                loss.backward()
                optimizer.step()
            """,
            note="per-sample training is another matter",
        ),
        Case(
            """
            import torch
            obs = env.reset()
            for t in range(1000):
                with torch.no_grad():
                    action = policy_net(torch.as_tensor(obs)[None]).argmax().item()
                obs, reward, done, info = env.step(action)
            """,
            note="an environment gives one observation at a time",
        ),
        Case(
            """
            import torch
            from torch.utils.data import DataLoader
            loader = DataLoader(val_set, batch_size=64)
            with torch.no_grad():
                for x, y in loader:
                    out = model(x[:, None])
            """,
            note="adds a channel axis, not a batch axis",
        ),
        Case(
            """
            import torch
            image = load_image(path)
            with torch.no_grad():
                logits = model(image.unsqueeze(0))
            for label, p in zip(labels, logits.softmax(-1)[0]):
                print(label, float(p))
            """,
            note="one image, outside the loop",
        ),
        Case(
            """
            import torch
            from torch.utils.data import DataLoader
            loader = DataLoader(train_set, batch_size=1, shuffle=True)
            for x, y in loader:
                criterion(model(x), y).backward()
                optimizer.step()
            """,
            note="batch_size=1 for training",
        ),
    ]
    INVALID = [
        Case(
            """
            import torch
            model.eval()
            preds = []
            with torch.no_grad():
                for img in images:
                    preds.append(model(img.unsqueeze(0).cuda()).argmax(1))  # expect: GPU603
            """,
        ),
        Case(
            """
            import torch
            @torch.inference_mode()
            def predict(net, samples):
                return [net(s[None]).softmax(-1) for s in samples]  # expect: GPU603
            """,
            note="comprehension with x[None]",
        ),
        Case(
            """
            import torch
            def embed(model, dataset):
                out = []
                with torch.no_grad():
                    for i in range(len(dataset)):
                        x = dataset[i]["pixels"].to("cuda")
                        out.append(model(x.view(1, 3, 224, 224)))  # expect: GPU603
                return out
            """,
            note="indexed samples, view(1, ...)",
        ),
        Case(
            """
            import torch
            with torch.no_grad():
                for path in paths:
                    x = transform(Image.open(path)).unsqueeze(0).cuda()
                    scores[path] = model(x).softmax(1)  # expect: GPU603
            """,
            note="unsqueezed through a name",
        ),
        Case(
            """
            import torch
            from torch.utils.data import DataLoader
            test_loader = DataLoader(test_set, batch_size=1, shuffle=False)  # expect: GPU603 info
            model.eval()
            with torch.no_grad():
                for x, y in test_loader:
                    correct += (model(x.cuda()).argmax(1) == y.cuda()).sum()
            """,
            note="batch_size=1 loader",
        ),
        Case(
            """
            import torch
            class Predictor:
                @torch.no_grad()
                def predict_all(self, texts):
                    return [self.model(torch.unsqueeze(self.encode(t), 0)) for t in texts]  # expect: GPU603
            """,
            note="torch.unsqueeze in a method",
        ),
    ]

    def check(self, model: FileModel) -> Iterator[Report]:
        if not torch_file(model):
            return
        markers = _marker_sites(model)
        reported: Set[int] = set()
        for site in model_calls(model):
            loop = site.ctx.loop
            key = id(loop) if loop is not None else id(site.node)
            if key in reported or (loop is not None and loop.env_step):
                continue
            if any(a.keyword is not None and a.keyword.value in _CACHE_KEYWORDS for a in site.node.args):
                continue
            inputs = [
                a.value
                for a in site.node.args
                if a.keyword is None or a.keyword.value in ("input", "x", "input_ids", "pixel_values", "inputs")
            ]
            singles = [(value, _singleton(model, value, site)) for value in inputs]
            singles = [(value, inner) for value, inner in singles if inner is not None]
            if not singles:
                continue
            if feeds_training(model, site, markers) or framework_owned(model, site.ctx.function):
                continue
            items: Set[str] = set()
            if loop is None:
                if site.ctx.function is None:
                    continue
                items = _comprehension_targets(site.ctx.function, site.node)
                if not items:
                    continue
            grown = _grown_names(model, loop) if loop is not None else set()
            if loop is not None and self._recurrent(model, site, loop, [v for v, _ in singles]):
                continue
            for value, inner in singles:
                if _derived_from(model, value, grown, site.ctx, site.order):
                    continue
                if not self._per_item(model, inner, site, items):
                    continue
                reported.add(key)
                yield self.report(
                    site.node,
                    f"`{snippet(model, site.node)}` runs the model on one sample per call: the GPU idles "
                    "between tiny launches",
                )
                break
        yield from self._loaders(model, markers)

    def _recurrent(self, model: FileModel, site: CallSite, loop: LoopInfo, samples: List[cst.BaseExpression]) -> bool:
        """Another argument is state the loop carries from step to step (`h` in
        `out, h = rnn(x[t].unsqueeze(0), h)`): the steps depend on each other and cannot be batched."""
        scope = site.ctx.scope
        for arg in site.node.args:
            if any(arg.value is sample for sample in samples):
                continue
            for name in iter_names(arg.value):
                if any((a.ctx.loop is not None and a.ctx.loop.within(loop)) for a in model.facts.assignments.get((scope, name), ())):
                    return True
        return False

    def _per_item(self, model: FileModel, expr: cst.BaseExpression, site: CallSite, items: Set[str], depth: int = 0) -> bool:
        """The value comes from the items iterated: loop or comprehension targets, names derived
        from them, or an element indexed by a loop target (`dataset[i]`)."""
        targets: Set[str] = set(items)
        batch: Set[str] = set(items)
        loop = site.ctx.loop
        while loop is not None:
            targets.update(loop.targets)
            batch |= loop.batch_names
            loop = loop.parent
        stack: List[cst.CSTNode] = [expr]
        while stack:
            node = stack.pop()
            if isinstance(node, cst.Name):
                if node.value in batch:
                    return True
                if depth < 2 and node.value not in targets and site.ctx.loop is not None:
                    reaching = model.reaching_assignment(node.value, site.ctx, site.order)
                    if (
                        reaching is not None
                        and reaching.value is not None
                        and (reaching.ctx.loop is not None and reaching.ctx.loop.within(site.ctx.loop))
                        and self._per_item(model, reaching.value, site, items, depth + 1)
                    ):
                        return True
            elif isinstance(node, cst.Subscript):
                if any(n in targets for element in node.slice for n in iter_names(element)):
                    return True
                stack.append(node.value)
            elif isinstance(node, cst.Call):
                stack.extend(a.value for a in node.args)
                stack.append(node.func)
            elif isinstance(node, cst.Attribute):
                stack.append(node.value)
        return False

    def _loaders(self, model: FileModel, markers: List[CallSite]) -> Iterator[Report]:
        resolver = LoaderResolver(model)
        ones = [s for s in resolver.sites.values() if self._batch_of_one(s)]
        if not ones:
            return
        calls = model_calls(model)
        for loop in model.facts.loops:
            if model.is_training_loop(loop):
                continue
            found = [s for s in resolver.iterated_by(loop) if s in ones]
            if not found:
                continue
            inside = [c for c in calls if (c.ctx.loop is not None and c.ctx.loop.within(loop))]
            if not inside or any(feeds_training(model, c, markers) for c in inside):
                continue
            if not grad_disabled(model, inside[0].ctx):
                continue
            for site in found:
                ones.remove(site)
                yield self.report(
                    site.node,
                    "this DataLoader hands the model one sample per batch (`batch_size=1`) for inference: "
                    "a larger batch keeps the GPU busy",
                    severity=Severity.INFO,
                )

    def _batch_of_one(self, site: CallSite) -> bool:
        arg = call_argument(site.node, "batch_size", 1)
        return arg is not None and _is_one(arg.value)


class DecodingWithoutKvCache(Rule):
    code = "GPU604"
    name = "decoding-without-kv-cache"
    summary = "text generation that recomputes the whole sequence for every new token"
    what = """
        `model.generate(..., use_cache=False)` with a literal `False` (also in a kwargs dict or a
        `GenerationConfig`), and hand-written decoding loops that grow the token ids with
        `ids = torch.cat([ids, next_token], dim=-1)` and feed the whole of `ids` (or a window
        of it) back to the model each step without passing `past_key_values` or a cache. A loop
        is a warning when the model evidently supports a cache (a `from_pretrained` model, or
        called with `input_ids=`), and information otherwise (the model may have none yet).
    """
    why = """
        Without a key/value cache, step t of decoding reruns attention and every MLP over all t
        tokens produced so far, so generating T tokens costs O(T²) token-passes instead of
        O(T). With the cache each step only processes the newest token; for a few hundred
        tokens that is typically an order of magnitude faster.
    """
    example = """
        for _ in range(max_new_tokens):
            logits = model(input_ids=ids).logits
            next_token = logits[:, -1:].argmax(-1)
            ids = torch.cat([ids, next_token], dim=-1)
    """
    instead = """
        out = model(input_ids=ids, use_cache=True)
        for _ in range(max_new_tokens):
            next_token = out.logits[:, -1:].argmax(-1)
            ids = torch.cat([ids, next_token], dim=-1)
            out = model(input_ids=next_token, past_key_values=out.past_key_values, use_cache=True)
    """
    hint = "keep the key/value cache: pass `past_key_values` and feed only the new token (or use `use_cache=True`)"
    fixable = "sometimes (unsafe)"
    requires = (_TORCH_TEXT, ("use_cache", "cat(", "concatenate("))

    VALID = [
        Case(
            """
            from transformers import AutoModelForCausalLM
            out = model.generate(input_ids, max_new_tokens=128, do_sample=True)
            out = model.generate(**inputs, use_cache=True)
            """,
            note="cache on",
        ),
        Case(
            """
            import torch
            past = None
            next_ids = ids
            for _ in range(64):
                out = model(input_ids=next_ids, past_key_values=past, use_cache=True)
                past = out.past_key_values
                next_ids = out.logits[:, -1:].argmax(-1)
                ids = torch.cat([ids, next_ids], dim=-1)
            """,
            note="manual loop with the cache",
        ),
        Case(
            """
            import torch
            features = []
            for x, _ in loader:
                features = torch.cat([features, model(x)], dim=0) if len(features) else model(x)
            """,
            note="concatenating outputs, not inputs",
        ),
        Case(
            """
            import torch
            for step, (x, y) in enumerate(loader):
                x = torch.cat([x, noise], dim=1)
                loss = criterion(model(x), y)
                loss.backward()
                optimizer.step()
            """,
            note="training loop concatenating features",
        ),
        Case(
            """
            import torch
            @torch.no_grad()
            def decode(model, tokens, total_len):
                prev_pos = 0
                for cur_pos in range(tokens.size(1), total_len):
                    logits = model.forward(tokens[:, prev_pos:cur_pos], prev_pos)
                    next_token = logits[:, -1].argmax(-1, keepdim=True)
                    tokens = torch.cat([tokens, next_token], dim=1)
                    prev_pos = cur_pos
                return tokens
            """,
            note="llama-style: only the new positions are fed",
        ),
        Case(
            """
            from transformers import Trainer
            model.config.use_cache = False  # gradient checkpointing during training
            trainer.train()
            """,
            note="training configuration",
        ),
        Case(
            """
            import torch
            for _ in range(steps):
                out = model(input_ids=ids[:, -1:], past_key_values=cache)
                cache = out.past_key_values
                ids = torch.cat((ids, out.logits[:, -1:].argmax(-1)), dim=-1)
            """,
            note="feeds only the last token",
        ),
    ]
    INVALID = [
        Case(
            """
            from transformers import AutoModelForSeq2SeqLM
            model = AutoModelForSeq2SeqLM.from_pretrained("t5-small").cuda()
            outputs = model.generate(**inputs, max_new_tokens=256, use_cache=False)  # expect: GPU604
            """,
            fixed="""
            from transformers import AutoModelForSeq2SeqLM
            model = AutoModelForSeq2SeqLM.from_pretrained("t5-small").cuda()
            outputs = model.generate(**inputs, max_new_tokens=256, use_cache=True)  # expect: GPU604
            """,
        ),
        Case(
            """
            import torch
            gen_kwargs = {"max_new_tokens": 128, "use_cache": False, "do_sample": False}
            for batch in prompts:
                out = lm.generate(batch["input_ids"].cuda(), **gen_kwargs)  # expect: GPU604
            """,
            note="kwargs dict",
        ),
        Case(
            """
            import torch
            from transformers import AutoModelForCausalLM
            model = AutoModelForCausalLM.from_pretrained(name).cuda().eval()
            ids = tokenizer(prompt, return_tensors="pt").input_ids.cuda()
            with torch.no_grad():
                for _ in range(100):
                    logits = model(ids).logits  # expect: GPU604
                    next_token = logits[:, -1:].argmax(-1)
                    ids = torch.cat([ids, next_token], dim=-1)
            """,
            note="greedy decoding loop with a pretrained model",
        ),
        Case(
            """
            import torch
            @torch.no_grad()
            def sample(model, input_ids, steps):
                while input_ids.size(1) < steps:
                    out = model(input_ids=input_ids, attention_mask=torch.ones_like(input_ids))  # expect: GPU604
                    probs = out.logits[:, -1].softmax(-1)
                    input_ids = torch.cat((input_ids, torch.multinomial(probs, 1)), dim=1)
                return input_ids
            """,
            note="while loop, input_ids keyword",
        ),
        Case(
            """
            import torch
            import torch.nn.functional as F
            @torch.no_grad()
            def generate(model, idx, max_new_tokens, block_size):
                for _ in range(max_new_tokens):
                    idx_cond = idx if idx.size(1) <= block_size else idx[:, -block_size:]
                    logits = model(idx_cond)[:, -1, :]  # expect: GPU604 info
                    idx_next = torch.multinomial(F.softmax(logits, dim=-1), num_samples=1)
                    idx = torch.cat((idx, idx_next), dim=1)
                return idx
            """,
            note="nanoGPT-style window, model without a cache in sight",
        ),
        Case(
            """
            from transformers import GenerationConfig
            config = GenerationConfig(max_new_tokens=64, use_cache=False)  # expect: GPU604
            """,
            fixed="""
            from transformers import GenerationConfig
            config = GenerationConfig(max_new_tokens=64, use_cache=True)  # expect: GPU604
            """,
            note="GenerationConfig",
        ),
    ]

    def check(self, model: FileModel) -> Iterator[Report]:
        if not torch_file(model):
            return
        yield from self._generate_calls(model)
        yield from self._decode_loops(model)

    def _generate_calls(self, model: FileModel) -> Iterator[Report]:
        sites = list(model.method_calls("generate"))
        for qual, found in model.facts.calls_by_qualname.items():
            if last_segment(qual) == "GenerationConfig":
                sites.extend(found)
        for site in sites:
            arg = call_argument(site.node, "use_cache", None)
            if arg is not None:
                if literal_bool(arg.value) is False:
                    yield self.report(
                        site.node,
                        "`use_cache=False` makes generation recompute every earlier token at each step",
                        fix=FixSpec("set `use_cache=True`", (NodeEdit(arg.value, "True"),), Applicability.UNSAFE),
                    )
                continue
            state, value = kwargs_value(model, site, "use_cache")
            if state == "present" and value is not None and literal_bool(value) is False:
                yield self.report(
                    site.node,
                    "the generation options set `use_cache=False`: every step recomputes all earlier tokens",
                )

    def _decode_loops(self, model: FileModel) -> Iterator[Report]:
        concats = model.calls_to("torch.cat", "torch.concat", "torch.concatenate")
        loops = {id(s.ctx.loop): s.ctx.loop for s in concats if s.ctx.loop is not None}
        for loop in loops.values():
            if model.is_training_loop(loop):
                continue
            grown = _grown_names(model, loop)
            if not grown:
                continue
            for site in model.facts.calls:
                if not (site.ctx.loop is not None and site.ctx.loop.within(loop)) or site.qualname is not None:
                    continue
                if any(a.keyword is not None and a.keyword.value in _CACHE_KEYWORDS for a in site.node.args):
                    continue
                if not self._is_decoder_call(model, site):
                    continue
                fed = self._fed_input(site)
                if fed is None or not _derived_from(model, fed, grown, site.ctx, site.order) or self._last_token(fed):
                    continue
                strong = any(a.keyword is not None and a.keyword.value == "input_ids" for a in site.node.args) or any(
                    a.value is not None and _pretrained(model, a.value)
                    for a in model.assignments(dotted_name(site.node.func) or "", site.ctx)
                )
                yield self.report(
                    site.node,
                    "each step feeds the whole growing sequence back to the model without a key/value cache: "
                    "decoding T tokens costs O(T²)",
                    severity=None if strong else Severity.INFO,
                )
                break

    def _is_decoder_call(self, model: FileModel, site: CallSite) -> bool:
        func = site.node.func
        if site.method == "forward" and site.receiver is not None:
            func = site.receiver
        if isinstance(func, cst.Name) and func.value == "self":
            info = site.ctx.function
            return any(b.startswith("torch.nn.") for b in _class_bases(model, info))
        return is_model(model, func, site.ctx, site.order) or bool(re.search(r"(^|_)(lm|llm|gpt|transformer)$", last_segment(dotted_name(func)), re.I))

    def _fed_input(self, site: CallSite) -> Optional[cst.BaseExpression]:
        arg = call_argument(site.node, "input_ids", 0)
        if arg is None:
            arg = call_argument(site.node, "idx", None)
        return arg.value if arg is not None else None

    def _last_token(self, expr: cst.BaseExpression) -> bool:
        """Only new tokens go in, the model keeps the rest: `ids[:, -1:]`, `ids[:, -1]`, or
        `tokens[:, prev_pos:cur_pos]` (a moving start). A window `ids[:, -block_size:]` is not."""
        if not isinstance(expr, cst.Subscript):
            return False
        for element in expr.slice:
            part = element.slice
            if isinstance(part, cst.Index) and _neg_one(part.value):
                return True
            if isinstance(part, cst.Slice) and part.lower is not None:
                lower = part.lower
                if _neg_one(lower) or not isinstance(lower, cst.UnaryOperation):
                    return True
        return False


def _neg_one(expr: cst.BaseExpression) -> bool:
    return (
        isinstance(expr, cst.UnaryOperation)
        and isinstance(expr.operator, cst.Minus)
        and isinstance(expr.expression, cst.Integer)
        and expr.expression.value == "1"
    )


def _pretrained(model: FileModel, value: cst.BaseExpression) -> bool:
    while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and value.func.attr.value in (
        "to", "cuda", "eval", "half", "float", "bfloat16"
    ):
        value = value.func.value
    return (
        isinstance(value, cst.Call)
        and isinstance(value.func, cst.Attribute)
        and value.func.attr.value == "from_pretrained"
        and not _NOT_A_NETWORK.search(dotted_name(value.func) or "")
    )
