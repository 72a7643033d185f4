"""The per-file model: the recorded facts plus the questions every rule asks of them.

Answers are computed on first use and memoised, so a rule that never asks costs nothing.
"""

from __future__ import annotations

import enum
import os
import re
from typing import Dict, List, Optional, Set, Tuple

import libcst as cst

from advisor.config import DEFAULT_TORCH_VERSION
from advisor.model import open_questions
from advisor.model.subtree import node_ids, reads_any
from advisor.model.version_gates import never_runs
from advisor.model.builder import ModelBuilder
from advisor.project.layout import vendored
from advisor.model.facts import (
    MODULE_SCOPE,
    Assignment,
    CallSite,
    Context,
    Facts,
    FunctionInfo,
    LoopInfo,
)

from advisor.model.bindings import Bindings
from advisor.model.containers import kwargs_entry
from advisor.model.framework_steps import branch_untaken, forward_path, inference_branch, is_framework_step, untaken_by
from advisor.model.calls import CallGraph, class_kinds
from advisor.model.generators import advanced_at
from advisor.model.devices import HOST, device_kind, may_move_to_device, on_host_by_config
from advisor.model.guards import GuardKinds, on_cpu_path, runs_once
from advisor.model.instances import INSTANCES
from advisor.model.kinds import KINDS
from advisor.model.loaders import loader_calls
from advisor.model.configurable import configured_argument
from advisor.model.short_loops import short_probe
from advisor.model.self_tests import self_test_nodes
from advisor.model.tensors import is_tensor
from advisor.model.value_flow import ValueFlow, argument, main_block
from advisor.model.vocabulary import CUDA_TEXT
from advisor.model.alternatives import in_handler

# Folders of a library's usage examples (model/file_model.py, `_examples_folder`).
_EXAMPLES_FOLDER = re.compile(r"example|demo|tutorial", re.I)
from advisor.model.names import (
    GRAD_SCALER,
    LIBRARY_LOSS_SCALERS,
    ImportTable,
    dotted_name,
)


class Heat(enum.Enum):
    """How often a statement runs relative to optimizer steps."""

    HOT = "hot"  # every step
    GATED = "gated"  # every step, but under a periodic or rank-0 condition, or cheap (no GPU)


# Top-level packages whose calls never run a function of the project.
# Top-level packages of other deep-learning frameworks (see `FileModel.other_framework`).
OTHER_FRAMEWORKS = ("mxnet", "tensorflow", "jax", "flax", "paddle", "mindspore", "oneflow", "keras", "chainer")
_NOT_PROJECT = frozenset({"torch", "numpy", "os", "sys", "math", "time", "logging", "builtins"})

# Methods only modules have (optimizers share zero_grad/state_dict, which is harmless here).
_MODULE_METHODS = (
    "parameters", "named_parameters", "modules", "named_modules", "children", "eval", "train",
    "load_state_dict", "register_forward_hook", "requires_grad_",
)


# A framework trainer that puts the model on the run's GPU by itself (Hugging Face's `Trainer`,
# Accelerate's `Accelerator`): a project that trains through one runs its modules on the GPU
# though no file names CUDA. Not Lightning's: its older versions train on the CPU unless told.
_PLACING_TRAINER = re.compile(
    r"from[ \t]+(?:transformers|accelerate)(?:\.\w+)*[ \t]+import[ \t]+(?:\([^)]*|[^\n]*)"
    r"\b(?:Trainer|Seq2SeqTrainer|Accelerator)\b")
_CUDA_DEFAULT = re.compile(r"""set_default_tensor_type\(\s*["']?torch\.cuda\.|set_default_device\(\s*["']cuda""")

# Names of loss-scaler classes (`NativeScaler`, `NativeScalerWithGradNormCount`, `LossScaler`,
# `DynamicLossScaler`): not sklearn's feature scalers.
_LOSS_SCALER_NAME = re.compile(r"(Native|Loss|Grad|Amp|Apex)\w*Scaler")

# Libraries a script reads its command line with: a `test_*.py` using one is a script to run.
_COMMAND_LINE_READERS = ("argparse", "click", "fire", "hydra", "absl", "typer", "docopt", "tyro", "jsonargparse",
                         "configargparse", "simple_parsing", "omegaconf")


class FileModel:
    def __init__(
        self,
        module: cst.Module,
        facts: Facts,
        imports: ImportTable,
        path: str = "",
        torch_version: Tuple[int, int] = DEFAULT_TORCH_VERSION,
    ) -> None:
        self.module = module
        self.facts = facts
        # node id -> innermost statement, statement id -> its top-level statement (the walk's
        # index; lambda bodies, which the walk skips, are not in it)
        self.statement_of: Dict[int, Optional[cst.CSTNode]] = {}
        self.top_of: Dict[int, cst.CSTNode] = {}
        self.statement_orders: Dict[int, int] = {}
        self.imports = imports
        self.path = path
        self.torch_version = torch_version  # the oldest torch the project supports (configuration)
        self._methods: Optional[Dict[str, List[FunctionInfo]]] = None
        self._module_names: Optional[Set[str]] = None
        self.bindings = Bindings(facts)
        self.project = None  # the ProjectView the file is checked in, if any (advisor/project)
        self.real_path: Optional[str] = None
        self.text: Optional[str] = None  # the text it was built from (set by the engine)
        self.chunked = None  # its ChunkedModule, for positions (set by the engine)
        # The text it was parsed from when ``text`` is Python 2 or 3.6-era source read in today's
        # spelling (advisor/old_syntax.py); positions count in it, and no fix is offered.
        self.lifted_text: Optional[str] = None
        self.forget_answers()

    def forget_answers(self) -> None:
        """Drops every memoised answer that may depend on other files (one of them changed)."""
        self._trains: Dict[int, bool] = {}
        self._steps: Dict[int, bool] = {}
        self._strict_steps: Dict[int, bool] = {}
        self._has_training_loop: Dict[int, bool] = {}
        self._loop_training: Dict[int, bool] = {}
        self._loop_hot: Dict[int, bool] = {}
        self._loop_runs: Dict[int, bool] = {}
        self._function_heat: Dict[int, Optional[Heat]] = {}
        self._may_use_gpu: Optional[bool] = None  # it reads the texts of the project files around it
        self._shared: Dict[str, object] = {}
        self.values = ValueFlow(self)
        self.calls = CallGraph(self)
        self.guards = GuardKinds(self)

    @classmethod
    def build(
        cls, module: cst.Module, path: str = "", torch_version: Tuple[int, int] = DEFAULT_TORCH_VERSION,
        reexports=None,
    ) -> "FileModel":
        """``reexports``: the project's answer for names imported from its modules that re-import
        them from a library (`ImportTable.reexports`), in place before the walk qualifies names."""
        builder = ModelBuilder()
        builder.imports.reexports = reexports
        builder.walk(module)
        model = cls(module, builder.facts, builder.imports, path, torch_version)
        model.statement_of, model.top_of = builder.statement_of or {}, builder.top_of
        model.statement_orders = builder.statement_orders
        return model

    def order_of(self, node: cst.CSTNode) -> float:
        """The source order a node reads its names at: as its innermost statement starts (a
        node the walk did not index, inside a lambda, reads at the end of the file)."""
        statement = self.statement_of.get(id(node))
        order = self.statement_orders.get(id(statement)) if statement is not None else None
        return (1 << 30) if order is None else order + 0.5

    def configured_argument(self, question, info: FunctionInfo, name: str):
        """What a parameter of a detectron2 `@configurable` `__init__` holds (model/configurable.py)."""
        return configured_argument(self, question, info, name)

    def shared(self, key: str, compute):
        """A fact a family of rules derives from the model, computed once per file."""
        if key not in self._shared:
            self._shared[key] = compute(self)
        return self._shared[key]

    # -- plain lookups ----------------------------------------------------------------------
    def calls_to(self, *qualnames: str) -> List[CallSite]:
        out: List[CallSite] = []
        for name in qualnames:
            out.extend(self.facts.calls_by_qualname.get(name, ()))
        return out

    def method_calls(self, *methods: str) -> List[CallSite]:
        out: List[CallSite] = []
        for name in methods:
            out.extend(self.facts.calls_by_method.get(name, ()))
        return out

    def loader_site(self, call: cst.Call) -> Optional[CallSite]:
        """The recorded site of a `DataLoader(...)` call node, or of a loader factory's call."""
        sites = self._shared.get("loader-sites")
        if sites is None:
            sites = self._shared["loader-sites"] = {id(s.node): s for s in loader_calls(self)}
        return sites.get(id(call))

    def site_of(self, call: cst.Call) -> Optional[CallSite]:
        """The recorded site of a call node (None inside a lambda, which the walk skips)."""
        sites = self._shared.get("call-sites")
        if sites is None:
            sites = self._shared["call-sites"] = {id(s.node): s for s in self.facts.calls}
        return sites.get(id(call))

    def unreachable(self, node: cst.CSTNode) -> bool:
        """The node sits in code no run reaches: after a jump out of its block (`return` as the
        first statement of a function switched off by hand), or under `if 0:`. The engine leaves
        out what is reported there; a loop there takes nothing from a loader either."""
        if not self.facts.dead_blocks and not self.facts.version_gates:
            return False
        return id(node) in self.shared("unreachable-ids", _unreachable_ids)

    def dead_blocks(self) -> List[object]:
        """The blocks no run reaches: switched off by hand (`if 0:`), after a jump out of their
        block, replaced definitions, and fallbacks for a torch older than the project supports
        (`if torch.__version__ < "1.2":`, version_gates.py)."""
        blocks = list(self.facts.dead_blocks)
        blocks += [block for block, version, inclusive in self.facts.version_gates
                   if never_runs(version, inclusive, self.torch_version)]
        return blocks

    def code(self, node: cst.CSTNode) -> str:
        return self.module.code_for_node(node)

    @property
    def uses_cuda(self) -> bool:
        return self.facts.uses_cuda

    @property
    def may_use_gpu(self) -> bool:
        """False for a whole script (it imports torch) with no sign that tensors leave the CPU (or
        a Hydra script whose config puts them on the host, model/hydra_configs.py, or a file whose
        every device is the CPU, `device = torch.device("cpu")`): no
        CUDA, no `.to(...)` move, no `device` name, no framework that places tensors, in the file
        or in the project files around it (a loss module gets its tensors from train.py). There a
        sync costs next to nothing. Fragments that do not import torch get the benefit of the
        doubt."""
        if self._may_use_gpu is None:
            facts = self.facts
            self._may_use_gpu = (
                not self.imports.imports_any("torch")
                or facts.uses_cuda
                or any(target.startswith("torch.cuda") for target in self.imports.aliases.values())
                or (not on_host_by_config(self) and not self._binds_cpu_only() and not self._moves_to_host_only() and (any(
                    may_move_to_device(self, site.node) for site in facts.calls_by_method.get("to", ()))
                or any("device" in name.lower() for _, name in facts.assignments)
                or self.imports.imports_any("accelerate", "lightning", "pytorch_lightning", "deepspeed", "torch_xla")
                or any("device" in (s.receiver_name or "") for s in facts.calls)
                or self._project_uses_gpu()))
            )
        return self._may_use_gpu

    def _binds_cpu_only(self) -> bool:
        """The file, a script no other project file imports, names its device, and every device
        it binds is the CPU (`device = torch.device("cpu")` in a fitting script of a GPU
        project): its tensors stay on the host by its own choice, whatever the files around it
        do (CUDA named in the file is checked before this)."""
        found = [a for (_, name), assignments in self.facts.assignments.items()
                 if "device" in name.rsplit(".", 1)[-1].lower() for a in assignments]
        if not found or not all(self._cpu_constant(a.value) for a in found):
            return False
        # A script, not a module others import: an optimizer module whose self-test runs on
        # the CPU still steps the GPU parameters of the scripts that import it.
        return self.project is None or self.real_path is None or not self.project.importers(self)

    def _moves_to_host_only(self) -> bool:
        """The file moves tensors with `.to(...)`, never with `.cuda()`, and every device it
        moves them to is the host on every path the value model follows (`.to(self.device)` in
        a trainer that each script builds with `torch.device("cpu")`): the program's own
        choice, whatever the text around it says."""
        facts = self.facts
        if facts.calls_by_method.get("cuda"):
            return False
        moves = [site for site in facts.calls_by_method.get("to", ()) if may_move_to_device(self, site.node)]
        if not moves:
            return False
        for site in moves:
            target = argument(site.node, "device", 0)
            if target is None or device_kind(self, target.value, site.ctx, site.order) != HOST:
                return False
        return True

    def _cpu_constant(self, value: Optional[cst.BaseExpression]) -> bool:
        if type(value) is cst.Call and self.imports.qualify(value.func) == "torch.device" and len(value.args) == 1:
            value = value.args[0].value
        return type(value) is cst.SimpleString and value.evaluated_value == "cpu"

    @property
    def cuda_in_project(self) -> bool:
        """CUDA is named in the file, or in the project files around it (a model module gets
        its device from the training script)."""
        return self.facts.uses_cuda or self._project_uses_gpu()

    def _project_uses_gpu(self) -> bool:
        return self.shared("project-uses-gpu", _project_uses_gpu)

    def _examples_folder(self) -> Optional[str]:
        """The examples folder of an installable library this file sits in (`examples/`,
        `salina_examples/rl/`, `demos/`): the library's modules speak of CUDA as something they
        can do, and whether an example's tensors reach the GPU is the example's own choice, so
        only the example files around it are evidence. None elsewhere."""
        layout = self.project.layout
        relative = os.path.relpath(os.path.dirname(self.real_path), layout.root)
        if relative.startswith(os.pardir):
            return None
        parts = relative.split(os.sep)
        for i, part in enumerate(parts):
            if _EXAMPLES_FOLDER.search(part):
                return os.path.join(layout.root, *parts[: i + 1]) if layout.installable() else None
        return None

    def cuda_default_placement_in_project(self) -> bool:
        """This file, or a project file around it (the training script that imports a loss
        module), makes CUDA the default place of new tensors (`torch.set_default_tensor_type(
        "torch.cuda.FloatTensor")`, `torch.set_default_device("cuda")`): factories then build
        on the GPU."""
        if self.calls_to("torch.set_default_tensor_type", "torch.set_default_device"):
            return True
        if self.project is None or self.real_path is None:
            return False
        return any(_CUDA_DEFAULT.search(text) for text in self.project.related_texts(self.real_path))

    def line_of(self, node: cst.CSTNode) -> int:
        """The 1-based line a node starts on (for messages that point into another file)."""
        if self.chunked is not None:
            try:
                return self.chunked.span(node, None, self.statement_of, self.top_of)[0][0]
            except KeyError:
                pass
        from advisor.positions import node_spans  # rare: a file parsed whole

        return node_spans(self.module).get(id(node), ((1, 0), (1, 0)))[0][0]

    def display_name(self) -> str:
        """The file's path relative to its project's root (as messages name another file)."""
        if self.project is not None and self.real_path is not None:
            return os.path.relpath(self.real_path, self.project.layout.root)
        return self.path

    def binds_module_at_top(self, module: str) -> bool:
        """A plain `import module` at the top level of the file: the name exists wherever
        module-level code (a decorator, a default) reads it. An import inside a function, or
        under `if`/`try`, does not count."""
        for statement in self.facts.module_imports:
            for small in statement.body:
                if type(small) is cst.Import and any(
                    alias.asname is None and dotted_name(alias.name) == module for alias in small.names
                ):
                    return True
        return False

    @property
    def other_framework(self) -> bool:
        """Code for another deep-learning framework (MXNet Gluon, TensorFlow, JAX, Paddle...): it
        imports one and not `torch` itself (torchvision's transforms are often borrowed for data).
        Gluon's layers run without a graph outside `autograd.record()`, `model(x)` in a Keras
        loop is not a PyTorch module call: no rule applies."""
        return self.imports.imports_any(*OTHER_FRAMEWORKS) and not self.imports.imports_any("torch")

    def in_assert_message(self, node: cst.CSTNode) -> bool:
        """The node is part of an `assert`'s message, which runs only when the assert fails, or
        of the exception a `raise` builds, which runs only when it raises."""
        if not self.facts.assert_messages:
            return False
        inside = self._shared.get("assert-message-nodes")
        if inside is None:
            inside = self._shared["assert-message-nodes"] = set().union(
                *(node_ids(m) for m in self.facts.assert_messages))
        return id(node) in inside

    @property
    def in_untrained_copy(self) -> bool:
        """The file belongs to a package the rest of the project imports from whose own training
        scripts no run of the project reaches (a copy of LLaVA kept to caption images,
        `project/reachability.py`): its code runs only where the project's code calls it."""
        known = self._shared.get("in-untrained-copy")
        if known is None:
            project, path = self.project, self.real_path
            known = self._shared["in-untrained-copy"] = (
                project is not None and path is not None and project.untrained_package(path) is not None)
        return known

    @property
    def in_used_copy(self) -> bool:
        """The file belongs to a licensed copy of another project that the rest of the project
        imports from (`project/reachability.py`)."""
        known = self._shared.get("in-used-copy")
        if known is None:
            project, path = self.project, self.real_path
            known = self._shared["in-used-copy"] = (
                project is not None and path is not None and project.in_used_copy(path))
        return known

    def left_out_caller(self, caller: "FileModel") -> bool:
        """A call from ``caller`` says nothing of how often this file's code runs: this file is
        in an untrained copy (`in_untrained_copy`) and no run of the project imports the
        caller's module (the copy's own training script, or what only it imports). So for a
        licensed copy of another project that the rest imports from (VGen's `metric/dino/`,
        whose training script no text names): its unreached scripts run nothing."""
        if caller is self or not (self.in_untrained_copy or self.in_used_copy):
            return False
        project, path = caller.project, caller.real_path
        return project is not None and path is not None and project.unreached(path)

    @property
    def is_test_code(self) -> bool:
        """A test module: it imports pytest, unittest (not `unittest.mock` alone, which scripts use
        to patch a library) or PyTorch's test harness, or it is named and laid out as pytest
        collects one (`test_*.py` or `*_test.py` defining `test_*` functions or `Test*`
        classes, or any `*_test.py`, or `test_*.py` that reads no command line, in a `tests/` or
        `test/` folder; `conftest.py`). It runs tiny workloads, and calls legacy or slow APIs on
        purpose to test them. An evaluation script named `test_net.py` defines no tests."""
        known = self._shared.get("is-test-code")
        if known is None:
            # Asked for every caller a value question follows across files: worked out once.
            known = self._shared["is-test-code"] = self._is_test_code()
        return known

    def _is_test_code(self) -> bool:
        name = os.path.basename(self.path)
        if name == "conftest.py" or self.imports.imports_any("pytest") or any(
                target == "unittest" or (target.startswith("unittest.") and not target.startswith("unittest.mock"))
                for target in self.imports.aliases.values()):
            # Not `from unittest.mock import patch` alone: scripts patch libraries with it too
            # (a vLLM engine started inside a training script).
            return True
        if any(target.startswith("torch.testing._internal.") for target in self.imports.aliases.values()):
            return True  # PyTorch's own test harness (`common_utils`, `common_distributed`)
        if not ((name.startswith("test_") and name.endswith(".py")) or name.endswith("_test.py")):
            return False
        folders = os.path.normpath(os.path.dirname(self.path)).split(os.sep)
        if ("tests" in folders or "test" in folders) and (
                name.endswith("_test.py") or not (self.imports.imports_any(*_COMMAND_LINE_READERS)
                                                  or "sys.argv" in (self.text or ""))):
            # `tests/actions_test.py`, `test/test_las.py` (a smoke run on random input): a test
            # script run as it is; an evaluation script `test_net.py` reads its command line.
            return True
        # Test methods of a class of another test harness's base (`class CheckpointTest(DTensorTestBase)`).
        return any(key.rsplit(".", 1)[-1].startswith("test_") for key in self.facts.functions) or any(
            cls.startswith("Test") for cls in self.facts.classes
        )

    def builds_scaler(self) -> bool:
        """Some call of the file builds a GradScaler, or an instance of a class (this file's or
        the project's) that derives from one or builds one to scale with."""
        known = self._shared.get("builds-scaler")
        if known is None:
            known = bool(self.calls_to(GRAD_SCALER, *LIBRARY_LOSS_SCALERS))
            for site in self.facts.calls:
                if known:
                    break
                func = site.node.func
                if site.qualname is not None:
                    symbol = self.symbol(site.qualname)
                    if symbol is None:
                        # A loss scaler of code the analysis cannot read (a submodule not checked
                        # out, another package): `NativeScalerWithGradNormCount()`, as timm's.
                        known = _LOSS_SCALER_NAME.search(site.qualname.rsplit(".", 1)[-1]) is not None
                        continue
                    known = symbol.kind == "class" and "scaler" in class_kinds(symbol.model, symbol.info)
                elif type(func) is cst.Name and func.value in self.facts.classes:
                    known = "scaler" in class_kinds(self, self.facts.classes[func.value])
            self._shared["builds-scaler"] = known
        return known

    def module_names(self) -> Set[str]:
        """Names used as modules somewhere in the file (`.parameters()`, `.eval()`, ...):
        `model` in `model.eval()`, and in `m.cpu().parameters()`."""
        if self._module_names is None:
            names: Set[str] = set()
            for site in self.method_calls(*_MODULE_METHODS):
                receiver = site.receiver
                # Strip method calls that return the module itself: `m.cpu()`, `m.to(d)`.
                while type(receiver) is cst.Call and type(receiver.func) is cst.Attribute:
                    receiver = receiver.func.value
                name = dotted_name(receiver) if receiver is not None else None
                if name and name not in ("self", "cls"):
                    names.add(name)
            self._module_names = names
        return self._module_names

    def uses_framework(self, *packages: str) -> bool:
        return self.imports.imports_any(*packages)

    def function(self, key: str) -> Optional[FunctionInfo]:
        return self.facts.functions.get(key)

    # -- training loops -----------------------------------------------------------------------
    def resolve(self, key: str) -> Optional[FunctionInfo]:
        """The function a callee key names: `train_step`, `Trainer.step`, or `.step` for a
        method called on some object, when exactly one class of the file defines it."""
        info = self.facts.functions.get(key)
        if info is not None or "." not in key:
            return info
        if self._methods is None:
            self._methods = {}
            for candidate in self.facts.functions.values():
                if candidate.class_name is not None:
                    self._methods.setdefault(candidate.node.name.value, []).append(candidate)
        found = self._methods.get(key.rsplit(".", 1)[-1], [])
        return found[0] if len(found) == 1 else None

    def call_sites(self, info: FunctionInfo) -> List[CallSite]:
        """The calls in this file that run ``info`` (see `callers` for the project's)."""
        return [site for model, site in self.calls.callers(info) if model is self]

    def callers(self, info: FunctionInfo) -> List[Tuple["FileModel", CallSite]]:
        """The calls that run ``info``, in this file and in the project files that import it."""
        return self.calls.callers(info)

    def result_trained(self, info: FunctionInfo) -> bool:
        """A call of ``info`` sits in code that trains, in this file or a project file that
        imports it: what a factory returns (`create_model(cfg)` handing back a wrapped model)
        goes to a training loop. A factory only an evaluation script calls does not."""
        for owner, site in self.callers(info):
            caller = site.ctx.function
            if caller is None:
                if owner.trains_anywhere:
                    return True
            elif owner.trains(caller) or owner.has_training_loop(caller) or owner.heat_of(caller) is not None:
                return True
        return False

    def spread_keyword(self, site: CallSite, keyword: str):
        """What a call of this file passes for ``keyword`` through the dicts it unpacks with `**`:
        (PRESENT | ABSENT | SOMETIMES | UNKNOWN, the Values it may hold)."""
        return kwargs_entry(self, site, keyword)

    def symbol(self, qualname: str):
        """What an imported dotted name is in the project (None: a library, or no project)."""
        project = self.project
        if project is None or qualname.startswith(("torch.", "numpy.", "os.", "math.")):
            return None
        return project.symbol(self, qualname)

    def function_trains(self, key: str) -> bool:
        """The function runs backward or an optimizer step, itself or through functions it calls."""
        info = self.resolve(key)
        return info is not None and self.trains(info)

    def trains(self, info: FunctionInfo) -> bool:
        return open_questions.remembered(self._trains, id(info), lambda: info.direct_marker or self._calls_train(info.sites), guard=False)

    def steps(self, info: FunctionInfo) -> bool:
        """The function steps an optimizer, itself or through functions it calls."""
        return open_questions.remembered(self._steps, id(info), lambda: info.direct_step or info.loose_step or self.calls_step(info.sites), guard=False)

    def calls_optimizer_step(self, sites) -> bool:
        """One of these calls runs a project function that steps an optimizer it names, itself
        or through the functions it calls (not a `.step()` of something unknown: a profiler's,
        an engine's)."""
        return any(owner.steps_optimizer(target) for site in sites for owner, target in self.calls.targets(site))

    def steps_optimizer(self, info: FunctionInfo) -> bool:
        return open_questions.remembered(self._strict_steps, id(info), lambda: info.direct_step or self.calls_optimizer_step(info.sites), guard=False)

    def calls_step(self, sites) -> bool:
        """One of these calls runs a project function that steps an optimizer."""
        return any(owner.steps(target) for site in sites for owner, target in self.calls.targets(site))

    def _updates_parameters(self, loop: LoopInfo) -> bool:
        """An optimizer steps in the loop, around it in its function, or where its function is
        called from a loop: backward alone (Grad-CAM, input gradients) trains nothing."""
        if loop.has_step or loop.loose_step or self.calls_step(loop.sites):
            return True
        current: Optional[LoopInfo] = loop.parent
        while current is not None:
            # An enclosing loop steps in its own body, not in another loop nested in it: the
            # training pass beside a test pass whose attack runs backward updates nothing there.
            own = [s for s in current.sites if s.ctx.loop is current]
            if current.own_step or current.loose_step or self.calls_step(own):
                return True
            current = current.parent
        function = loop.function
        if function is None:
            return False
        # A step of the function counts where it runs around the loop (after a micro-batch
        # loop, in a loop that holds it), not in a sibling loop (the training pass beside it).
        around = [s for s in function.sites if s.ctx.loop is None or loop.within(s.ctx.loop)]
        if function.loose_step or any(step is None or loop.within(step) for step in function.step_loops) or (
                self.calls_step(around)):
            return True
        for model, site in self.callers(function):
            # The loop around the call steps in its own body (not only in a loop nested in it):
            # a backward-only helper an epoch loop calls once (an adversarial attack checking
            # robustness each epoch) updates nothing.
            outer = site.ctx.loop
            if outer is not None and (outer.own_step or model.calls_step([s for s in outer.sites if s.ctx.loop is outer])):
                if model.guards.periodic(site.ctx, {id(outer)}):
                    # `if iteration % eval_freq == 0: rob_acc(test_batches, ...)` in the batch
                    # loop: an evaluation pass run every few steps, whose attack updates nothing.
                    continue
                return True
        return False

    def _calls_train(self, sites) -> bool:
        return any(owner.trains(target) for site in sites for owner, target in self.calls.targets(site))

    def function_has_training_loop(self, key: str) -> bool:
        info = self.resolve(key)
        return info is not None and self.has_training_loop(info)

    def has_training_loop(self, info: FunctionInfo) -> bool:
        """The function runs a training loop, its own or one of a function it calls. A call with
        several possible targets runs one when all of them do (`_runs_training_loops`): an agent's
        `update` that calls `self.algorithm.train()` is one update per call for the algorithms
        whose `train` has no loop, whatever the others do."""
        return open_questions.remembered(self._has_training_loop, id(info), lambda: any(
            self.is_training_loop(loop) for loop in info.loops) or any(
            self._runs_training_loops(site) for site in info.sites
        ), guard=False)

    def is_training_loop(self, loop: LoopInfo) -> bool:
        return open_questions.remembered(self._loop_training, id(loop), lambda: self._trains_in(loop), guard=False)

    def _trains_in(self, loop: LoopInfo) -> bool:
        if body_runs_once(loop):
            return False  # one batch, then `break`: a calibration pass, not a training loop
        if _updates_each_model(loop):
            return False  # the critics of one step, one per view
        if _runs_each_callback(loop):
            return False  # `for hook in val_hooks: call_hook(hook, data)`: the hooks of one event
        # Under `no_grad` nothing can be backpropagated: a loss object called there (with
        # `only_return_losses=True`) evaluates, whatever its other path does.
        no_grad = loop.ctx.no_grad or (loop.function is not None and loop.function.no_grad)
        # A call made under `no_grad` inside the loop cannot train either: the validation pass
        # that hands each batch to the same `step(batch, eval_mode=True)` as training does.
        sites = [site for site in loop.sites if not site.ctx.no_grad]
        return bool(not no_grad and (loop.direct_marker or self._calls_train(sites))
                    and self._updates_parameters(loop))

    def backpropagates(self, loop: LoopInfo) -> bool:
        """The loop runs backward (or steps), itself or through what it calls: autograd is in use,
        whether or not an optimizer updates anything (a timing benchmark, Grad-CAM)."""
        return loop.direct_marker or self._calls_train(loop.sites)

    def is_hot_loop(self, loop: LoopInfo) -> bool:
        """The innermost training loop: one iteration per optimizer step."""
        known = self._loop_hot.get(id(loop))
        if known is None:
            # A loop that steps the optimizer in its own body runs once per step even when
            # an inner loop accumulates micro-batches (or trains a GAN critic).
            known = self.is_training_loop(loop) and (
                (loop.own_step and not self._flushes_after_batches(loop))
                or self._steps_through_helper(loop)
                or any(_steps_each(child) for child in loop.children)
                # `for optimizer_idx in [1, 0]:` inside the batch loop, each round a backward and
                # a step: two updates per batch, and the batch loop's own code runs per batch.
                or (bool(loop.batch_names) and any(
                    _fixed_rounds(child) and child.own_step and not child.children for child in loop.children))
                or (
                    not any(self._has_nested_training_loop(child) for child in loop.children)
                    and not any(self._runs_training_loops(site) for site in loop.sites)
                )
            )
            self._loop_hot[id(loop)] = known
        return known

    def _runs_training_loops(self, site) -> bool:
        """The call runs a training loop of its own. A call with several possible targets (an
        algorithm's `train_on_batch`, one per class of a family) does when all of them do: one
        class that updates its critics in a loop leaves the others one update per call."""
        targets = self.calls.targets(site)
        if len(targets) > 1:
            # Targets that train nothing (a sweep's `run_next(hparams)` that may also run a
            # symbolic search) say nothing of how often the others update.
            training = [(owner, target) for owner, target in targets if owner.trains(target)]
            return bool(training) and all(owner.has_training_loop(target) for owner, target in training)
        return any(owner.has_training_loop(target) for owner, target in targets)

    def _flushes_after_batches(self, loop: LoopInfo) -> bool:
        """The loop's own optimizer step follows an inner loop over a loader that steps in its
        own body (`for epoch ...: for batch in loader: ...; optimizer.step()`, then `if n_batches
        % accum_steps: optimizer.step()` for the last micro-batches): the outer step flushes what
        is left once a pass, and the outer loop goes round once per epoch, not once per step. An
        inner loop that only reuses the outer loop's batch (`for i in range(bptt_depth):` over
        the segments of one drawn batch) is no pass over the data."""
        return any(child.own_step and (child.over_loader or any(
            child.start < self.order_of(call) <= child.end for call in child.drawn.values()))
            for child in loop.children)

    def _steps_through_helper(self, loop: LoopInfo) -> bool:
        """The loop's own body calls a function of the project that steps an optimizer outside
        any loop of its own (`grad_norm = self._optimizer_step()` after a micro-batch loop):
        one update per iteration, as a step written in the body would be."""
        return any(
            target.direct_step and None in target.step_loops
            for site in loop.sites if site.ctx.loop is loop
            for _, target in self.calls.targets(site)
        )

    def _has_nested_training_loop(self, loop: LoopInfo) -> bool:
        if _steps_each(loop):
            return False
        return self.is_training_loop(loop) or any(self._has_nested_training_loop(c) for c in loop.children)

    def epoch_loops(self) -> List[LoopInfo]:
        """Training loops that are not hot: each iteration runs a whole inner training loop."""
        return [loop for loop in self.facts.loops
                if self.is_training_loop(loop) and not self.is_hot_loop(loop) and not self.runs_whole_trainings(loop)]

    def runs_whole_trainings(self, loop: LoopInfo) -> bool:
        """Each iteration calls a function of the project that builds an optimizer and trains
        with it in a loop of its own (`for step in range(n_tasks): main(opts)`): a loop over
        runs (tasks, folds, seeds), not over epochs. A loop that builds the optimizer in its own
        body is still an epoch loop (old scripts build it anew each epoch to set the rate)."""
        # Only the calls of the loop's own body: a call in a nested loop runs many times a round.
        return open_questions.remembered(self._loop_runs, id(loop), lambda: any(
            owner.builds_optimizer(target) and any(owner.is_training_loop(inner) for inner in target.loops)
            for site in loop.sites if site.ctx.loop is loop for owner, target in self.calls.targets(site)
        ), guard=False)

    def builds_optimizer(self, info: FunctionInfo) -> bool:
        """The function's own body builds a `torch.optim` optimizer."""
        known = self._shared.setdefault("builds-optimizer", {})
        if id(info) not in known:
            known[id(info)] = any(_optimizer_class(self.imports.qualify(site.node.func) or "") for site in info.sites)
        return known[id(info)]

    def enclosing_training_loop(self, ctx: Context) -> Optional[LoopInfo]:
        loop = ctx.loop
        while loop is not None and not self.is_training_loop(loop):
            loop = loop.parent
        return loop

    def sync_heat(self, ctx: Context) -> Optional[Heat]:
        """`heat` for host-device syncs: in a script with no sign of a GPU they cost next to
        nothing, so per-step ones are reported as GATED (info); code that runs only off the CUDA
        path (`if x.device.type == "mps": x = x.cpu()`, the `else` of `if use_cuda:`) syncs no
        CUDA device at all."""
        heat = self.heat(ctx, ranks=False)
        if heat is None:
            return None
        if on_cpu_path(self, ctx):
            return None
        if heat is Heat.HOT and not self.may_use_gpu:
            return Heat.GATED
        return heat

    def beside_step_loops(self, ctx: Context) -> bool:
        """The code runs in a function that steps its optimizer inside loops, but outside every
        one of them: set-up before the batch loop, or once per epoch around it."""
        function = ctx.function
        if function is None or not function.step_loops or function.loose_step:
            return False
        if any(step is None for step in function.step_loops):
            return False
        # A step in a loop over the optimizers of a list, or over a few written-out rounds, is the
        # step of the loop around it (`for opt in optimizers: opt.step()`).
        steps = []
        for step in function.step_loops:
            while step.parent is not None and (_steps_each(step) or _fixed_rounds(step)):
                step = step.parent
            steps.append(step)
        loop = ctx.loop
        return loop is None or not any(loop.within(step) for step in steps)

    def batch_heat(self, ctx: Context) -> Optional[Heat]:
        """`sync_heat`, and the forward path of a module the call graph does not see run
        (`framework_steps.forward_path`): once per batch, so per training step (HOT) when the
        module is evidently a training model run on a GPU, GATED (info) when the evidence is
        weak (a layer) or the code runs under a periodic or rank-0 guard."""
        heat = self.sync_heat(ctx)
        if heat is not None:
            return heat
        evident = forward_path(self, ctx)
        if evident is None or runs_once(ctx, None):
            return None
        if evident and not self.guards.gated(ctx, ranks=False):
            return Heat.HOT
        return Heat.GATED

    def heat(self, ctx: Context, ranks: bool = True) -> Optional[Heat]:
        """Whether code in this context runs on every training step (and whether it is gated).
        Code under `if not self.training:` (a module's evaluation-only path) never does. With
        ``ranks`` False (host syncs), a rank-0 test does not gate: on one GPU it holds every
        step, and on several the other ranks wait for rank 0 at the next collective."""
        if inference_branch(ctx):
            return None
        loop = self.enclosing_training_loop(ctx)
        if loop is not None:
            if not self.is_hot_loop(loop) or runs_once(ctx, loop) or self.guards.evaluation_arm(ctx, loop):
                return None
            if self.guards.gated(ctx, ranks) or loop.env_step or (ctx.loop is not None and ctx.loop.env_step):
                return Heat.GATED  # RL loops need host values per environment step anyway
            if short_probe(self, loop):
                return Heat.GATED  # a learning-rate finder's hundred steps, run once
            if ctx.no_grad and ctx.loop is not loop:
                return Heat.GATED  # an evaluation loop nested in the training loop
            if loop.function is None and self.self_test(ctx):
                return Heat.GATED
            if (loop.function is not None and loop.function is ctx.function and not loop.has_step
                    and _under_parameter_test(ctx) and self.callers(loop.function)):
                # A loop that trains because its callers step (an attack's inner loop run by
                # the training loop): an arm of a test of its parameters runs as often as the
                # calls that take it (`if early_stop:`, which only the test pass asks for).
                return self._arm_heat(ctx, loop.function, ranks, loop.over_loader)
            if (loop.function is not None and loop.function is ctx.function and _under_parameter_test(ctx)
                    and branch_untaken(self, ctx, ctx.function)):
                return None  # the `else` of `if use_unlabeled:`, which every call turns on
            return Heat.HOT
        if ctx.function is None or runs_once(ctx, None) or branch_untaken(self, ctx, ctx.function):
            return None
        if ctx.loop is None and _yields_only_in_loops(ctx.function):
            # A generator's code outside its yielding loops (`images = batch_crop(...)` before
            # `for i in ...: yield`) runs once per pass, where the iterator is made.
            heat = self._pass_heat(ctx.function, ranks)
        else:
            heat = self.heat_of(ctx.function, ranks)
            if heat is Heat.HOT and _under_parameter_test(ctx) and not ctx.function.generator and self.callers(ctx.function):
                # A module's `forward` is hot however it is called; which arm of a test of its
                # parameters runs is still for the calls the analysis sees to say.
                heat = self._arm_heat(ctx, ctx.function, ranks)
        if heat is None:
            return None
        return Heat.GATED if (self.guards.gated(ctx, ranks) or heat is Heat.GATED) else Heat.HOT

    def rebuilt_every_step(self, class_name: str) -> bool:
        """Every instance of the class is built anew on each training step, where the analysis
        sees it built (a collector that `forward` makes, fills and stacks): what an instance
        keeps on itself lives one step."""
        init = self.facts.functions.get(f"{class_name}.__init__")
        if init is None:
            return False
        built = self.calls.constructions(init)
        return bool(built) and all(owner.heat(site.ctx) is not None for owner, site in built)

    def env_step_only(self, ctx: Context) -> bool:
        """``ctx`` is in a training loop that steps an environment (reported as GATED: its own
        host reads are what an agent needs), with no guard of its own that gates it."""
        loop = self.enclosing_training_loop(ctx)
        return (loop is not None and (loop.env_step or (ctx.loop is not None and ctx.loop.env_step))
                and self.is_hot_loop(loop) and not self.guards.gated(ctx))

    def self_test(self, ctx: Context) -> bool:
        """The code runs in the `if __name__ == "__main__":` block of a module other files of
        the project import: a library module's smoke test on made-up data, not the training run
        (reported, but below the default view, as test modules are)."""
        return main_block(ctx) and bool(self_test_nodes(self))

    def function_heat(self, key: str) -> Optional[Heat]:
        """A function runs every step when a hot loop (or another hot function) calls it."""
        info = self.facts.functions.get(key)
        return self.heat_of(info) if info is not None else None

    def framework_step(self, info: FunctionInfo) -> bool:
        """A framework calls the function once per batch (Lightning's `training_step`, an
        Ignite or Accelerate step): `framework_steps.is_framework_step`."""
        return is_framework_step(self, info)

    def heat_of(self, info: FunctionInfo, ranks: bool = True) -> Optional[Heat]:
        """Whether a function runs every training step, through the places that run it. With
        ``ranks`` False (host syncs), a rank test on the way does not gate it."""
        key = id(info) if ranks else -id(info)
        return open_questions.remembered(self._function_heat, key, lambda: self._heat_of(info, ranks), guard=None)

    def _heat_of(self, info: FunctionInfo, ranks: bool) -> Optional[Heat]:
        result: Optional[Heat] = None
        # A function that steps its optimizer once per call, after a loop over micro-batches
        # (`for _ in range(grad_accum_every): ... backward()`, then `optimizer.step()`), is a
        # training step whatever loops it has: its body runs as often as its callers call it.
        loops = self.has_training_loop(info) and not (info.direct_step and None in info.step_loops)
        if not info.no_grad and not loops and is_framework_step(self, info):
            result = Heat.HOT
        elif not loops and not (info.no_grad and self._evaluates(info)):
            places, rare = [], []
            for model, site in self.callers(info):
                if _picked_by_mode(model, site, info):
                    continue
                # A call after an `if` every way through which is occasional (`sample_images`
                # returning unless `steps % every == 0`) runs now and then only.
                # So does one in an `except` arm (`except RuntimeError: batch_size =
                # handle_oom(batch_size)`): it runs when a step has failed, not every step.
                (rare if model.guards.after_rare_paths(site) or in_handler(model, site.ctx) else places).append(
                    (model, site.ctx))
            if info.generator:
                # Its body runs where its iterator is advanced, not where it is called.
                places += advanced_at(self, info)
            result = self._places_heat(info, places, ranks)
            if result is not Heat.HOT and rare and self._places_heat(info, rare, ranks) is not None:
                result = Heat.GATED
        return result

    def _places_heat(self, info: FunctionInfo, places, ranks: bool) -> Optional[Heat]:
        """The hottest of the places that run ``info``."""
        result: Optional[Heat] = None
        for model, ctx in places:
            if ctx.no_grad and self._evaluates(info):
                continue
            if ctx.function is not None and branch_untaken(model, ctx, ctx.function):
                continue  # `else: return self.rank(...)` of `if train:`, which training calls set
            if model is not self and model.is_test_code and not self.is_test_code:
                continue  # a test module's loop exercises the helper on purpose; it is no training run
            if self.left_out_caller(model):
                continue  # the copied library's own training run, which the project never starts
            heat = model.heat(ctx, ranks)
            if heat is Heat.GATED and self.steps(info) and model.env_step_only(ctx):
                heat = Heat.HOT  # `agent.learn(memory)` in an RL loop: each call is an update
            if heat is Heat.HOT:
                return Heat.HOT
            if heat is Heat.GATED:
                result = Heat.GATED
        return result

    def _arm_heat(self, ctx: Context, info: FunctionInfo, ranks: bool, over_loader: bool = False) -> Optional[Heat]:
        """The heat of code under a test of the function's own parameters, from the calls that
        take that arm only (`elif technique == "phong":` of a renderer's `forward`, which only a
        periodic visualisation asks for, while training passes `"unisurf"`). HOT, as before,
        when no call the analysis sees decides against the arm: a module's `forward` is hot
        through calls it cannot see too (a Trainer's, a wrapper's). With ``over_loader`` the
        training loop the arm sits in goes over a loader itself (`for step, batch in
        enumerate(data_loader): if mode == "train": self.train_batch(batch)`, run once per
        epoch with `mode="train"`): each round is a step, so the arm is hot when some call
        takes it, however rarely those calls come."""
        known = self._shared.setdefault("arm-heat", {})
        key = (id(ctx), ranks)
        if key not in known:
            known[key] = None  # a recursion through this arm finds it cold
            callers = self.callers(info)
            places = [(model, site.ctx) for model, site in callers if not untaken_by(self, ctx, info, site, model)]
            if len(places) == len(callers) or (over_loader and places):
                known[key] = Heat.HOT
            else:
                known[key] = self._places_heat(info, places, ranks)
        return known[key]

    def _pass_heat(self, info: FunctionInfo, ranks: bool) -> Optional[Heat]:
        """How often a generator starts a pass: the heat of the places that call it (each call
        makes a new iterator)."""
        result: Optional[Heat] = None
        for model, site in self.callers(info):
            heat = model.heat(site.ctx, ranks)
            if heat is Heat.HOT:
                return Heat.HOT
            if heat is Heat.GATED:
                result = Heat.GATED
        return result

    @staticmethod
    def _evaluates(info: FunctionInfo) -> bool:
        """The function runs an evaluation pass: a loop over a loader. Under no_grad that is
        what it is, wherever it is called from. A no_grad helper without one (an EMA update, a
        MoCo queue, an accuracy) runs as often as its caller does."""
        return any(loop.over_loader for loop in info.loops)

    @property
    def trains_anywhere(self) -> bool:
        """Some loop or function of the file runs backward or an optimizer step."""
        return any(self.is_training_loop(loop) for loop in self.facts.loops) or any(
            info.direct_marker for info in self.facts.functions.values()
        )

    def in_training_code(self, ctx: Context) -> bool:
        """Inside any training loop, or in a function that trains or runs every step."""
        if self.enclosing_training_loop(ctx) is not None:
            return True
        if ctx.function is None:
            return False
        return self.trains(ctx.function) or self.heat_of(ctx.function) is not None

    # -- what names hold -----------------------------------------------------------------------
    def _scopes(self, name: str, ctx: Context) -> Tuple[str, ...]:
        if name.startswith("self.") and ctx.class_scope:
            return (ctx.class_scope,)
        if ctx.function is not None:
            return (ctx.function.scope, MODULE_SCOPE)
        return (MODULE_SCOPE,)

    def assignments(self, name: str, ctx: Context) -> List[Assignment]:
        """Every assignment to ``name`` in the innermost scope around ``ctx`` that has any, in
        source order, wherever it sits: for questions about the whole scope ("is it ever bound
        to a DataLoader?"). What a given read sees is `reaching`."""
        for scope in self._scopes(name, ctx):
            found = self.facts.assignments.get((scope, name))
            if found:
                return found
        return []

    def reaching(self, name: str, ctx: Context, order: float) -> List[Assignment]:
        """The assignments a read of ``name`` at ``order`` may see (see `Bindings.reaching`)."""
        return self.bindings.reaching(name, ctx, order).assignments

    def reaching_assignment(self, name: str, ctx: Context, order: float) -> Optional[Assignment]:
        """The most recent assignment a read of ``name`` at ``order`` may see: the one that
        dominates it, or the last one made before it."""
        earlier = [a for a in self.reaching(name, ctx, order) if a.order < order]
        return earlier[-1] if earlier else None

    def sole_assignment(self, name: str, ctx: Context, order: float) -> Optional[Assignment]:
        """The one assignment a read of ``name`` sees, when every path reaches that one and the
        name is no parameter (`buffer = io.BytesIO()`, then `torch.save(state, buffer)`)."""
        reach = self.bindings.reaching(name, ctx, order)
        if not reach.closed or reach.parameter is not None or len(reach.assignments) != 1:
            return None
        return reach.assignments[0]

    def holds_its_import(self, expr: cst.BaseExpression, ctx: Context, order: float) -> bool:
        """The name ``expr`` is read through (`autocast`, `amp` in `amp.autocast`) refers to
        what the file imports under it where it is read: one import target only (not a `try:`
        / `except ImportError:` fallback), and no `def`, class, assignment or parameter of the
        same name that may reach the read."""
        dotted = dotted_name(expr)
        if dotted is None:
            return False
        head = dotted.partition(".")[0]
        if not self.imports.imported_once(head):
            return False
        if self.bindings.function(head, ctx, order) is not None:
            return False
        if head in self.facts.classes:
            return False
        return not self.bindings.reaching(head, ctx, order)

    def kinds(self, expr: cst.BaseExpression, ctx: Context, order: int, depth: int = 0) -> Dict[str, bool]:
        """What an expression holds: {"dataloader", "dist_sampler", "dist_loader", "ddp",
        "scaler", "optimizer", "adaptive_optimizer", "module", "tensor_dataset"} mapped to whether it holds it on every
        path."""
        return self.values.ask(KINDS, expr, ctx, order)

    def name_kinds(self, name: str, ctx: Context, order: int, depth: int = 0) -> Dict[str, bool]:
        return self.values.name(KINDS, name, ctx, order)

    def project_callees(self, sites: List[CallSite]) -> List[Tuple["FileModel", FunctionInfo]]:
        """The functions of the project's other modules that calls of this file run
        (`train(..., sampler=s)` imported from `utils/train_utils.py`), with their files."""
        found = []
        for site in sites:
            if site.qualname is None or site.qualname.split(".")[0] in _NOT_PROJECT:
                continue
            callee = self.values.callee(site.node, site.ctx, site.order)
            if callee is not None and callee[0] is not self:
                found.append(callee)
        return found

    def hands_to_scaler(self, function: FunctionInfo, after: int) -> Optional[bool]:
        """Whether ``function`` hands a value bound from ``after`` on (the loss of an autocast
        region) to a callable object that scales it with a GradScaler: `loss_scaler(loss,
        optimizer)` where `loss_scaler` holds an instance of a loss-scaling class, followed
        through the function's callers in the project. None when it hands it instead to
        a callable nobody can see (a parameter no call of the project fills, or fills with
        something other than instances of the project's classes) and runs no `.backward()` on
        it itself; False otherwise."""
        unknown = False
        backward = {s.receiver_name for s in function.sites if s.method == "backward"}
        for site in function.sites:
            node = site.node
            if site.order >= after and site.method == "backward" and site.qualname is None and node.args:
                # `self.optim.backward(loss)`: a wrapper of the project that runs the backward
                # (OpenNMT's `Optimizer`, which scales the loss with the GradScaler it holds).
                handed = self._backward_wrapper(site, after)
                if handed == "scales":
                    return True
                unknown = unknown or handed == "unseen"
                continue
            if site.order < after or site.qualname is not None or not type(node.func) is cst.Name:
                continue
            first = node.args[0].value if node.args and node.args[0].keyword is None else None
            if not type(first) is cst.Name:
                continue
            bound = self.bindings.reaching(first.value, site.ctx, site.order).assignments
            if not any(a.order >= after for a in bound):
                continue
            name = node.func.value
            if self.values.function_called(node, site.ctx, site.order) is not None or not (
                name in function.params or self.bindings.reaching(name, site.ctx, site.order).assignments
            ):
                continue  # a function of the file, or a builtin (`max(n, 1)`)
            if "scaler" in self.kinds(node.func, site.ctx, site.order):
                return True
            if first.value not in backward and not self.values.ask(INSTANCES, node.func, site.ctx, site.order)[1]:
                unknown = True
        return None if unknown else False

    def _backward_wrapper(self, site: CallSite, after: int) -> Optional[str]:
        """For `obj.backward(loss, ...)` given a loss bound after ``after``: "scales" when the
        project method it runs scales with a GradScaler (`self._scaler.scale(loss).backward()`),
        "plain" when it is a method of the project that does not, "unseen" when no method of the
        project is known to run; None when the call hands no such loss on."""
        first = site.node.args[0]
        if first.keyword is not None or first.star or type(first.value) is not cst.Name:
            return None
        if not any(a.order >= after for a in self.bindings.reaching(first.value.value, site.ctx, site.order).assignments):
            return None
        targets = self.calls.targets(site)
        if not targets:
            return "unseen"
        scales = any(
            inner.method == "scale" and inner.receiver is not None
            and ("scaler" in (inner.receiver_name or "").lower() or "scaler" in owner.kinds(inner.receiver, inner.ctx, inner.order))
            for owner, info in targets for inner in info.sites
        )
        return "scales" if scales else "plain"

    # -- tensors ---------------------------------------------------------------------------------
    def is_tensor(self, expr: cst.BaseExpression, ctx: Context, order: Optional[float] = None) -> bool:
        """True when the expression is known to evaluate to a torch.Tensor (never a guess)."""
        return is_tensor(self, expr, ctx, self.order_of(expr) if order is None else order)


def _unreachable_ids(model) -> frozenset:
    found = set()
    for block in model.dead_blocks():
        statements = block.body if type(block) is cst.IndentedBlock else block if type(block) is tuple else (block,)
        for statement in statements:
            found |= node_ids(statement)
    return frozenset(found)


def _optimizer_class(qual: str) -> bool:
    return qual.startswith("torch.optim.") and "lr_scheduler" not in qual and qual.rsplit(".", 1)[-1][:1].isupper()


def body_runs_once(loop: LoopInfo) -> bool:
    """The loop's body ends in an unconditional `break` (`for x, y in loader: ...; break`): it
    goes round at most once."""
    body = getattr(loop.node, "body", None)
    statements = getattr(body, "body", ())
    if not statements or not isinstance(statements[-1], cst.SimpleStatementLine):
        return False
    return any(type(small) is cst.Break for small in statements[-1].body)


def call_argument(call: cst.Call, keyword: str, position: Optional[int]) -> Optional[cst.Arg]:
    """The argument passed for a parameter, by keyword or by position (None when absent)."""
    positional = 0
    for arg in call.args:
        if arg.keyword is not None:
            if arg.keyword.value == keyword:
                return arg
        elif arg.star == "":
            if position is not None and positional == position:
                return arg
            positional += 1
    return None


def star_kwargs(call: cst.Call) -> List[cst.Arg]:
    return [arg for arg in call.args if arg.star == "**"]


def has_star_args(call: cst.Call) -> bool:
    return any(arg.star == "*" for arg in call.args)


def literal_bool(expr: cst.BaseExpression) -> Optional[bool]:
    if type(expr) is cst.Name and expr.value in ("True", "False"):
        return expr.value == "True"
    return None


def _fixed_rounds(loop: LoopInfo) -> bool:
    """A `for` over a few values written out (`[1, 0]`, `("gen", "disc")`, `range(2)`)."""
    node = loop.node
    if type(node) is not cst.For:
        return False
    values = node.iter
    if type(values) in (cst.List, cst.Tuple):
        return 0 < len(values.elements) <= 8 and all(type(e) is cst.Element for e in values.elements)
    if type(values) is cst.Call and type(values.func) is cst.Name and values.func.value == "range" and len(values.args) == 1:
        count = values.args[0].value
        return type(count) is cst.Integer and 0 < int(count.value, 0) <= 8
    return False


def _updates_each_model(loop: LoopInfo) -> bool:
    """`for axis in self.active_axes: critic = self.critics[axis]; optimizer =
    self.critic_optims[axis]; ...; loss.backward(); optimizer.step()`: each round updates
    another model with its own optimizer, picked by the loop target, from the same batch. The
    rounds are parts of one training step (a GAN's critic per view), not a loop over batches."""
    node = loop.node
    if type(node) is not cst.For or loop.over_loader or loop.drawn or not loop.own_step or loop.children:
        return False
    targets = set(loop.targets)
    picked = set()
    for statement in getattr(node.body, "body", ()):
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if (type(small) is cst.Assign and len(small.targets) == 1 and type(small.targets[0].target) is cst.Name
                    and type(small.value) is cst.Subscript and any(reads_any(e, targets) for e in small.value.slice)):
                picked.add(small.targets[0].target.value)
    stepped = [_stepped_optimizer(site) for site in loop.sites if site.method == "step" and site.ctx.loop is loop]
    return bool(stepped) and all(name is not None and name in picked | targets for name in stepped)


# What one of a list of callables run in turn is called (`hook`, `cb`), and the list itself
# (`val_hooks`, `self.callbacks`): a plural, since `self.data_handler` may well hand out batches.
_CALLBACK_NAME = re.compile(r"(^|_)(hook|callback|cb|handler)$", re.IGNORECASE)
_CALLBACKS_NAME = re.compile(r"(^|_)(hooks|callbacks|handlers)$", re.IGNORECASE)


def _runs_each_callback(loop: LoopInfo) -> bool:
    """`for hook in val_hooks:` or `for cb in self.callbacks:`: each round hands the event to
    another registered callable. Whatever those may do (a training hook among them), the loop
    runs once per event over a fixed list, never once per batch."""
    node = loop.node
    if type(node) is not cst.For or loop.over_loader or loop.drawn or type(node.target) is not cst.Name:
        return False
    iterable = node.iter
    name = dotted_name(iterable) if type(iterable) in (cst.Name, cst.Attribute) else None
    return bool(_CALLBACK_NAME.search(node.target.value) or (name and _CALLBACKS_NAME.search(name.rsplit(".", 1)[-1])))


def _stepped_optimizer(site) -> Optional[str]:
    """The name of the optimizer a `.step()` call steps: `optimizer` for `optimizer.step()` and
    for `scaler.step(optimizer)`."""
    args = site.node.args
    if len(args) == 1 and args[0].keyword is None and type(args[0].value) is cst.Name:
        return args[0].value.value  # `self.scaler.step(optimizer)`
    name = site.receiver_name
    return name if name is not None and "." not in name and not args else None


def _steps_each(loop: LoopInfo) -> bool:
    """`for optimizer in optimizers: optimizer.step()`: a loop that steps each optimizer of a
    list, with no backward of its own: part of the step of the loop around it, not a training
    loop."""
    if type(loop.node) is not cst.For or not loop.own_step or loop.over_loader:
        return False
    if any(site.method == "backward" for site in loop.sites):
        return False
    return any(site.method == "step" and site.receiver_name in loop.targets for site in loop.sites)


def _under_parameter_test(ctx: Context) -> bool:
    """Some `if` around ``ctx``, in its function, tests one of the function's parameters by name
    (`if mode == "phong":`, `if not train:`): calls may differ in the arm they take."""
    info = ctx.function
    params = set(info.params) if info is not None else set()
    current: Optional[Context] = ctx
    while current is not None and current.function is info:
        guard = current.guard
        if guard is not None and guard.ctx.function is info and any(
                type(node) is cst.Name and node.value in params for node in _test_names(guard.test)):
            return True
        current = current.outer
    return False


def _test_names(test: cst.BaseExpression):
    # Plain names only, not the parts of an attribute (`subtree.iter_names` yields the `mode`
    # of `self.mode`, which is no parameter), through `not`, `and`/`or` and comparisons.
    stack = [test]
    while stack:
        node = stack.pop()
        if type(node) is cst.Name:
            yield node
        elif type(node) is cst.UnaryOperation:
            stack.append(node.expression)
        elif type(node) is cst.BooleanOperation:
            stack.extend((node.left, node.right))
        elif type(node) is cst.Comparison:
            stack.append(node.left)
            stack.extend(c.comparator for c in node.comparisons)


def _yields_only_in_loops(info: FunctionInfo) -> bool:
    """A generator whose every `yield` sits in a loop of its own body."""
    sites = info.yields + info.yields_from
    return info.generator and bool(sites) and all(site.ctx.loop is not None for site in sites)


def _picked_by_mode(model, site, info: FunctionInfo) -> bool:
    """The call runs one of several step functions a trainer's factories made (`step_fn =
    self.valid_step_fn` or `self.train_step_fn` by a `validation` flag, then `step_fn(x, y)` in
    one batch loop), and ``info`` is the one that trains nothing while another trains: it runs
    on the loop's evaluation passes, not on its training steps."""
    if info.direct_marker or info.ctx is None or info.ctx.function is None:
        return False
    targets = model.calls.targets(site)
    return len(targets) > 1 and any(
        other is not info and other.direct_marker and other.ctx is not None and other.ctx.function is not None
        for _, other in targets)


def _project_uses_gpu(model) -> bool:
    """A project file within two imports names CUDA or a device move; or one within three (the
    trainer module a task's runner imports) trains through a framework that places the model."""
    if model.project is None or model.real_path is None:
        return False
    within = model._examples_folder()
    # An example script nothing imports gets its device from what it imports, not from the
    # other examples that share a helper with it (`rl/policies.py` imported by a CUDA example
    # and by CPU-only ones): each is a run of its own.
    alone = within is not None and not model.project.importers(model)
    texts = model.project.related_texts(model.real_path, within=within, imports_only=alone)
    if any(any(word in text for word in CUDA_TEXT) or ".to(device" in text for text in texts):
        return True
    # A class a config file names by dotted path is placed where the config targets are built
    # (`model = instantiate_from_config(config.model).cuda()` in `main.py`).
    users = [u.text or "" for u in model.project.config_target_users(model)]
    if any(any(word in text for word in CUDA_TEXT) or ".to(device" in text for text in users):
        return True
    if vendored(model.real_path, model.project.layout.root):
        # A library copied into the project (peft's model wrappers) serves modes its config picks
        # (prompt learning), most of which the project's trainer never asks for.
        return False
    return any(_PLACING_TRAINER.search(text) for text in model.project.related_texts(model.real_path, 3, within))
