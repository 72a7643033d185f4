# GPU102 `tensor-printed-in-training-loop`: fixture. Sections start at `# %% valid:` (a look-alike that must
# stay silent) or `# %% invalid:` (every `# expect:` mark reported, nothing else). Each
# section is checked on its own, with this rule alone.

# %% invalid: case
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    print(loss)  # expect: GPU102

# %% invalid: f-string with a format spec
for step, batch in enumerate(train_loader):
    outputs = model(**batch)
    outputs.loss.backward()
    optimizer.step()
    print(f"step {step} loss {outputs.loss:.4f}")  # expect: GPU102

# %% invalid: case
import logging
logger = logging.getLogger(__name__)
for x, y in loader:
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    optimizer.step()
    logger.info("loss %s", loss)  # expect: GPU102

# %% invalid: progress bars and TensorBoard
for i, (x, y) in enumerate(loader):
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    pbar.set_postfix(loss=loss)  # expect: GPU102
    writer.add_scalar("train/loss", loss, i)  # expect: GPU102

# %% invalid: gated %-format
for i, (x, y) in enumerate(loader):
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    if i % 100 == 0:
        print("loss: %.4f" % loss)  # expect: GPU102 info

# %% invalid: through a helper
def log_step(step, loss):
    print("step", step, "loss", loss)  # expect: GPU102

for step, (x, y) in enumerate(loader):
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    log_step(step, loss)

# %% invalid: dict of tensors, str.format
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    metrics = {"loss": loss, "lr": lr}
    print(metrics)  # expect: GPU102
    print("loss: {:.4f}".format(loss))  # expect: GPU102

# %% invalid: wandb run object and a comparison-derived tensor
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

# %% valid: already a Python float
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    loss_value = loss.item()
    print(f"loss {loss_value:.3f}")

# %% valid: once per epoch
for epoch in range(epochs):
    for x, y in loader:
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
    print(f"epoch {epoch} done, last loss {loss}")

# %% valid: Lightning logs lazily
import lightning as L

class Net(L.LightningModule):
    def training_step(self, batch, batch_idx):
        loss = self.loss_fn(self(batch[0]), batch[1])
        self.log("train_loss", loss, prog_bar=True)
        return loss

# %% invalid: a progress-bar template built from repeated columns, a running mean unpacked into it
import torch

mean_losses = torch.zeros(3, device=device)
for i, (imgs, targets) in pbar:
    loss, loss_items = compute_loss(model(imgs.to(device)), targets.to(device))
    loss.backward()
    optimizer.step()
    mean_losses = (mean_losses * i + loss_items) / (i + 1)
    if rank in (-1, 0):
        text = ("%10s" * 2 + "%10.4g" * 3) % (f"{epoch}/{epochs}", mem, *mean_losses)  # expect: GPU102
        pbar.set_description(text)

# %% valid: ints and floats
for step, (x, y) in enumerate(loader):
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    logger.info("step %d of %d", step, len(loader))
    print(f"lr={scheduler.get_last_lr()[0]}")

# %% valid: evaluation
with torch.no_grad():
    for x, y in val_loader:
        out = model(x)
        print(out)

# %% valid: set_postfix with a float is GPU101's business
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    pbar.set_postfix(loss=loss.item())

# %% valid: non-tensor batch fields
import logging
logger = logging.getLogger(__name__)
for batch in train_loader:
    names = batch["filename"]
    inputs = batch["pixel_values"].cuda(non_blocking=True)
    loss = model(inputs).loss
    loss.backward()
    optimizer.step()
    logger.debug(f"files {names}")

# %% valid: the loss rebound to a Python number after backward, then logged in both branches
def train_one_epoch(loader, model, optimizer, writer, cfg, epoch):
    for it, (clips, labels) in enumerate(loader):
        loss = loss_fun(model(clips.cuda(non_blocking=True)), labels.cuda(non_blocking=True))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if cfg.detection:
            loss = loss.item()
            if writer is not None:
                writer.add_scalars({"train/loss": loss}, global_step=it)
        else:
            loss, top1 = (loss.item(), 0.0)
            if writer is not None:
                writer.add_scalars({"train/loss": loss, "train/top1": top1}, global_step=it)

# %% valid: every arm of an if/elif/else rebinds the loss to a number, after an optional reduce
def train_epoch(loader, model, optimizer, writer, cfg, world):
    for step, (clips, labels) in enumerate(loader):
        loss = loss_fun(model(clips.cuda(non_blocking=True)), labels.cuda(non_blocking=True))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if cfg.multi_label:
            if world > 1:
                loss = all_reduce([loss])[0]
            loss = loss.item()
        elif cfg.masked:
            if world > 1:
                loss = all_reduce([loss])[0]
            loss, err = (loss.item(), 0.0)
        else:
            loss, err = loss.item(), top1_error(model, clips)
        if writer is not None:
            writer.add_scalars({"train/loss": loss}, global_step=step)

# %% invalid: one arm keeps the tensor, so the read after the if/else may format it
def train_epoch(loader, model, optimizer, writer, cfg):
    for step, (clips, labels) in enumerate(loader):
        loss = loss_fun(model(clips.cuda(non_blocking=True)), labels.cuda(non_blocking=True))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if cfg.multi_label:
            loss = loss.item()
        elif cfg.masked:
            loss = loss.detach()
        writer.add_scalar("train/loss", loss, step)  # expect: GPU102

# %% invalid: rebound to a number on one branch only: the other still formats the tensor
def train_one_epoch(loader, model, optimizer, writer, cfg):
    for it, (clips, labels) in enumerate(loader):
        loss = loss_fun(model(clips.cuda(non_blocking=True)), labels.cuda(non_blocking=True))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if cfg.multi_label:
            loss = loss.item()
        writer.add_scalars({"train/loss": loss}, global_step=it)  # expect: GPU102

# %% valid: a built template filled with Python numbers and strings
for i, (imgs, targets) in pbar:
    loss = criterion(model(imgs), targets)
    loss.backward()
    optimizer.step()
    columns = ("%10s" * 2 + "%10d" * 2) % (epoch, name, i, len(targets))
    print(columns)

# %% valid: printed on the way out: the run stops (sys.exit, exit(), a raise, a break of the loop)
import math
import sys
from utils.logging import report_failure
def train_one_epoch(model, criterion, loader, optimizer, max_steps):
    for step, (images, targets) in enumerate(loader):
        outputs = model(images.cuda(non_blocking=True))
        loss_dict = criterion(outputs, targets)
        loss = sum(loss_dict.values())
        loss_value = float(sum(loss_dict.values()))
        if not math.isfinite(loss_value):
            print(f"Loss is {loss_value}, stopping training")
            print(loss_dict)
            sys.exit(1)
        if loss_value > 1e6:
            report_failure(f"diverged: {loss_dict}")
            exit()
        if loss_value < 0:
            print("negative loss", loss_dict)
            raise ValueError(f"negative loss: {loss}")
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step == max_steps:
            print(f"reached max steps, last loss {loss}")
            break

# %% invalid: blocks that come back on the next step: continue, a raise the loop catches, an inner break
import math
def train_one_epoch(model, criterion, loader, optimizer):
    for images, targets in loader:
        loss = criterion(model(images.cuda(non_blocking=True)), targets.cuda(non_blocking=True))
        loss_value = float(loss.detach().cpu())
        if not math.isfinite(loss_value):
            print(f"skipping batch, loss {loss}")  # expect: GPU102 info
            continue
        try:
            if loss_value > 100:
                print("spike", loss)  # expect: GPU102
                raise FloatingPointError(loss_value)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        except FloatingPointError:
            optimizer.zero_grad()
        for name, param in model.named_parameters():
            if param.grad is None:
                print(f"{name} has no grad (loss {loss})")  # expect: GPU102
                break

# %% invalid: values printed only when a sanity check of the batch fails are info (the check itself is another rule's finding)
import torch


def spectrogram(audio):
    if torch.min(audio) < -1.:
        print("min value is ", torch.min(audio))  # expect: GPU102 info
    if audio.abs().max() > 1:
        print(f"clipping: {audio.abs().max()}")  # expect: GPU102 info
    return torch.stft(audio, 1024, return_complex=True).abs()


for audio, target in loader:
    audio = audio.cuda()
    loss = criterion(model(spectrogram(audio)), target.cuda())
    if not torch.isfinite(loss):
        print(f"non-finite loss {loss}")
        raise RuntimeError("diverged")
    loss.backward()
    optimizer.step()

# %% invalid: a drift warning under the mean magnitude of offsets a layer predicts, bound to a name first, is info
import torch
import torch.nn as nn


class OffsetConv(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.offsets = nn.Conv2d(channels, 18, 3, padding=1)

    def forward(self, x):
        offset = self.offsets(x)
        drift = torch.mean(torch.abs(offset))
        if drift > 50:
            print(f"offsets drifted: mean magnitude {drift}")  # expect: GPU102 info
        return x + offset.mean(1, keepdim=True)


layer = OffsetConv(64).cuda()
for x, y in loader:
    loss = criterion(layer(x.cuda()), y.cuda())
    loss.backward()
    optimizer.step()

# %% invalid: a range test that is not a sanity check of extremes gates nothing
import torch

for step, (x, y) in enumerate(loader):
    loss = criterion(model(x.cuda()), y.cuda())
    if loss.mean() < 5:
        print(f"loss {loss}")  # expect: GPU102
    loss.backward()
    optimizer.step()

# %% invalid: a gradient norm handed to TensorBoard on every step
import torch
from torch.utils.tensorboard import SummaryWriter

writer = SummaryWriter()
for batch_index, (images, labels) in enumerate(loader):
    loss = loss_function(net(images.cuda()), labels.cuda())
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    for name, para in list(net.children())[-1].named_parameters():
        if "weight" in name:
            writer.add_scalar("grad_norm2_weights", para.grad.norm(), batch_index)  # expect: GPU102

# %% valid: a running total of `loss.data[0]`, the number a loss held before PyTorch 0.4
import torch

train_loss = 0
for batch_idx, (inputs, targets) in enumerate(trainloader):
    inputs, targets = inputs.cuda(), targets.cuda()
    outputs = net(inputs)
    loss = criterion(outputs, targets)
    train_loss += loss.data[0]
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print("Loss: %.3f" % (train_loss / (batch_idx + 1)))

# %% invalid: prints under one of several sanity checks joined with `or` are info (the checks themselves are GPU104's)
import torch

for video, queries in loader:
    video, queries = video.cuda(), queries.cuda()
    if torch.isnan(queries).any() or queries.abs().max() > 1500:
        print("failed sample", queries)  # expect: GPU102 info
        queries = torch.zeros_like(queries)
    if torch.isnan(queries).any() or queries.mean() > 0:
        print("odd sample", queries)  # expect: GPU102
    loss = model(video, queries).mean()
    loss.backward()
    optimizer.step()

# %% valid: a tensor formatted in the exception a raise builds, only when it raises
import torch


def check_finite(loss):
    if not torch.isfinite(loss).all():
        raise FloatingPointError(f"loss is infinite or NaN: {loss}")


def train(model, loader, optimizer):
    model.cuda()
    for x, y in loader:
        loss = torch.nn.functional.mse_loss(model(x.cuda()), y.cuda())
        check_finite(loss)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

# %% valid: a tensor formatted in an assert's message, built only when the assert fails
import torch


def train(model, loader, optimizer):
    model.cuda()
    for x, y in loader:
        x, y = x.cuda(), y.cuda()
        out = model(x)
        assert out.shape == y.shape, f"shape mismatch: {out.shape} vs {y.shape}, first {out[0]}"
        assert torch.isfinite(out).all().item(), f"bad output {out.abs().max().item()}"
        loss = torch.nn.functional.mse_loss(out, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

# %% invalid: values printed only when a NumPy plan made from them is not finite are info
import numpy as np
import torch

model = Net().cuda()
optimizer = torch.optim.Adam(model.parameters())
for x0, x1 in loader:
    x0, x1 = x0.cuda(), x1.cuda()
    cost = torch.cdist(x0, x1) ** 2
    plan = solve_plan(cost.detach().cpu().numpy())
    if not np.all(np.isfinite(plan)):
        print("cost mean, max", cost.mean(), cost.max())  # expect: GPU102 info GPU102 info
    loss = model(x0, x1, plan).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

# %% invalid: the same values printed under a test of the plan's size: every step
import numpy as np
import torch

model = Net().cuda()
optimizer = torch.optim.Adam(model.parameters())
for x0, x1 in loader:
    x0, x1 = x0.cuda(), x1.cuda()
    cost = torch.cdist(x0, x1) ** 2
    plan = solve_plan(cost.detach().cpu().numpy())
    if np.all(plan.shape):
        print("cost mean, max", cost.mean(), cost.max())  # expect: GPU102 GPU102
    loss = model(x0, x1, plan).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

# %% valid: formatting in a branch that stops the process, `sys` imported right there
import logging
import math

import torch


def train_one_epoch(model, loader, optimizer):
    for images, texts in loader:
        loss, loss_value = model(images.cuda(), texts.cuda())
        if math.isfinite(loss_value):
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
        else:
            logging.warning(f"Loss is {loss}, stopping.")
            import sys
            sys.exit(1)

# %% invalid: a loss tensor handed to an Accelerator's trackers on every step
import torch
from accelerate import Accelerator

accelerator = Accelerator(log_with="wandb")
model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
for step, (x, y) in enumerate(loader):
    loss = torch.nn.functional.mse_loss(model(x), y)
    accelerator.backward(loss)
    optimizer.step()
    optimizer.zero_grad()
    accelerator.log({"loss": loss}, step=step)  # expect: GPU102

# %% valid: the same trackers given the learning rate, a Python number
import torch
from accelerate import Accelerator

accelerator = Accelerator(log_with="wandb")
model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
for step, (x, y) in enumerate(loader):
    loss = torch.nn.functional.mse_loss(model(x), y)
    accelerator.backward(loss)
    optimizer.step()
    optimizer.zero_grad()
    accelerator.log({"lr": scheduler.get_last_lr()[0]}, step=step)

# %% valid: a task name unpacked beside each batch, split and formatted into meter keys
from collections import defaultdict
import torch

def train(model, optimizer, meta_loader, meters):
    n_examples = defaultdict(int)
    for step, (name, batch) in enumerate(meta_loader):
        n_examples[name] += batch["input_ids"].size(0)
        task = name.split("_")[0]
        loss = model(batch, task=task).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        meters[f"{name}_loss"](loss.detach())


# %% invalid: a %-formatted accuracy in a progress bar's dict is one report, at the tensor it formats
import torch
from tqdm import tqdm


def train(model, loader, optimizer):
    model.cuda()
    correct, total, running_loss = 0, 0, 0.0
    pbar = tqdm(loader)
    for it, (x, y) in enumerate(pbar, start=1):
        out = model(x.cuda())
        loss = torch.nn.functional.cross_entropy(out, y.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        correct += (out.argmax(1) == y.cuda()).sum()
        total += y.size(0)
        pbar.set_postfix({
            "acc": "%.02f%%" % (100 * correct / total),  # expect: GPU102
        })

# %% valid: the count of an enumerate bound to a name first is a Python number
import torch
from tqdm import tqdm


def train(model, loader, optimizer):
    model = model.cuda()
    pbar = tqdm(enumerate(loader), total=len(loader))
    for it, xs in pbar:
        loss = model(xs.cuda()).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        pbar.set_description(f"step {it}")

# %% invalid: a debug record's arguments are formatted only when debug records are on: info
import logging

import torch

LOGGER = logging.getLogger(__name__)


def train(model, loader, optimizer):
    model = model.cuda()
    for step, (x, y) in enumerate(loader):
        loss = model(x.cuda(), y.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        LOGGER.debug("[train] [%03d] loss:%.6f", step, loss)  # expect: GPU102 info
        LOGGER.debug(f"[train] loss {loss}")  # expect: GPU102

# %% invalid: a file that turns debug records on formats them on every step
import logging

import torch

logging.basicConfig(level=logging.DEBUG)
LOGGER = logging.getLogger(__name__)


def train(model, loader, optimizer):
    model = model.cuda()
    for step, (x, y) in enumerate(loader):
        loss = model(x.cuda(), y.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        LOGGER.debug("[train] [%03d] loss:%.6f", step, loss)  # expect: GPU102

# %% valid: a callback's own `self.loss` sums the floats the trainer logged
import logging

import torch
import transformers

logger = logging.getLogger(__name__)


class ReportCallback(transformers.TrainerCallback):
    def __init__(self):
        self.loss = 0
        self.steps = 0

    def on_step_end(self, args, state, control, **kwargs):
        if state.log_history:
            self.loss += state.log_history[-1]["loss"]
            self.steps += 1
            logger.info(f"mean loss so far: {self.loss / self.steps}")
        return control


def main(model, dataset):
    model.cuda()
    transformers.Trainer(model=model, train_dataset=dataset, callbacks=[ReportCallback()]).train()

# %% invalid: a trainer object's `self.loss` holds the step's loss tensor
import torch


class Runner:
    def __init__(self, model, criterion, optimizer):
        self.model, self.criterion, self.optimizer = model.cuda(), criterion, optimizer
        self.loss = None

    def step(self, x, y):
        self.loss = self.criterion(self.model(x.cuda()), y.cuda())
        self.optimizer.zero_grad()
        self.loss.backward()
        self.optimizer.step()

    def fit(self, loader):
        for x, y in loader:
            self.step(x, y)
            print(f"loss {self.loss}")  # expect: GPU102

# %% valid: a value copied to the host before it is logged: the copy waits, not the logging
import torch
from torch.utils.tensorboard import SummaryWriter

writer = SummaryWriter()
for step, (x, y) in enumerate(loader):
    loss = criterion(model(x.cuda()), y.cuda())
    loss.backward()
    optimizer.step()
    writer.add_scalar("loss/train", loss.detach().cpu(), step)

# %% valid: a print used as an assert's message runs only when the assert fails
import torch


def train_step(model, optimizer, images):
    pred = model(images.cuda())
    assert torch.isfinite(pred).all(), print(pred)
    loss = pred.mean()
    loss.backward()
    optimizer.step()


for images in loader:
    train_step(model, optimizer, images)
