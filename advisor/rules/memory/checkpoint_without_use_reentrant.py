"""GPU405 `checkpoint-without-use-reentrant`: `torch.utils.checkpoint` called without `use_reentrant=`."""

from __future__ import annotations
from typing import Iterator
from advisor.findings import Applicability, Fixable, Severity
from advisor.model import FileModel
from advisor.model.default_flags import seen_turned_on
from advisor.model.file_model import call_argument, star_kwargs
from advisor.rules.base import FixSpec, NodeEdit, Report, Rule, snippet


_CHECKPOINT = ("torch.utils.checkpoint.checkpoint", "torch.utils.checkpoint.checkpoint_sequential")


class CheckpointWithoutUseReentrant(Rule):
    code = "GPU405"
    name = "checkpoint-without-use-reentrant"
    summary = "`torch.utils.checkpoint` called without `use_reentrant=`"
    what = """
        Calls to `torch.utils.checkpoint.checkpoint(...)` and `checkpoint_sequential(...)`,
        however they were imported, that do not pass `use_reentrant`. Calls that forward a
        `**kwargs` dict are left alone, since it may hold the argument. A call under a flag
        that no construction in the project turns on (`if self.use_checkpoint:` whose default
        is False, or `getattr(self.config, "gradient_checkpointing", False)` where no nearby
        file sets that attribute, or `self.model.transformer.grad_checkpointing` of a module a
        library built when no nearby file sets it or calls the library's setter,
        `set_grad_checkpointing()`), or in the true arm of a conditional expression on such a flag
        (`checkpoint(blk, x) if self.use_checkpoint else blk(x)`), is reported as info: the
        project never runs it, though code that builds the module with the flag on would.
        Constructions in test modules do not
        count (a test builds the block with checkpointing on to test it), and a config node's
        setting whose default is False counts as off when no config file or launch script of
        the project turns it on (`use_checkpoint=cfg.MODEL.SWIN.USE_CHECKPOINT`); so does a
        key of a settings dict loaded from config files
        (`cfg['BACKBONE']['FOCAL']['USE_CHECKPOINT']`, `spec.get('ENABLE_CHECKPOINT', False)`)
        that some config file sets and every one sets to a false value. Another module's
        `self.use_checkpoint = ...` is its own class's flag, unless that module derives a class
        from this one's; `with_cp=True` in a comment turns nothing on. In a Hugging Face model
        class built from its config (`config_class = MyConfig`), `with_cp=config.with_cp` is
        the config's `__init__` default unless a `config.json` or YAML file in its folder (or a
        folder above) sets the key to a true value. A call under any other option (`if
        self.use_checkpoint:`, `if args.grad_ckpt:`, `getattr(cfg, "with_cp", False)`) is
        information too unless something in the project is seen turning that option on: a true
        constant given to it in this file or a file near it (`use_checkpoint=True`), the
        library's setter called (`gradient_checkpointing_enable()`), a config file giving it a
        value that is not false, or a launch text passing it (`--use_checkpoint`,
        `--gradient_checkpointing True`), also for the option it is set from one step back
        (`use_checkpoint=args.grad_ckpt`, then `--grad-ckpt` in the README). A setter's own
        body (`def set_grad_checkpointing(self, enable=True)`, and the calls it hands on) turns
        nothing on: only a call of it does. A switch read from a model's config
        (`getattr(self.config, "gradient_checkpointing", False)`) is turned on only on the config
        (`config.gradient_checkpointing = True`, a keyword of its constructor, a config file):
        the library setter, a module's own `self.gradient_checkpointing = True` and the Trainer's
        command-line option set the modules' switch instead. Optional
        checkpointing that no shipped run turns on is the common case, and the warning is about
        a default that only matters where the call runs.
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
    fixable = Fixable.SOMETIMES_UNSAFE
    fix_safety = """
        The fix passes `use_reentrant=False`, the implementation PyTorch recommends. Always
        offered as unsafe: the two implementations differ when no input requires grad, with
        keyword arguments to the checkpointed function, with `torch.autograd.grad` and hooks,
        and in code that relies on the reentrant backward; gradients or errors can change.
        Passing `use_reentrant=True` instead keeps today's behaviour and silences the warning.

        Not offered below torch-version 1.11, which has no `use_reentrant`.
    """
    references = (
        ("torch.utils.checkpoint", "https://docs.pytorch.org/docs/stable/checkpoint.html"),
        ("torch/utils/checkpoint.py", "https://github.com/pytorch/pytorch/blob/main/torch/utils/checkpoint.py"),
        (
            "Performance Tuning Guide: checkpoint intermediate buffers",
            "https://docs.pytorch.org/tutorials/recipes/recipes/tuning_guide.html#checkpoint-intermediate-buffers",
        ),
    )
    requires = (("checkpoint",),)

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
            data = {"function": snippet(model, call.func)}
            off = model.guards.switched_off(site.ctx)
            test = off.test if off is not None else model.guards.switched_off_arm(call, site.ctx, site.order)
            if test is not None:
                data["flag"] = snippet(model, test)
                yield self.report(
                    call,
                    "`{function}` without `use_reentrant=` (under `{flag}`, which no run of the project "
                    "turns on)",
                    severity=Severity.INFO,
                    fix=fix,
                    data=data,
                )
                continue
            flags = model.guards.option_flags(call, site.ctx)
            if flags and not any(seen_turned_on(model, name, in_config=on_config) for _, name, on_config in flags):
                # Optional checkpointing whose switch nothing in the project is seen turning
                # on: most such calls never run in the project's own runs.
                data["flag"] = snippet(model, flags[0][0])
                yield self.report(
                    call,
                    "`{function}` without `use_reentrant=` (under `{flag}`, which nothing in the "
                    "project is seen turning on)",
                    severity=Severity.INFO,
                    fix=fix,
                    data=data,
                )
                continue
            yield self.report(
                call,
                "`{function}` without `use_reentrant=` warns on every call and will "
                "have to choose explicitly",
                fix=fix,
                data=data,
            )
