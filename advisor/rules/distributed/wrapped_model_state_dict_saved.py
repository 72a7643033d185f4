"""GPU503 `wrapped-model-state-dict-saved`: saving a DDP/DataParallel model's `state_dict()` instead of `.module`'s."""

from __future__ import annotations
import re
from typing import Iterator, List, Optional, Set, Tuple
import libcst as cst
from advisor.findings import Applicability, Fixable, Severity
from advisor.model import CallSite, FileModel
from advisor.model.names import dotted_name
from advisor.model.subtree import contains, iter_names
from advisor.model.walk import children
from advisor.rules.base import FixSpec, NodeEdit, Report, Rule


def _save_functions(model: FileModel) -> Set[str]:
    """Same-module functions that end up calling torch.save."""
    savers = {key for key, info in model.facts.functions.items() if info.calls_save}
    changed = True
    while changed:
        changed = False
        for key, info in model.facts.functions.items():
            if key not in savers and info.callees & savers:
                savers.add(key)
                changed = True
    return savers


def _names_and_dotted(node: cst.CSTNode) -> Iterator[str]:
    name = dotted_name(node) if isinstance(node, cst.BaseExpression) else None
    if name is not None:
        yield name
    yield from iter_names(node)


def _plain_arm_of_unwrapping_choice(model: FileModel, site: CallSite) -> bool:
    """The call is one arm of a conditional expression whose other arm reads the same model's
    `.module` (`m.module.state_dict() if distributed else m.state_dict()`, or `m.state_dict()
    if local_rank == -1 else m.module.state_dict()`): the author says when the model is
    wrapped, and this arm is the plain model's."""
    receiver = dotted_name(site.receiver)
    statement = model.statement_of.get(id(site.node))
    if receiver is None or statement is None:
        return False
    if _plain_branch_of_unwrapping_if(model, site, receiver):
        return True
    stack = [statement]
    while stack:
        node = stack.pop()
        if type(node) is cst.IfExp:
            for arm, other in ((node.orelse, node.body), (node.body, node.orelse)):
                if contains(arm, site.node) and _reads(other, receiver + ".module"):
                    return True
        stack.extend(children(node))
    return False


def _plain_branch_of_unwrapping_if(model: FileModel, site: CallSite, receiver: str) -> bool:
    """The call sits in one branch of an `if` whose other branch reads the same model's `.module`
    (`if num_gpu > 1: save(model.module.state_dict()) else: save(model.state_dict())`): the
    author tells the two cases apart, and this branch is the plain model's."""
    ctx = site.ctx
    while ctx is not None and ctx.function is site.ctx.function:
        guard = ctx.guard
        if guard is not None and not guard.exits:
            statement = model.statement_of.get(id(guard.test))
            if type(statement) is cst.If and statement.test is guard.test:
                other = statement.orelse if guard.positive else statement.body
                if other is not None and _reads(other, receiver + ".module"):
                    return True
        ctx = ctx.outer
    return False


def _reads(tree: cst.CSTNode, dotted: str) -> bool:
    stack = [tree]
    while stack:
        node = stack.pop()
        if type(node) is cst.Attribute and dotted_name(node) == dotted:
            return True
        stack.extend(children(node))
    return False


def wrapped_loads(model: FileModel) -> List[Tuple[FileModel, CallSite]]:
    """`load_state_dict(...)` calls on a value that may be a DDP/DataParallel wrapper, in this
    file and in the project files within two imports of it: code that expects checkpoints with
    `module.` keys (a resume into the wrapped model)."""
    return model.shared("distributed.wrapped-loads", _find_wrapped_loads)


def _find_wrapped_loads(model: FileModel) -> List[Tuple[FileModel, CallSite]]:
    found = []
    models = [model]
    if model.project is not None and model.real_path is not None:
        models += model.project.related_models(model.real_path)
    for other in models:
        for site in other.method_calls("load_state_dict"):
            if site.receiver is not None and "ddp" in other.kinds(site.receiver, site.ctx, site.order):
                found.append((other, site))
    return found


# A key rewrite of the project that strips the wrapper's prefix (`k.replace("module.", "")`,
# `k[len("module."):]`, `k.startswith("module.transformer.")`).
_PREFIX_LITERAL = re.compile(r"""['"]module\.[\w.]*['"]""")
# Or cuts its seven characters (`name = k[7:]`), in a file that loads a state dict: a `[7:]`
# elsewhere slices anything.
_SEVEN = re.compile(r"\b\w+\[\s*7\s*:\s*\]")


def strips_prefix(model: FileModel) -> bool:
    """This file, or a project file within two imports of it, names the `module.` prefix in a
    string or, where it loads a state dict, cuts a key's first seven characters (`k[7:]`): the
    project rewrites checkpoint keys itself, so a prefixed checkpoint loads."""
    def compute(model: FileModel) -> bool:
        models = [model]
        if model.project is not None and model.real_path is not None:
            models += model.project.related_models(model.real_path)
        return any(other.text is not None and (
            _PREFIX_LITERAL.search(other.text) or ("load_state_dict" in other.text and _SEVEN.search(other.text))
        ) for other in models)

    return model.shared("distributed.strips-prefix", compute)


class WrappedStateDictSaved(Rule):
    code = "GPU503"
    name = "wrapped-model-state-dict-saved"
    summary = "saving a DDP/DataParallel model's `state_dict()` instead of `.module`'s"
    what = """
        `state_dict()` called on a model wrapped in `DistributedDataParallel` or
        `DataParallel` when the result is saved: passed to `torch.save` directly, inside a
        checkpoint dict, or through a function of the module that saves. It is information
        when this file, or a project file within two imports of it, loads a checkpoint into a
        model that may be wrapped in DDP/DataParallel (a resume into the wrapped model, a
        sampler that wraps before loading): the project reads its checkpoints with their
        `module.` prefix on purpose; so it is when one of those files names the prefix in a
        string (`k.replace("module.", "")`, `k[len("module."):]`) or, in a file that calls
        `load_state_dict`, cuts a key's first seven characters (`k[7:]`): the project rewrites the keys
        when it loads.
    """
    why = """
        A wrapper stores the real model as `.module`, so every key of its state dict starts
        with `module.`. Loading that checkpoint into the plain model fails in strict mode, and
        with `strict=False` it loads nothing at all and says so only in the returned key lists:
        the model quietly keeps its random weights.
    """
    example = """
        model = DDP(model, device_ids=[rank])
        ...
        torch.save(model.state_dict(), "checkpoint.pt")
    """
    instead = """
        model = DDP(model, device_ids=[rank])
        ...
        if rank == 0:
            torch.save(model.module.state_dict(), "checkpoint.pt")
    """
    hint = "save `model.module.state_dict()` so that the keys match the unwrapped model"
    fixable = Fixable.SAFE_OR_UNSAFE
    fix_safety = """
        Where the model is wrapped on every path to the call (built by `DDP(...)` or
        `DataParallel(...)`, or read under `if isinstance(model, DDP):`, `if
        hasattr(model, "module"):` or the same `if args.distributed:` that wrapped it), the fix
        saves `model.module.state_dict()`; where it is wrapped on some paths only, it saves
        `getattr(model, "module", model).state_dict()`, which is the wrapped module under DDP
        and DataParallel and the model itself otherwise. Either way the checkpoint loses its
        `module.` prefix. It assumes:

        - every reader of the checkpoint loads it into an unwrapped model. The fix is offered
          as unsafe, with the line named in its title, when a `load_state_dict(...)` call on
          a value that may be wrapped sits in this file or in a project file within two
          imports of it: a resume into the wrapped model would then fail with missing
          `module.` keys. Scripts of the project that this file neither imports nor is
          imported by are not read, and checkpoints written before the fix keep their prefix;
        - a model that is not wrapped has no attribute of its own named `module` (with one,
          the `getattr` form would save that submodule instead).

        No fix writes `.module` where the tests on the path say the model is not wrapped: the
        `else` of `isinstance(model, DDP)` or of `hasattr(model, "module")` is not reported,
        nor is the `else` arm of a conditional expression whose other arm saves the same
        model's `.module` (`m.module.state_dict() if distributed else m.state_dict()`).
    """
    references = (
        (
            "Saving and loading models: saving torch.nn.DataParallel models",
            "https://docs.pytorch.org/tutorials/beginner/saving_loading_models.html#saving-torch-nn-dataparallel-models",
        ),
        (
            "Getting started with distributed data parallel: save and load checkpoints",
            "https://docs.pytorch.org/tutorials/intermediate/ddp_tutorial.html#save-and-load-checkpoints",
        ),
        (
            "torch/nn/modules/utils.py: `consume_prefix_in_state_dict_if_present`",
            "https://github.com/pytorch/pytorch/blob/main/torch/nn/modules/utils.py",
        ),
    )
    requires = (("state_dict",), ("DistributedDataParallel", "DataParallel", "DDP"))

    def check(self, model: FileModel) -> Iterator[Report]:
        savers: Optional[Set[str]] = None
        for site in model.method_calls("state_dict"):
            if site.receiver is None or site.node.args:
                continue
            kinds = model.kinds(site.receiver, site.ctx, site.order)
            if "ddp" not in kinds:
                continue
            if savers is None:
                savers = _save_functions(model)
            if not self._is_saved(model, site, savers):
                continue
            if _plain_arm_of_unwrapping_choice(model, site):
                continue  # `model.module.state_dict() if distributed else model.state_dict()`
            receiver = model.code(site.receiver)
            verb = "is" if kinds["ddp"] else "may be"
            # A function of the project that never trains wraps a model only to read these
            # checkpoints (`def sample(): model = DataParallel(Net()); model.load_state_dict(...)`):
            # the prefix is the project's convention.
            yield self.report(
                site.node,
                "`{model}` {verb} wrapped in DDP/DataParallel: its state_dict keys then start with "
                "`module.` and will not load into the plain model",
                severity=Severity.INFO if strips_prefix(model) or wrapped_loads(model) else None,
                fix=self._fix(model, site, receiver, kinds["ddp"]),
                data={"model": receiver, "verb": verb},
            )

    def _fix(self, model: FileModel, site: CallSite, receiver: str, wrapped: bool) -> FixSpec:
        if wrapped:
            title, edit = "save `.module.state_dict()`", NodeEdit(site.receiver, ".module", "after")
        else:
            title = "unwrap the model when it is wrapped"
            edit = NodeEdit(site.receiver, f'getattr({receiver}, "module", {receiver})')
        loads = wrapped_loads(model)
        if not loads:
            return FixSpec(title, (edit,))
        other, load = loads[0]
        where = f"line {other.line_of(load.node)}"
        if other is not model:
            where = f"{other.display_name()}:{other.line_of(load.node)}"
        return FixSpec(
            f"{title} ({where} loads a checkpoint into the wrapped model, which would then miss "
            "its `module.` keys)",
            (edit,),
            Applicability.UNSAFE,
        )

    def _is_save_call(self, site: CallSite, savers: Set[str]) -> bool:
        if site.qualname == "torch.save":
            return True
        func = site.node.func
        return type(func) is cst.Name and func.value in savers

    def _is_saved(self, model: FileModel, site: CallSite, savers: Set[str]) -> bool:
        outer = site.outer
        while outer is not None:
            if self._is_save_call(outer, savers):
                return True
            outer = outer.outer
        target = site.assigned_to
        if target is None:
            return False
        candidates = model.calls_to("torch.save") + [
            s for key in savers for s in model.facts.calls_by_callee.get(key, ())
        ]
        for save in candidates:
            if save.ctx.scope != site.ctx.scope or save.order < site.order:
                continue
            if any(target == name for arg in save.node.args for name in _names_and_dotted(arg.value)):
                return True
        return False
