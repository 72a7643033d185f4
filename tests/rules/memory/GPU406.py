# GPU406 `accumulated-loss-not-scaled`: fixture. Sections start at `# %% valid:` (a look-alike that must
# stay silent) or `# %% invalid:` (every `# expect:` mark reported, nothing else). Each
# section is checked on its own, with this rule alone.

# %% invalid: case
for i, (x, y) in enumerate(loader):
    loss = criterion(model(x), y)
    loss.backward()  # expect: GPU406
    if (i + 1) % accum_steps == 0:
        optimizer.step()
        optimizer.zero_grad()

# %% invalid: scaler, HF-style names
for step, batch in enumerate(train_dataloader):
    outputs = model(**batch)
    loss = outputs.loss
    scaler.scale(loss).backward()  # expect: GPU406
    if step % args.gradient_accumulation_steps == 0:
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad()

# %% invalid: module constant, last-batch condition
ACCUM = 8
def train(model, loader, opt):
    for it, (x, y) in enumerate(loader):
        loss = model(x, y)
        loss = loss.mean()
        loss.backward()  # expect: GPU406
        if (it + 1) % ACCUM == 0 or it + 1 == len(loader):
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            opt.zero_grad(set_to_none=True)

# %% invalid: loss from a method that does not divide
class Trainer:
    def train_epoch(self, loader):
        for i, batch in enumerate(loader):
            loss = self.compute_loss(batch)
            loss.backward()  # expect: GPU406
            if (i + 1) % self.cfg.accum == 0:
                self.optimizer.step()
                self.optimizer.zero_grad()

    def compute_loss(self, batch):
        return self.criterion(self.model(batch["x"]), batch["y"])

# %% invalid: divided by something else; literal k
for i, (x, y) in enumerate(loader):
    loss = criterion(model(x), y) / x.size(0)
    loss.backward()  # expect: GPU406
    if (i + 1) % 4 == 0:
        optimizer.step()
        optimizer.zero_grad()

# %% invalid: expression backpropagated directly
for i, (x, y) in enumerate(loader):
    out = model(x)
    (criterion(out, y) + 0.1 * aux_loss(out)).backward()  # expect: GPU406
    if i % k == 0:
        opt.step()
        opt.zero_grad()

# %% valid: divided where the loss is computed
for i, (x, y) in enumerate(loader):
    loss = criterion(model(x), y) / accum_steps
    loss.backward()
    if (i + 1) % accum_steps == 0:
        optimizer.step()
        optimizer.zero_grad()

# %% valid: in-place division, scaler
for step, batch in enumerate(loader):
    loss = model(**batch).loss
    loss /= args.gradient_accumulation_steps
    scaler.scale(loss).backward()
    if step % args.gradient_accumulation_steps == 0:
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad()

# %% valid: division in the backward expression
accum = cfg.train.accum
for i, batch in enumerate(loader):
    outputs = model(batch)
    (outputs.loss / accum).backward()
    if (i + 1) % accum == 0:
        optimizer.step()
        optimizer.zero_grad()

# %% valid: division in a helper
def compute_loss(model, batch, accum_steps):
    logits = model(batch["x"])
    return F.cross_entropy(logits, batch["y"]) / accum_steps

for i, batch in enumerate(loader):
    loss = compute_loss(model, batch, k)
    loss.backward()
    if (i + 1) % k == 0:
        optimizer.step()
        optimizer.zero_grad()

# %% valid: Accelerate divides the loss itself
from accelerate import Accelerator
accelerator = Accelerator(gradient_accumulation_steps=4)
for i, batch in enumerate(loader):
    with accelerator.accumulate(model):
        loss = model(**batch).loss
        accelerator.backward(loss)
        optimizer.step()
        optimizer.zero_grad()
    if i % 4 == 0:
        optimizer.step()

# %% valid: sum reduction, gradients rescaled by hand
import torch.nn as nn
criterion = nn.CrossEntropyLoss(reduction="sum")
for i, (x, y) in enumerate(loader):
    loss = criterion(model(x), y)
    loss.backward()
    if (i + 1) % k == 0:
        for p in model.parameters():
            p.grad /= k * x.size(0)
        optimizer.step()
        optimizer.zero_grad()

# %% valid: step every iteration; only the scheduler is periodic
for i, (x, y) in enumerate(loader):
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    if i % args.log_interval == 0:
        print(f"step {i}")
        scheduler.step()

# %% valid: Lightning accumulates itself
import lightning as L
trainer = L.Trainer(accumulate_grad_batches=8)
for i, batch in enumerate(loader):
    loss = model(batch)
    loss.backward()
    if i % 8 == 0:
        optimizer.step()

# %% valid: WGAN: the generator steps every n_critic iterations with its own backward
for i, (real, _) in enumerate(loader):
    d_loss = critic(generator(z).detach()).mean() - critic(real).mean()
    d_loss.backward()
    opt_d.step()
    opt_d.zero_grad()
    if i % n_critic == 0:
        g_loss = -critic(generator(z)).mean()
        g_loss.backward()
        opt_g.step()
        opt_g.zero_grad()

# %% valid: the loss object sums over the images of the batch, on purpose
import torch


class DetectionLoss:
    def __init__(self, model, hyp):
        self.model, self.hyp = model, hyp

    def __call__(self, preds, targets):
        lbox, lobj, lcls = self.parts(preds, targets)
        bs = preds[0].shape[0]  # batch size
        loss = lbox + lobj + lcls
        return loss * bs, torch.cat((lbox, lobj, lcls, loss)).detach()


compute_loss = DetectionLoss(model, hyp)
accumulate = max(round(64 / batch_size), 1)
for i, (imgs, targets) in enumerate(train_loader):
    loss, loss_items = compute_loss(model(imgs.cuda()), targets.cuda())
    scaler.scale(loss).backward()
    if i % accumulate == 0:
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad()

# %% invalid: the loss object weights the loss, which is not a sum over the batch
import torch


class WeightedLoss:
    def __init__(self, weight):
        self.weight = weight

    def __call__(self, preds, targets):
        loss = torch.nn.functional.mse_loss(preds, targets)
        return loss * self.weight, loss.detach()


compute_loss = WeightedLoss(2.0)
for i, (x, y) in enumerate(train_loader):
    loss, logged = compute_loss(model(x.cuda()), y.cuda())
    scaler.scale(loss).backward()  # expect: GPU406
    if i % 4 == 0:
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad()

# %% valid: the loss divided before apex scales it in a `with ... as` block
from apex import amp

for step, (x, y) in enumerate(loader):
    loss = model(x.cuda(), y.cuda())
    if args.gradient_accumulation_steps > 1:
        loss = loss / args.gradient_accumulation_steps
    if args.fp16:
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
    else:
        loss.backward()
    if (step + 1) % args.gradient_accumulation_steps == 0:
        optimizer.step()
        optimizer.zero_grad()

# %% invalid: apex scales a loss nobody divided
from apex import amp

for step, (x, y) in enumerate(loader):
    loss = model(x.cuda(), y.cuda())
    with amp.scale_loss(loss, optimizer) as scaled_loss:
        scaled_loss.backward()  # expect: GPU406
    if (step + 1) % args.gradient_accumulation_steps == 0:
        optimizer.step()
        optimizer.zero_grad()

# %% valid: losses summed by token count, the gradients divided by the total tokens before the step
import torch


def scale_grads(model, factor):
    for p in model.parameters():
        if p.grad is not None:
            p.grad.mul_(factor)


def train(model, loader, optimizer, loss_fn, accumulation=8):
    model.cuda()
    num_tokens = 0
    for idx, batch in enumerate(loader):
        labels = batch["labels"].cuda()
        tokens = (labels != -100).sum()
        num_tokens += tokens
        loss = loss_fn(model(batch["input_ids"].cuda()), labels) * tokens
        loss.backward()
        if (idx + 1) % accumulation == 0:
            scale_grads(model, 1 / num_tokens)
            optimizer.step()
            optimizer.zero_grad()
            num_tokens = 0

# %% valid: the loss handed to a framework's backward by keyword is divided there
for step, batch in enumerate(loader):
    loss = criterion(model(batch["x"].cuda()), batch["y"].cuda())
    booster.backward(loss=loss / accumulation_steps, optimizer=optimizer)
    if (step + 1) % accumulation_steps == 0:
        optimizer.step()
        optimizer.zero_grad()

# %% valid: a per-sample loss summed (a sum over samples, like reduction="sum") before apex scales it
from apex import amp

for step, batch in enumerate(loader):
    loss = model(batch, compute_loss=True)
    loss = loss.sum()  # sum over the per-sample losses
    delay_unscale = (step + 1) % opts.gradient_accumulation_steps != 0
    with amp.scale_loss(loss, optimizer, delay_unscale=delay_unscale) as scaled_loss:
        scaled_loss.backward()
    if (step + 1) % opts.gradient_accumulation_steps == 0:
        optimizer.step()
        optimizer.zero_grad()

# %% invalid: the same loop with the per-sample losses averaged
from apex import amp

for step, batch in enumerate(loader):
    loss = model(batch, compute_loss=True)
    loss = loss.mean()
    with amp.scale_loss(loss, optimizer) as scaled_loss:
        scaled_loss.backward()  # expect: GPU406
    if (step + 1) % opts.gradient_accumulation_steps == 0:
        optimizer.step()
        optimizer.zero_grad()

# %% invalid: Adam divides the scale out again: info
import torch
optimizer = torch.optim.AdamW([direction], lr=0.01)
for i, seed in enumerate(seeds):
    loss = clip_loss(generate(seed, direction))
    loss.backward()  # expect: GPU406 info
    if not (i % batch_size):
        optimizer.step()
        optimizer.zero_grad()

# %% invalid: Adam with clipped gradients feels the scale
import torch
optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
scaler = torch.cuda.amp.GradScaler()
for i, (x, y) in enumerate(loader):
    loss = criterion(model(x), y)
    scaler.scale(loss).backward()  # expect: GPU406
    if (i + 1) % accum_steps == 0:
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad()

# %% invalid: an optimizer chosen by option may be SGD: warning
import torch
if args.optim == "adam":
    optimizer = torch.optim.Adam(model.parameters())
else:
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for i, (x, y) in enumerate(loader):
    loss = criterion(model(x), y)
    loss.backward()  # expect: GPU406
    if (i + 1) % accum_steps == 0:
        optimizer.step()
        optimizer.zero_grad()


# %% valid: gradients zeroed before every backward: the `%` test skips updates, nothing accumulates
import torch

optim_steps = 0
for x, y in loader:
    if x.numel() == 0:
        continue
    optim_steps += 1
    optimizer.zero_grad()
    loss = criterion(model(x.cuda()), y.cuda())
    loss.backward()
    if optim_steps % opts.optim_bs == 0:
        optimizer.step()

# %% invalid: gradients zeroed only after each update: they accumulate in between
import torch

optim_steps = 0
for x, y in loader:
    optim_steps += 1
    loss = criterion(model(x.cuda()), y.cuda())
    loss.backward()  # expect: GPU406
    if optim_steps % opts.optim_bs == 0:
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        optimizer.zero_grad()


# %% invalid: a fixed count of micro-batches per step, drawn in an inner loop, summed unscaled
import torch

GRADIENT_ACCUMULATE_EVERY = 4


def cycle(loader):
    while True:
        for batch in loader:
            yield batch


def train(model, loader, num_batches):
    optim = torch.optim.Adam(model.parameters(), lr=1e-4)
    train_loader = cycle(loader)
    for i in range(num_batches):
        model.train()
        for _ in range(GRADIENT_ACCUMULATE_EVERY):
            loss = model(next(train_loader).cuda())
            loss.backward()  # expect: GPU406
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
        optim.step()
        optim.zero_grad()

# %% valid: the same inner loop with the loss divided by the count
import torch

GRADIENT_ACCUMULATE_EVERY = 4


def cycle(loader):
    while True:
        for batch in loader:
            yield batch


def train(model, loader, num_batches):
    optim = torch.optim.Adam(model.parameters(), lr=1e-4)
    train_loader = cycle(loader)
    for i in range(num_batches):
        for _ in range(GRADIENT_ACCUMULATE_EVERY):
            loss = model(next(train_loader).cuda())
            (loss / GRADIENT_ACCUMULATE_EVERY).backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
        optim.step()
        optim.zero_grad()

# %% valid: one loss term per task in an inner loop: the gradients are meant to add up
import torch


def train(model, heads, batches, num_tasks):
    optim = torch.optim.SGD(model.parameters(), lr=0.1)
    for x, ys in batches:
        features = model(x.cuda())
        for t in range(num_tasks):
            loss = torch.nn.functional.cross_entropy(heads[t](features), ys[t].cuda())
            loss.backward(retain_graph=True)
        optim.step()
        optim.zero_grad()

# %% valid: an accumulation count of 1 on every path
import torch

ACCUMULATE_EVERY = 1


def cycle(loader):
    while True:
        for batch in loader:
            yield batch


def train(model, loader, num_batches):
    optim = torch.optim.SGD(model.parameters(), lr=0.1)
    train_loader = cycle(loader)
    for i in range(num_batches):
        for _ in range(ACCUMULATE_EVERY):
            loss = model(next(train_loader).cuda())
            loss.backward()
        optim.step()
        optim.zero_grad()

# %% valid: the count kept in a settings dict divides the loss before the backward
import torch


def train(model, loader, optimizer, args):
    for step, (x, y) in enumerate(loader):
        loss = torch.nn.functional.cross_entropy(model(x.cuda()), y.cuda())
        if args["gradient_accumulation_steps"] > 1:
            loss = loss / args["gradient_accumulation_steps"]
        loss.backward()
        if (step + 1) % args["gradient_accumulation_steps"] == 0:
            optimizer.step()
            optimizer.zero_grad()

# %% invalid: the count kept in a settings dict gates the step, but the loss is not divided
import torch


def train(model, loader, optimizer, args):
    for step, (x, y) in enumerate(loader):
        loss = torch.nn.functional.cross_entropy(model(x.cuda()), y.cuda())
        loss.backward()  # expect: GPU406
        if (step + 1) % args["gradient_accumulation_steps"] == 0:
            optimizer.step()
            optimizer.zero_grad()
