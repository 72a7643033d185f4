"""Host-device synchronisation in the training loop (GPU1xx)."""

from __future__ import annotations

import re
from typing import Iterator, Optional

import libcst as cst

from advisor.model import CallSite, FileModel, Heat
from advisor.model.file_model import call_argument
from advisor.model.names import dotted_name
from advisor.rules.base import Case, Report, Rule, snippet

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
                        loss = self.model(batch).mean()
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
                    x, y = get_batch("train")
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
            heat = model.heat(site.ctx)
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
                heat = model.heat(site.ctx)
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
            heat = model.heat(site.ctx)
            if heat is None:
                continue
            for value in self._tensor_args(model, site):
                yield self._report(model, value, heat)
        for formatted in model.facts.formatted:
            heat = model.heat(formatted.ctx)
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
            heat = model.heat(site.ctx)
            if heat is None or _chain_has_host_copy(model, site.receiver):
                continue
            if _raw_batch_value(model, site.receiver, site):
                continue
            if site.method == "tolist" and not model.is_tensor(site.receiver, site.ctx):
                continue
            if site.method == "numpy" and _numpy_value(model, site.receiver, site):
                continue
            kinds = model.kinds(site.receiver, site.ctx, site.order)
            if "module" in kinds or "ddp" in kinds:
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
            heat = model.heat(site.ctx)
            if heat is None or self._near_timing(model, site):
                continue
            yield self.report(
                site.node,
                "explicit synchronize blocks the host until the GPU is idle, on every training step",
                severity=self.severity_for(heat),
            )
