"""GPU505 `data-parallel-or-find-unused-parameters`: `nn.DataParallel`, or DDP with `find_unused_parameters=True`."""

from __future__ import annotations
import re
from typing import Iterator, List, Optional
import libcst as cst
from advisor.findings import Severity
from advisor.model import CallSite, FileModel
from advisor.model.visible_devices import pinned_device_count
from advisor.model.frozen_modules import frozen_before
from advisor.model.handed_names import hands_to_training, stored_for_training
from advisor.model.file_model import Heat, call_argument, literal_bool
from advisor.model.calls import constructed_kinds
from advisor.model.names import dotted_name, last_segment, root_name
from advisor.rules.base import Report, Rule
from advisor.model.containers import kwargs_value
from advisor.model.cli_options import defaults_by_name
from advisor.model.launch_modes import every_run_one_visible_gpu, every_run_several_processes
from advisor.model.launched_options import never_launched
from advisor.model.literals import LITERALS, literal_values, sequence_lengths
from advisor.model.guards import conjuncts, guards_of, on_cpu_path
from advisor.model.subtree import iter_names


_DATA_PARALLEL = "torch.nn.parallel.DataParallel"
_LOSS_NAME = re.compile(r"criterion|loss", re.IGNORECASE)
_DDP = ("torch.nn.parallel.DistributedDataParallel", "torch.nn.parallel.distributed.DistributedDataParallel")


_FIND_UNUSED_OWNERS = frozenset({"DistributedDataParallel", "DistributedDataParallelKwargs", "DDPStrategy"})


# Attribute names that hold a run's GPU count.
_GPU_COUNTS = frozenset({"ngpu", "n_gpu", "n_gpus", "ngpus", "num_gpu", "num_gpus", "gpu_count", "nGPU"})


class DataParallelOrFindUnused(Rule):
    code = "GPU505"
    name = "data-parallel-or-find-unused-parameters"
    summary = "`nn.DataParallel`, or DDP with `find_unused_parameters=True`"
    what = """
        Two costly data-parallel settings. `nn.DataParallel(...)` (any spelling, the
        functional `data_parallel`, and the project's own subclasses of it, such as vendored
        sync-BatchNorm's `DataParallelWithCallback`; a criterion wrapped in one beside the model
        is the same choice and is not reported again, nor is a `torch.nn.DataParallel` over a
        criterion with layers of its own, `criterion = DataParallel(criterion)`, in the function
        that wraps the model or in another method of its class) is a warning; it is information when the script only
        runs inference (or the function that wraps the model keeps it and never trains, as a
        sampling method beside a training one, or the module was frozen parameter by parameter
        just before the wrap, as a moving-average copy is) or pins it to a single device (`device_ids=[0]`,
        also through a name or a parameter default that holds a one-item list, or
        `device_ids=range(args.ngpu)`, also `list(range(args.ngpu))`, over an option whose default is 1, or an option whose
        text default its `type` splits at commas into one id, `default="0"`, or a script that makes
        one GPU visible to itself with `os.environ["CUDA_VISIBLE_DEVICES"] = "0"` at the top, or
        with an option whose every shipped value is one id, `= args.gpu_id` with `default="1"`, or
        whose every shipped command line makes one GPU visible, `CUDA_VISIBLE_DEVICES=0 python
        train.py`, or `export CUDA_VISIBLE_DEVICES=0` before it). A factory
        (`def create_model(cfg): ...; return DataParallel(net)`) in a module that trains
        nothing is judged by its callers: a warning when a project function that trains calls it;
        so is a wrap handed to a project function of another module that trains it
        (`model = nn.DataParallel(model)`, then `model_training(args, data, model)`), or to an
        instance of a project class one of whose methods trains (an engine), also through a
        factory or two that hand it on (`build_engine(cfg, model)` returning `Engine(model)`),
        or stored on such an instance under an attribute its training method calls
        (`trainer.net = DataParallel(trainer.net).cuda()` where `Trainer.fit` calls `self.net(x)`
        and steps; a network it only evaluates stays information).
        A wrap bound to a name that is only ever called without autograd (under `no_grad`,
        or handed to functions of the project that call it so or hand it on to one that does:
        a sampler wrapped beside the trained model) is information too, and so is a wrap in one arm of a test whose other
        arm wraps in `DistributedDataParallel` (the script offers DDP already), unless the
        switch's default takes the DataParallel arm (`--distributed` as a `store_true` option)
        and some documented run may take it: where every command line the project shows for the
        script starts several processes (`torch.distributed.launch --nproc_per_node=8`, which
        passes `--local_rank` itself), the DDP arm is the one that runs.
        A wrap on the path taken only without a GPU (the `else` of `torch.cuda.is_available()`)
        is not reported: there it only calls the module. A wrap under a test of the GPU count
        that the count's every known value leaves false (`if self.ngpu > 1:` with `--ngpu`
        defaulting to 1, the DCGAN examples' branch, or `self.args.n_gpu` of a settings dataclass
        whose field defaults to 1, `n_gpu: int = 1`; a count attribute such as `self.ngpu` that
        another script also fills from a saved config is read by the name of the option that
        sets it; a count such as `n_gpu = torch.cuda.device_count()` where every command line
        the project ships for the script makes one GPU visible, `CUDA_VISIBLE_DEVICES=0 python
        run.py`) is information: it runs only when the user
        asks for more GPUs. So is a wrap in a branch the settings' defaults never take (`if
        args.arch.startswith("vgg"):` with `--arch` defaulting to `resnet50`, or `if
        cfg.multi_gpu:` where the project's settings module sets `multi_gpu = False` and nothing
        sets it again). A wrap under a
        switch the user turns on to use several GPUs (`if args.dp:` with `--dp` a `store_true`
        option) stays reported where a command the project ships passes it, or where the project
        shows no command line for the script: that is the run it is written for; where the
        project's commands pass other options of that parser but never this one, it is
        information. The switch may be
        computed in `main()` and read in the `main_worker(gpu, ngpus, args)` it calls or spawns
        (`args.distributed = args.world_size > 1 or args.multiprocessing_distributed`).
        `find_unused_parameters=True` given literally to `DistributedDataParallel`,
        Accelerate's `DistributedDataParallelKwargs` or Lightning's `DDPStrategy` (also
        through a kwargs dict) is information: sometimes the model needs it.
    """
    why = """
        `DataParallel` is one process driving every GPU: each forward pass copies the weights
        to all devices, scatters the batch, gathers the outputs on the first GPU, and all of it
        runs under one Python GIL. DDP runs a process per GPU and overlaps the gradient
        all-reduce with the backward pass; PyTorch recommends it even on a single machine.
        `find_unused_parameters=True` makes DDP walk the autograd graph after every forward to
        find parameters that will get no gradient: an extra traversal per iteration that only
        models with unused branches need.
    """
    example = """
        model = nn.DataParallel(model).cuda()
        ...
        model = DDP(model, device_ids=[rank], find_unused_parameters=True)
    """
    instead = """
        # torchrun --nproc_per_node=4 train.py
        dist.init_process_group("nccl")
        model = DDP(model.to(rank), device_ids=[rank])
    """
    hint = "use DistributedDataParallel (one process per GPU); set `find_unused_parameters` only if DDP asks for it"
    fix_safety = """
        No automatic fix. Moving from `DataParallel` to DDP changes how the script is launched
        (one process per GPU, `torchrun`) and how it loads data and saves checkpoints; removing
        `find_unused_parameters=True` makes DDP raise if the model really has unused parameters.
    """
    references = (
        (
            "CUDA semantics: use DistributedDataParallel instead of DataParallel",
            "https://docs.pytorch.org/docs/stable/notes/cuda.html#use-nn-parallel-distributeddataparallel-instead-of-multiprocessing-or-nn-dataparallel",
        ),
        ("torch.nn.DataParallel", "https://docs.pytorch.org/docs/stable/generated/torch.nn.DataParallel.html"),
        (
            "torch.nn.parallel.DistributedDataParallel (`find_unused_parameters`)",
            "https://docs.pytorch.org/docs/stable/generated/torch.nn.parallel.DistributedDataParallel.html",
        ),
        (
            "Performance Tuning Guide: use efficient data-parallel backend",
            "https://docs.pytorch.org/tutorials/recipes/recipes/tuning_guide.html#use-efficient-data-parallel-backend",
        ),
    )
    requires = (("DataParallel", "data_parallel", "find_unused_parameters"),)

    def check(self, model: FileModel) -> Iterator[Report]:
        inference_only: Optional[bool] = None
        sites = [*model.calls_to(_DATA_PARALLEL, "torch.nn.parallel.data_parallel", "torch.nn.parallel.data_parallel.data_parallel"),
                 *self._subclass_sites(model)]
        for site in sites:
            if self._criterion_beside_model(site, sites):
                continue  # `phoneCriterion = DataParallel(phoneCriterion)` after the model's own wrap
            if inference_only is None:
                inference_only = not any(model.is_training_loop(loop) for loop in model.facts.loops) and not (
                    model.method_calls("backward")
                )
            if on_cpu_path(model, site.ctx):
                continue  # `else: model = DataParallel(model)` when no GPU is there: it only calls the module
            position = 1 if site.qualname == _DATA_PARALLEL else 3 if site.qualname is not None and site.qualname.startswith("torch.") else None
            devices = call_argument(site.node, "device_ids", position)
            single = False
            if devices is not None:
                lengths = sequence_lengths(model, devices.value, site.ctx, site.order)
                single = lengths.complete and {value for _, value in lengths.values} == {1}
            # `os.environ["CUDA_VISIBLE_DEVICES"] = "0"` at the top: the run sees one GPU, and
            # DataParallel (when a `device_count() > 1` test builds it at all) only calls the module.
            single = single or pinned_device_count(model) == 1
            if single:
                yield self.report(
                    site.node,
                    "DataParallel over a single device only adds overhead: call the model directly",
                    severity=Severity.INFO,
                )
            elif every_run_one_visible_gpu(model):
                # `CUDA_VISIBLE_DEVICES=0 python train.py` in every shipped command: one device,
                # which DataParallel only calls.
                yield self.report(
                    site.node,
                    "DataParallel over the one GPU every shipped command makes visible only adds "
                    "overhead: call the model directly",
                    severity=Severity.INFO,
                )
            elif ((inference_only and not self._returned_to_training(model, site)
                   and not self._handed_to_training(model, site) and not stored_for_training(model, site))
                  or self._inference_function(model, site) or self._run_without_grad(model, site)
                  or self._frozen(model, site)):
                yield self.report(
                    site.node,
                    "DataParallel replicates the model on every forward call and gathers outputs on one "
                    "GPU; for inference, one process per GPU over a shard of the data scales better",
                    severity=Severity.INFO,
                )
            elif self._more_gpus_than_default(model, site):
                yield self.report(
                    site.node,
                    "DataParallel drives every GPU from one process, under a test of the GPU count that "
                    "its default (or the one GPU every shipped command makes visible) leaves false: "
                    "DistributedDataParallel is faster when it runs",
                    severity=Severity.INFO,
                )
            elif (switch := self._unlaunched_switch(model, site)) is not None:
                yield self.report(
                    site.node,
                    f"DataParallel drives every GPU from one process, under a switch no command the project "
                    f"ships turns on (`{switch}`): DistributedDataParallel is faster when a run turns it on",
                    severity=Severity.INFO,
                )
            elif model.guards.dead(site.ctx):
                yield self.report(
                    site.node,
                    "DataParallel drives every GPU from one process, in a branch the settings' defaults "
                    "never take: DistributedDataParallel is faster when a run takes it",
                    severity=Severity.INFO,
                )
            elif self._beside_ddp(model, site):
                yield self.report(
                    site.node,
                    "DataParallel drives every GPU from one process: the other arm of this test "
                    "already offers DistributedDataParallel, the faster choice on several GPUs",
                    severity=Severity.INFO,
                )
            else:
                yield self.report(
                    site.node,
                    "DataParallel drives every GPU from one process (weights copied each step, outputs "
                    "gathered on GPU 0): DistributedDataParallel is faster, even on one machine",
                )
        for qual, sites in model.facts.calls_by_qualname.items():
            if last_segment(qual) not in _FIND_UNUSED_OWNERS:
                continue
            for site in sites:
                arg = call_argument(site.node, "find_unused_parameters", 7 if last_segment(qual) == "DistributedDataParallel" else None)
                node: Optional[cst.CSTNode] = None
                if arg is not None:
                    if literal_bool(arg.value) is True:
                        node = arg
                else:
                    state, value = kwargs_value(model, site, "find_unused_parameters")
                    if state == "present" and value is not None and literal_bool(value) is True:
                        node = self._dict_element(model, site, value)
                if node is not None:
                    yield self.report(
                        node,
                        "`find_unused_parameters=True` makes DDP traverse the autograd graph after every "
                        "forward pass; keep it only if some parameters really get no gradient",
                        severity=Severity.INFO,
                    )

    @staticmethod
    def _subclass_sites(model: FileModel) -> List[CallSite]:
        """Constructions of the project's own subclasses of DataParallel (`BalancedDataParallel`,
        vendored sync-BatchNorm's `DataParallelWithCallback`): one process drives every GPU all
        the same."""
        # By name first: resolving every call of the file to its class would read the project.
        # A criterion wrapped beside the model (`DataParallelCriterion(self.criterion)`) is part
        # of the same choice, reported once at the model's wrapper.
        return [site for site in model.facts.calls
                if "Parallel" in last_segment(dotted_name(site.node.func) or "")
                and (site.qualname is None or not site.qualname.startswith("torch."))
                and not (site.node.args and _LOSS_NAME.search(last_segment(dotted_name(site.node.args[0].value) or "")))
                and "data_parallel" in constructed_kinds(model, site.node)]

    @staticmethod
    def _criterion_beside_model(site: CallSite, sites: List[CallSite]) -> bool:
        """A criterion with layers of its own wrapped in the same function as the model
        (`featureMaker = DataParallel(featureMaker)`, then `phoneCriterion =
        DataParallel(phoneCriterion)`), or in another method of the trainer class that wraps
        the model (`define_model` and `define_criterion`): the same choice, reported once at
        the model's wrap."""
        wrapped = call_argument(site.node, "module", 0)
        if wrapped is None or not _LOSS_NAME.search(last_segment(_wrapped_name(wrapped.value) or "")):
            return False
        function = site.ctx.function
        return any(
            other is not site
            and (other.ctx.function is function or (
                function is not None and function.class_scope is not None and other.ctx.function is not None
                and other.ctx.function.class_scope == function.class_scope))
            and (argument := call_argument(other.node, "module", 0)) is not None
            and not _LOSS_NAME.search(last_segment(_wrapped_name(argument.value) or ""))
            for other in sites
        )

    @staticmethod
    def _frozen(model: FileModel, site: CallSite) -> bool:
        """The module wrapped had every parameter frozen just before, in the same function (a
        moving-average copy of a generator, `for p in self.avgG.parameters(): p.requires_grad =
        False`): nothing trains the wrap."""
        wrapped = call_argument(site.node, "module", 0)
        return wrapped is not None and frozen_before(model, dotted_name(wrapped.value), site.ctx, site.order)

    def _inference_function(self, model: FileModel, site: CallSite) -> bool:
        """The wrapper is made for a function that never trains and keeps it to itself: bound
        to a local name, not returned (`def sample(self): model = DataParallel(model); ...`),
        while another function of the file trains another model."""
        info = site.ctx.function
        target = site.assigned_to
        if info is None or info.node.name.value == "__init__" or target is None or "." in target:
            return False
        # An evaluation the training loop runs every few hundred steps (GATED) is still one.
        if model.trains(info) or model.has_training_loop(info) or model.heat_of(info) is Heat.HOT:
            return False
        return not any(target in iter_names(value) for value in info.returns)

    def _run_without_grad(self, model: FileModel, site: CallSite) -> bool:
        """The wrapper is bound to a local name that is only ever called without autograd: under
        `no_grad` where it is called, or handed to functions of the file that call it so (a
        sampler wrapped beside the trained model, used for periodic samples and evaluation)."""
        target, info = site.assigned_to or _bound_through_moves(model, site), site.ctx.function
        if target is None or "." in target:
            return False
        # The calls of its own body (no scan of the file per wrap), or of the module's top level
        # for a wrap in the `__main__` block.
        body = info.sites if info is not None else model.shared("module-level-calls", _module_level_calls)
        if info is None and any(_reads_global(model, s, target) for s in model.facts.calls):
            return False  # a global the file's functions read (`train_epoch()` calls `model(x)`)
        uses = 0
        for call in body:
            if call.order <= site.order or call.qualname == site.qualname:
                continue  # before the wrap, or the wrap of another arm (`elif arch == "densenet":`)
            if dotted_name(call.node.func) == target:
                if not call.ctx.no_grad:
                    return False
                uses += 1
                continue
            for position, arg in enumerate(call.node.args):
                if dotted_name(arg.value) != target:
                    continue
                if arg.keyword is not None or arg.star or not self._calls_without_grad(model, call, position):
                    return False
                uses += 1
        return uses > 0

    @classmethod
    def _calls_without_grad(cls, model: FileModel, call: CallSite, position: int, depth: int = 0) -> bool:
        """Every function of the project ``call`` runs (`eval_utils.eval_split(dp_model, ...)`)
        calls its parameter at ``position`` only without autograd, and uses it no other way."""
        targets = model.calls.targets(call)
        if not targets:
            return False
        for owner, callee in targets:
            if callee.class_name is not None or position >= len(callee.params):
                return False
            param = callee.params[position]
            used = [s for s in callee.sites if (
                dotted_name(s.node.func) == param or any(dotted_name(a.value) == param for a in s.node.args))]
            if not used:
                # Only its methods are called (`load_checkpoint(path, model)` runs
                # `model.load_state_dict(...)`): no forward there, with autograd or without.
                continue
            for s in used:
                if dotted_name(s.node.func) == param:
                    if not s.ctx.no_grad:
                        return False
                    continue
                # handed on (`eval_split_n(model, ...)`): that function must use it so too
                spots = [i for i, a in enumerate(s.node.args) if dotted_name(a.value) == param]
                if depth >= 2 or any(s.node.args[i].keyword is not None or s.node.args[i].star for i in spots) or not all(
                        cls._calls_without_grad(owner, s, i, depth + 1) for i in spots):
                    return False
        return True

    @staticmethod
    def _unlaunched_switch(model: FileModel, site: CallSite) -> Optional[str]:
        """The option of a switch the wrap runs under (`if self.args.use_multi_gpu and
        self.args.use_gpu:`, `--use_multi_gpu` a `store_true` option) when its default is off and
        the project documents its runs (some shipped command passes another option of that
        parser) without ever passing it: the multi-GPU mode exists, but no documented run uses it."""
        for guard in guards_of(site.ctx):
            if not guard.positive or guard.exits:
                continue
            for test in conjuncts(guard.test):
                name = dotted_name(test) if type(test) is cst.Attribute else None
                if name is None:
                    continue
                attr = last_segment(name)
                found = defaults_by_name(model, attr, LITERALS)
                if (found is not None and found.complete and found.values
                        and not any(value for _, value in found.values)
                        and never_launched(model, "--" + attr)):
                    return "--" + attr
        return None

    @staticmethod
    def _more_gpus_than_default(model: FileModel, site: CallSite) -> bool:
        """Under `if input.is_cuda and self.ngpu > 1:` where the count's every known value (an
        option's default of 1) leaves the test false: the DCGAN examples' multi-GPU branch."""
        for guard in guards_of(site.ctx):
            if not guard.positive or guard.exits:
                continue
            for test in conjuncts(guard.test):
                if type(test) is not cst.Comparison or len(test.comparisons) != 1:
                    continue
                operator, bound = type(test.comparisons[0].operator), test.comparisons[0].comparator
                if type(bound) is not cst.Integer or not (
                    (operator is cst.GreaterThan and bound.value == "1") or (operator is cst.GreaterThanEqual and bound.value == "2")
                ):
                    continue
                found = literal_values(model, test.left, guard.ctx, guard.order + 0.5)
                if not found.complete and last_segment(dotted_name(test.left)) in _GPU_COUNTS:
                    # `self.ngpu` of a model a generation script also builds from a saved
                    # config: the count by the name of the option that sets it for training.
                    found = defaults_by_name(model, last_segment(dotted_name(test.left)), LITERALS) or found
                if found.complete and found.values and all(
                    isinstance(value, int) and not isinstance(value, bool) and value <= 1 for _, value in found.values
                ):
                    return True
                counted = (last_segment(dotted_name(test.left)) in _GPU_COUNTS
                           or (type(test.left) is cst.Call and model.imports.qualify(test.left.func) == "torch.cuda.device_count"))
                if counted and every_run_one_visible_gpu(model):
                    # `n_gpu = torch.cuda.device_count()` where every shipped command line makes
                    # one GPU visible (`CUDA_VISIBLE_DEVICES=0 python run.py`): the count is 1.
                    return True
        return False

    @staticmethod
    def _beside_ddp(model: FileModel, site: CallSite) -> bool:
        """The wrap sits in one arm of an `if` whose other arm wraps in DDP (`if
        args.distributed: DDP(...) else: DataParallel(...)`): the script offers DDP already."""
        around = guards_of(site.ctx)
        if not around:
            return False
        for qual in _DDP:
            for other in model.calls_to(qual):
                for guard in guards_of(other.ctx):
                    for mine in around:
                        if mine.test is guard.test and mine.positive != guard.positive:
                            # Unless the switch's default takes this arm (`--distributed` a
                            # `store_true` option): then DataParallel is what a plain run gets.
                            found = literal_values(model, mine.test, mine.ctx, mine.order + 0.5)
                            default_here = found.complete and bool(found.values) and all(
                                bool(value) == mine.positive for _, value in found.values)
                            # Unless every documented run starts several processes (`python -m
                            # torch.distributed.launch --nproc_per_node=8 run.py`, which passes
                            # `--local_rank` itself): they take the DDP arm.
                            return not default_here or every_run_several_processes(model)
        return False

    @staticmethod
    def _handed_to_training(model: FileModel, site: CallSite) -> bool:
        """The wrapper is handed, later in the same function, to project code that trains it
        (`model = nn.DataParallel(model)`, then `model_training(args, data, model, ...)` of
        another module, or `build_engine(cfg, model)` building an engine whose methods train)."""
        target = site.assigned_to
        return target is not None and hands_to_training(model, site, target)

    def _returned_to_training(self, model: FileModel, site: CallSite) -> bool:
        """A factory of a file that trains nothing returns the wrapper to a caller that trains."""
        info = site.ctx.function
        if info is None:
            return False
        target = site.assigned_to
        returned = any(
            value is site.node or (target is not None and "." not in target and target in iter_names(value))
            for value in info.returns
        )
        return returned and model.result_trained(info)

    def _dict_element(self, model: FileModel, site: CallSite, value: cst.BaseExpression) -> cst.CSTNode:
        """The `"find_unused_parameters": True` entry (or `find_unused_parameters=True` keyword) holding ``value``."""
        for arg in site.node.args:
            if arg.star != "**":
                continue
            candidates: List[cst.BaseExpression] = [arg.value]
            name = dotted_name(arg.value)
            if name is not None:
                candidates.extend(a.value for a in model.assignments(name, site.ctx) if a.value is not None)
            for holder in candidates:
                if type(holder) is cst.Dict:
                    for element in holder.elements:
                        if type(element) is cst.DictElement and element.value is value:
                            return element
                if type(holder) is cst.Call:
                    for a in holder.args:
                        if a.value is value:
                            return a
        return site.node


def _wrapped_name(expr: cst.BaseExpression):
    """The name a wrapped module goes by: `self.mask_loss_fn`, or the class it is made from
    (`loss_utils.TextureLoss().cuda()`: `loss_utils.TextureLoss`), unless that class is handed a
    name (`LossWrapper(model)`: the model with its loss, the module trained)."""
    while type(expr) is cst.Call:
        func = expr.func
        if type(func) is cst.Attribute and func.attr.value in ("cuda", "to", "float", "half"):
            expr = func.value  # `.cuda()`, `.to(device)`: the same module
        elif any(type(arg.value) is cst.Name for arg in expr.args):
            return None
        else:
            expr = func  # the constructor
    return dotted_name(expr)


def _bound_through_moves(model: FileModel, site: CallSite) -> Optional[str]:
    """`teacher = nn.DataParallel(teacher).cuda()`: the name the wrap is bound to through the
    moves and mode switches chained on it."""
    statement = model.statement_of.get(id(site.node))
    if type(statement) is not cst.SimpleStatementLine or len(statement.body) != 1:
        return None
    assign = statement.body[0]
    if type(assign) is not cst.Assign or len(assign.targets) != 1 or type(assign.targets[0].target) is not cst.Name:
        return None
    value = assign.value
    while type(value) is cst.Call and value is not site.node:
        func = value.func
        if type(func) is not cst.Attribute or func.attr.value not in ("cuda", "to", "train", "eval", "float", "half"):
            return None
        value = func.value
    return assign.targets[0].target.value if value is site.node else None


def _module_level_calls(model: FileModel) -> List[CallSite]:
    return [s for s in model.facts.calls if s.ctx.function is None]


def _reads_global(model: FileModel, site: CallSite, name: str) -> bool:
    """The call, in a function, calls or hands on the module-level ``name`` (not a parameter or
    a local of that function)."""
    if site.ctx.function is None:
        return False
    if root_name(site.node.func) != name and not any(root_name(a.value) == name for a in site.node.args):
        return False
    reach = model.bindings.reaching(name, site.ctx, site.order)
    return reach.parameter is None and not any(a.ctx.function is site.ctx.function for a in reach.assignments)
