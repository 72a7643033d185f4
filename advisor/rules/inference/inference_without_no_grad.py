"""GPU601 `inference-without-no-grad`: model called in an evaluation or inference loop with autograd on."""

from __future__ import annotations
from typing import Iterator, Optional, Set
import libcst as cst
from advisor.findings import Applicability, Fixable, Severity
from advisor.model.legacy_autograd import written_for_torch_03
from advisor.model import FileModel, LoopInfo
from advisor.model.guards import single_pass
from advisor.model.framework_steps import runs_per_batch
from advisor.model.loaders import loaders_iterated
from advisor.model.graphs import fresh_tensor
from advisor.model.grad_free_methods import runs_without_grad
from advisor.model.module_layers import parameter_free
from advisor.model.tensors import is_python_value
from advisor.model.literals import literal_values
from advisor.model.frozen_modules import built_frozen
from advisor.model.input_gradients import asks_input_gradients
from advisor.rules.base import FixSpec, NodeEdit, Report, Rule, snippet
from advisor.rules.inference.model_calls import TORCH_TEXT, first_per, marker_sites, feeds_training, framework_owned, grad_disabled, model_calls, torch_file, unpickled


def _input_grads(model: FileModel) -> bool:
    """The file asks for input gradients or freezes the weights: `x.requires_grad_()`,
    `p.requires_grad = False`, `torch.autograd.grad`: autograd is used on purpose, or records nothing."""
    if model.method_calls("requires_grad_") or model.calls_to("torch.autograd.grad"):
        return True
    return any(target.endswith(".requires_grad") for _, target in model.facts.assignments)


def _records_nothing(model: FileModel, site) -> bool:
    """A project module with no parameter, called on new tensors that do not require grad (a
    factory's, or a DataLoader's batches) or on plain Python values (text to encode); or a
    model whose method turns autograd off itself (a `forward` under `with torch.no_grad():`)."""
    if runs_without_grad(model, site.node, site.ctx, site.order):
        return True
    args = site.node.args
    return (
        bool(args)
        and all(
            not a.star and (fresh_tensor(model, a.value, site.ctx, site.order)
                            or is_python_value(model, a.value, site.ctx, site.order))
            for a in args
        )
        and parameter_free(model, site.node.func, site.ctx, site.order)
    )


# A loop over `range(k)` with k at most this: a handful of calls, whose graphs are dropped as
# the next iteration rebinds their outputs (a visual check of a few samples).
FEW = 16


def _few_iterations(model: FileModel, loop: Optional[LoopInfo]) -> bool:
    node = loop.node if loop is not None else None
    if not type(node) is cst.For:
        return False
    call = node.iter
    if type(call) is cst.Name:
        # `time_stamps = range(90, 100)` a few lines up, then `for t in time_stamps:`
        found = model.reaching(call.value, loop.ctx, model.order_of(node))
        call = found[0].value if len(found) == 1 and found[0].index is None else None
    if not type(call) is cst.Call:
        return False
    if not (type(call.func) is cst.Name and call.func.value == "range") or not 1 <= len(call.args) <= 2:
        return False
    values = []
    for arg in call.args:
        # `range(args.warmup)`: an option whose default is a handful (a benchmark's warm-up).
        ints = literal_values(model, arg.value, loop.ctx, model.order_of(node)).ints()
        if ints is None:
            return False
        values.append(ints)
    return (values[-1][-1] - (values[0][0] if len(values) == 2 else 0)) <= FEW


class InferenceWithoutNoGrad(Rule):
    code = "GPU601"
    name = "inference-without-no-grad"
    summary = "model called in an evaluation or inference loop with autograd on"
    what = """
        A call of a model (a name bound to an `nn.Module` or DDP model, or called `model`,
        `net`, `self.model`, `*_model`, ...; not a name every binding of which another library
        made, `SPACY_MODEL = spacy.load(...)`, nor one that holds only instances of plain project
        classes whose call runs no model, `trt_model = TensorRTModel(path)`) inside a loop that never runs `backward()` or an
        optimizer step, when neither the loop's `with` blocks, nor its function's decorator,
        nor every path of calls in the file to its function (up to three calls up), nor every call of it (up to four calls up)
        in the project (a `@torch.no_grad()` validation in another module; for a method nothing
        resolves, every call of a method of that name near the file, `policy.predict_action(obs)`
        on a policy a config built), turns autograd off with
        `torch.no_grad()` or `torch.inference_mode()` (also entered by hand for the rest of the
        block: `torch.no_grad().__enter__()`, `torch.set_grad_enabled(False)` as a statement,
        until `torch.enable_grad().__enter__()` or `torch.set_grad_enabled(True)` turns it back on).
        Loops whose outputs may still be
        backpropagated (inside the per-step training code, a loop over heads or scales with no
        loader or environment in it inside a training loop, or before a `backward()` in the
        same function), code that asks for input gradients (`torch.autograd.grad`,
        `requires_grad_()`), `model.generate(...)` (already gradient-free), a model's own
        `forward` and the layer helpers it calls (`tp_scatter(fc_layers, ...)` looping over edge
        groups, or the methods of a plain object the module holds, a rollout encoder's
        `imagine_future`: its callers decide whether autograd is on), a project module that holds no parameter (no layer with weights, no
        `nn.Parameter`; array helpers such as `librosa` may fill its buffers) called on tensors
        just made by a torch factory without `requires_grad` or on a DataLoader's batches
        (nothing to record), a project model whose code asks autograd for gradients of its
        input (`torch.autograd.grad` or `requires_grad_()` in its `forward` or a few calls down:
        surface normals, a gradient penalty), a project model whose called method turns autograd off itself (its
        body under `with torch.no_grad():` or decorated, or only dispatching to such methods),
        a project model built frozen (its `__init__` sets `requires_grad` of every parameter to
        False, or to a parameter whose default is False that no construction changes: an
        Inception feature extractor), and Lightning or Hugging Face Trainer hooks are left alone. Information when
        the function has no caller in the file, when the model was unpickled whole
        (`pickle.load(f)`, or a module saved whole and read back with `torch.load`, through
        `checkpoint["encoder"]`: its parameters keep the `requires_grad` they were saved with,
        often off), when the loop runs a handful of times (`range(10)`, or `range(args.warmup)` with a
        default of 10: each graph is dropped as the next iteration rebinds the output) or once (its body ends with a `break`), or when nothing in the file or the project files
        around it puts a tensor on a GPU (no CUDA, no device, no `.to(...)`: the graphs cost host
        memory only), or when the model is given `Variable(x, volatile=True)` (how PyTorch 0.3,
        which such code targets, turned autograd off; 0.4 and later ignore the flag), in a file written
        for 0.3 (`loss.data[0]` read as a number, no `.item()`, no `no_grad`; `out.data[0].numpy()`
        takes a row in any torch, and says nothing), or in a file that shows neither
        whose nearest folder that shows either is written so (an evaluation script beside a 0.3
        training script, in a repository that keeps later 0.4 experiments in other folders).
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
    fixable = Fixable.SOMETIMES_UNSAFE
    fix_safety = """
        The fix decorates the function that holds the loop with `@torch.no_grad()`. Always
        offered as unsafe: autograd is then off for the whole function and everything it calls,
        so code there that needs gradients (a training step called from it, saliency maps, input
        gradients) stops working, and tensors it returns carry no graph.

        Not offered for a loop at module level (there is no function to decorate), in an `async`
        function (`no_grad` does not follow its awaits), when torch is imported under another name
        or only inside a function or under `if`/`try` (the decorator is evaluated at module level,
        where `torch` must already exist), or for a second finding in a function that already got
        the decorator.
    """
    references = (
        (
            "Performance Tuning Guide: disable gradient calculation for validation or inference",
            "https://docs.pytorch.org/tutorials/recipes/recipes/tuning_guide.html#disable-gradient-calculation-for-validation-or-inference",
        ),
        (
            "Autograd mechanics: locally disabling gradient computation",
            "https://docs.pytorch.org/docs/stable/notes/autograd.html#locally-disabling-gradient-computation",
        ),
        ("torch.no_grad", "https://docs.pytorch.org/docs/stable/generated/torch.no_grad.html"),
        (
            "torch.autograd.grad_mode.inference_mode",
            "https://docs.pytorch.org/docs/stable/generated/torch.autograd.grad_mode.inference_mode.html",
        ),
    )
    requires = (TORCH_TEXT, ("model", "net", "Model", "Net", "torch", "encoder", "decoder", "classifier", "backbone"))

    def check(self, model: FileModel) -> Iterator[Report]:
        if not torch_file(model) or _input_grads(model):
            return
        markers = marker_sites(model)
        candidates = [s for s in model_calls(model) if s.ctx.loop is not None and not _records_nothing(model, s)
                      and not asks_input_gradients(model, s)
                      and not built_frozen(model, s.node.func, s.ctx, s.order)]
        fixed: Set[int] = set()
        for site in first_per(candidates, lambda s: id(s.ctx.loop)):
            info = site.ctx.function
            if framework_owned(model, info) or feeds_training(model, site, markers):
                continue
            if _inside_a_step(model, site.ctx.loop):
                continue  # `for s in range(scales): losses.append(D(s, x))` in a training step
            if info is not None and runs_per_batch(model, info):
                # A layer helper a module's forward calls, or a method of a plain helper object
                # a module holds (a rollout encoder's `imagine_future`): its callers decide autograd.
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
                and model.binds_module_at_top("torch")  # the decorator runs at module level
                and not model.function_trains(info.key)  # no_grad over its training loop would stop training
            ):
                fixed.add(id(info))
                fix = FixSpec(
                    f"decorate `{info.node.name.value}` with `@torch.no_grad()`",
                    (NodeEdit(info.node, "@torch.no_grad()", "line_before"),),
                    Applicability.UNSAFE,
                )
            # A project file whose tensors never leave the CPU (no CUDA, no device, no move, here
            # or in the files around it) pays in host memory, not in the GPU memory this rule is about.
            unsure = (
                disabled is None or unpickled(model, site.node.func, site.ctx) or _few_iterations(model, site.ctx.loop)
                or single_pass(model, site.ctx.loop)  # `for batch in loader: model(batch); break`
                or (model.project is not None and not model.may_use_gpu)
                # `Variable(x, volatile=True)`: how PyTorch 0.3, which such code targets, turned
                # autograd off (0.4 and later ignore it)
                or _volatile_inputs(model, site)
            )
            yield self.report(
                site.node,
                "`{expression}` runs in a loop that never trains, with autograd on: every "
                "call records a graph and keeps its activations",
                severity=Severity.INFO if unsure else None,
                fix=fix,
                data={"expression": snippet(model, site.node)},
            )


def _inside_a_step(model: FileModel, loop) -> bool:
    """The loop goes over no loader and sits in the body of a training loop (a loop over
    discriminator scales or classifier heads whose losses the step backpropagates after it):
    part of a training step, not a loop that never trains. An evaluation pass over a loader in
    the epoch loop is still one, and so is an environment rollout in the episode loop."""
    if loop.over_loader or loop.env_step or loaders_iterated(model, loop)[0] or model.is_training_loop(loop):
        return False  # a pass over batches, an RL rollout: what runs there is no training step's
    if model.guards.periodic(loop.ctx):
        return False  # `if step % 500 == 0: for _ in range(200): model(idx)`: sampling now and then
    outer = loop.parent
    while outer is not None:
        if model.is_training_loop(outer):
            return True
        outer = outer.parent
    return False


def _volatile_inputs(model: FileModel, site) -> bool:
    """An argument of the call is `Variable(..., volatile=True)`, or a name bound to one in the
    loop (`inputs = Variable(inputs.cuda(), volatile=True)`), in a file written for PyTorch 0.3:
    it reads scalars as `loss.data[0]`, and neither tests the torch version nor uses `no_grad`
    or `.item()` (any of which says it runs on 0.4 and later too, where the flag does nothing);
    or, in a file that shows neither, in a project written so (`legacy_autograd.py`)."""
    if not written_for_torch_03(model):
        return False  # written for torch 0.4 and later too, where the flag does nothing
    for arg in site.node.args:
        values = [arg.value]
        if type(arg.value) is cst.Name:
            values = [_element(a) for a in model.bindings.reaching(arg.value.value, site.ctx, site.order).assignments
                      if a.value is not None]
        if any(_volatile(model, value) for value in values):
            return True
    return False


def _element(assignment) -> cst.BaseExpression:
    """The value a binding gives its name: the element of a tuple unpacked in parallel
    (`data, target = Variable(data, volatile=True), Variable(target)`)."""
    value = assignment.value
    if assignment.index is not None and type(value) is cst.Tuple and assignment.index < len(value.elements):
        element = value.elements[assignment.index]
        if type(element) is cst.Element:
            return element.value
    return value


def _volatile(model: FileModel, value: cst.BaseExpression) -> bool:
    # `Variable(v, volatile=True).cuda()`: through the method chain
    while (type(value) is cst.Call and type(value.func) is cst.Attribute
           and model.imports.qualify(value.func) is None):
        value = value.func.value
    return (type(value) is cst.Call and model.imports.qualify(value.func) in ("torch.autograd.Variable",
                                                                             "torch.autograd.variable.Variable")
            and any(a.keyword is not None and a.keyword.value == "volatile"
                    and type(a.value) is cst.Name and a.value.value == "True" for a in value.args))
