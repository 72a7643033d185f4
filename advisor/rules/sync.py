"""Host-device synchronisation in the training loop (GPU1xx)."""

from __future__ import annotations

import re
from typing import Iterator, List, Optional, Tuple

import libcst as cst

from advisor.findings import Applicability, Severity
from advisor.model import CallSite, Context, FileModel, Heat
from advisor.model.builder import is_periodic_test
from advisor.model.file_model import TENSOR_METHODS, call_argument
from advisor.model.names import dotted_name
from advisor.model.subtree import contains
from advisor.model.walk import children
from advisor.rules.base import Case, FixSpec, NodeEdit, Report, Rule, snippet

_TRAINING_TEXT = ("backward", ".step(")


def _chain_root(expr: cst.BaseExpression) -> cst.BaseExpression:
    """The start of a method chain: `rewards` in `rewards.mean().item()`."""
    while True:
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute):
            expr = expr.func.value
        elif isinstance(expr, (cst.Attribute, cst.Subscript)):
            expr = expr.value
        elif isinstance(expr, (cst.Comparison, cst.BinaryOperation)):
            expr = expr.left  # `(y == 1).sum()`: follow the left operand
        else:
            return expr


def _numpy_value(model: FileModel, expr: cst.BaseExpression, site: CallSite, depth: int = 0) -> bool:
    """The value comes from NumPy (`np.asarray(x).mean()`, a name bound to one): no GPU involved."""
    if isinstance(expr, cst.Call):
        qual = model.imports.qualify(expr.func)
        if qual is not None:
            return qual.split(".")[0] == "numpy"
        if isinstance(expr.func, cst.Attribute):
            return _numpy_value(model, expr.func.value, site, depth)
        return False
    if isinstance(expr, (cst.Attribute, cst.Subscript)):
        return _numpy_value(model, expr.value, site, depth)
    name = dotted_name(expr)
    if name is None or depth > 3:
        return False
    values = [a.value for a in model.assignments(name, site.ctx) if a.value is not None]
    return bool(values) and all(_numpy_value(model, v, site, depth + 1) for v in values)


def _is_module_value(model: FileModel, expr: cst.BaseExpression) -> bool:
    """`transformer.eval().cpu()`, `m.cpu()` where `m.parameters()` is used: moving a model."""
    while isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute):
        if expr.func.attr.value in ("eval", "train"):
            return True
        expr = expr.func.value
    name = dotted_name(expr)
    return name is not None and name in model.module_names()


def _raw_batch_value(model: FileModel, expr: cst.BaseExpression, site: CallSite) -> bool:
    """Rooted at a DataLoader's loop variable that has not been moved yet: still in host memory."""
    root = _chain_root(expr)
    if not isinstance(root, cst.Name):
        return False
    reaching = model.reaching_assignment(root.value, site.ctx, site.order)
    return reaching is not None and reaching.value is None and reaching.kind_hint in ("batch", "loader-batch", "index")


class ItemInTrainingLoop(Rule):
    code = "GPU101"
    name = "item-in-training-loop"
    summary = "`.item()` or `float(tensor)` on every training step"
    what = """
        Calls to `.item()`, and `float()`, `int()` or `bool()` applied to a tensor, inside the
        innermost training loop (the loop that runs `backward()` or `optimizer.step()`, directly
        or through a function it calls). Under a periodic condition such as
        `if step % 100 == 0` or a rank-0 check the finding is only informational.
    """
    why = """
        Turning a CUDA tensor into a Python number copies it to the host, and the copy can only
        happen once every kernel queued before it has finished. The CPU stops queueing work
        while it waits, so the GPU then idles until the CPU catches up. Once per step, this
        removes the overlap between host and device that keeps the GPU busy.
    """
    example = """
        for x, y in loader:
            loss = criterion(model(x.cuda()), y.cuda())
            loss.backward()
            optimizer.step()
            running_loss += loss.item()
    """
    instead = """
        running_loss = torch.zeros((), device="cuda")
        for x, y in loader:
            loss = criterion(model(x.cuda()), y.cuda())
            loss.backward()
            optimizer.step()
            running_loss += loss.detach()
        print(running_loss.item() / len(loader))  # one sync per epoch
    """
    hint = "keep the value on the device (`total += loss.detach()`) and read it once per epoch or every N steps"
    requires = ((".item(", "float(", "int(", "bool("), _TRAINING_TEXT)

    VALID = [
        Case(
            """
            for epoch in range(10):
                for x, y in loader:
                    loss = criterion(model(x), y)
                    loss.backward()
                    optimizer.step()
                print(epoch, loss.item())  # once per epoch, after the inner loop
            """,
            note="per-epoch read",
        ),
        Case(
            """
            import torch

            @torch.no_grad()
            def evaluate(model, loader):
                correct = 0
                for x, y in loader:
                    correct += (model(x).argmax(1) == y).sum().item()
                return correct
            """,
            note="evaluation loop",
        ),
        Case(
            """
            stats = {"lr": 0.1, "wd": 0.0}
            for x, y in loader:
                loss = criterion(model(x), y)
                loss.backward()
                optimizer.step()
                for k, v in stats.items():
                    pass
            """,
            note="dict .items() is not .item()",
        ),
        Case(
            """
            import numpy as np

            for x, y in loader:
                loss = criterion(model(x), y)
                loss.backward()
                optimizer.step()
                scale = np.float32(0.5).item()
            """,
            note="NumPy scalar",
        ),
        Case(
            """
            for step in range(100):
                lr = float(config.lr) * 0.5
                n = int(args.batch_size)
                loss = criterion(model(x), y)
                loss.backward()
                optimizer.step()
            """,
            note="float()/int() of config values",
        ),
        Case(
            """
            import pytorch_lightning as pl

            class Model(pl.LightningModule):
                def training_step(self, batch, batch_idx):
                    loss = self.compute(batch)
                    self.log("loss", loss)
                    return loss
            """,
            note="Lightning training_step has no loop of ours",
        ),
        Case(
            """
            total = 0.0
            for x, y in loader:
                loss = criterion(model(x), y)
                total += loss.item()  # no backward here: an evaluation pass
            """,
            note="no backward, no step",
        ),
        Case(
            """
            from tqdm import tqdm
            for step, (x, y) in tqdm(enumerate(train_loader), total=len(train_loader)):
                loss = criterion(model(x), y)
                loss.backward()
                optimizer.step()
                n = int(step)
            """,
            note="index from tqdm(enumerate(...))",
        ),
        Case(
            """
            import numpy as np
            for x, y in loader:
                loss = criterion(model(x), y)
                loss.backward()
                optimizer.step()
                rewards = np.array(reward_list)
                mean_reward = rewards.mean().item()
            """,
            note="NumPy method chain",
        ),
        Case(
            """
            for x, y in loader:
                positives = (y == 1).sum().item()
                x, y = x.cuda(), y.cuda()
                loss = criterion(model(x), y)
                loss.backward()
                optimizer.step()
            """,
            note="labels still in host memory",
        ),
    ]
    INVALID = [
        Case(
            """
            for x, y in loader:
                loss = criterion(model(x), y)
                loss.backward()
                optimizer.step()
                total += loss.item()  # expect: GPU101
            """
        ),
        Case(
            """
            def train_step(model, batch, optimizer):
                loss = compute_loss(model, batch)
                loss.backward()
                optimizer.step()
                return loss.item()  # expect: GPU101

            for epoch in range(3):
                for batch in train_loader:
                    train_step(model, batch, optimizer)
            """,
            note="inside a helper the hot loop calls",
        ),
        Case(
            """
            for i, (x, y) in enumerate(loader):
                loss = criterion(model(x), y)
                scaler.scale(loss).backward()
                scaler.step(opt)
                scaler.update()
                if i % 50 == 0:
                    print("loss", loss.item())  # expect: GPU101 info
            """,
            note="periodic logging is info",
        ),
        Case(
            """
            while step < max_steps:
                out = model(batch)
                loss = out.loss
                accelerator.backward(loss)
                optimizer.step()
                losses.append(float(loss))  # expect: GPU101
                step += 1
            """,
            note="float(tensor) in a while loop",
        ),
        Case(
            """
            import torch

            class Trainer:
                def train_epoch(self, loader):
                    for batch in loader:
                        loss = self.model(batch.to(self.device)).mean()
                        loss.backward()
                        self.optimizer.step()
                        if bool(torch.isnan(loss)):  # expect: GPU101
                            break
                        self.history.append(loss.detach().item())  # expect: GPU101
            """,
            note="methods and bool(tensor)",
        ),
        Case(
            """
            for x, y in loader:
                loss = criterion(model(x), y)
                loss.backward()
                optimizer.step()
                if rank == 0:
                    acc = (model(x).argmax(1) == y).float().mean().item()  # expect: GPU101 info
            """,
            note="rank-0 gate",
        ),
        Case(
            """
            import torch
            for it in range(max_iters):
                for micro_step in range(accum_steps):
                    x, y = get_batch("train", device="cuda")
                    loss = model(x, y) / accum_steps
                    loss.backward()
                optimizer.step()
                optimizer.zero_grad(set_to_none=True)
                lossf = loss.item() * accum_steps  # expect: GPU101
            """,
            note="outer loop of micro-batch accumulation steps the optimizer",
        ),
        Case(
            """
            import torch
            w = torch.randn(3, requires_grad=True)
            opt = torch.optim.SGD([w], lr=0.1)
            for x, y in data:
                loss = ((x @ w - y) ** 2).mean()
                loss.backward()
                opt.step()
                print(loss.item())  # expect: GPU101 info
            """,
            note="a script with no sign of a GPU: info",
        ),
        Case(
            """
            def compute_loss(model, batch):
                return model(batch).mean()

            for batch in loader:
                loss = compute_loss(model, batch)
                scaler.scale(loss).backward()
                scaler.step(optimizer)
                scaler.update()
                history.append(float(loss))  # expect: GPU101
            """,
            note="loss from a helper, backward through the scaler",
        ),
        Case(
            """
            import torch
            for t in range(total_steps):
                q = q_net(torch.as_tensor(obs, device="cuda"))
                action = q.argmax().item()  # expect: GPU101 info
                obs, reward, done, info = env.step(action)
                loss = td_loss(buffer.sample(64))
                loss.backward()
                optimizer.step()
            """,
            note="RL: the environment needs the action on the host",
        ),
        Case(
            """
            import torch
            for step, (x, y) in enumerate(loader):
                loss = criterion(model(x), y)
                loss.backward()
                optimizer.step()
                if step in eval_steps:
                    with torch.no_grad():
                        for vx, vy in val_loader:
                            hits += (model(vx).argmax(1) == vy).sum().item()  # expect: GPU101 info
            """,
            note="evaluation nested in the training loop",
        ),
        Case(
            """
            class Base:
                def fit(self, loader):
                    for batch in loader:
                        loss = self.training_step(batch)
                        self.losses.append(loss.item())  # expect: GPU101

            class Child(Base):
                def training_step(self, batch):
                    loss = self.criterion(self.model(batch), batch["y"])
                    loss.backward()
                    self.optimizer.step()
                    return loss
            """,
            note="step defined in a subclass",
        ),
    ]

    def check(self, model: FileModel) -> Iterator[Report]:
        for site in model.method_calls("item"):
            if site.node.args:
                continue
            heat = model.sync_heat(site.ctx)
            if heat is None or _numpy_value(model, site.receiver, site) or _raw_batch_value(model, site.receiver, site):
                continue
            yield self.report(
                site.node,
                f"`{snippet(model, site.node)}` waits for the GPU on every training step",
                severity=self.severity_for(heat),
            )
        for builtin in ("float", "int", "bool"):
            for site in model.facts.calls_by_callee.get(builtin, ()):
                args = site.node.args
                if len(args) != 1 or args[0].keyword is not None or args[0].star:
                    continue
                heat = model.sync_heat(site.ctx)
                if heat is None or not model.is_tensor(args[0].value, site.ctx):
                    continue
                yield self.report(
                    site.node,
                    f"`{snippet(model, site.node)}` converts a tensor to a Python value, "
                    "waiting for the GPU on every training step",
                    severity=self.severity_for(heat),
                )


_LOGGER_NAME = re.compile(r"(^|_)(log|logger|logging|LOGGER|LOG)$")
_LOG_METHODS = frozenset({"debug", "info", "warning", "warn", "error", "critical", "exception", "log"})


class TensorFormattedInTrainingLoop(Rule):
    code = "GPU102"
    name = "tensor-printed-in-training-loop"
    summary = "printing, logging or formatting a tensor on every training step"
    what = """
        A tensor passed to `print`, to a `logging` call, to an f-string or `%`/`.format`
        formatting, to `str()`, or to a progress bar or metrics writer (`set_postfix`,
        `add_scalar`, `wandb.log`) inside the innermost training loop. Values that are already
        Python numbers are left alone (the `.item()` that made them is GPU101's finding).
    """
    why = """
        Rendering a tensor as text needs its values on the host: `print(loss)` and
        `f"{loss:.4f}"` copy the tensor back and wait for every queued kernel, exactly like
        `.item()`. It is easy to miss because nothing in the line looks like a copy.
    """
    example = """
        for step, (x, y) in enumerate(loader):
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()
            print(f"step {step}: loss {loss:.4f}")
    """
    instead = """
        for step, (x, y) in enumerate(loader):
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()
            if step % 100 == 0:
                print(f"step {step}: loss {loss.item():.4f}")
    """
    hint = "log every N steps, or keep a device-side running value and print it once per epoch"
    requires = (
        ("print(", "log", "format", 'f"', "f'", "%", "str(", "set_postfix", "add_scalar", "set_description"),
        _TRAINING_TEXT,
    )

    VALID = [
        Case(
            """
            for x, y in loader:
                loss = criterion(model(x), y)
                loss.backward()
                optimizer.step()
                loss_value = loss.item()
                print(f"loss {loss_value:.3f}")
            """,
            note="already a Python float",
        ),
        Case(
            """
            for epoch in range(epochs):
                for x, y in loader:
                    loss = criterion(model(x), y)
                    loss.backward()
                    optimizer.step()
                print(f"epoch {epoch} done, last loss {loss}")
            """,
            note="once per epoch",
        ),
        Case(
            """
            import lightning as L

            class Net(L.LightningModule):
                def training_step(self, batch, batch_idx):
                    loss = self.loss_fn(self(batch[0]), batch[1])
                    self.log("train_loss", loss, prog_bar=True)
                    return loss
            """,
            note="Lightning logs lazily",
        ),
        Case(
            """
            for step, (x, y) in enumerate(loader):
                loss = criterion(model(x), y)
                loss.backward()
                optimizer.step()
                logger.info("step %d of %d", step, len(loader))
                print(f"lr={scheduler.get_last_lr()[0]}")
            """,
            note="ints and floats",
        ),
        Case(
            """
            with torch.no_grad():
                for x, y in val_loader:
                    out = model(x)
                    print(out)
            """,
            note="evaluation",
        ),
        Case(
            """
            for x, y in loader:
                loss = criterion(model(x), y)
                loss.backward()
                optimizer.step()
                pbar.set_postfix(loss=loss.item())
            """,
            note="set_postfix with a float is GPU101's business",
        ),
        Case(
            """
            import logging
            logger = logging.getLogger(__name__)
            for batch in train_loader:
                names = batch["filename"]
                inputs = batch["pixel_values"].cuda(non_blocking=True)
                loss = model(inputs).loss
                loss.backward()
                optimizer.step()
                logger.debug(f"files {names}")
            """,
            note="non-tensor batch fields",
        ),
    ]
    INVALID = [
        Case(
            """
            for x, y in loader:
                loss = criterion(model(x), y)
                loss.backward()
                optimizer.step()
                print(loss)  # expect: GPU102
            """
        ),
        Case(
            """
            for step, batch in enumerate(train_loader):
                outputs = model(**batch)
                outputs.loss.backward()
                optimizer.step()
                print(f"step {step} loss {outputs.loss:.4f}")  # expect: GPU102
            """,
            note="f-string with a format spec",
        ),
        Case(
            """
            import logging
            logger = logging.getLogger(__name__)
            for x, y in loader:
                loss = F.cross_entropy(model(x), y)
                loss.backward()
                optimizer.step()
                logger.info("loss %s", loss)  # expect: GPU102
            """
        ),
        Case(
            """
            for i, (x, y) in enumerate(loader):
                loss = criterion(model(x), y)
                loss.backward()
                optimizer.step()
                pbar.set_postfix(loss=loss)  # expect: GPU102
                writer.add_scalar("train/loss", loss, i)  # expect: GPU102
            """,
            note="progress bars and TensorBoard",
        ),
        Case(
            """
            for i, (x, y) in enumerate(loader):
                loss = criterion(model(x), y)
                loss.backward()
                optimizer.step()
                if i % 100 == 0:
                    print("loss: %.4f" % loss)  # expect: GPU102 info
            """,
            note="gated %-format",
        ),
        Case(
            """
            def log_step(step, loss):
                print("step", step, "loss", loss)  # expect: GPU102

            for step, (x, y) in enumerate(loader):
                loss = criterion(model(x), y)
                loss.backward()
                optimizer.step()
                log_step(step, loss)
            """,
            note="through a helper",
        ),
        Case(
            """
            for x, y in loader:
                loss = criterion(model(x), y)
                loss.backward()
                optimizer.step()
                metrics = {"loss": loss, "lr": lr}
                print(metrics)  # expect: GPU102
                print("loss: {:.4f}".format(loss))  # expect: GPU102
            """,
            note="dict of tensors, str.format",
        ),
        Case(
            """
            import wandb
            run = wandb.init(project="demo")
            for step, (x, y) in enumerate(loader):
                out = model(x)
                loss = criterion(out, y)
                loss.backward()
                optimizer.step()
                acc = (out.argmax(1) == y).float().mean()
                run.log({"loss": loss}, step=step)  # expect: GPU102
                print(f"acc {acc:.3f}")  # expect: GPU102
            """,
            note="wandb run object and a comparison-derived tensor",
        ),
    ]

    def _tensor_args(self, model: FileModel, site: CallSite) -> Iterator[cst.BaseExpression]:
        for arg in site.node.args:
            value = arg.value
            if isinstance(value, cst.Dict):
                yield from self._tensor_values(model, value, site)
            elif arg.star:
                continue
            elif model.is_tensor(value, site.ctx):
                yield value
            elif isinstance(value, cst.Name):
                # `metrics = {"loss": loss}; print(metrics)`: report the dict at the call.
                found = model.assignments(value.value, site.ctx)
                if len(found) == 1 and isinstance(found[0].value, cst.Dict):
                    if any(True for _ in self._tensor_values(model, found[0].value, site)):
                        yield value

    def _tensor_values(self, model: FileModel, value: cst.Dict, site: CallSite) -> Iterator[cst.BaseExpression]:
        for element in value.elements:
            if isinstance(element, cst.DictElement) and model.is_tensor(element.value, site.ctx):
                yield element.value

    def _sinks(self, model: FileModel) -> Iterator[CallSite]:
        facts = model.facts
        for name in ("print", "str", "repr"):
            yield from facts.calls_by_callee.get(name, ())
        for method in _LOG_METHODS:
            for site in facts.calls_by_method.get(method, ()):
                qual = site.qualname or ""
                receiver = (site.receiver_name or "").rsplit(".", 1)[-1]
                if qual.startswith("logging.") or _LOGGER_NAME.search(receiver):
                    yield site
        for method in ("set_postfix", "set_description", "set_postfix_str", "add_scalar", "add_scalars"):
            yield from facts.calls_by_method.get(method, ())
        for site in facts.calls_by_method.get("format", ()):
            if isinstance(site.receiver, (cst.SimpleString, cst.ConcatenatedString)):
                yield site
        yield from model.calls_to("wandb.log", "mlflow.log_metric", "mlflow.log_metrics")
        for site in facts.calls_by_method.get("log", ()):
            # run = wandb.init(...); run.log({...})
            if site.receiver_name and any(
                isinstance(a.value, cst.Call) and model.imports.qualify(a.value.func) == "wandb.init"
                for a in model.assignments(site.receiver_name, site.ctx)
            ):
                yield site

    def check(self, model: FileModel) -> Iterator[Report]:
        for site in self._sinks(model):
            heat = model.sync_heat(site.ctx)
            if heat is None:
                continue
            for value in self._tensor_args(model, site):
                yield self._report(model, value, heat)
        for formatted in model.facts.formatted:
            heat = model.sync_heat(formatted.ctx)
            if heat is not None and model.is_tensor(formatted.expr, formatted.ctx):
                yield self._report(model, formatted.expr, heat)

    def _report(self, model: FileModel, value: cst.BaseExpression, heat: Heat) -> Report:
        return self.report(
            value,
            f"formatting tensor `{snippet(model, value)}` copies it to the host and waits for the GPU "
            "on every training step",
            severity=self.severity_for(heat),
        )


_HOST_DEVICES = frozenset({'"cpu"', "'cpu'"})


def _moves_to_host(model: FileModel, site: CallSite) -> bool:
    if site.method == "cpu":
        return True
    if site.method != "to":
        return False
    target = call_argument(site.node, "device", 0)
    if target is None:
        return False
    value = target.value
    if isinstance(value, cst.Call) and model.imports.qualify(value.func) == "torch.device" and value.args:
        value = value.args[0].value
    return isinstance(value, cst.SimpleString) and value.value in _HOST_DEVICES


def _chain_has_host_copy(model: FileModel, expr: Optional[cst.BaseExpression]) -> bool:
    while isinstance(expr, (cst.Call, cst.Attribute, cst.Subscript)):
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute):
            if expr.func.attr.value in ("cpu", "numpy", "tolist", "item"):
                return True
            if expr.func.attr.value == "to" and expr.args:
                first = expr.args[0].value
                if isinstance(first, cst.SimpleString) and first.value in _HOST_DEVICES:
                    return True
        expr = expr.func if isinstance(expr, cst.Call) else expr.value
    return False


class HostCopyInTrainingLoop(Rule):
    code = "GPU103"
    name = "host-copy-in-training-loop"
    summary = "device-to-host copy (`.cpu()`, `.numpy()`, `.tolist()`) on every training step"
    what = """
        `.cpu()`, `.to("cpu")`, `.numpy()` and `.tolist()` on tensors inside the innermost
        training loop. A chain such as `out.detach().cpu().numpy()` is reported once.
    """
    why = """
        A copy from the GPU to ordinary host memory is synchronous: the host waits until the
        kernels producing the tensor have run and the bytes have arrived. Done every step (to
        collect predictions or compute a metric with NumPy) it stalls the pipeline that keeps
        the GPU fed, and the transfer itself crosses the slow host link.
    """
    example = """
        for x, y in loader:
            out = model(x)
            loss = criterion(out, y)
            loss.backward()
            optimizer.step()
            all_preds.extend(out.argmax(1).cpu().tolist())
    """
    instead = """
        preds = []
        for x, y in loader:
            out = model(x)
            loss = criterion(out, y)
            loss.backward()
            optimizer.step()
            preds.append(out.argmax(1).detach())  # stays on the GPU
        all_preds = torch.cat(preds).cpu().tolist()  # one copy per epoch
    """
    hint = "keep results on the device (append, then `torch.cat`) and copy them once per epoch"
    requires = ((".cpu(", ".numpy(", ".tolist(", "cpu"), _TRAINING_TEXT)

    VALID = [
        Case(
            """
            for epoch in range(epochs):
                for x, y in loader:
                    loss = criterion(model(x), y)
                    loss.backward()
                    optimizer.step()
                history.append(loss.detach().cpu().numpy())
            """,
            note="per epoch",
        ),
        Case(
            """
            model.cpu()
            torch.save(model.state_dict(), "model.pt")
            """,
            note="outside any loop",
        ),
        Case(
            """
            import numpy as np
            for x, y in loader:
                loss = criterion(model(x), y)
                loss.backward()
                optimizer.step()
                ids = np.arange(4).tolist()
            """,
            note="NumPy array",
        ),
        Case(
            """
            @torch.inference_mode()
            def predict(model, loader):
                return [model(x).cpu().numpy() for x in loader]
            """,
            note="inference",
        ),
        Case(
            """
            for x, y in loader:
                x = x.to(device, non_blocking=True)
                y = y.to(torch.float32)
                loss = criterion(model(x), y)
                loss.backward()
                optimizer.step()
            """,
            note="host-to-device and dtype moves",
        ),
        Case(
            """
            for step, (x, y) in enumerate(loader):
                loss = criterion(model(x), y)
                loss.backward()
                optimizer.step()
            model.to("cpu")
            """,
            note="after training",
        ),
        Case(
            """
            for x, y in loader:
                x_np = x.numpy()
                ids = y.tolist()
                x = x.cuda(non_blocking=True)
                loss = criterion(model(x), y.cuda())
                loss.backward()
                optimizer.step()
            """,
            note="the batch before it is moved",
        ),
        Case(
            """
            for batch_id, (x, _) in enumerate(loader):
                loss = criterion(transformer(x.cuda()), target)
                loss.backward()
                optimizer.step()
                if (batch_id + 1) % 1000 == 0:
                    transformer.eval().cpu()
                    torch.save(transformer.state_dict(), path)
                    transformer.to(device).train()
                grads = [p.grad for p in worker_model.cpu().parameters()]
            """,
            note="moving a model, not copying a tensor",
        ),
    ]
    INVALID = [
        Case(
            """
            for x, y in loader:
                out = model(x)
                loss = criterion(out, y)
                loss.backward()
                optimizer.step()
                preds.extend(out.argmax(1).cpu().numpy())  # expect: GPU103
            """,
            note="one finding per chain",
        ),
        Case(
            """
            for x, y in loader:
                loss = criterion(model(x), y)
                loss.backward()
                optimizer.step()
                losses.append(loss.detach().to("cpu"))  # expect: GPU103
            """
        ),
        Case(
            """
            for batch in loader:
                logits = model(batch["x"])
                loss = F.cross_entropy(logits, batch["y"])
                loss.backward()
                optimizer.step()
                labels = logits.argmax(-1).tolist()  # expect: GPU103
            """
        ),
        Case(
            """
            def step(model, batch, opt):
                out = model(batch)
                out.mean().backward()
                opt.step()
                return out.detach().numpy()  # expect: GPU103

            for batch in loader:
                step(model, batch, opt)
            """,
            note="through a helper",
        ),
        Case(
            """
            for i, (x, y) in enumerate(loader):
                out = model(x)
                loss = criterion(out, y)
                loss.backward()
                optimizer.step()
                if i % 10 == 0:
                    sample = out[0].cpu()  # expect: GPU103 info
            """,
            note="gated",
        ),
        Case(
            """
            import torch
            for episode in range(1000):
                obs, done = env.reset(), False
                while not done:
                    dist = policy(torch.from_numpy(obs).cuda())
                    action = dist.sample()
                    obs, r, done, _ = env.step(action.cpu().numpy())  # expect: GPU103 info
                loss = policy_loss(episode_buffer)
                loss.backward()
                optimizer.step()
            """,
            note="RL environment step",
        ),
    ]

    def check(self, model: FileModel) -> Iterator[Report]:
        for site in model.method_calls("cpu", "to", "numpy", "tolist"):
            if site.method in ("cpu", "to") and not _moves_to_host(model, site):
                continue
            heat = model.sync_heat(site.ctx)
            if heat is None or _chain_has_host_copy(model, site.receiver):
                continue
            if _raw_batch_value(model, site.receiver, site):
                continue
            if site.method == "tolist" and not model.is_tensor(site.receiver, site.ctx):
                continue
            if site.method == "numpy" and _numpy_value(model, site.receiver, site):
                continue
            kinds = model.kinds(site.receiver, site.ctx, site.order)
            if "module" in kinds or "ddp" in kinds or _is_module_value(model, site.receiver):
                continue
            yield self.report(
                site.node,
                f"`.{site.method}()` copies `{snippet(model, site.receiver, 30)}` to the host and waits "
                "for the GPU on every training step",
                severity=self.severity_for(heat),
            )


_SYNC_RECEIVER = re.compile(r"stream|event", re.IGNORECASE)
_SYNC_FUNCTIONS = ("torch.cuda.synchronize", "torch.accelerator.synchronize", "torch.cuda.current_stream")


class SynchronizeInTrainingLoop(Rule):
    code = "GPU105"
    name = "synchronize-in-training-loop"
    summary = "`torch.cuda.synchronize()` on every training step"
    what = """
        `torch.cuda.synchronize()`, `torch.accelerator.synchronize()` and `Stream`/`Event`
        `.synchronize()` inside the innermost training loop. Calls next to timing code (a
        `time.perf_counter()` call or `elapsed_time` within a few statements) are left alone:
        timing GPU work needs them.
    """
    why = """
        An explicit synchronize blocks the host until every queued kernel has finished, so the
        GPU runs dry while the host prepares the next step. Outside of measurements it is
        usually left over from debugging. CUDA's sync-debug mode does not report it either.
    """
    example = """
        for x, y in loader:
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()
            torch.cuda.synchronize()
    """
    instead = """
        for x, y in loader:
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()
    """
    hint = "remove it, or keep it only around the code you time"
    requires = (("synchronize",), _TRAINING_TEXT)

    VALID = [
        Case(
            """
            import time, torch
            for x, y in loader:
                torch.cuda.synchronize()
                t0 = time.perf_counter()
                loss = criterion(model(x), y)
                loss.backward()
                optimizer.step()
                torch.cuda.synchronize()
                step_times.append(time.perf_counter() - t0)
            """,
            note="timing",
        ),
        Case(
            """
            import torch
            for epoch in range(3):
                for x, y in loader:
                    loss = criterion(model(x), y)
                    loss.backward()
                    optimizer.step()
                torch.cuda.synchronize()
            """,
            note="once per epoch",
        ),
        Case(
            """
            import torch
            def benchmark(model, x):
                for _ in range(10):
                    model(x)
                torch.cuda.synchronize()
            """,
            note="no training",
        ),
        Case(
            """
            import torch
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            for x, y in loader:
                start.record()
                loss = criterion(model(x), y)
                loss.backward()
                optimizer.step()
                end.record()
                end.synchronize()
                times.append(start.elapsed_time(end))
            """,
            note="event timing",
        ),
        Case(
            """
            for x, y in loader:
                loss = criterion(model(x), y)
                loss.backward()
                optimizer.step()
                barrier.synchronize_all()
                queue.sync()
            """,
            note="other synchronisation primitives",
        ),
        Case(
            """
            import torch
            torch.cuda.synchronize()
            main()
            """,
            note="module level",
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
                torch.cuda.synchronize()  # expect: GPU105
            """
        ),
        Case(
            """
            from torch import cuda
            for x, y in loader:
                loss = criterion(model(x), y)
                loss.backward()
                optimizer.step()
                cuda.synchronize()  # expect: GPU105
            """,
            note="aliased module",
        ),
        Case(
            """
            import torch
            stream = torch.cuda.Stream()
            for x, y in loader:
                with torch.cuda.stream(stream):
                    x = x.cuda(non_blocking=True)
                stream.synchronize()  # expect: GPU105
                loss = criterion(model(x), y)
                loss.backward()
                optimizer.step()
            """,
            note="stream synchronize",
        ),
        Case(
            """
            import torch
            def train_step(batch):
                loss = model(batch).mean()
                loss.backward()
                optimizer.step()
                torch.cuda.current_stream().synchronize()  # expect: GPU105

            for batch in loader:
                train_step(batch)
            """,
            note="through a helper",
        ),
        Case(
            """
            import torch
            for step, (x, y) in enumerate(loader):
                loss = criterion(model(x), y)
                loss.backward()
                optimizer.step()
                if step % 100 == 0:
                    torch.cuda.synchronize()  # expect: GPU105 info
            """,
            note="gated",
        ),
    ]

    def _is_sync(self, model: FileModel, site: CallSite) -> bool:
        if site.qualname in ("torch.cuda.synchronize", "torch.accelerator.synchronize"):
            return True
        if site.method != "synchronize" or site.node.args:
            return False
        receiver = site.receiver
        if isinstance(receiver, cst.Call):
            return model.imports.qualify(receiver.func) in _SYNC_FUNCTIONS or (
                (model.imports.qualify(receiver.func) or "").startswith("torch.cuda.")
            )
        name = site.receiver_name or ""
        if _SYNC_RECEIVER.search(name.rsplit(".", 1)[-1]):
            return True
        # A name bound to torch.cuda.Event()/Stream()/current_stream(), whatever it is called.
        for assignment in model.assignments(name, site.ctx) if name else ():
            value = assignment.value
            if isinstance(value, cst.Call) and (model.imports.qualify(value.func) or "").startswith("torch.cuda."):
                return True
        return False

    def _near_timing(self, model: FileModel, site: CallSite) -> bool:
        block, index = site.stmt
        timing = model.facts.timing_statements.get(block, ())
        return any(abs(i - index) <= 3 for i in timing)

    def check(self, model: FileModel) -> Iterator[Report]:
        sites = model.calls_to("torch.cuda.synchronize", "torch.accelerator.synchronize")
        sites += [s for s in model.method_calls("synchronize") if s.qualname is None]
        for site in sites:
            if not self._is_sync(model, site):
                continue
            heat = model.sync_heat(site.ctx)
            if heat is None or self._near_timing(model, site):
                continue
            yield self.report(
                site.node,
                "explicit synchronize blocks the host until the GPU is idle, on every training step",
                severity=self.severity_for(heat),
            )


# -- GPU104: data-dependent synchronisation ------------------------------------------------

# Factories that, without `device=`, build a tensor in host memory: tests on them never wait for the GPU.
_HOST_FACTORIES = frozenset(
    "tensor as_tensor from_numpy zeros ones empty full rand randn randint randperm arange linspace".split()
)
# Calls whose output size depends on the data: the host must read a count back from the GPU.
_SIZE_SYNC_FUNCTIONS = frozenset(
    {"torch.nonzero", "torch.argwhere", "torch.masked_select", "torch.unique", "torch.unique_consecutive"}
)
_SIZE_SYNC_METHODS = frozenset({"nonzero", "argwhere", "masked_select", "unique", "unique_consecutive"})
_MASK_FUNCTIONS = frozenset(
    "isnan isinf isfinite isneginf isposinf logical_not logical_and logical_or logical_xor eq ne gt lt ge le "
    "greater less greater_equal less_equal not_equal isin".split()
)
_MASK_METHODS = _MASK_FUNCTIONS | {"bool"}
_VALUE_COMPARISONS = (
    cst.Equal,
    cst.NotEqual,
    cst.LessThan,
    cst.GreaterThan,
    cst.LessThanEqual,
    cst.GreaterThanEqual,
)
_RAW_HINTS = ("batch", "loader-batch", "index")


# Tensor methods that return tensors: those the model knows, and predicates and casts.
_MORE_TENSOR_METHODS = TENSOR_METHODS | frozenset(
    "any all isnan isinf isfinite logical_not logical_and logical_or eq ne gt lt ge le bool int".split()
)


def _value_root(model: FileModel, expr: cst.BaseExpression) -> cst.BaseExpression:
    """Like `_chain_root`, but stops at a call of an imported function (`torch.rand(1)`)."""
    while True:
        if isinstance(expr, cst.Call):
            if model.imports.qualify(expr.func) is not None or not isinstance(expr.func, cst.Attribute):
                return expr
            expr = expr.func.value
        elif isinstance(expr, (cst.Attribute, cst.Subscript)):
            expr = expr.value
        elif isinstance(expr, (cst.Comparison, cst.BinaryOperation)):
            expr = expr.left
        elif isinstance(expr, cst.UnaryOperation):
            expr = expr.expression
        else:
            return expr


def _is_tensor(model: FileModel, expr: cst.BaseExpression, ctx, depth: int = 0) -> bool:
    """`model.is_tensor`, plus reductions and predicates on tensors (`(x != 0).any()`) and names
    bound only to a batch field moved to the device (`labels = batch["labels"].cuda()`)."""
    if depth > 6:
        return False
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and model.imports.qualify(expr.func) is None:
        if expr.func.attr.value in _MORE_TENSOR_METHODS:
            return _is_tensor(model, expr.func.value, ctx, depth + 1)
    if isinstance(expr, cst.UnaryOperation) and not isinstance(expr.operator, cst.Not):
        return _is_tensor(model, expr.expression, ctx, depth + 1)
    if isinstance(expr, cst.Comparison):
        return _is_tensor(model, expr.left, ctx, depth + 1) or any(
            _is_tensor(model, c.comparator, ctx, depth + 1) for c in expr.comparisons
        )
    if isinstance(expr, cst.BinaryOperation):
        return _is_tensor(model, expr.left, ctx, depth + 1) or _is_tensor(model, expr.right, ctx, depth + 1)
    if isinstance(expr, cst.Subscript):
        return _is_tensor(model, expr.value, ctx, depth + 1)
    if model.is_tensor(expr, ctx):
        return True
    if isinstance(expr, cst.Name):
        found = model.assignments(expr.value, ctx)
        return bool(found) and all(_moved_batch_field(model, a.value, a.ctx) and a.index is None for a in found)
    return False


def _moved_batch_field(model: FileModel, value: Optional[cst.BaseExpression], ctx) -> bool:
    """`batch["labels"].cuda()`, `batch[1].to(device, non_blocking=True)`: a tensor on the device."""
    return (
        isinstance(value, cst.Call)
        and isinstance(value.func, cst.Attribute)
        and isinstance(value.func.value, cst.Subscript)
        and _moves_to_device(model, value, ctx)
        and _device_kind(model, _move_target(value), ctx) == "cuda"
    )


def _move_target(call: cst.Call) -> cst.BaseExpression:
    if isinstance(call.func, cst.Attribute) and call.func.attr.value == "cuda":
        return cst.SimpleString('"cuda"')
    target = call_argument(call, "device", 0)
    return target.value if target is not None else cst.Name("None")


def _data_root(model: FileModel, expr: cst.BaseExpression) -> cst.BaseExpression:
    """The value an expression computes from: `y` in `torch.isnan(y).any()` or `(y == 0).all()`."""
    for _ in range(8):
        root = _value_root(model, expr)
        if not (isinstance(root, cst.Call) and root.args and not root.args[0].star):
            return root
        if not (model.imports.qualify(root.func) or "").startswith("torch."):
            return root
        expr = root.args[0].value
    return expr


def _still_on_host(model: FileModel, name: str, ctx, order: float, node: cst.CSTNode, depth: int = 0) -> bool:
    """``name`` holds, at ``order``, a loader's loop variable or a part of one (`x[valid]`,
    `batch["x"]`, `x, y = batch`, `x.to(torch.float16)`) that no device move has touched yet."""
    reaching = _reaching(model, name, ctx, order, node)
    return reaching is not None and _binding_on_host(model, reaching, depth)


def _binding_on_host(model: FileModel, assignment, depth: int = 0) -> bool:
    value = assignment.value
    if value is None:
        return assignment.kind_hint in _RAW_HINTS
    if depth > 4:
        return False
    if assignment.index is not None:
        if not isinstance(value, (cst.Tuple, cst.List)):
            value = value if isinstance(value, cst.Name) else None
        elif assignment.index < len(value.elements):
            value = value.elements[assignment.index].value
        else:
            value = None
    node = value
    while isinstance(node, (cst.Attribute, cst.Subscript, cst.Call)):
        if isinstance(node, cst.Call):
            if not isinstance(node.func, cst.Attribute) or _moves_to_device(model, node, assignment.ctx):
                return False
            node = node.func.value
        else:
            node = node.value
    if not isinstance(node, cst.Name):
        return False
    where = assignment.statement or value
    return _still_on_host(model, node.value, assignment.ctx, assignment.order, where, depth + 1)


def _moves_to_device(model: FileModel, call: cst.Call, ctx) -> bool:
    """`.cuda(...)`, or `.to(...)` unless it only changes the dtype or goes to the CPU."""
    method = call.func.attr.value if isinstance(call.func, cst.Attribute) else None
    if method == "cuda":
        return True
    if method != "to":
        return False
    target = call_argument(call, "device", 0)
    if target is None or _is_dtype(model, target.value):
        return False
    return _device_kind(model, target.value, ctx) != "host"


def _host_factory(model: FileModel, expr: cst.BaseExpression) -> bool:
    """`torch.rand(1)`, `torch.tensor(x)`: made in host memory (no `device=`)."""
    root = _value_root(model, expr)
    if not isinstance(root, cst.Call):
        return False
    qual = model.imports.qualify(root.func) or ""
    head, _, last = qual.rpartition(".")
    if head != "torch" or last not in _HOST_FACTORIES:
        return False
    if any(a.star for a in root.args) or call_argument(root, "device", None) is not None:
        return False
    # `torch.zeros(3).cuda()`: the chain moves it afterwards.
    node = expr
    while isinstance(node, (cst.Call, cst.Attribute, cst.Subscript)) and node is not root:
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
            if node.func.attr.value in ("cuda", "to"):
                return False
        node = node.func if isinstance(node, cst.Call) else node.value
    return True


def _host_value(model: FileModel, expr: cst.BaseExpression, ctx, depth: int = 0) -> bool:
    """The expression is a tensor in host memory: a factory without `device=`, or a name only
    ever bound to one (`coin = torch.rand(1)`)."""
    if _host_factory(model, expr):
        return True
    root = _value_root(model, expr)
    if not isinstance(root, cst.Name) or depth > 2:
        return False
    found = [a for a in model.assignments(root.value, ctx)]
    return bool(found) and all(
        a.value is not None and a.index is None and _host_value(model, a.value, a.ctx, depth + 1) for a in found
    )


def _reaching(model: FileModel, name: str, ctx, order: float, node: cst.CSTNode):
    """The assignment of ``name`` that reaches ``node`` (at ``order``), ignoring the statement
    that contains ``node`` itself (`x = x[mask]` reads the previous `x`)."""
    found = model.assignments(name, ctx)
    if not found:
        return None
    if found[0].ctx.scope != ctx.scope:
        return found[-1]
    earlier = [a for a in found if a.order < order]
    while earlier and earlier[-1].statement is not None and contains(earlier[-1].statement, node):
        earlier.pop()
    return earlier[-1] if earlier else None


class _OrderIndex:
    """Source order for nodes the walk did not number (tests, subscripts): the order of the last
    recorded call before them, found by walking the enclosing loop or function body only."""

    def __init__(self, model: FileModel) -> None:
        self.model = model
        self._calls = None

    def _call_orders(self):
        if self._calls is None:
            self._calls = {id(site.node): site.order for site in self.model.facts.calls}
        return self._calls

    def order_of(self, node: cst.CSTNode, ctx) -> Optional[float]:
        calls = self._call_orders()
        inner = [calls[id(c)] for c in _calls_in(node) if id(c) in calls]
        if inner:
            return min(inner) - 0.5
        scope = None
        loop = ctx.loop
        while loop is not None:
            scope, loop = loop.node, loop.parent
        if scope is None and ctx.function is not None:
            scope = ctx.function.node
        if scope is None:
            return None
        last = None
        stack = [scope]
        while stack:
            current = stack.pop()
            if current is node:
                return None if last is None else last + 0.5
            if isinstance(current, cst.Call) and id(current) in calls:
                last = calls[id(current)]
            stack.extend(reversed(children(current)))
        return None


def _calls_in(node: cst.CSTNode):
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, cst.Call):
            yield current
        if not isinstance(current, cst.Lambda):
            stack.extend(children(current))


class DataDependentSyncInTrainingLoop(Rule):
    code = "GPU104"
    name = "data-dependent-sync-in-training-loop"
    summary = "tensor truthiness or data-dependent output sizes on every training step"
    what = """
        Inside the innermost training loop: an `if`, `while` or `assert` that tests a tensor
        (`if (x != 0).all():`, `if loss > 10:`, `while not torch.isfinite(loss):`), and the
        operations whose output size depends on the values: `nonzero()`, `argwhere`,
        one-argument `torch.where(cond)`, `masked_select`, `unique()`, and indexing with a
        boolean mask (`logits[labels != -100]`, or a name bound to such a comparison). Tests
        on Python values, integer or slice indexes, and batches still in host memory (before
        they are moved) are left alone. Under a periodic or rank-0 condition it is only
        informational.
    """
    why = """
        Python needs a real `True` or `False` to choose a branch, and the allocator needs to
        know how many elements a result has before it can be created: both are answered by
        copying a value from the GPU, which waits for every kernel queued before it. Nothing in
        `if mask.any():` or `x[mask]` looks like a copy, yet each one stops the host from
        running ahead of the GPU, every step.
    """
    example = """
        for x, y in loader:
            x, y = x.cuda(), y.cuda()
            logits = model(x)
            keep = y != -100
            loss = F.cross_entropy(logits[keep], y[keep])
            if torch.isnan(loss):
                continue
            loss.backward()
            optimizer.step()
    """
    instead = """
        for x, y in loader:
            x, y = x.cuda(), y.cuda()
            logits = model(x)
            loss = F.cross_entropy(logits, y, ignore_index=-100)  # fixed shapes, no host read
            loss.backward()
            optimizer.step()
        # check for NaN every N steps, or let GradScaler skip bad steps on the device
    """
    hint = (
        "keep shapes fixed (`torch.where(c, a, b)`, `masked_fill`, `ignore_index`) and test tensors "
        "every N steps, not every step"
    )
    requires = (("if", "while", "assert", "nonzero", "where", "masked_select", "unique", "["), _TRAINING_TEXT)

    VALID = [
        Case(
            """
            for step, (x, y) in enumerate(loader):
                x, y = x.cuda(), y.cuda()
                loss = criterion(model(x), y)
                loss.backward()
                optimizer.step()
                if step > 0 and args.debug:
                    print("debug step")
            """,
            note="tests on Python values",
        ),
        Case(
            """
            for x, y in loader:
                loss = criterion(model(x.cuda()), y.cuda())
                loss.backward()
                optimizer.step()
                loss_value = loss.item()
                if loss_value > 10:
                    print("spike")
            """,
            note="already a Python float (GPU101's finding)",
        ),
        Case(
            """
            for x, y in loader:
                first = x[0]
                tail = x[:, 1:]
                picked = x[idx]
                x = x.cuda()
                loss = criterion(model(x), y.cuda())
                loss.backward()
                optimizer.step()
            """,
            note="integer and slice indexes",
        ),
        Case(
            """
            import torch
            for x, y in loader:
                valid = y != -1
                x, y = x[valid], y[valid]
                if (y == 0).all():
                    continue
                x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)
                loss = criterion(model(x), y)
                loss.backward()
                optimizer.step()
            """,
            note="host-memory batch before it is moved",
        ),
        Case(
            """
            import torch
            for epoch in range(epochs):
                for x, y in loader:
                    loss = criterion(model(x.cuda()), y.cuda())
                    loss.backward()
                    optimizer.step()
                if torch.isnan(loss):
                    break
                ids = torch.nonzero(loss > 1)
            """,
            note="once per epoch",
        ),
        Case(
            """
            import torch
            for x, y in loader:
                if torch.rand(1) < 0.5:
                    x = x.flip(-1)
                if loss_fn is not None and outputs is not None:
                    pass
                outputs = model(x.cuda())
                loss = loss_fn(outputs, y.cuda())
                loss.backward()
                optimizer.step()
            """,
            note="host-side random draw, `is None` tests",
        ),
        Case(
            """
            import numpy as np
            import pandas as pd
            for batch in loader:
                labels = np.asarray(batch["label"])
                classes = np.unique(labels)
                seen = frame["user"].unique()
                idx = labels.nonzero()
                loss = model(batch["x"].cuda()).mean()
                loss.backward()
                optimizer.step()
            """,
            note="NumPy and pandas",
        ),
        Case(
            """
            import torch
            for x, y in loader:
                x, y = x.cuda(), y.cuda()
                out = model(x)
                out = torch.where(out > 0, out, torch.zeros_like(out))
                out[y == 0] = 0.0
                loss = criterion(out, y)
                loss.backward()
                optimizer.step()
            """,
            note="three-argument where, masked store",
        ),
        Case(
            """
            import lightning as L

            class Net(L.LightningModule):
                def training_step(self, batch, batch_idx):
                    x, y = batch
                    logits = self(x)
                    if (y == 0).all():
                        return None
                    return self.loss(logits[y != -100], y[y != -100])
            """,
            note="Lightning step: no loop of ours",
        ),
    ]
    INVALID = [
        Case(
            """
            import torch
            for x, y in loader:
                x, y = x.cuda(), y.cuda()
                loss = criterion(model(x), y)
                if torch.isnan(loss):  # expect: GPU104
                    continue
                loss.backward()
                optimizer.step()
            """,
            note="NaN check on a tensor",
        ),
        Case(
            """
            for step, (x, y) in enumerate(loader):
                out = model(x.to(device))
                loss = criterion(out, y.to(device))
                loss.backward()
                optimizer.step()
                if loss > 10:  # expect: GPU104
                    print("loss spike at", step)
                assert (out != 0).any(), "dead output"  # expect: GPU104
            """,
            note="comparison and assert",
        ),
        Case(
            """
            import torch
            def train_step(batch):
                logits = model(batch["input_ids"].cuda())
                labels = batch["labels"].cuda()
                keep = labels != -100
                loss = F.cross_entropy(logits[keep], labels[keep])  # expect: GPU104
                loss.backward()
                optimizer.step()
                return loss

            for batch in train_loader:
                train_step(batch)
            """,
            note="boolean mask through a name, in a helper",
        ),
        Case(
            """
            import torch
            for x, y in loader:
                x, y = x.cuda(), y.cuda()
                emb = model(x)
                pos = torch.nonzero(y == 1)  # expect: GPU104
                classes = y.unique()  # expect: GPU104
                idx = torch.where(y > 0)  # expect: GPU104
                sel = emb.masked_select(y[:, None] > 0)  # expect: GPU104
                loss = criterion(emb, y) + aux(pos, classes, idx, sel)
                loss.backward()
                optimizer.step()
            """,
            note="data-dependent output sizes",
        ),
        Case(
            """
            import torch
            for i, (x, y) in enumerate(loader):
                loss = criterion(model(x.cuda()), y.cuda())
                scaler.scale(loss).backward()
                scaler.step(optimizer)
                scaler.update()
                if i % 100 == 0:
                    if not torch.isfinite(loss).all():  # expect: GPU104 info
                        print("non-finite loss")
                if i % 10 == 0 and loss > 5.0:  # expect: GPU104 info
                    print("loss spike")
            """,
            note="gated checks are info, also when a periodic test short-circuits them",
        ),
        Case(
            """
            import torch
            for x, y in loader:
                x = x.cuda()
                loss = model(x).mean()
                while not torch.isfinite(loss):  # expect: GPU104
                    x = x * 0.5
                    loss = model(x).mean()
                loss.backward()
                optimizer.step()
            """,
            note="while test",
        ),
        Case(
            """
            for x, y in loader:
                x, y = x.cuda(), y.cuda()
                logits = model(x)
                loss = criterion(logits[y != -100], y[y != -100])  # expect: GPU104
                if loss:  # expect: GPU104
                    loss.backward()
                    optimizer.step()
            """,
            note="inline mask and bare tensor test",
        ),
    ]

    def check(self, model: FileModel) -> Iterator[Report]:
        orders = _OrderIndex(model)
        for condition in model.facts.conditions:
            ctx = condition.ctx
            if condition.kind == "while" and condition.loop is not None:
                ctx = ctx.derive(loop=condition.loop)  # the test runs on every iteration of its loop
            heat = model.sync_heat(ctx)
            if heat is None:
                continue
            for operand, short_circuited in _truth_operands(condition.test):
                if self._device_tensor(model, operand, ctx, orders):
                    yield self.report(
                        operand,
                        f"`{condition.kind}` on tensor `{snippet(model, operand)}` copies it to the host "
                        "and waits for the GPU on every training step",
                        severity=self.severity_for(Heat.GATED if short_circuited else heat),
                    )
        yield from self._size_syncs(model)
        yield from self._mask_indexing(model, orders)

    def _device_tensor(self, model: FileModel, expr: cst.BaseExpression, ctx, orders: _OrderIndex) -> bool:
        """A tensor that is not known to be in host memory."""
        if not _is_tensor(model, expr, ctx) or _host_value(model, expr, ctx):
            return False
        return not self._raw_batch(model, expr, ctx, orders)

    def _raw_batch(self, model: FileModel, expr: cst.BaseExpression, ctx, orders: _OrderIndex) -> bool:
        """Rooted at a loader's loop variable that is still in host memory at this point."""
        root = _data_root(model, expr)
        if not isinstance(root, cst.Name):
            return False
        found = model.assignments(root.value, ctx)
        if not found:
            return False
        order = orders.order_of(expr, ctx)
        if order is None:
            # Cannot tell which binding reaches the test: say nothing if any is in host memory.
            return any(_binding_on_host(model, a) for a in found)
        return _still_on_host(model, root.value, ctx, order, expr)

    def _size_syncs(self, model: FileModel) -> Iterator[Report]:
        sites = [s for s in model.calls_to(*_SIZE_SYNC_FUNCTIONS)]
        sites += [s for s in model.calls_to("torch.where") if _one_positional(s.node)]
        for site in sites:
            heat = model.sync_heat(site.ctx)
            if heat is None or not site.node.args or site.node.args[0].star:
                continue
            first = site.node.args[0].value
            if _host_value(model, first, site.ctx) or _raw_batch_value(model, first, site):
                continue
            yield self._size_report(model, site, heat)
        for site in model.method_calls(*_SIZE_SYNC_METHODS):
            if site.qualname is not None or site.receiver is None:
                continue
            heat = model.sync_heat(site.ctx)
            if heat is None or not _is_tensor(model, site.receiver, site.ctx):
                continue
            if _numpy_value(model, site.receiver, site) or _host_value(model, site.receiver, site.ctx):
                continue
            if _raw_batch_value(model, site.receiver, site):
                continue
            yield self._size_report(model, site, heat)

    def _size_report(self, model: FileModel, site: CallSite, heat: Heat) -> Report:
        return self.report(
            site.node,
            f"`{snippet(model, site.node)}` has a data-dependent size: the host waits for the GPU to "
            "count the result on every training step",
            severity=self.severity_for(heat),
        )

    def _mask_indexing(self, model: FileModel, orders: _OrderIndex) -> Iterator[Report]:
        stores = _StoreTargets()
        for subscript, ctx in _subscripts_in_hot_code(model):
            masks = [
                element.slice.value
                for element in subscript.slice
                if isinstance(element.slice, cst.Index) and self._is_mask(model, element.slice.value, ctx)
            ]
            if not masks:
                continue
            heat = model.sync_heat(ctx)
            if heat is None or not self._device_tensor(model, subscript.value, ctx, orders):
                continue
            if stores.is_store(subscript, ctx):
                continue
            yield self.report(
                subscript,
                f"boolean-mask indexing `{snippet(model, subscript)}` has a data-dependent size: the "
                "host waits for the GPU to count the selected elements on every training step",
                severity=self.severity_for(heat),
            )

    def _is_mask(self, model: FileModel, expr: cst.BaseExpression, ctx, depth: int = 0) -> bool:
        if depth > 3:
            return False
        if isinstance(expr, cst.Comparison):
            return all(isinstance(c.operator, _VALUE_COMPARISONS) for c in expr.comparisons) and _is_tensor(
                model, expr, ctx
            )
        if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.BitInvert):
            return self._is_mask(model, expr.expression, ctx, depth + 1)
        if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, (cst.BitAnd, cst.BitOr, cst.BitXor)):
            return self._is_mask(model, expr.left, ctx, depth + 1) or self._is_mask(model, expr.right, ctx, depth + 1)
        if isinstance(expr, cst.Call):
            qual = model.imports.qualify(expr.func) or ""
            head, _, last = qual.rpartition(".")
            if head == "torch" and last in _MASK_FUNCTIONS:
                return True
            func = expr.func
            return (
                not qual
                and isinstance(func, cst.Attribute)
                and func.attr.value in _MASK_METHODS
                and _is_tensor(model, func.value, ctx)
            )
        if isinstance(expr, cst.Name):
            found = model.assignments(expr.value, ctx)
            return bool(found) and all(
                a.value is not None
                and a.index is None
                and not a.augmented
                and self._is_mask(model, a.value, a.ctx, depth + 1)
                for a in found
            )
        return False


def _one_positional(call: cst.Call) -> bool:
    return len(call.args) == 1 and call.args[0].keyword is None and not call.args[0].star


def _truth_operands(test: cst.BaseExpression) -> Iterator[Tuple[cst.BaseExpression, bool]]:
    """The parts of a test that Python turns into `bool`: `a and not b` gives `a` and `b`, each
    with whether a periodic test before it short-circuits it (`step % 100 == 0 and loss > 9`).
    Identity and membership tests (`x is None`, `k in d`) never read a tensor's value."""
    stack = [(test, False)]
    while stack:
        node, gated = stack.pop()
        if isinstance(node, cst.BooleanOperation):
            short = isinstance(node.operator, cst.And) and is_periodic_test(node.left)
            stack.extend(((node.right, gated or short), (node.left, gated)))
        elif isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Not):
            stack.append((node.expression, gated))
        elif isinstance(node, cst.Comparison) and any(
            isinstance(c.operator, (cst.Is, cst.IsNot, cst.In, cst.NotIn)) for c in node.comparisons
        ):
            continue
        else:
            yield node, gated


class _StoreTargets:
    """Subscripts that are assigned to (`out[mask] = 0`), found by walking one loop or function
    body the first time a candidate there is seen."""

    def __init__(self) -> None:
        self._walked: dict = {}

    def is_store(self, subscript: cst.Subscript, ctx) -> bool:
        scope = None
        loop = ctx.loop
        while loop is not None:
            scope, loop = loop.node, loop.parent
        if scope is None:
            scope = ctx.function.node if ctx.function is not None else None
        if scope is None:
            return False
        targets = self._walked.get(id(scope))
        if targets is None:
            targets = set()
            stack = [scope]
            while stack:
                current = stack.pop()
                if isinstance(current, cst.Assign):
                    for target in current.targets:
                        targets.update(_subscript_ids(target.target))
                elif isinstance(current, (cst.AugAssign, cst.AnnAssign)):
                    targets.update(_subscript_ids(current.target))
                elif isinstance(current, cst.Del):
                    targets.update(_subscript_ids(current.target))
                stack.extend(children(current))
            self._walked[id(scope)] = targets
        return id(subscript) in targets


def _subscript_ids(target: cst.BaseExpression) -> set:
    if isinstance(target, cst.Subscript):
        return {id(target)}
    if isinstance(target, (cst.Tuple, cst.List)):
        out: set = set()
        for element in target.elements:
            out |= _subscript_ids(element.value)
        return out
    if isinstance(target, cst.StarredElement):
        return _subscript_ids(target.value)
    return set()


def _subscripts_in_hot_code(model: FileModel) -> Iterator[Tuple[cst.Subscript, Context]]:
    """The subscripts the walk recorded (those inside loops), then those of functions that run
    on every step but hold no loop themselves (`train_step(batch)`): the model records no
    subscripts there, so each such function's own body is walked once, following periodic
    `if` tests so that gated code keeps its lower severity."""
    seen = set()
    for subscript, ctx in model.facts.subscripts:
        seen.add(id(subscript))
        yield subscript, ctx
    for key, info in model.facts.functions.items():
        if model.function_heat(key) is None:
            continue
        base = Context(function=info, class_name=info.class_name)
        stack: List[Tuple[cst.CSTNode, Context]] = [(info.node.body, base)]
        while stack:
            node, ctx = stack.pop()
            if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
                continue
            if isinstance(node, cst.Subscript) and id(node) not in seen:
                yield node, ctx
            if isinstance(node, cst.If) and is_periodic_test(node.test):
                stack.append((node.test, ctx))
                stack.append((node.body, ctx.derive(gated=True)))
                if node.orelse is not None:
                    stack.append((node.orelse, ctx))
                continue
            stack.extend((child, ctx) for child in children(node))


# -- GPU106: tensor made on the host, then moved -------------------------------------------

_PLAIN_FACTORIES = frozenset("zeros ones empty full arange linspace logspace eye tensor as_tensor".split())
_RANDOM_FACTORIES = frozenset("rand randn randint randperm".split())
# Factories whose values do not depend on the dtype they are computed in: a `.to(dtype)` can move in.
_DTYPE_MOVABLE = frozenset("zeros ones empty full eye tensor as_tensor".split())
_DEVICE_NAME = re.compile(r"(^|_)(device|dev|gpu|gpu_id|local_rank|rank)s?$|^device", re.IGNORECASE)
_DTYPE_NAME = re.compile(r"dtype", re.IGNORECASE)
_TORCH_DTYPES = frozenset(
    "float16 float32 float64 bfloat16 half float double long int int8 int16 int32 int64 uint8 bool "
    "complex64 complex128 cfloat".split()
)


def _is_dtype(model: FileModel, expr: cst.BaseExpression) -> bool:
    qual = model.imports.qualify(expr) or ""
    if qual.startswith("torch.") and qual[len("torch."):] in _TORCH_DTYPES:
        return True
    name = dotted_name(expr)
    return name is not None and bool(_DTYPE_NAME.search(name.rsplit(".", 1)[-1]))


def _string_device(expr: cst.BaseExpression) -> Optional[str]:
    """"cuda" / "cpu" / "other" for a literal device string, None when not a literal."""
    if isinstance(expr, cst.SimpleString):
        text = str(expr.evaluated_value)
        if text.startswith("cuda"):
            return "cuda"
        return "cpu" if text in ("cpu", "meta") else "other"
    if isinstance(expr, cst.FormattedString):
        first = expr.parts[0] if expr.parts else None
        if isinstance(first, cst.FormattedStringText) and first.value.startswith("cuda"):
            return "cuda"
        return "other"
    return None


def _device_kind(model: FileModel, expr: cst.BaseExpression, ctx, depth: int = 0) -> Optional[str]:
    """"cuda" when the expression names a CUDA (or run-time chosen) device, "host" for the CPU,
    None when it is not known to be a device at all (a dtype, another tensor, ...)."""
    literal = _string_device(expr)
    if literal is not None:
        return {"cuda": "cuda", "cpu": "host"}.get(literal)
    if isinstance(expr, cst.Integer):
        return "cuda"
    if isinstance(expr, cst.IfExp):
        body, orelse = _device_kind(model, expr.body, ctx, depth + 1), _device_kind(model, expr.orelse, ctx, depth + 1)
        return "cuda" if "cuda" in (body, orelse) and None not in (body, orelse) else None
    if isinstance(expr, cst.Call):
        if model.imports.qualify(expr.func) == "torch.device" and expr.args:
            return _device_kind(model, expr.args[0].value, ctx, depth + 1) or "cuda"
        return None
    if _is_dtype(model, expr):
        return None
    name = dotted_name(expr)
    if name is None:
        return None
    found = [a for a in model.assignments(name, ctx) if a.value is not None and a.index is None]
    if found and depth < 3:
        kinds = {_device_kind(model, a.value, a.ctx, depth + 1) for a in found}
        if kinds == {"host"}:
            return "host"
        if "cuda" in kinds:
            return "cuda"
    return "cuda" if _DEVICE_NAME.search(name.rsplit(".", 1)[-1]) else None


class _Move:
    """What a `.cuda()`/`.to()` call asks for: the device expression to pass to the factory
    (None when the move cannot be folded into it), and a dtype to fold in too."""

    def __init__(self, device: Optional[cst.BaseExpression], dtype: Optional[cst.BaseExpression] = None) -> None:
        self.device = device
        self.dtype = dtype


def _parse_move(model: FileModel, site: CallSite) -> Optional[_Move]:
    """The move as a host-to-device copy, or None when the call is no such copy."""
    args = site.node.args
    if any(a.star for a in args):
        return None
    keywords = {a.keyword.value: a.value for a in args if a.keyword is not None}
    positional = [a.value for a in args if a.keyword is None]
    if site.method == "cuda":
        if positional or set(keywords) - {"non_blocking"}:
            return _Move(None)  # `.cuda(local_rank)`: a CUDA move, but which spelling of the device?
        return _Move(cst.SimpleString('"cuda"'))
    device = keywords.get("device", positional[0] if positional else None)
    if device is None or _device_kind(model, device, site.ctx) != "cuda":
        return None
    rest = positional[1:] if "device" not in keywords else positional
    dtype = keywords.get("dtype")
    if rest and dtype is None and _is_dtype(model, rest[0]):
        dtype, rest = rest[0], rest[1:]
    if len(rest) > 1 or set(keywords) - {"device", "dtype", "non_blocking"}:
        return _Move(None)  # `copy=`, `memory_format=`: keep the author's spelling
    return _Move(device, dtype)


class TensorCreatedOnHostThenMoved(Rule):
    code = "GPU106"
    name = "tensor-created-on-host-then-moved"
    summary = "tensor built in host memory and then copied to the GPU (`torch.zeros(n).cuda()`)"
    what = """
        A torch factory (`torch.zeros`, `ones`, `empty`, `full`, `arange`, `linspace`, `eye`,
        `tensor`, `as_tensor`, and the random `rand`, `randn`, `randint`, `randperm`) whose
        result is immediately moved with `.cuda()` or `.to(<cuda device>)`. A `.to()` that only
        changes the dtype, or moves to the CPU, is not a move to the GPU. Inside the innermost
        training loop, or a loop over a DataLoader, it is a warning; elsewhere (set-up code,
        once per epoch) it is informational.
    """
    why = """
        The tensor is first allocated and filled by the CPU in ordinary host memory, then copied
        across the host link into a second allocation on the GPU. Passing `device=` allocates
        and fills it on the GPU directly: no host work, no transfer, no temporary. In a loop
        that runs every step the wasted copy is paid every step.
    """
    example = """
        for x, y in loader:
            x, y = x.cuda(), y.cuda()
            weights = torch.ones(y.size(0)).cuda()
            positions = torch.arange(x.size(1)).to(device)
    """
    instead = """
        for x, y in loader:
            x, y = x.cuda(), y.cuda()
            weights = torch.ones(y.size(0), device="cuda")
            positions = torch.arange(x.size(1), device=device)
    """
    hint = "pass `device=` to the factory and drop the `.cuda()`/`.to()`"
    fixable = "safe (unsafe for random factories and `requires_grad=True`)"
    requires = (
        (".cuda(", ".to("),
        ("cuda",),
        ("zeros", "ones", "empty", "full", "arange", "linspace", "logspace", "eye", "rand", "tensor"),
    )

    VALID = [
        Case(
            """
            import torch
            device = torch.device("cuda")
            mask = torch.zeros(8, 8, device=device)
            ids = torch.arange(16, device="cuda")
            """,
            note="already made on the device",
        ),
        Case(
            """
            import torch
            for x, y in loader:
                x = x.cuda()
                scale = torch.ones(x.size(0)).to(torch.float16)
                half = torch.zeros(4).to(dtype=torch.bfloat16)
                mixed = torch.ones(4).to(args.dtype)
                loss = criterion(model(x), y.cuda())
                loss.backward()
                optimizer.step()
            """,
            note="dtype-only conversions",
        ),
        Case(
            """
            import torch
            gpu = torch.randn(4, 4, device="cuda")
            host = torch.zeros(4).to("cpu")
            back = gpu.to("cpu")
            """,
            note="moves to the host",
        ),
        Case(
            """
            import numpy as np
            import torch
            arr = np.zeros(10)
            t = torch.from_numpy(arr).cuda()
            z = torch.zeros_like(t).cuda()
            w = np.ones(3).tolist()
            """,
            note="from_numpy and *_like factories have no device choice to make",
        ),
        Case(
            """
            import torch
            for batch in loader:
                target = torch.tensor(batch["label"], device="cuda")
                ref = torch.zeros(3).to(target)
                buf = torch.empty(1024, pin_memory=True).cuda(non_blocking=True)
                loss = model(batch["x"].cuda()).mean()
                loss.backward()
                optimizer.step()
            """,
            note="move to another tensor's device and dtype; pinned staging buffer",
        ),
        Case(
            """
            import torch
            torch.cuda.set_device(0)
            opts = dict(device="cuda")
            noise = torch.randn(16, 100, **opts)
            steps = torch.zeros(3, dtype=torch.long).float()
            """,
            note="device given through **kwargs; no move",
        ),
        Case(
            """
            import torch
            import lightning as L

            class Net(L.LightningModule):
                def training_step(self, batch, batch_idx):
                    x, y = batch
                    w = torch.ones(x.size(0), device=self.device)
                    return self.loss(self(x), y) * w.mean()
            """,
            note="Lightning: the device is already passed",
        ),
    ]
    INVALID = [
        Case(
            """
            import torch
            mask = torch.zeros(8, 8).cuda()  # expect: GPU106 info
            """,
            fixed="""
            import torch
            mask = torch.zeros(8, 8, device="cuda")  # expect: GPU106 info
            """,
            note="set-up code is info",
        ),
        Case(
            """
            import torch
            device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
            for x, y in loader:
                x, y = x.to(device), y.to(device)
                pos = torch.arange(x.size(1)).to(device, non_blocking=True)  # expect: GPU106
                loss = criterion(model(x, pos), y)
                loss.backward()
                optimizer.step()
            """,
            fixed="""
            import torch
            device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
            for x, y in loader:
                x, y = x.to(device), y.to(device)
                pos = torch.arange(x.size(1), device=device)  # expect: GPU106
                loss = criterion(model(x, pos), y)
                loss.backward()
                optimizer.step()
            """,
            note="in the training loop: warning; non_blocking goes with the move",
        ),
        Case(
            """
            import torch
            for x, y in loader:
                x, y = x.cuda(), y.cuda()
                noise = torch.randn(x.shape).cuda() * 0.1  # expect: GPU106
                loss = criterion(model(x + noise), y)
                loss.backward()
                optimizer.step()
            """,
            fixed="""
            import torch
            for x, y in loader:
                x, y = x.cuda(), y.cuda()
                noise = torch.randn(x.shape, device="cuda") * 0.1  # expect: GPU106
                loss = criterion(model(x + noise), y)
                loss.backward()
                optimizer.step()
            """,
            note="random factory: the fix draws from the GPU generator (unsafe)",
        ),
        Case(
            """
            import torch
            @torch.no_grad()
            def evaluate(model, loader, device):
                for images, labels in loader:
                    labels = torch.tensor(labels).to(device)  # expect: GPU106
                    hits = torch.zeros(3, dtype=torch.long).cuda()  # expect: GPU106
                    model(images.to(device))
            """,
            fixed="""
            import torch
            @torch.no_grad()
            def evaluate(model, loader, device):
                for images, labels in loader:
                    labels = torch.tensor(labels, device=device)  # expect: GPU106
                    hits = torch.zeros(3, dtype=torch.long, device="cuda")  # expect: GPU106
                    model(images.to(device))
            """,
            note="evaluation loop over a loader; dtype kept",
        ),
        Case(
            """
            import os
            import torch
            local_rank = int(os.environ["LOCAL_RANK"])
            eye = torch.eye(4).to(f"cuda:{local_rank}", torch.float16)  # expect: GPU106 info
            """,
            fixed="""
            import os
            import torch
            local_rank = int(os.environ["LOCAL_RANK"])
            eye = torch.eye(4, device=f"cuda:{local_rank}", dtype=torch.float16)  # expect: GPU106 info
            """,
            note="a dtype moves into the factory with the device",
        ),
        Case(
            """
            import os
            import torch
            local_rank = int(os.environ["LOCAL_RANK"])
            class_weights = torch.tensor([1.0, 2.0, 5.0]).cuda(local_rank)  # expect: GPU106 info
            grid = torch.linspace(0, 1, 50).to("cuda", torch.float16)  # expect: GPU106 info
            """,
            note="`.cuda(rank)` and a dtype that changes how linspace rounds: reported without a fix",
        ),
        Case(
            """
            import torch as th
            def train_step(batch, device):
                w = th.ones(batch["x"].size(0), requires_grad=True).to(device=device)  # expect: GPU106
                loss = (model(batch["x"].to(device)) * w).mean()
                loss.backward()
                optimizer.step()

            for batch in train_loader:
                train_step(batch, "cuda")
            """,
            fixed="""
            import torch as th
            def train_step(batch, device):
                w = th.ones(batch["x"].size(0), requires_grad=True, device=device)  # expect: GPU106
                loss = (model(batch["x"].to(device)) * w).mean()
                loss.backward()
                optimizer.step()

            for batch in train_loader:
                train_step(batch, "cuda")
            """,
            note="helper called every step; requires_grad makes the fix unsafe (the result becomes a leaf)",
        ),
    ]

    def check(self, model: FileModel) -> Iterator[Report]:
        if not model.uses_cuda:
            return
        for site in model.method_calls("cuda", "to"):
            factory = site.receiver
            if not isinstance(factory, cst.Call):
                continue
            qual = model.imports.qualify(factory.func) or ""
            head, _, kind = qual.rpartition(".")
            if head != "torch" or (kind not in _PLAIN_FACTORIES and kind not in _RANDOM_FACTORIES):
                continue
            if any(a.star for a in factory.args) or any(
                a.keyword is not None and a.keyword.value in ("device", "out", "pin_memory") for a in factory.args
            ):
                continue
            move = _parse_move(model, site)
            if move is None:
                continue
            yield self.report(
                site.node,
                f"`torch.{kind}(...)` is built in host memory and then copied to the GPU",
                severity=self._severity(model, site),
                fix=self._fix(model, factory, kind, move, site),
            )

    def _severity(self, model: FileModel, site: CallSite) -> Severity:
        heat = model.sync_heat(site.ctx)
        if heat is not None:
            return self.severity_for(heat)
        loop = site.ctx.loop
        while loop is not None:
            if loop.over_loader:
                return self.severity  # an evaluation or preprocessing loop: once per batch
            loop = loop.parent
        return Severity.INFO

    def _fix(self, model: FileModel, factory: cst.Call, kind: str, move: _Move, site: CallSite) -> Optional[FixSpec]:
        if move.device is None:
            return None
        keywords = {a.keyword.value for a in factory.args if a.keyword is not None}
        new_args = list(factory.args)
        if move.dtype is not None:
            if "dtype" in keywords or kind not in _DTYPE_MOVABLE:
                return None
        equal = cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace(""))
        added = [cst.Arg(value=move.device, keyword=cst.Name("device"), equal=equal)]
        if move.dtype is not None:
            added.append(cst.Arg(value=move.dtype, keyword=cst.Name("dtype"), equal=equal))
        trailing = new_args[-1].comma if new_args else cst.MaybeSentinel.DEFAULT
        if isinstance(trailing, cst.Comma):
            # A trailing comma (one argument per line): the new ones follow the same layout.
            inner = new_args[-2].comma if len(new_args) > 1 else cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
            new_args[-1] = new_args[-1].with_changes(comma=inner)
            added = [a.with_changes(comma=inner) for a in added[:-1]] + [added[-1].with_changes(comma=trailing)]
        new_args.extend(added)
        replacement = model.code(factory.with_changes(args=new_args))
        unsafe = kind in _RANDOM_FACTORIES or "requires_grad" in keywords
        message = "pass `device=` to the factory and drop the copy"
        if kind in _RANDOM_FACTORIES:
            message += " (the GPU generator draws different values)"
        return FixSpec(
            message,
            (NodeEdit(site.node, replacement),),
            Applicability.UNSAFE if unsafe else Applicability.SAFE,
        )
