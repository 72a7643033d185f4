# GPU101 `item-in-training-loop`: fixture. Sections start at `# %% valid:` (a look-alike that must
# stay silent) or `# %% invalid:` (every `# expect:` mark reported, nothing else). Each
# section is checked on its own, with this rule alone.

# %% invalid: case
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    total += loss.item()  # expect: GPU101

# %% invalid: inside a helper the hot loop calls
def train_step(model, batch, optimizer):
    loss = compute_loss(model, batch)
    loss.backward()
    optimizer.step()
    return loss.item()  # expect: GPU101

for epoch in range(3):
    for batch in train_loader:
        train_step(model, batch, optimizer)

# %% invalid: periodic logging is info
for i, (x, y) in enumerate(loader):
    loss = criterion(model(x), y)
    scaler.scale(loss).backward()
    scaler.step(opt)
    scaler.update()
    if i % 50 == 0:
        print("loss", loss.item())  # expect: GPU101 info

# %% invalid: float(tensor) in a while loop
while step < max_steps:
    out = model(batch)
    loss = out.loss
    accelerator.backward(loss)
    optimizer.step()
    losses.append(float(loss))  # expect: GPU101
    step += 1

# %% invalid: methods and bool(tensor)
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

# %% invalid: a rank-0 gate does not make a per-step read cheaper
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    if rank == 0:
        acc = (model(x).argmax(1) == y).float().mean().item()  # expect: GPU101

# %% invalid: outer loop of micro-batch accumulation steps the optimizer
import torch
for it in range(max_iters):
    for micro_step in range(accum_steps):
        x, y = get_batch("train", device="cuda")
        loss = model(x, y) / accum_steps
        loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    lossf = loss.item() * accum_steps  # expect: GPU101

# %% invalid: the accumulation boundary runs on every optimizer step
import torch
for i, (x, y) in enumerate(loader):
    loss = criterion(model(x.cuda()), y.cuda()) / accum_steps
    loss.backward()
    if (i + 1) % accum_steps == 0:
        optimizer.step()
        optimizer.zero_grad()
        history.append(loss.item())  # expect: GPU101

# %% invalid: a regulariser that steps again every few iterations is periodic
import torch
for it in range(args.iters):
    real = next(batches).to("cuda")
    d_loss = critic_loss(critic(fake_from(gen)), critic(real))
    critic.zero_grad()
    d_loss.backward()
    d_opt.step()
    lazy_reg = it % args.reg_every == 0
    if lazy_reg:
        penalty = gradient_penalty(critic, real)
        critic.zero_grad()
        (penalty * args.reg_every).backward()
        d_opt.step()
        penalty_value = penalty.item()  # expect: GPU101 info

# %% invalid: a scaler object runs backward and steps the optimizer
import math
import sys
import torch


def one_epoch(net, criterion, batches, opt, amp_scaler, device, max_norm=None):
    for images, labels in batches:
        images, labels = images.to(device, non_blocking=True), labels.to(device, non_blocking=True)
        with torch.autocast("cuda", dtype=torch.float16):
            loss = criterion(net(images), labels)
        value = loss.item()  # expect: GPU101
        if not math.isfinite(value):
            sys.exit(1)
        opt.zero_grad()
        amp_scaler(loss, opt, clip_grad=max_norm, parameters=net.parameters())

# %% valid: a scaler object called without an optimizer is no training step
import torch


def evaluate(net, batches, feature_scaler):
    with torch.no_grad():
        for images in batches:
            feats = feature_scaler(net(images.cuda()), 0.5)
            print(feats.norm().item())

# %% valid: numbers read from tensors built on the host
import torch
for x, y in loader:
    loss = criterion(model(x.cuda()), y.cuda())
    loss.backward()
    optimizer.step()
    sizes = torch.tensor([len(s) for s in y])
    longest = sizes.max().item()
    offsets = torch.cumsum(sizes, 0).to(torch.int64)
    tail = int(offsets[-1])

# %% invalid: the update function is chosen by a flag and called through a name
import torch


def make_step(net, opt, scaler, loss_fn, use_amp):
    def amp_update(loss):
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()

    def plain_update(loss):
        loss.backward()
        opt.step()

    update = amp_update if use_amp else plain_update

    def step(batch):
        x, y = batch[0].cuda(non_blocking=True), batch[1].cuda(non_blocking=True)
        loss = loss_fn(net(x), y)
        logged = {"loss": loss.item()}  # expect: GPU101
        update(loss)
        opt.zero_grad(set_to_none=True)
        return logged

    return step


def run(net, opt, scaler, loss_fn, loader, use_amp):
    step = make_step(net, opt, scaler, loss_fn, use_amp)
    for batch in loader:
        step(batch)

# %% invalid: a logging interval of 1 logs on every step
import torch
log_every = 1
eval_every = 200


def train(model, loader, opt):
    for it, (x, y) in enumerate(loader):
        loss = model(x.cuda(), y.cuda())
        loss.backward()
        opt.step()
        if it % log_every == 0:
            print(f"iter {it}: loss {loss.item():.4f}")  # expect: GPU101
        if it % eval_every == 0:
            print("eval", loss.item())  # expect: GPU101 info

# %% invalid: a logger object only the main process gets is a rank-0 gate, which a read every step still pays
import torch


def train_one_epoch(model, loader, opt, board=None, tracker=None):
    for x, y in loader:
        loss = model(x.cuda(), y.cuda())
        opt.zero_grad()
        loss.backward()
        opt.step()
        if board:
            board.add_scalar("loss", loss.item())  # expect: GPU101
        if tracker is not None:
            tracker.log({"loss": loss.item()})  # expect: GPU101


def main(args, model, loader, opt):
    if args.rank == 0 and args.log_dir:
        board = SummaryWriter(args.log_dir)
    else:
        board = None
    tracker = Tracker(args)
    for epoch in range(args.epochs):
        train_one_epoch(model, loader, opt, board=board, tracker=tracker)

# %% invalid: a script with no sign of a GPU: info
import torch
net = torch.nn.Linear(3, 1)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
for x, y in data:
    loss = ((net(x) - y) ** 2).mean()
    loss.backward()
    opt.step()
    print(loss.item())  # expect: GPU101 info

# %% invalid: conversions that follow another tensor or change the dtype are no sign of a GPU: info
import torch
w = torch.randn(3, requires_grad=True)
opt = torch.optim.SGD([w], lr=0.1)
for x, y in data:
    t0 = torch.zeros(1).to(x)
    loss = ((x.to(torch.float32) @ w - y.to(x.dtype) + t0) ** 2).mean()
    loss.backward()
    opt.step()
    print(loss.item())  # expect: GPU101 info

# %% invalid: a move to a device held in a plain name is
import torch
w = torch.randn(3, requires_grad=True)
opt = torch.optim.SGD([w], lr=0.1)
for x, y in data:
    x, y = x.to(dev), y.to(dev)
    loss = ((x @ w - y) ** 2).mean()
    loss.backward()
    opt.step()
    print(loss.item())  # expect: GPU101

# %% invalid: loss from a helper, backward through the scaler
def compute_loss(model, batch):
    return model(batch).mean()

for batch in loader:
    loss = compute_loss(model, batch)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    history.append(float(loss))  # expect: GPU101

# %% invalid: RL: the environment needs the action on the host
import torch
for t in range(total_steps):
    q = q_net(torch.as_tensor(obs, device="cuda"))
    action = q.argmax().item()  # expect: GPU101 info
    obs, reward, done, info = env.step(action)
    loss = td_loss(buffer.sample(64))
    loss.backward()
    optimizer.step()

# %% invalid: evaluation nested in the training loop
import torch
for step, (x, y) in enumerate(loader):
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    if step in eval_steps:
        with torch.no_grad():
            for vx, vy in val_loader:
                hits += (model(vx).argmax(1) == vy).sum().item()  # expect: GPU101 info

# %% invalid: step defined in a subclass
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

# %% invalid: Lightning runs training_step every step
import lightning as L

class LitClassifier(L.LightningModule):
    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.cross_entropy(self(x), y)
        self.log("train_loss", loss.item())  # expect: GPU101
        return loss

# %% invalid: a helper the training_step calls
import pytorch_lightning as pl

def accuracy(logits, y):
    return (logits.argmax(1) == y).float().mean().item()  # expect: GPU101

class Model(pl.LightningModule):
    def training_step(self, batch, batch_idx):
        x, y = batch
        logits = self(x)
        self.log("acc", accuracy(logits, y))
        return F.cross_entropy(logits, y)

# %% invalid: the process function an Ignite Engine runs every iteration
from ignite.engine import Engine

def main(model, optimizer, criterion, train_loader, device="cuda"):
    def train_step(engine, batch):
        model.train()
        x, y = batch[0].to(device), batch[1].to(device)
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        return loss.item()  # expect: GPU101

    trainer = Engine(train_step)
    trainer.run(train_loader, max_epochs=10)

# %% invalid: a Hugging Face Trainer subclass's compute_loss
from transformers import Trainer

class WeightedTrainer(Trainer):
    def compute_loss(self, model, inputs, return_outputs=False):
        outputs = model(**inputs)
        loss = outputs.loss * self.weight
        self.running.append(loss.item())  # expect: GPU101
        return (loss, outputs) if return_outputs else loss

# %% invalid: a no_grad helper the model's forward calls on every step (a MoCo queue)
import torch
import torch.nn as nn

class MoCo(nn.Module):
    def __init__(self, dim=128, size=4096):
        super().__init__()
        self.register_buffer("queue", torch.randn(dim, size))
        self.register_buffer("queue_ptr", torch.zeros(1, dtype=torch.long))

    @torch.no_grad()
    def _enqueue(self, keys):
        ptr = int(self.queue_ptr)  # expect: GPU101
        self.queue[:, ptr:ptr + keys.shape[0]] = keys.T

    def forward(self, q, k):
        self._enqueue(k)
        return q @ self.queue

model = MoCo().cuda()
for q, k in loader:
    loss = model(q, k).sum()
    loss.backward()
    optimizer.step()

# %% invalid: a helper called under no_grad on every step
def accuracy(logits, y):
    return (logits.argmax(1) == y).float().mean().item()  # expect: GPU101

for x, y in loader:
    logits = model(x.cuda())
    loss = criterion(logits, y.cuda())
    loss.backward()
    optimizer.step()
    with torch.no_grad():
        acc = accuracy(logits, y)

# %% valid: per-epoch read
for epoch in range(10):
    for x, y in loader:
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
    print(epoch, loss.item())  # once per epoch, after the inner loop

# %% valid: evaluation loop
import torch

@torch.no_grad()
def evaluate(model, loader):
    correct = 0
    for x, y in loader:
        correct += (model(x).argmax(1) == y).sum().item()
    return correct

# %% valid: dict .items() is not .item()
stats = {"lr": 0.1, "wd": 0.0}
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    for k, v in stats.items():
        pass

# %% valid: NumPy scalar
import numpy as np

for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    scale = np.float32(0.5).item()

# %% valid: float()/int() of config values
for step in range(100):
    lr = float(config.lr) * 0.5
    n = int(args.batch_size)
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()

# %% valid: Lightning training_step has no loop of ours
import pytorch_lightning as pl

class Model(pl.LightningModule):
    def training_step(self, batch, batch_idx):
        loss = self.compute(batch)
        self.log("loss", loss)
        return loss

# %% valid: Lightning validation_step is an evaluation
import lightning as L

class LitClassifier(L.LightningModule):
    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.scores.append(F.cross_entropy(self(x), y).item())

# %% valid: an Ignite evaluator's step trains nothing
from ignite.engine import Engine

def evaluate(model, val_loader, device="cuda"):
    def eval_step(engine, batch):
        model.eval()
        with torch.no_grad():
            x, y = batch[0].to(device), batch[1].to(device)
            return (model(x).argmax(1) == y).float().mean().item()

    evaluator = Engine(eval_step)
    evaluator.run(val_loader)

# %% valid: a class of our own named Trainer
class Trainer:
    def compute_loss(self, batch):
        return self.model(batch).loss.item()

class MyTrainer(Trainer):
    def compute_loss(self, batch):
        return self.model(batch).loss.item()

# %% invalid: a flag off by default: info where no construction turns it on, a warning where a subclass may
import torch.nn as nn


class BalancedLoss(nn.Module):
    def __init__(self, autobalance=False):
        super().__init__()
        self.autobalance = autobalance
        self.balance = 1.0

    def forward(self, pred, target):
        loss = ((pred - target) ** 2).mean()
        if self.autobalance:
            self.balance = 0.99 * self.balance + 0.01 / loss.detach().item()  # expect: GPU101 info
        return loss


class TrackedLoss(nn.Module):
    def __init__(self, track=False):
        super().__init__()
        self.track = track
        self.total = 0.0

    def forward(self, pred, target):
        loss = (pred - target).abs().mean()
        if self.track:
            self.total += loss.item()  # expect: GPU101
        return loss


class AlwaysTracked(TrackedLoss):
    def __init__(self):
        super().__init__(track=True)


balanced, tracked = BalancedLoss(), TrackedLoss()
for x, y in loader:
    x, y = x.cuda(), y.cuda()
    pred = model(x)
    loss = balanced(pred, y) + tracked(pred, y)
    loss.backward()
    optimizer.step()

# %% valid: an evaluation pass under no_grad, called from the epoch loop
import torch

@torch.no_grad()
def validate(model, val_loader):
    hits = 0
    for x, y in val_loader:
        hits += (model(x.cuda()).argmax(1) == y.cuda()).sum().item()
    return hits

for epoch in range(epochs):
    for x, y in train_loader:
        loss = criterion(model(x.cuda()), y.cuda())
        loss.backward()
        optimizer.step()
    validate(model, val_loader)

# %% valid: no backward, no step
total = 0.0
for x, y in loader:
    loss = criterion(model(x), y)
    total += loss.item()  # no backward here: an evaluation pass

# %% valid: index from tqdm(enumerate(...))
from tqdm import tqdm
for step, (x, y) in tqdm(enumerate(train_loader), total=len(train_loader)):
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    n = int(step)

# %% valid: NumPy method chain
import numpy as np
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    rewards = np.array(reward_list)
    mean_reward = rewards.mean().item()

# %% valid: labels still in host memory
for x, y in loader:
    positives = (y == 1).sum().item()
    x, y = x.cuda(), y.cuda()
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()

# %% invalid: a metric logger converts whatever tensors its callers hand it
import torch


class MetricLogger:
    def __init__(self):
        self.meters = {}

    def update(self, **values):
        for name, v in values.items():
            if isinstance(v, torch.Tensor):
                v = v.item()  # expect: GPU101 info
            self.meters.setdefault(name, []).append(v)


logger = MetricLogger()
for images, captions in loader:
    loss = model(images.cuda(non_blocking=True), captions)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    logger.update(loss=loss.item(), lr=optimizer.param_groups[0]["lr"])  # expect: GPU101

# %% invalid: a logger that converts what has an `.item()` method leaves the choice to its callers
class SmoothedLogger:
    def __init__(self):
        self.meters = {}

    def update(self, **values):
        for name, v in values.items():
            if hasattr(v, "item"):
                v = v.item()  # expect: GPU101 info
            self.meters.setdefault(name, []).append(v)


logger = SmoothedLogger()
for images, captions in loader:
    loss = model(images.cuda(non_blocking=True), captions)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    logger.update(loss=loss.item(), lr=optimizer.param_groups[0]["lr"])  # expect: GPU101

# %% invalid: the isinstance test does not make a known tensor any cheaper
import torch

for images, labels in loader:
    loss = criterion(model(images.cuda()), labels.cuda())
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    if isinstance(loss, torch.Tensor):
        history.append(loss.item())  # expect: GPU101

# %% invalid: a NaN check on the loss tensor in a helper called every step
import math


def check_nan_losses(loss):
    if math.isnan(loss):  # expect: GPU101
        raise RuntimeError("NaN loss")


for clips, labels in loader:
    loss = loss_fun(model(clips.cuda(non_blocking=True)), labels.cuda(non_blocking=True))
    check_nan_losses(loss)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

# %% valid: NaN checks on Python numbers
import math

for step, (x, y) in enumerate(loader):
    loss = criterion(model(x.cuda()), y.cuda())
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    lr = scheduler.get_last_lr()[0]
    if math.isnan(lr) or not math.isfinite(args.clip):
        raise ValueError("bad settings")

# %% invalid: a model put in a registry and built from the config's name: its forward runs every step
import torch
import torch.nn as nn


@MODEL_REGISTRY.register()
class MomentumQueue(nn.Module):
    def __init__(self, dim, length):
        super().__init__()
        self.encoder = nn.Linear(dim, dim)
        self.register_buffer("queue", torch.randn(length, dim))
        self.register_buffer("ptr", torch.zeros(1, dtype=torch.long))

    @torch.no_grad()
    def _enqueue(self, keys):
        ptr = int(self.ptr.item())  # expect: GPU101
        self.queue[ptr : ptr + keys.shape[0]] = keys
        self.ptr[0] = (ptr + keys.shape[0]) % self.queue.shape[0]

    def forward(self, x):
        q = self.encoder(x.cuda())
        self._enqueue(q.detach())
        return q @ self.queue.t()

# %% invalid: a method chosen from a dict of classes written out and called at once runs every step
import torch


class ERM(torch.nn.Module):
    def __init__(self, hparams):
        super().__init__()
        self.network = torch.nn.Linear(8, 2).cuda()
        self.optimizer = torch.optim.SGD(self.network.parameters(), lr=0.1)

    def update(self, x, y):
        loss = torch.nn.functional.cross_entropy(self.network(x.cuda()), y.cuda())
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return loss.item()  # expect: GPU101

    def summary(self):
        return float(self.network.weight.norm().item())


class GroupDRO(ERM):
    pass


def main(args, loader):
    model = {"erm": ERM, "dro": GroupDRO}[args.method](args)
    for epoch in range(args.epochs):
        for x, y in loader:
            model.update(x, y)
    print(model.summary())

# %% invalid: a layer nothing registers or calls runs once per batch, but nothing says it trains: info
import torch
import torch.nn as nn


class ActNormLayer(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.register_buffer("initialized", torch.tensor(0, dtype=torch.uint8))
        self.scale = nn.Parameter(torch.ones(1, channels, 1, 1))

    def forward(self, x):
        if self.initialized.item() == 0:  # expect: GPU101 info
            self.initialized.fill_(1)
        return self.scale * x.cuda()

# %% valid: a registered model's set-up code
import torch
import torch.nn as nn


@MODEL_REGISTRY.register()
class Classifier(nn.Module):
    def __init__(self, dim, classes):
        super().__init__()
        self.head = nn.Linear(dim, classes)
        self.num_params = int(sum(p.numel() for p in self.parameters()))
        self.scale = torch.tensor(2.0).item()

    def forward(self, x):
        return self.head(x.cuda()) * self.scale

# %% invalid: an Ignite trainer on CUDA keeps the default output_transform (`loss.item()` every iteration)
import torch
from torch.utils.data import DataLoader
from ignite.engine import Events, create_supervised_trainer
device = "cuda" if torch.cuda.is_available() else "cpu"
loader = DataLoader(train_set, batch_size=64, num_workers=4, pin_memory=True)
trainer = create_supervised_trainer(model, optimizer, criterion, device=device, non_blocking=True)  # expect: GPU101
@trainer.on(Events.ITERATION_COMPLETED(every=100))
def log_loss(engine):
    print(f"loss {engine.state.output:.3f}")
trainer.run(loader, max_epochs=10)

# %% valid: Ignite trainers given an output_transform, arguments through **kwargs, on the CPU, or with no device
import torch
from torch.utils.data import DataLoader
from ignite.engine import create_supervised_trainer
loader = DataLoader(train_set, batch_size=64, num_workers=4, pin_memory=True)
options = {"device": "cuda", "output_transform": lambda x, y, y_pred, loss: loss.detach()}
create_supervised_trainer(model, optimizer, criterion, device="cuda", output_transform=lambda x, y, y_pred, loss: loss.detach()).run(loader, max_epochs=5)
create_supervised_trainer(model, optimizer, criterion, **options).run(loader, max_epochs=5)
create_supervised_trainer(model, optimizer, criterion, device="cpu").run(loader, max_epochs=5)
create_supervised_trainer(model.cuda(), optimizer, criterion).run(loader, max_epochs=5)

# %% valid: a registered model's forward stops the run when its logits go bad: that runs once
import sys
import torch
import torch.nn as nn


@MODEL_REGISTRY.register()
class Classifier(nn.Module):
    def __init__(self, dim, classes):
        super().__init__()
        self.head = nn.Linear(dim, classes)

    def forward(self, x, labels):
        logits = self.head(x.cuda())
        loss = nn.functional.cross_entropy(logits, labels.cuda())
        if self.check_finite and not torch.isfinite(loss):
            print(f"non-finite loss {loss.item()}, max logit {logits.abs().max().item()}")
            sys.exit(1)
        return loss

# %% invalid: after a test that skips bad batches, the rest of the step runs on every other batch
import torch

for step, (x, y) in enumerate(loader):
    x, y = x.cuda(), y.cuda()
    if x.shape[0] == 0:
        continue
    loss = criterion(model(x), y)
    if not torch.isfinite(loss):
        continue
    loss.backward()
    optimizer.step()
    if step == 0:
        print("first loss", loss.item())  # expect: GPU101 info
        continue
    running = loss.item()  # expect: GPU101

# %% valid: code switched off by hand
import torch

for x, y in loader:
    loss = criterion(model(x.cuda()), y.cuda())
    loss.backward()
    optimizer.step()
    if 0:
        print("loss", loss.item())
    if False: print(loss.item())
    if True:
        running = loss.detach()
    else:
        running = loss.item()

# %% valid: code after a jump out of its block never runs
import torch


def accumulate(model, loader, optimizer, kinds):
    for x, y in loader:
        loss = criterion(model(x.cuda()), y.cuda())
        loss.backward()
        optimizer.step()
        for kind in kinds:
            if kind == "region":
                continue
                print("region loss", loss.item())
            elif kind == "yolo":
                pass
    return loss
    print(loss.item())


def unsupported(model, loader):
    for x, y in loader:
        raise NotImplementedError("use train()")
        print(model(x.cuda()).sum().item())

# %% invalid: an epoch function shared by training and validation; only its training passes step
import torch


def run_one_epoch(model, loader, optimizer, train=True):
    scores = []
    for sources in loader:
        sources = sources.cuda()
        estimate = model(sources[:, 0])
        loss = (estimate - sources[:, 1:]).abs().mean()
        if not train:
            scores.append(score(estimate, sources).item())
        if train:
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
            print(loss.item())  # expect: GPU101
        else:
            print(loss.item())
    return scores

# %% valid: a logger object called with values the caller already copied to the host
import torch


class Log:
    def __init__(self):
        self.loss = 0.0
        self.steps = 0

    def __call__(self, model, loss, accuracy):
        self._train_step(loss, accuracy)

    def _train_step(self, loss, accuracy):
        self.loss += loss.sum().item()
        self.steps += accuracy.size(0)


log = Log()
for inputs, targets in loader:
    predictions = model(inputs.cuda())
    loss = criterion(predictions, targets.cuda())
    optimizer.zero_grad()
    loss.mean().backward()
    optimizer.step()
    with torch.no_grad():
        correct = torch.argmax(predictions, 1) == targets.cuda()
        log(model, loss.cpu(), correct.cpu())

# %% invalid: a trainer written as a module: its forward runs once and holds the training loop
import torch
from torch import nn


class Trainer(nn.Module):
    def __init__(self, net, loader, optimizer, steps):
        super().__init__()
        self.net, self.loader, self.optimizer, self.steps = net.cuda(), loader, optimizer, steps
        self.register_buffer("step", torch.tensor(0))

    def forward(self):
        start = self.step.item()
        batches = iter(self.loader)
        for _ in range(start, self.steps):
            images = next(batches).cuda()
            loss = self.net(images)
            loss.backward()
            print(f"loss {loss.item():.3f}")  # expect: GPU101
            self.optimizer.step()
            self.optimizer.zero_grad()


Trainer(build(), loader, optimizer, 1000)()

# %% invalid: work done when the time elapsed since the last save passes an interval setting: info
import torch


def report(trainer, loader):
    losses = [trainer.eval_step(x.cuda()).item() for x in loader]  # expect: GPU101 info
    return sum(losses) / len(losses)


for x in train_loader:
    loss = trainer(x.cuda())
    loss.backward()
    trainer.optimizer.step()
    save_delta = save_timer.elapsed()
    if save_delta >= config.train.save_every_seconds:
        print("loss", loss.item(), "eval", report(trainer, valid_loader))  # expect: GPU101 info
        save_timer.reset()

# %% invalid: a hook that acts once an interval named with "delta" has passed since it last did: info
import torch

TRAIL_DELTA_INTERVAL = 100
trail_delta_last_step = 0


def maybe_apply_trail_delta(step, params):
    global trail_delta_last_step
    if step - trail_delta_last_step < TRAIL_DELTA_INTERVAL:
        return
    moved_sq = torch.zeros((), device="cuda")
    for p in params:
        moved_sq += p.detach().float().square().sum()
    trail_delta_last_step = step
    print(f"trail_delta moved_norm:{moved_sq.sqrt().item():.6f}")  # expect: GPU101 info


for step, (x, y) in enumerate(loader):
    loss = model(x.cuda(), y.cuda())
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    maybe_apply_trail_delta(step, model.parameters())

# %% invalid: work under a debug or test switch: info; under a count the run may raise: reported
import argparse

import torch

parser = argparse.ArgumentParser()
parser.add_argument("--batch-chunk", type=int, default=1)
args = parser.parse_args()


def run_epoch(opt, model, loader, optimizer):
    for iter_id, batch in enumerate(loader):
        output, loss = model(batch["input"].cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if opt.debug > 0:
            print("debug", output.max().item())  # expect: GPU101 info
        if opt.test:
            print("test", output.mean().item())  # expect: GPU101 info
        if args.batch_chunk > 1:
            print("chunked", loss.item())  # expect: GPU101
        print("loss", loss.item())  # expect: GPU101

# %% invalid: the step goes through a loop over the optimizers; the loop around it is per step
import torch

for i in range(cfg.epoch_iters):
    batch_data = next(iterator)
    module.zero_grad()
    loss, acc = module(batch_data.cuda())
    loss = loss.mean()
    loss.backward()
    for optimizer in optimizers:
        optimizer.step()
    ave_total_loss.update(loss.data.item())  # expect: GPU101

# %% invalid: hooks run every step that act only at one step or once an interval has passed: info
import time
import torch

last_step = 0
last_log = time.time()
snapshot = None


def maybe_move(model, step, interval):
    global last_step
    if step - last_step < interval:
        return
    last_step = step
    norm = sum(p.detach().norm() for p in model.parameters())
    print("moved at", step, norm.item())  # expect: GPU101 info


def maybe_capture(model, step, capture_step):
    global snapshot
    if step != capture_step:
        return
    snapshot = {n: p.detach().clone() for n, p in model.named_parameters()}
    print("captured", sum(p.sum() for p in snapshot.values()).item())  # expect: GPU101 info


for step, (x, y) in enumerate(loader):
    loss = criterion(model(x.cuda()), y.cuda())
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    maybe_move(model, step, 100)
    maybe_capture(model, step, 500)
    if time.time() - last_log > 10:
        print("loss", loss.item())  # expect: GPU101 info
        last_log = time.time()

# %% invalid: the same tests read the other way run on nearly every step
import time
import torch

last_step = 0


def maybe_track(model, step, interval):
    if step - last_step >= interval:
        return
    print("tracked", model.weight.norm().item())  # expect: GPU101


for step, (x, y) in enumerate(loader):
    loss = criterion(model(x.cuda()), y.cuda())
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    maybe_track(model, step, 100)
    if step != 0:
        print("loss", loss.item())  # expect: GPU101

# %% invalid: parts of the batch taken by index, moved under the same name, counted by the loss per image
import torch
from torch import nn


class BoxLoss(nn.Module):
    def build_target(self, labels, batchsize):
        counts = (labels.sum(dim=2) > 0).sum(dim=1)
        sizes = []
        for b in range(batchsize):
            sizes.append(int(counts[b]))  # expect: GPU101
        return sizes

    def forward(self, outputs, labels=None):
        sizes = self.build_target(labels, outputs.shape[0])
        return outputs.sum() * len(sizes)


criterion = BoxLoss()
for i, batch in enumerate(train_loader):
    images = batch[0]
    boxes = batch[1]
    images = images.to(device=device, dtype=torch.float32)
    boxes = boxes.to(device=device)
    loss = criterion(model(images), boxes)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

# %% valid: a part of a loop item that is not a loader's batch, moved under the same name
import torch

for i, setting in enumerate(settings):
    scale = setting[1]
    scale = scale.to(device)
    loss = model(inputs.cuda(), scale).sum()
    loss.backward()
    optimizer.step()
    print(int(scale))

# %% invalid: a running average started on the first step of each epoch: only its update is per step
import torch

for epoch in range(epochs):
    loss_ema = None
    for x, _ in loader:
        optimizer.zero_grad()
        loss = model(x.cuda())
        loss.backward()
        if loss_ema is None:
            loss_ema = loss.item()  # expect: GPU101 info
        else:
            loss_ema = 0.9 * loss_ema + 0.1 * loss.item()  # expect: GPU101
        optimizer.step()

# %% invalid: a loss module built into a list of blocks that no call is seen to run: info
import torch
from torch import nn


class RegionLoss(nn.Module):
    def forward(self, output, target):
        n = target.sum().item()  # expect: GPU101 info
        return output.sum() * n


class Detector(nn.Module):
    def __init__(self, blocks):
        super().__init__()
        models = []
        for block in blocks:
            if block["type"] == "region":
                models.append(RegionLoss())
            else:
                models.append(nn.Conv2d(3, 3, 3))
        self.models = nn.ModuleList(models)
        self.blocks = blocks

    def forward(self, x):
        for block, layer in zip(self.blocks, self.models):
            if block["type"] == "region":
                continue
            x = layer(x)
        return x


model = Detector(blocks).cuda()
for x, y in loader:
    loss = model(x.cuda()).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

# %% invalid: a loss object that steps when trained, called under no_grad by an evaluation pass at milestones: info
import torch


class LossCompute:
    def __init__(self, criterion, opt):
        self.criterion, self.opt = criterion, opt

    def __call__(self, logits, y, only_return_losses=False):
        losses = self.criterion(logits, y)
        if only_return_losses:
            return losses
        losses.sum().backward()
        self.opt.step()
        self.opt.zero_grad()
        return losses


compute_loss = LossCompute(criterion, optimizer)
n_updates = 0


def evaluate(batches):
    cost = 0
    with torch.no_grad():
        model.eval()
        for x, y in batches:
            losses = compute_loss(model(x.cuda()), y.cuda(), only_return_losses=True)
            cost += losses.sum().item()  # expect: GPU101 info
    return cost


def run_epoch(batches):
    global n_updates
    for x, y in batches:
        model.train()
        compute_loss(model(x.cuda()), y.cuda())
        n_updates += 1
        if n_updates in [1000, 2000, 4000]:
            evaluate(held_out)

# %% invalid: a constant filled in on the first call (the body stores what the test reads): info there
import torch
from torch import nn


class NCEAverage(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.register_buffer("params", torch.tensor([n, -1.0]))

    def forward(self, out):
        z = self.params[1].item()  # expect: GPU101
        if z < 0:
            self.params[1] = out.mean() * self.params[0]
            z = self.params[1].clone().detach().item()  # expect: GPU101 info
        scale = self.params[0].item()  # expect: GPU101
        if scale < 0:
            print("negative scale", out.sum().item())  # expect: GPU101
        return out / z


contrast = NCEAverage(4096).cuda()
for x, _ in loader:
    loss = -contrast(model(x.cuda())).log().mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

# %% invalid: a term behind a parameter flag that no caller turns on is info, also when the caller is a closure reading `self`
import torch


def fitting_loss(pred, target, use_penalty=False, use_prior=False):
    loss = (pred - target).pow(2).sum()
    if use_penalty:
        if (pred < 0).sum().item() > 0:  # expect: GPU101 info
            loss = loss + pred.clamp(max=0).abs().sum()
    if use_prior:
        if (pred > 1).sum().item() > 0:  # expect: GPU101
            loss = loss + pred.clamp(min=1).sum()
    return loss


class Fitter:
    def __init__(self, model, use_penalty=False, iters=100):
        self.model = model.cuda()
        self.use_penalty = use_penalty
        self.iters = iters

    def fit(self, x, target):
        optimizer = torch.optim.LBFGS(self.model.parameters())
        for _ in range(self.iters):
            def closure():
                optimizer.zero_grad()
                loss = fitting_loss(self.model(x), target, use_penalty=self.use_penalty, use_prior=True)
                loss.backward()
                return loss
            optimizer.step(closure)


fitter = Fitter(torch.nn.Linear(8, 8))
fitter.fit(torch.randn(4, 8).cuda(), torch.randn(4, 8).cuda())

# %% invalid: a parameter flag fed by a command-line switch is a run's choice: reported
import argparse

import torch


def smoothed_loss(pred, gold, smoothing=False):
    if smoothing:
        keep = gold.ne(0)
        if keep.sum().item() == 0:  # expect: GPU101
            return pred.sum() * 0
    return torch.nn.functional.cross_entropy(pred, gold)


parser = argparse.ArgumentParser()
parser.add_argument("--label_smoothing", action="store_true")
opt = parser.parse_args()
model = torch.nn.Linear(8, 4).cuda()
optimizer = torch.optim.Adam(model.parameters())
for x, y in loader:
    loss = smoothed_loss(model(x.cuda()), y.cuda(), smoothing=opt.label_smoothing)
    loss.backward()
    optimizer.step()

# %% invalid: reads under a test that the step is one a logger's collection names run now and then: info
import torch


class Logger:
    def __init__(self, every):
        self.log_iters = set(range(0, 100000, every))


def train(model, loader, optimizer, logger):
    model.cuda()
    for it, (x, y) in enumerate(loader):
        loss = torch.nn.functional.cross_entropy(model(x.cuda()), y.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if it == 0 or it in logger.log_iters:
            print(loss.item())  # expect: GPU101 info
        print(loss.item())  # expect: GPU101

# %% valid: a loss computed from outputs copied to a CPU device variable is read without waiting again
import torch


def train(model, loader, optimizer):
    device = torch.device("cuda")
    loss_device = torch.device("cpu")
    model.to(device)
    for x, y in loader:
        out = model(x.to(device))
        loss = out.to(loss_device).sum() - y.to(loss_device).sum()
        loss.backward()
        optimizer.step()
        print(loss.item())

# %% invalid: a step test in a helper, joined with a rank test: info; the rank test alone: reported
import torch


def divisible_by(num, den):
    return (num % den) == 0


def train(model, loader, optimizer, accelerator, every):
    for step, (x, y) in enumerate(loader):
        loss = torch.nn.functional.cross_entropy(model(x.cuda()), y.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if divisible_by(step, every) and accelerator.is_main_process:
            print(loss.item())  # expect: GPU101 info
        if accelerator.is_main_process:
            print(loss.item())  # expect: GPU101

# %% invalid: an optimizer's per-parameter state filled on its first step: info; the update itself: reported
import torch


def init_scale(grad):
    return grad.float().abs().mean().clamp(min=1e-24).pow(-0.5).item()  # expect: GPU101 info


class Scaled(torch.optim.Optimizer):
    @torch.no_grad()
    def step(self):
        for group in self.param_groups:
            for p in group["params"]:
                state = self.state[p]
                if not state:
                    state["scale"] = init_scale(p.grad)
                if p.grad.norm().item() > 10:  # expect: GPU101
                    continue
                p.add_(p.grad, alpha=-group["lr"] * state["scale"])


def train(model, loader):
    optimizer = Scaled(model.parameters(), {"lr": 0.1})
    model.cuda()
    for x, y in loader:
        loss = torch.nn.functional.mse_loss(model(x.cuda()), y.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

# %% valid: a mask read from the batch with `:=` and inverted before the batch is moved
def move_to_device(batch, device):
    return {k: v.to(device, non_blocking=True) for k, v in batch.items()}


class Trainer:
    def __init__(self, model, loader, optim):
        self.model = model.cuda()
        self.loader = loader
        self.optim = optim

    def train_batch(self, batch):
        metrics = {}
        if (instance_mask := batch.get("instance_mask")) is not None:
            metrics["masked"] = (~instance_mask).sum().item()
        batch = move_to_device(batch, "cuda")
        loss = self.model(**batch)
        loss.backward()
        self.optim.step()
        return metrics

    def fit(self):
        for batch in self.loader:
            self.train_batch(batch)

# %% invalid: a loop bound that is a tensor count converts it every step; shapes and lengths do not
import torch


def train(model, loader, optimizer, image_token):
    model.cuda()
    for ids, images in loader:
        ids = ids.cuda()
        num_images = (ids == image_token).sum()
        for i in range(num_images + 1):  # expect: GPU101
            pass
        for j in range(ids.shape[0]):
            pass
        for k in range(len(images)):
            pass
        loss = model(ids, images.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

# %% invalid: an assert's test reads the GPU every step; its message only when it fails
import torch


def train(model, loader, optimizer):
    model.cuda()
    for x, y in loader:
        out = model(x.cuda())
        assert torch.isfinite(out).all().item()  # expect: GPU101
        assert out.abs().max() < 1e4, f"bad output {out.abs().max().item()}"
        loss = torch.nn.functional.mse_loss(out, y.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

# %% valid: a token count summed from batches before they are moved stays in host memory
import torch

IGNORE_INDEX = -100


def train(model, dataset, optimizer, device):
    loader = torch.utils.data.DataLoader(dataset, batch_size=8)
    batches = iter(loader)
    for step in range(1000):
        valid_tokens = torch.tensor(0, dtype=torch.int64)
        for _ in range(4):
            inputs, labels = next(batches)
            valid_tokens += (labels != IGNORE_INDEX).sum()
            model(inputs.to(device), labels.to(device)).backward()
        print("tokens", int(valid_tokens))
        optimizer.step()
        optimizer.zero_grad()

# %% invalid: the same count kept on the device
import torch

IGNORE_INDEX = -100


def train(model, dataset, optimizer, device):
    loader = torch.utils.data.DataLoader(dataset, batch_size=8)
    batches = iter(loader)
    for step in range(1000):
        valid_tokens = torch.tensor(0, dtype=torch.int64, device=device)
        for _ in range(4):
            inputs, labels = next(batches)
            labels = labels.to(device)
            valid_tokens += (labels != IGNORE_INDEX).sum()
            model(inputs.to(device), labels).backward()
        print("tokens", int(valid_tokens))  # expect: GPU101
        optimizer.step()
        optimizer.zero_grad()

# %% invalid: Lightning's per-batch hooks run on every training step, as training_step does
import lightning.pytorch as pl
import torch


class LossLogger(pl.Callback):
    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
        print("loss", outputs["loss"].item())  # expect: GPU101

    def on_train_epoch_end(self, trainer, pl_module):
        print("epoch", trainer.callback_metrics["loss"].item())


class Regressor(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = torch.nn.Linear(4, 1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return torch.nn.functional.mse_loss(self.net(x), y)

    def on_before_optimizer_step(self, optimizer):
        norm = torch.nn.utils.clip_grad_norm_(self.parameters(), 1.0)
        print(float(norm))  # expect: GPU101

# %% invalid: a project autograd Function's backward runs on every backward of the step
import torch


class Rosa(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        idx = x[0, :8].tolist()
        ctx.save_for_backward(x)
        return x * 2

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        scale = float(x[0, 0])  # expect: GPU101
        return grad * 2 * scale


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(8, 8)

    def forward(self, x):
        return Rosa.apply(self.lin(x))


def train(loader):
    model = Block().cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for x in loader:
        loss = model(x.cuda()).sum()
        loss.backward()
        opt.step()

# %% invalid: a tensor built from a list of loss tensors reads each one back
import torch
import torch.nn.functional as F


class ContentLoss(torch.nn.Module):
    def __init__(self, extractor, nodes):
        super().__init__()
        self.extractor = extractor
        self.nodes = nodes

    def forward(self, sr, gt):
        losses = []
        sr_features, gt_features = self.extractor(sr), self.extractor(gt)
        for node in self.nodes:
            losses.append(F.mse_loss(sr_features[node], gt_features[node]))
        return torch.Tensor([losses]).to(sr.device)  # expect: GPU101


criterion = ContentLoss(extractor, ["features.35"]).cuda()
for lr, hr in loader:
    lr, hr = lr.cuda(), hr.cuda()
    loss = criterion(generator(lr), hr).sum()
    loss.backward()
    optimizer.step()

# %% valid: a tensor built from Python numbers read once each, and a stack of loss tensors
import torch

for x, y in loader:
    x, y = x.cuda(), y.cuda()
    parts = [criterion(model(x), y), penalty(model)]
    loss = torch.stack(parts).sum()
    weights = torch.tensor([0.5, 1.0, 2.0])
    loss.backward()
    optimizer.step()

# %% invalid: a tensor built from a comprehension of gradient norms reads each one back
import torch

for x, y in loader:
    loss = criterion(model(x.cuda()), y.cuda())
    loss.backward()
    norms = torch.tensor([torch.norm(p.grad) for p in model.parameters() if p.grad is not None])  # expect: GPU101
    optimizer.step()
    optimizer.zero_grad()

# %% invalid: a loss module a config builds, whose forward takes the batch's targets under a longer name
import torch
import torch.nn as nn

DEVICE = torch.device("cuda")


class MultiStepMaskLoss(nn.Module):
    def __init__(self, weights):
        super().__init__()
        self.weights = weights

    def forward(self, outs_batch, targets_batch):
        num_objects = torch.tensor(targets_batch.shape[1], device=targets_batch.device, dtype=torch.float)
        num_objects = torch.clamp(num_objects, min=1).item()  # expect: GPU101
        return sum(self.weights[k] * v.sum() for k, v in outs_batch.items()) / num_objects

# %% valid: an action sampled from a distribution over probabilities already copied to the host
import torch
from torch.distributions import Categorical


def pick(policy, state, device):
    probs = policy(torch.from_numpy(state).float().unsqueeze(0).to(device)).cpu()
    dist = Categorical(probs)
    action = dist.sample()
    return action.item(), dist.log_prob(action)


def train(policy, env, optimizer, device):
    for episode in range(1000):
        action, log_prob = pick(policy, env.reset(), device)
        loss = -log_prob.sum()
        loss.backward()
        optimizer.step()

# %% invalid: the same sample from probabilities left on the device
import torch
from torch.distributions import Categorical


def pick(policy, state, device):
    probs = policy(torch.from_numpy(state).float().unsqueeze(0).to(device))
    dist = Categorical(probs)
    action = dist.sample()
    return action.item(), dist.log_prob(action)  # expect: GPU101


def train(policy, env, optimizer, device):
    for episode in range(1000):
        action, log_prob = pick(policy, env.reset(), device)
        loss = -log_prob.sum()
        loss.backward()
        optimizer.step()

# %% valid: a read in the branch for another accelerator's package, imported only where it exists
import torch

try:
    import torch_npu
except ImportError:
    torch_npu = None

for x, y in loader:
    loss = criterion(model(x.cuda()), y.cuda())
    loss.backward()
    optimizer.step()
    if torch_npu is not None:
        print("npu loss", loss.item())

# %% invalid: a loss that starts as a Python number and adds the model's outputs is a device tensor
from math import log

import torch


def calc_loss(log_p, logdet, image_size, n_bins):
    n_pixel = image_size * image_size * 3
    loss = -log(n_bins) * n_pixel
    loss = loss + logdet + log_p
    return (-loss / (log(2) * n_pixel)).mean()


for image in loader:
    log_p, logdet, _ = model(image.cuda())
    loss = calc_loss(log_p, logdet, 64, 32)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(f"loss {loss.item():.5f}")  # expect: GPU101

# %% invalid: a scale measured on the first batch only, kept in an attribute made then: info
import torch


class Quantized(torch.nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.proj = torch.nn.Linear(dim, dim)

    def forward(self, x):
        if not hasattr(self, "scale"):
            self.scale = x.abs().max().item()  # expect: GPU101 info
        return self.proj(x / self.scale)


model = Quantized(64).cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for x, y in loader:
    loss = torch.nn.functional.mse_loss(model(x.cuda()), y.cuda())
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

# %% invalid: the same test whose body never makes the attribute runs on every call
import torch


class Quantized(torch.nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.proj = torch.nn.Linear(dim, dim)

    def forward(self, x):
        if not hasattr(self, "scale"):
            peak = x.abs().max().item()  # expect: GPU101
            x = x / peak
        return self.proj(x)


model = Quantized(64).cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for x, y in loader:
    loss = torch.nn.functional.mse_loss(model(x.cuda()), y.cuda())
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

# %% valid: a sampler branch the training call turns off through the wrapper that hands the flag on
import torch
import torch.nn as nn


class Diffusion(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.net = nn.Linear(dim, dim)

    def forward(self, x, infer=True):
        if not infer:
            noise = torch.randn_like(x)
            return (self.net(x + noise) - noise).pow(2).mean()
        steps = torch.linspace(1.0, 0.0, 10, device=x.device)
        for t in steps:
            x = x - self.net(x) * t.item()
        return x


class Wrapper(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.decoder = Diffusion(dim)

    def forward(self, x, infer=True):
        return self.decoder(x, infer=infer)


model = Wrapper(64).cuda()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
for x in loader:
    loss = model(x.cuda(), infer=False)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

# %% invalid: an evaluation a flag turns on every few thousand steps, handed to the step function: info
import torch


def train_step(model, optimizer, x, y, do_eval=False):
    loss = torch.nn.functional.mse_loss(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    if do_eval:
        print("eval loss", loss.item())  # expect: GPU101 info
    return loss.detach()


model = torch.nn.Linear(8, 8).cuda()
optimizer = torch.optim.Adam(model.parameters())
for step, (x, y) in enumerate(loader):
    do_eval = False
    if step > 0 and step % 5000 == 0:
        do_eval = True
    train_step(model, optimizer, x.cuda(), y.cuda(), do_eval)

# %% invalid: the same flag set on every step reads back on every step
import torch


def train_step(model, optimizer, x, y, do_eval=False):
    loss = torch.nn.functional.mse_loss(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    if do_eval:
        print("eval loss", loss.item())  # expect: GPU101
    return loss.detach()


model = torch.nn.Linear(8, 8).cuda()
optimizer = torch.optim.Adam(model.parameters())
for step, (x, y) in enumerate(loader):
    do_eval = False
    if step > 0:
        do_eval = True
    train_step(model, optimizer, x.cuda(), y.cuda(), do_eval)

# %% invalid: a loss read back at ten chosen iterations of the optimisation: info
import numpy as np
import torch

image = torch.randn(1, 3, 224, 224, device="cuda", requires_grad=True)
optimizer = torch.optim.SGD([image], lr=6)
for i in range(1, 150):
    loss = -model(image)[0, target_class]
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    if i in np.linspace(0, 150, 10, dtype=int):
        print("iteration", i, "loss", loss.item())  # expect: GPU101 info

# %% invalid: a membership test of something else than the step counter gates nothing
import torch

image = torch.randn(1, 3, 224, 224, device="cuda", requires_grad=True)
optimizer = torch.optim.SGD([image], lr=6)
for i in range(1, 150):
    loss = -model(image)[0, target_class]
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    if target_class in watched_classes:
        print("iteration", i, "loss", loss.item())  # expect: GPU101

# %% invalid: the same wrapper where training leaves the flag at its sampling default
import torch
import torch.nn as nn


class Diffusion(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.net = nn.Linear(dim, dim)

    def forward(self, x, infer=True):
        if not infer:
            noise = torch.randn_like(x)
            return (self.net(x + noise) - noise).pow(2).mean()
        steps = torch.linspace(1.0, 0.0, 10, device=x.device)
        for t in steps:
            x = x - self.net(x) * t.item()  # expect: GPU101
        return x.pow(2).mean()


class Wrapper(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.decoder = Diffusion(dim)

    def forward(self, x, infer=True):
        return self.decoder(x, infer=infer)


model = Wrapper(64).cuda()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
for x in loader:
    loss = model(x.cuda())
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

# %% invalid: a loss read back for a visdom plot only when that plot is asked for: info
import torch

model = Net().cuda()
optimizer = torch.optim.Adam(model.parameters())
visdom_epoch = args.visdom_epoch
for i, (mixture, source) in enumerate(loader):
    loss = criterion(model(mixture.cuda()), source.cuda())
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    if visdom_epoch:
        iter_losses[i] = loss.item()  # expect: GPU101 info

# %% invalid: the same read under a test of the epoch count: every step
import torch

model = Net().cuda()
optimizer = torch.optim.Adam(model.parameters())
epochs = args.epochs
for i, (mixture, source) in enumerate(loader):
    loss = criterion(model(mixture.cuda()), source.cuda())
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    if epochs:
        iter_losses[i] = loss.item()  # expect: GPU101

# %% invalid: a subclass trainer's override of a method the base class's loop calls
import torch


class BasicTrainer:
    def __init__(self, policy, loader):
        self.policy, self.loader = policy.cuda(), loader
        self.optimizer = torch.optim.AdamW(self.policy.parameters())

    def clip_gradient(self):
        return torch.nn.utils.clip_grad_norm_(self.policy.parameters(), 1.0).item()  # expect: GPU101

    def train(self):
        for batch in self.loader:
            loss = self.policy(batch.cuda()).mean()
            loss.backward()
            grad_norm = self.clip_gradient()
            self.optimizer.step()
            self.optimizer.zero_grad()


class ShardedTrainer(BasicTrainer):
    def clip_gradient(self):
        return self.policy.clip_grad_norm_(1.0).item()  # expect: GPU101


trainer = ShardedTrainer(Policy(), loader)
trainer.train()

# %% invalid: a logger that compares the type with torch.Tensor leaves the choice to its callers
import torch


class Logger:
    def __init__(self):
        self.rows = {}

    def log_scalar(self, key, value, step):
        if type(value) == torch.Tensor:
            value = value.item()  # expect: GPU101 info
        self.rows.setdefault(key, []).append((step, value))


logger = Logger()
for step, (obs, actions) in enumerate(loader):
    loss = model(obs.cuda(non_blocking=True), actions.cuda(non_blocking=True))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    logger.log_scalar("loss", loss.item(), step)  # expect: GPU101

# %% invalid: an accuracy helper whose parameters are annotated as tensors, called every step on what a library returns
import torch
import torch.nn.functional as F
from decoders import decode


def accuracy(preds: torch.Tensor, labels: torch.Tensor) -> float:
    return float((preds == labels).float().mean())  # expect: GPU101


def train(model, loader, optimizer):
    for x, y in loader:
        x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)
        out = model(x)
        loss = F.cross_entropy(out, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        acc = accuracy(decode(out), decode(y))

# %% valid: the same helper annotated as taking NumPy arrays
import numpy as np
import torch
import torch.nn.functional as F


def accuracy(logits: np.ndarray, labels: np.ndarray) -> float:
    return float((logits.argmax(1) == labels).mean())


def train(model, loader, optimizer):
    for x, y in loader:
        x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)
        out = model(x)
        loss = F.cross_entropy(out, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        acc = accuracy(out.detach().cpu().numpy(), y.cpu().numpy())

# %% invalid: float() of an accuracy unpacked from a helper that returns a list it appended tensors to
import torch
import torch.nn.functional as F


def accuracy(output, target, topk=(1,)):
    with torch.no_grad():
        maxk = max(topk)
        batch_size = target.size(0)
        _, pred = output.topk(maxk, 1, True, True)
        pred = pred.t()
        correct = pred.eq(target.view(1, -1).expand_as(pred))
        res = []
        for k in topk:
            correct_k = correct[:k].view(-1).float().sum(0, keepdim=True)
            res.append(correct_k.mul_(100.0 / batch_size))
        return res


def train(model, loader, optimizer):
    acc1_ema = 0.0
    for images, target in loader:
        images, target = images.cuda(), target.cuda()
        logits = model(images)
        loss = F.cross_entropy(logits, target)
        acc1, acc5 = accuracy(logits, target, topk=(1, 5))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        acc1_ema = acc1_ema * 0.1 + float(acc1) * 0.9  # expect: GPU101

# %% valid: float() of counts unpacked from a helper that returns a list of Python numbers
import torch
import torch.nn.functional as F


def counts(output, target, topk=(1,)):
    res = []
    for k in topk:
        res.append(float(k) * 2.0)
    return res


def train(model, loader, optimizer):
    ema = 0.0
    for images, target in loader:
        images, target = images.cuda(), target.cuda()
        loss = F.cross_entropy(model(images), target)
        first, second = counts(None, None, topk=(1, 5))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        ema = ema * 0.1 + float(first) * 0.9

# %% invalid: a script that only seeds CUDA and asks whether it is there keeps its tensors on the host: info
import numpy as np
import torch

if __name__ == "__main__":
    np.random.seed(42)
    torch.manual_seed(42)
    if torch.cuda.is_available():
        torch.cuda.manual_seed_all(42)
    embed = torch.nn.Embedding(8, 10)
    optimizer = torch.optim.SGD(embed.parameters(), lr=1)
    for _ in range(10):
        x = (torch.rand(100) * 7.99).long()
        loss = embed(x).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print("loss", loss.item())  # expect: GPU101 info

# %% invalid: the same script that moves its batches once CUDA is there
import torch

if __name__ == "__main__":
    torch.manual_seed(42)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    embed = torch.nn.Embedding(8, 10).to(device)
    optimizer = torch.optim.SGD(embed.parameters(), lr=1)
    for _ in range(10):
        x = (torch.rand(100, device=device) * 7.99).long()
        loss = embed(x).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print("loss", loss.item())  # expect: GPU101

# %% invalid: the arm of a forward that only a periodic call asks for: info; the arm training takes: warning
import torch
import torch.nn as nn


class Renderer(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(3, 3)

    def forward(self, x, technique):
        if technique == "surface":
            out = self.net(x)
            print("surface", out.max().item())  # expect: GPU101
            return out
        elif technique == "phong":
            out = self.net(x)
            print("phong", out.max().item())  # expect: GPU101 info
            return out


def main(loader):
    model = Renderer().cuda()
    opt = torch.optim.Adam(model.parameters())
    for step, x in enumerate(loader):
        loss = model(x.cuda(), "surface").mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 1000 == 0:
            model(x.cuda(), "phong")


# %% invalid: an arm of a Trainer-run forward that no call the analysis sees rules out stays a warning
import torch
import torch.nn as nn
from transformers import Trainer


class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(8, 4)

    def forward(self, x, labels=None, mask=None):
        out = self.net(x)
        if mask is not None:
            print("tokens", mask.sum().item())  # expect: GPU101
        return nn.functional.cross_entropy(out, labels) if labels is not None else out


def show(model, x):
    return model(x.cuda()).argmax(-1)


def main(train_set, args):
    model = Tagger().cuda()
    Trainer(model=model, args=args, train_dataset=train_set).train()


# %% invalid: a class pasted twice and edited: only the last definition runs, and its method twice in one class
import torch


class Method:
    def _train(self, loader, optimizer):
        for x, y in loader:
            loss = self.model(x.cuda()).sum()
            loss.backward()
            optimizer.step()
            self.seen += loss.item()


class Method:
    def _train(self, loader, optimizer):
        for x, y in loader:
            loss = self.model(x.cuda()).sum()
            loss.backward()
            optimizer.step()
            self.seen += loss.item()

    def train(self, loader, optimizer, epochs):
        for _ in range(epochs):
            self._train(loader, optimizer)

    def _train(self, loader, optimizer):
        for x, y in loader:
            loss = self.model(x.cuda()).sum()
            loss.backward()
            optimizer.step()
            self.seen += loss.item()  # expect: GPU101


Method().train(None, None, 10)


# %% invalid: the first definition is kept under another name before the second replaces it
import torch


def step(model, loader, optimizer):
    for x, y in loader:
        loss = model(x.cuda()).sum()
        loss.backward()
        optimizer.step()
        print(loss.item())  # expect: GPU101


plain_step = step


def step(model, loader, optimizer):
    for x, y in loader:
        loss = model(x.cuda()).sum()
        loss.backward()
        optimizer.step()


# %% invalid: two optimizers stepped in turn for each batch (a list indexed by a loop over a written-out pair): the batch loop's reads run every step
import torch


def train_one_epoch(wam, train_loader, optimizers, device, loss_fn):
    for it, (imgs, masks) in enumerate(train_loader):
        imgs = imgs.to(device, non_blocking=True)
        outputs = wam(imgs, masks)
        for optimizer_idx in [1, 0]:
            loss = loss_fn(imgs, outputs, optimizer_idx)
            optimizers[optimizer_idx].zero_grad()
            loss.backward()
            optimizers[optimizer_idx].step()
        stats = {"avg_target": outputs["masks"].float().mean().item()}  # expect: GPU101
        print(stats)


# %% invalid: SAM's two half-steps in the batch loop, with sub-networks trained in an inner loop: the batch loop's reads run every step
import math

import torch


def train_one_epoch(model, criterion, data_loader, optimizer, num_subnet_training):
    for idx, (samples, targets) in enumerate(data_loader):
        samples = samples.cuda(non_blocking=True)
        targets = targets.cuda(non_blocking=True)
        outputs = model(samples)
        ce_loss = criterion(outputs, targets)
        ce_loss.backward()
        optimizer.g_value = ce_loss.item()  # expect: GPU101
        optimizer.first_step(zero_grad=True)
        for arch_id in range(1, num_subnet_training):
            model.sample_active_subnet()
            loss = criterion(model(samples), targets)
            loss.backward()
        optimizer.second_step(zero_grad=True)


# %% valid: a loop over the phases, each a whole pass over a loader: what the phase loop reads is read once per phase
import torch


def train(model, loaders, optimizer, criterion, epochs):
    model.cuda()
    for epoch in range(epochs):
        for phase in ["train", "val"]:
            total = torch.zeros((), device="cuda")
            for x, y in loaders[phase]:
                loss = criterion(model(x.cuda()), y.cuda())
                if phase == "train":
                    optimizer.zero_grad()
                    loss.backward()
                    optimizer.step()
                total += loss.detach()
            print(phase, total.item())

# %% valid: a loop that ends in an unconditional break runs one calibration batch
import torch


def train_one_iter(model, loader, optimizer, criterion):
    model.train()
    for i, (inputs, target) in enumerate(loader):
        loss = criterion(model(inputs.cuda()), target.cuda())
        seen = loss.item()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        break
    return seen

# %% invalid: a break under a test leaves every other round a training step
import torch


def train(model, loader, optimizer, criterion, max_steps):
    model.train()
    for i, (inputs, target) in enumerate(loader):
        loss = criterion(model(inputs.cuda()), target.cuda())
        seen = loss.item()  # expect: GPU101
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if i >= max_steps:
            break
    return seen

# %% valid: a sum of values copied to the host, divided by a count from a shape, stays on the host
import torch
import torch.nn.functional as F


def train(model, loader, optimizer):
    for images, labels in loader:
        logits = model(images.cuda())
        B, n_experts = logits.shape[:2]
        accs = 0.
        for row in logits:
            probs = F.softmax(row, dim=-1).detach().cpu()
            acc = probs.max(-1)[0].sum() / n_experts
            accs += acc
        accs /= B
        loss = F.cross_entropy(logits, labels.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(accs.item())

# %% invalid: a sum that starts as a number and adds GPU values lives on the GPU
import torch
import torch.nn.functional as F


def train(model, loader, optimizer):
    for images, labels in loader:
        logits = model(images.cuda())
        B = logits.shape[0]
        accs = 0.
        for row in logits:
            accs += F.softmax(row, dim=-1).max()
        accs /= B
        loss = F.cross_entropy(logits, labels.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(accs.item())  # expect: GPU101

# %% valid: a field of a batch drawn through a progress bar bound to a name stays on the host
import torch
from tqdm import tqdm


def train(args, model, train_dl, optimizer):
    for _ in range(int(args.num_train_epochs)):
        epoch_iterator = tqdm(train_dl, desc="Training")
        for step, batch in enumerate(epoch_iterator):
            inputs = torch.tensor(batch["article"]).to(args.device)
            logits = model(inputs)[0]
            idx = batch["sum_idx"].item()
            loss = logits[..., idx:].sum()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()

# %% invalid: the first round of a loop nested in the step comes round on every step
import torch


def train(model, loader, optimizer, n_sub):
    model = model.cuda()
    for step, (x, y) in enumerate(loader):
        optimizer.zero_grad()
        for i in range(n_sub + 1):
            loss = model(x.cuda(), y.cuda(), width=i)
            loss.backward()
            if i == 0:
                largest = loss.item()  # expect: GPU101
        optimizer.step()

# %% invalid: the first batch of each epoch is a test of the batch loop's own counter: info
import torch


def train(model, loader, optimizer, epochs):
    model = model.cuda()
    for epoch in range(epochs):
        for i, (x, y) in enumerate(loader):
            loss = model(x.cuda(), y.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            if i == 0:
                print(loss.item())  # expect: GPU101 info

# %% valid: the arm of a parameter test that the only call, passing a constant held in a name, never takes
import torch


def train(model, loader, optimizer, criterion, use_unlabeled):
    for x, y in loader:
        x, y = x.cuda(), y.cuda()
        if use_unlabeled:
            loss = criterion(model, x, y)
        else:
            loss = model(x, y).mean()
            print(loss.item())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def main(args, model, loader, optimizer, criterion):
    use_unlabeled = True
    for epoch in range(args.epochs):
        train(model, loader, optimizer, criterion, use_unlabeled)

# %% invalid: a lazy regulariser's extra update, made every few steps in a function that also steps every call: info
import torch


class Coach:
    def train_discriminator(self, real, fake):
        loss = self.discriminator(fake).mean() - self.discriminator(real).mean()
        self.d_optimizer.zero_grad()
        loss.backward()
        self.d_optimizer.step()
        d_regularize = self.global_step % self.opts.d_reg_every == 0
        if d_regularize:
            real.requires_grad = True
            penalty = self.r1_penalty(self.discriminator(real), real)
            self.d_optimizer.zero_grad()
            penalty.backward()
            self.d_optimizer.step()
            self.logs["r1"] = float(penalty)  # expect: GPU101 info
        return float(loss)  # expect: GPU101

    def train(self):
        for real, _ in self.loader:
            real = real.cuda()
            fake = self.generator(torch.randn(real.shape[0], 512, device="cuda"))
            self.train_discriminator(real, fake.detach())
            self.global_step += 1

# %% invalid: the accumulation boundary of a step function called every batch is not periodic
import torch


class Trainer:
    def step(self, batch, i):
        loss = self.model(batch.cuda()).mean() / self.accum
        loss.backward()
        if (i + 1) % self.accum == 0:
            self.optimizer.step()
            self.optimizer.zero_grad()
            print(loss.item())  # expect: GPU101

    def fit(self, loader):
        for i, batch in enumerate(loader):
            self.step(batch, i)

# %% invalid: the last batch of each epoch is a test of the batch loop's own counter: info
import torch


def train(model, loader, optimizer, epochs):
    for epoch in range(epochs):
        for i, (x, y) in enumerate(loader):
            loss = model(x.cuda(), y.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            if i == len(loader) - 1:
                print(epoch, loss.item())  # expect: GPU101 info

# %% invalid: the last epoch tested inside the batch loop holds on every step of that epoch
import torch


def train(model, loader, optimizer, epochs):
    for epoch in range(epochs):
        for i, (x, y) in enumerate(loader):
            loss = model(x.cuda(), y.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            if epoch + 1 == epochs:
                print(i, loss.item())  # expect: GPU101

# %% invalid: a per-sample similarity from a product of a module's features, read as a number
import numpy as np
import torch
from torch import nn


class IdentityLoss(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Linear(512, 128)

    def forward(self, y_hat, y):
        y_feats = self.encoder(y).detach()
        y_hat_feats = self.encoder(y_hat)
        loss, logs = 0, []
        for i in range(y.shape[0]):
            similarity = y_hat_feats[i].dot(y_feats[i])
            logs.append(float(similarity))  # expect: GPU101
            loss += 1 - similarity
        return loss / y.shape[0], logs


def train(model, loader, optimizer):
    criterion = IdentityLoss().cuda()
    weights = np.ones(4)
    for x, y in loader:
        x, y = x.cuda(), y.cuda()
        loss, logs = criterion(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(float(weights.dot(np.arange(4))))

# %% invalid: a loss summed from a model's dict of outputs, starting from zero, lives on the GPU
import torch


def train(model, loader, optimizer, writer):
    for step, batch in enumerate(loader):
        output = model(batch.cuda())
        loss = 0
        for name, part in output.items():
            if "loss" in part:
                loss += part["loss"]
        writer.add_scalar("train/loss", loss.item(), step)  # expect: GPU101
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

# %% invalid: under a key of the render options that nothing sets, the depth read runs in no run: info
import os

import torch


def render(model, rays, **render_kwargs):
    rgb, weights, z = model(rays)
    if render_kwargs.get("render_depth", False):
        print("depth", (weights * z).sum(-1).mean().item())  # expect: GPU101 info
    if render_kwargs.get("log_rgb", False):
        print("rgb", rgb.mean().item())  # expect: GPU101
    if os.environ.get("LOG_WEIGHTS", False):
        print("weights", weights.max().item())  # expect: GPU101
    return rgb


def train(model, loader, optimizer):
    for rays, target in loader:
        rays, target = rays.cuda(), target.cuda()
        rgb = render(model, rays, near=0.1, far=6.0, log_rgb=True)
        loss = (rgb - target).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

# %% invalid: a read right after the step timer's synchronize adds no wait of its own
import time
import torch

end = time.time()
for idx, (samples, targets) in enumerate(data_loader):
    samples, targets = samples.cuda(non_blocking=True), targets.cuda(non_blocking=True)
    loss = criterion(model(samples), targets)
    optimizer.zero_grad()
    loss.backward()
    grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 5.0)
    optimizer.step()
    torch.cuda.synchronize()
    loss_meter.update(loss.item(), targets.size(0))  # expect: GPU101 info
    if grad_norm is not None:
        norm_meter.update(grad_norm.item())  # expect: GPU101 info
    batch_time.update(time.time() - end)
    end = time.time()

# %% invalid: work queued after the synchronize is what the read waits for
import torch

for images, labels in loader:
    images = images.cuda(non_blocking=True)
    torch.cuda.synchronize()
    loss = criterion(model(images), labels.cuda(non_blocking=True))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.item())  # expect: GPU101

# %% invalid: the step timer's synchronize already emptied the queue for a rank-0 logging block a few lines below
import time

import torch

for step, (x, y) in enumerate(train_queue):
    x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)
    logits = model(x)
    loss = criterion(logits, y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    prec1, prec5 = accuracy(logits, y, topk=(1, 5))
    reduced = loss.detach()
    torch.cuda.synchronize()
    batch_time.update(time.time() - end)
    end = time.time()
    if args.local_rank == 0 and step % args.print_freq == 0:
        logger.info("step {} loss {:.3f}".format(step, meter.avg))
    if args.local_rank == 0:
        writer.add_scalar("train/loss", reduced.item(), step)  # expect: GPU101 info
        writer.add_scalar("train/top1", prec1.item(), step)  # expect: GPU101 info
        step_count += 1
    total += float(reduced)  # expect: GPU101 info

# %% invalid: a helper of the file that synchronizes before reading the clock empties the queue too
import time
import torch


def record_time():
    torch.cuda.synchronize()
    return time.time()


for i in range(num_steps):
    t0 = record_time()
    loss = model(x).sum()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    t1 = record_time()
    print("step %d loss %.4f time %.3f" % (i, loss.item(), t1 - t0))  # expect: GPU101 info

# %% invalid: what the read's own expression queues after the synchronize is what it waits for
import time

import torch
import torch.distributed as dist


def reduce_tensor(t):
    rt = t.clone()
    dist.all_reduce(rt)
    return rt / dist.get_world_size()


for images, targets in loader:
    loss = criterion(model(images.cuda(non_blocking=True)), targets.cuda(non_blocking=True))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    torch.cuda.synchronize()
    batch_time.update(time.time() - end)
    loss_meter.update(loss.item(), targets.size(0))  # expect: GPU101 info
    reduced = reduce_tensor(loss).item()  # expect: GPU101
    seen = loss.item()  # expect: GPU101

# %% invalid: a plain per-step synchronize (GPU105's finding) is to go: the read after it keeps its warning
import torch

for images, targets in loader:
    loss = criterion(model(images.cuda()), targets.cuda())
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    torch.cuda.synchronize()
    if args.local_rank == 0:
        writer.add_scalar("loss", loss.item(), step)  # expect: GPU101

# %% invalid: a synchronize in one arm of an `if` does not run before a read in the other
import time

import torch

for images, targets in loader:
    loss = criterion(model(images.cuda()), targets.cuda())
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    if args.sync_every_step:
        torch.cuda.synchronize()
        t = time.time()
    else:
        meter.update(loss.item())  # expect: GPU101

# %% valid: a count copied to the host, then divided by a length, is read from host memory
import torch

for tokens, targets in loader:
    logits = model(tokens.cuda())
    preds = logits.argmax(-1)
    rate = (preds == targets.cuda()).sum().cpu() / targets.size()[1]  # the copy is GPU103's
    history.append(rate.item() * 0.1 + history[-1] * 0.9)
    loss = criterion(logits, targets.cuda())
    loss.backward()
    optimizer.step()

# %% invalid: the loss read when the Trainer's callbacks ask for a log, every `logging_steps`, is info
import torch


class Trainer:
    def train(self, model, loader, optimizer):
        model.cuda()
        tr_loss = torch.tensor(0.0).cuda()
        for step, batch in enumerate(loader):
            loss = model(**{k: v.cuda() for k, v in batch.items()}).loss
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
            tr_loss += loss.detach()
            self.control = self.callback_handler.on_step_end(self.args, self.state, self.control)
            if self.control.should_log:
                logs = {"loss": tr_loss.item() / (step + 1)}  # expect: GPU101 info
                self.log(logs)

# %% valid: a plain tensor attribute stays in host memory when its module moves
import torch
import torch.nn as nn


class ViewTransformer(nn.Module):
    def __init__(self, grid):
        super().__init__()
        self.create_grid_infos(**grid)
        self.net = nn.Conv2d(8, 8, 1)

    def create_grid_infos(self, x, y, z, **kwargs):
        self.grid_size = torch.Tensor([(cfg[1] - cfg[0]) / cfg[2] for cfg in [x, y, z]])

    def forward(self, feat):
        out = self.net(feat)
        shape = (feat.shape[0], int(self.grid_size[2]), int(self.grid_size[0]))
        return out.new_zeros(shape) + out.mean()


model = ViewTransformer(dict(x=(0, 1, 0.1), y=(0, 1, 0.1), z=(0, 1, 0.1))).cuda()
for feat, y in loader:
    loss = model(feat.cuda()).sum()
    loss.backward()
    optimizer.step()

# %% invalid: a registered buffer goes where its module goes
import torch
import torch.nn as nn


class ViewTransformer(nn.Module):
    def __init__(self, grid):
        super().__init__()
        self.register_buffer("grid_size", torch.Tensor([(c[1] - c[0]) / c[2] for c in grid.values()]))
        self.net = nn.Conv2d(8, 8, 1)

    def forward(self, feat):
        out = self.net(feat)
        shape = (feat.shape[0], int(self.grid_size[2]), int(self.grid_size[0]))  # expect: GPU101
        return out.new_zeros(shape) + out.mean()


model = ViewTransformer(dict(x=(0, 1, 0.1), y=(0, 1, 0.1), z=(0, 1, 0.1))).cuda()
for feat, y in loader:
    loss = model(feat.cuda()).sum()
    loss.backward()
    optimizer.step()


# %% invalid: a helper steps the optimizer once per mini-batch, after the micro-batch loop: the mini-batch loop is per step
import torch
from torch import nn


class Actor:
    def __init__(self, module, optimizer):
        self.module = module
        self.optimizer = optimizer

    def _optimizer_step(self):
        grad_norm = nn.utils.clip_grad_norm_(self.module.parameters(), max_norm=1.0)
        self.optimizer.step()
        self.optimizer.zero_grad()
        return grad_norm

    def update_policy(self, mini_batches, metrics):
        for _ in range(4):
            for mini_batch in mini_batches:
                for micro_batch in mini_batch.split(8):
                    loss = self.module(micro_batch.cuda()).mean()
                    loss.backward()
                grad_norm = self._optimizer_step()
                metrics.append(grad_norm.detach().item())  # expect: GPU101

# %% valid: a helper that runs a whole epoch of steps, then a read once per epoch
import torch


def train_epoch(model, optimizer, loader):
    total = torch.zeros((), device="cuda")
    for x, y in loader:
        loss = criterion(model(x.cuda()), y.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        total += loss.detach()
    return total


for epoch in range(100):
    total = train_epoch(model, optimizer, loader)
    print(epoch, total.item())

# %% invalid: a trainer's step method accumulates micro-batches in a loop, then steps once: its body after the loop runs every step
import torch


def cycle(loader):
    while True:
        for batch in loader:
            yield batch


class Trainer:
    def __init__(self, model, loader, accum=2, steps=1000):
        self.model = model.cuda()
        self.optimizer = torch.optim.Adam(self.model.parameters())
        self.loader = loader
        self.accum = accum
        self.steps = steps

    def train_step(self, batches):
        self.optimizer.zero_grad()
        for _ in range(self.accum):
            data = next(batches).cuda()
            loss = self.model(data).mean()
            (loss / self.accum).backward()
        print(f"loss {loss.item():.3f}")  # expect: GPU101
        self.optimizer.step()

    def train(self):
        batches = cycle(self.loader)
        for _ in range(self.steps):
            self.train_step(batches)

# %% valid: a function that runs a whole loop of steps (stepping inside it): what follows its loop runs once per epoch
import torch


def fit(model, loader, optimizer, epochs):
    model.cuda()
    for _ in range(epochs):
        for x in loader:
            loss = model(x.cuda()).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        print(loss.item())

# %% valid: rows of a NumPy array a helper returns are host values
import math
import numpy as np
import torch


def to_spherical(xyz):
    radius = np.sqrt((xyz ** 2).sum(-1))
    theta = np.arctan2(xyz[:, 1], xyz[:, 0])
    return np.array([theta, radius])


def relative_pose(target, cond):
    theta_cond, radius_cond = to_spherical(cond[None, :])
    theta_target, radius_target = to_spherical(target[None, :])
    d_theta = theta_target - theta_cond
    return torch.tensor([math.sin(d_theta.item()), (radius_target - radius_cond).item()])


def train(model, loader, opt):
    for x, target, cond in loader:
        loss = model(x.cuda(), relative_pose(target, cond).cuda()).mean()
        loss.backward()
        opt.step()

# %% invalid: a delayed actor update (TD3, SAC) is that optimizer's every update, not a periodic log
import torch


def train(args, actor, qf, loader, q_optimizer, actor_optimizer, log_alpha):
    for global_step, (obs, target) in enumerate(loader):
        obs = obs.cuda()
        qf_loss = (qf(obs) - target.cuda()).pow(2).mean()
        q_optimizer.zero_grad()
        qf_loss.backward()
        q_optimizer.step()
        if global_step % args.policy_frequency == 0:
            actor_loss = -qf(actor(obs)).mean()
            actor_optimizer.zero_grad()
            actor_loss.backward()
            actor_optimizer.step()
            alpha = log_alpha.exp().item()  # expect: GPU101

# %% invalid: a lazy regulariser steps the same optimizer now and then: information
import torch


def train(args, discriminator, loader, d_optimizer):
    for step, real in enumerate(loader):
        real = real.cuda()
        d_loss = discriminator(real).mean()
        d_optimizer.zero_grad()
        d_loss.backward()
        d_optimizer.step()
        if step % args.d_reg_every == 0:
            real.requires_grad_(True)
            r1 = torch.autograd.grad(discriminator(real).sum(), real, create_graph=True)[0].pow(2).mean()
            d_optimizer.zero_grad()
            r1.backward()
            d_optimizer.step()
            print("r1", r1.item())  # expect: GPU101 info

# %% invalid: a step helper called each step through a keyword partial or a chosen name
import functools

import torch


def plain_step(model, batch, optimizer, log):
    loss = model(batch.cuda()).mean()
    loss.backward()
    optimizer.step()
    log.append(loss.item())  # expect: GPU101


def scaled_step(model, batch, optimizer, log, scaler):
    with torch.autocast("cuda", dtype=torch.float16):
        loss = model(batch.cuda()).mean()
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    log.append(loss.item())  # expect: GPU101


def main(args, model, loader, optimizer, scaler):
    log = []
    step = functools.partial(scaled_step, scaler=scaler) if args.amp else plain_step
    for batch in loader:
        step(model, batch, optimizer, log)

# %% invalid: the optimizer comes back from a setup helper in a dict, stepped every few micro-batches
import torch


def main(cfg, accelerator, setup, loader):
    parts = setup(cfg)
    net = parts["net"]
    running = 0.0
    for step, batch in enumerate(loader):
        loss = net(batch["pixels"].to(accelerator.device)).mean()
        running += loss.item()  # expect: GPU101
        accelerator.backward(loss)
        if (step + 1) % cfg.accumulation_steps == 0:
            parts["optimizer"].step()
            parts["lr_scheduler"].step()
            parts["optimizer"].zero_grad()

# %% valid: a dict's scheduler stepped per epoch is no training step
import torch


def main(cfg, parts, loader, evaluate):
    for epoch in range(cfg.epochs):
        scores = [evaluate(parts["net"], batch) for batch in loader]
        print(torch.stack(scores).mean().item())
        parts["lr_scheduler"].step()

# %% invalid: a per-layer loss run through mmdet's multi_apply, and a per-item metric through map
import torch
import torch.nn as nn
from mmdet.core import multi_apply


def layer_error(pred, target):
    return (pred - target).abs().mean().item()  # expect: GPU101


class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(16, 4)

    def loss_single(self, scores, target):
        loss = (scores - target).pow(2).mean()
        count = torch.clamp(target.sum(), min=1).item()  # expect: GPU101
        return (loss / count,)

    def loss(self, all_scores, all_targets):
        (losses,) = multi_apply(self.loss_single, all_scores, all_targets)
        return sum(losses)


def train(head, loader, optimizer):
    for layers, targets in loader:
        layers = [x.cuda() for x in layers]
        loss = head.loss(layers, targets)
        errors = list(map(layer_error, layers, targets))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

# %% invalid: an OpenMMLab detector, whose forward the library's runner calls with its default return_loss (alone in its file: info)
import torch
from mmdet3d.models.detectors.mvx_two_stage import MVXTwoStageDetector


class PlanDetector(MVXTwoStageDetector):
    def forward(self, return_loss=True, **kwargs):
        if return_loss:
            return self.forward_train(**kwargs)
        else:
            return self.forward_test(**kwargs)

    def forward_train(self, img=None, gt_labels=None):
        feats = self.extract_feat(img)
        losses = self.pts_bbox_head(feats, gt_labels)
        count = torch.clamp(gt_labels.sum(), min=1).item()  # expect: GPU101 info
        return {k: v / count for k, v in losses.items()}

    def forward_test(self, img=None):
        feats = self.extract_feat(img)
        boxes = self.pts_bbox_head(feats, None)
        return [{"score": boxes[0].max().item()}]

# %% invalid: counts read only in the branch a NaN-or-infinity test takes, joined with `|`: information
import torch


def decode(layers, output, loader, optimizer):
    for x in loader:
        output = x.cuda()
        for layer in layers:
            output = layer(output)
            if output.isnan().any() | output.isinf().any():
                num_nan = output.isnan().sum().item()  # expect: GPU101 info
                print(f"bad values: {num_nan}")
        output.mean().backward()
        optimizer.step()

# %% valid: the loss read under the branch that saves the last checkpoint and returns runs once
import torch


class Strategy:
    def run_training(self, model, loader, optimizer, max_steps):
        model.cuda()
        step = 0
        for epoch in range(10):
            for batch in loader:
                loss = model(batch["x"].cuda()).mean()
                loss.backward()
                optimizer.step()
                optimizer.zero_grad()
                step += 1
                if step >= max_steps:
                    self.save_checkpoint(step, epoch, loss.item())
                    return

# %% invalid: a helper's own early return comes back with its next call, every step
import torch


def log_step(loss, history, limit):
    if len(history) >= limit:
        history.append(loss.item())  # expect: GPU101
        return
    history.append(0.0)


def train(model, loader, optimizer, history):
    model.cuda()
    for batch in loader:
        loss = model(batch["x"].cuda()).mean()
        loss.backward()
        optimizer.step()
        log_step(loss, history, 10)

# %% valid: the `max_len is None` branch of a mask helper every caller passes a size to
import torch


def mask_from_lengths(lengths, max_len=None):
    if max_len is None:
        max_len = lengths.max().item()
    ids = torch.arange(0, max_len, device=lengths.device)
    return ids[None, :] < lengths[:, None]


def train(model, loader, optimizer):
    model.cuda()
    for batch in loader:
        mel, lengths = batch["mel"].cuda(), batch["lengths"].cuda()
        mask = mask_from_lengths(lengths, max_len=mel.size(1))
        other = mask_from_lengths(lengths, mel.shape[1])
        loss = (model(mel) * mask * other).mean()
        loss.backward()
        optimizer.step()

# %% invalid: the same helper where one caller leaves the size out
import torch


def mask_from_lengths(lengths, max_len=None):
    if max_len is None:
        max_len = lengths.max().item()  # expect: GPU101
    ids = torch.arange(0, max_len, device=lengths.device)
    return ids[None, :] < lengths[:, None]


def train(model, loader, optimizer):
    model.cuda()
    for batch in loader:
        mel, lengths = batch["mel"].cuda(), batch["lengths"].cuda()
        mask = mask_from_lengths(lengths)
        loss = (model(mel) * mask).mean()
        loss.backward()
        optimizer.step()

# %% valid: int() in the arm of a tensor test that holds only for plain numbers
import torch


def text_mask(model, text, seq_len):
    if torch.is_tensor(seq_len):
        seq_len = seq_len.to(text.device)
        max_len = seq_len.amax()
    else:
        max_len = int(seq_len)
    return model(text[:, :max_len])


def train(model, loader, optimizer):
    model.cuda()
    for batch in loader:
        text, lengths = batch["text"].cuda(), batch["lengths"].cuda()
        loss = text_mask(model, text, lengths).mean()
        loss.backward()
        optimizer.step()

# %% valid: a metric computed with a functional loss from tensors built on the host
import torch
import torch.nn.functional as F


def train(model, loader, optimizer, decode, history):
    model.cuda()
    for batch in loader:
        out = model(batch["x"].cuda())
        loss = out.mean()
        loss.backward()
        optimizer.step()
        predicted = torch.tensor(decode(batch["ids"].numpy()))
        expected = torch.tensor(decode(batch["labels"].numpy()))
        l1 = F.l1_loss(predicted, expected)
        history.append(l1.item())

# %% invalid: a helper reading lengths of batches an Accelerate-prepared loader puts on the device
import torch
from accelerate import Accelerator
from torch.utils.data import DataLoader


def span_mask(lengths):
    longest = lengths.max().item()  # expect: GPU101
    return torch.arange(longest, device=lengths.device)[None, :] < lengths[:, None]


def train(model, dataset, optimizer):
    accelerator = Accelerator()
    loader = DataLoader(dataset, batch_size=8, num_workers=4)
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
    for batch in loader:
        lengths = batch["lengths"]
        loss = (model(batch["mel"]) * span_mask(lengths)).mean()
        accelerator.backward(loss)
        optimizer.step()

# %% valid: the evaluation pass of a step function a factory returns with `train=False`
import torch


def get_step_fn(loss_fn, train, optimize_fn=None):
    def step_fn(state, batch):
        model = state["model"]
        if train:
            optimizer = state["optimizer"]
            optimizer.zero_grad()
            loss = loss_fn(model, batch)
            loss.backward()
            optimize_fn(optimizer, model.parameters())
        else:
            with torch.no_grad():
                loss = loss_fn(model, batch)
        return loss

    return step_fn


def evaluate(state, loss_fn, eval_loader):
    eval_step = get_step_fn(loss_fn, train=False)
    losses = []
    for batch in eval_loader:
        losses.append(eval_step(state, batch.cuda()).item())
    return sum(losses) / len(losses)

# %% invalid: the training pass of the same factory's step function
import torch


def get_step_fn(loss_fn, train, optimize_fn=None):
    def step_fn(state, batch):
        model = state["model"]
        if train:
            optimizer = state["optimizer"]
            optimizer.zero_grad()
            loss = loss_fn(model, batch)
            loss.backward()
            optimize_fn(optimizer, model.parameters())
        else:
            with torch.no_grad():
                loss = loss_fn(model, batch)
        return loss

    return step_fn


def train(state, loss_fn, loader, optimize_fn):
    train_step = get_step_fn(loss_fn, True, optimize_fn=optimize_fn)
    history = []
    for batch in loader:
        history.append(train_step(state, batch.cuda()).item())  # expect: GPU101
    return history

# %% valid: a mask helper's `== None` fallback, when every caller passes the length
import torch


def get_mask_from_lengths(lengths, max_len=None):
    if max_len == None:
        max_len = torch.max(lengths).item()
    ids = torch.arange(0, max_len, device=lengths.device)
    return ids[None, :] < lengths[:, None]


def train(model, loader, optimizer):
    model.cuda()
    for batch in loader:
        mel, lengths = batch["mel"].cuda(), batch["lengths"].cuda()
        mask = get_mask_from_lengths(lengths, max_len=mel.size(1))
        loss = (model(mel) * mask).mean()
        loss.backward()
        optimizer.step()

# %% invalid: a value read back again right after it was read waits once: the re-read is information; other values keep their warnings
import torch


def train(model, loader, optimizer, logger):
    for step, (x, y) in enumerate(loader):
        out = model(x.cuda())
        loss = torch.nn.functional.cross_entropy(out, y.cuda())
        acc = (out.argmax(1) == y.cuda()).float().mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(f"{step}: loss {loss.item():.3f} acc {acc.item():.3f}")  # expect: GPU101


def train_logged(model, loader, optimizer, logger):
    for step, (x, y) in enumerate(loader):
        out = model(x.cuda())
        loss = torch.nn.functional.cross_entropy(out, y.cuda())
        acc = (out.argmax(1) == y.cuda()).float().mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        logger.log({
            "loss": loss.item(),  # expect: GPU101
            "acc": acc.item(),  # expect: GPU101
            "lr": optimizer.param_groups[0]["lr"],
        })


def train_summed(model, loader, optimizer):
    total = 0.0
    for step, (x, y) in enumerate(loader):
        loss = torch.nn.functional.cross_entropy(model(x.cuda()), y.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        total += loss.item()  # expect: GPU101
        print("step", step, "loss %.3f, mean %.3f" % (loss.item(), total / (step + 1)))  # expect: GPU101 info
        if step % 2:
            print("odd step", loss.item())  # expect: GPU101 info
        out = model(x.cuda())
        print("again", out.sum().item())  # expect: GPU101

# %% valid: a validation pass that hands each batch, under no_grad, to the same step method as training
import torch


class ModelWrapper:
    def __init__(self, model, optimizer):
        self.model = model.cuda()
        self.optimizer = optimizer

    def step(self, batch, eval_mode=False):
        output_dict = self.model(**batch)
        if not eval_mode:
            self.optimizer.zero_grad()
            output_dict["loss"].mean().backward()
            self.optimizer.step()
        return output_dict


wrapper = ModelWrapper(model, optimizer)
for epoch in range(epochs):
    for batch in train_loader:
        batch = {k: v.cuda(non_blocking=True) for k, v in batch.items()}
        wrapper.step(batch)
    val_loss_sum = 0.0
    for batch in val_loader:
        with torch.no_grad():
            batch = {k: v.cuda(non_blocking=True) for k, v in batch.items()}
            output_dict = wrapper.step(batch, eval_mode=True)
            val_loss_sum += output_dict["loss"].mean().item() * batch["label"].size(0)
    print(val_loss_sum)

# %% invalid: a fitting script that keeps every tensor on the CPU by naming that device itself (information)
import torch
from tqdm import tqdm


def fit_motion(motions, body_model):
    device = torch.device("cpu")
    pbar = tqdm(motions)
    for key in pbar:
        pose = torch.zeros((1, 16, 3), requires_grad=True)
        optimizer = torch.optim.Adam([pose], lr=0.02)
        for iteration in range(500):
            joints = body_model(torch.cat([pose, torch.zeros((1, 16, 3)).to(device)], dim=2))
            loss = (joints - motions[key]).norm(dim=-1).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            pbar.set_description_str(f"{key}-Iter: {iteration} {loss.item() * 1000:.3f}")  # expect: GPU101 info

# %% invalid: the same script when its device is picked between the CPU and CUDA
import torch
from tqdm import tqdm


def fit_motion(motions, body_model, use_cpu):
    device = torch.device("cpu") if use_cpu else torch.device("cuda")
    pbar = tqdm(motions)
    for key in pbar:
        pose = torch.zeros((1, 16, 3), device=device, requires_grad=True)
        optimizer = torch.optim.Adam([pose], lr=0.02)
        for iteration in range(500):
            joints = body_model(pose)
            loss = (joints - motions[key].to(device)).norm(dim=-1).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            pbar.set_description_str(f"{key}-Iter: {iteration} {loss.item() * 1000:.3f}")  # expect: GPU101

# %% valid: a branch its author stopped with `assert(0)` before the reads that follow it
import torch

model = model.cuda()
for batch in loader:
    loss, logit = model(batch["x"].cuda(non_blocking=True))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    if args.task_qa:
        assert(0)  # not used in our experiments
        score = logit.max(1)[0].sum().item()
        print(score)

# %% invalid: a test of a round counter of a loop at the top of Lightning's training step holds on every step
import pytorch_lightning as pl
import torch
import torch.nn.functional as F


class PermutedDecoder(pl.LightningModule):
    def training_step(self, batch, batch_idx):
        images, targets = batch
        memory = self.model.encode(images)
        loss = 0
        tgt_out = targets[:, 1:]
        n = 1
        for i, perm in enumerate(self.perms):
            logits = self.model.decode(targets[:, :-1], memory, perm)
            loss += n * F.cross_entropy(logits.flatten(end_dim=1), tgt_out.flatten(), ignore_index=0)
            if i == 1:
                tgt_out = torch.where(tgt_out == 2, 0, tgt_out)
                n = (tgt_out != 0).sum().item()  # expect: GPU101
        self.log("loss", loss)
        return loss

# %% invalid: a total that starts as 0 and adds a weighted loss per term reads the GPU back
import torch


def train(model, loader, optimizer, loss_weights):
    model.cuda()
    for i, inputs in enumerate(loader):
        output_dict = model(inputs.cuda(non_blocking=True))
        total_loss = 0
        for k, loss in output_dict["losses"].items():
            loss = loss.mean(dim=0, keepdim=True)
            total_loss += loss_weights[k] * loss
        meter.update(total_loss.item(), inputs.size(0))  # expect: GPU101
        optimizer.zero_grad()
        total_loss.backward()
        optimizer.step()

# %% invalid: a loss's unlabelled arm, which no call takes (two passes name their data differently), stays silent; the labelled arm reads every step
import torch
import torch.nn as nn


class SimilarityLoss(nn.Module):
    def forward(self, y_hat, y, label=None):
        logs = []
        for i in range(y.shape[0]):
            score = y_hat[i].dot(y[i])
            if label is None:
                logs.append({"score": float(score)})
            else:
                logs.append({f"score_{label}": float(score)})  # expect: GPU101
        return (1 - nn.functional.cosine_similarity(y_hat, y)).mean(), logs


class Coach:
    def __init__(self, net):
        self.net = net.cuda()
        self.sim_loss = SimilarityLoss().cuda().eval()
        self.optimizer = torch.optim.Adam(self.net.parameters())

    def calc_loss(self, x, y_hat, data_type="real"):
        loss, logs = self.sim_loss(y_hat, x, label=data_type)
        return loss, logs

    def train(self, loader):
        for x in loader:
            x = x.cuda()
            loss, logs = self.calc_loss(x, self.net(x), data_type="real")
            loss.backward()
            cycle_loss, cycle_logs = self.calc_loss(x, self.net(self.net(x)), data_type="cycle")
            cycle_loss.backward()
            self.optimizer.step()
            self.optimizer.zero_grad()

# %% invalid: the same loss where one pass names no label
import torch
import torch.nn as nn


class SimilarityLoss(nn.Module):
    def forward(self, y_hat, y, label=None):
        logs = []
        for i in range(y.shape[0]):
            score = y_hat[i].dot(y[i])
            if label is None:
                logs.append({"score": float(score)})  # expect: GPU101
            else:
                logs.append({f"score_{label}": float(score)})  # expect: GPU101
        return (1 - nn.functional.cosine_similarity(y_hat, y)).mean(), logs


class Coach:
    def __init__(self, net):
        self.net = net.cuda()
        self.sim_loss = SimilarityLoss().cuda().eval()
        self.optimizer = torch.optim.Adam(self.net.parameters())

    def calc_loss(self, x, y_hat, data_type=None):
        loss, logs = self.sim_loss(y_hat, x, label=data_type)
        return loss, logs

    def train(self, loader):
        for x in loader:
            x = x.cuda()
            loss, logs = self.calc_loss(x, self.net(x))
            loss.backward()
            cycle_loss, cycle_logs = self.calc_loss(x, self.net(self.net(x)), data_type="cycle")
            cycle_loss.backward()
            self.optimizer.step()
            self.optimizer.zero_grad()

# %% invalid: a learning-rate finder's hundred steps, run once before the training it sits beside, are info; the training loop's read is not
import torch


def record_lr(model, loader, optimizer, num_it=100):
    losses = []
    for batch_idx, (images, targets) in enumerate(loader):
        loss = model(images.cuda(), targets.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())  # expect: GPU101 info
        if batch_idx + 1 == num_it:
            break
    return losses


def fit_one_epoch(model, loader, optimizer):
    total = 0.0
    for images, targets in loader:
        loss = model(images.cuda(), targets.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        total += loss.item()  # expect: GPU101
    return total


def main(args, model, loader, optimizer):
    if args.find_lr:
        print(record_lr(model, loader, optimizer))
        return
    for epoch in range(args.epochs):
        fit_one_epoch(model, loader, optimizer)

# %% invalid: the same finder run for thousands of steps is a training run of its own
import torch


def record_lr(model, loader, optimizer, num_it=5000):
    losses = []
    for batch_idx, (images, targets) in enumerate(loader):
        loss = model(images.cuda(), targets.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())  # expect: GPU101
        if batch_idx + 1 == num_it:
            break
    return losses


def fit_one_epoch(model, loader, optimizer):
    total = 0.0
    for images, targets in loader:
        loss = model(images.cuda(), targets.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        total += loss.item()  # expect: GPU101
    return total


def main(args, model, loader, optimizer):
    if args.find_lr:
        print(record_lr(model, loader, optimizer))
        return
    for epoch in range(args.epochs):
        fit_one_epoch(model, loader, optimizer)

# %% invalid: an accuracy averaged across ranks by a project autograd Function, read back for each head every step
import torch
import torch.distributed as dist


class AllReduce(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        if dist.is_available() and dist.is_initialized():
            x = x.contiguous() / dist.get_world_size()
            dist.all_reduce(x)
        return x

    @staticmethod
    def backward(ctx, grads):
        return grads


def run_one_epoch(encoder, heads, optimizers, loader, device):
    for clips, labels in loader:
        clips, labels = clips.to(device, non_blocking=True), labels.to(device, non_blocking=True)
        with torch.no_grad():
            features = encoder(clips)
        outputs = [head(features) for head in heads]
        losses = [torch.nn.functional.cross_entropy(out, labels) for out in outputs]
        with torch.no_grad():
            accs = [100.0 * out.argmax(dim=1).eq(labels).float().mean() for out in outputs]
            accs = [float(AllReduce.apply(acc)) for acc in accs]  # expect: GPU101
        for loss in losses:
            loss.backward()
        [opt.step() for opt in optimizers]
        [opt.zero_grad() for opt in optimizers]

# %% invalid: a host placeholder that becomes a device loss only under a switch no run turns on is read for nothing; the losses computed every step are not
import argparse

import torch


class CQLAgent:
    def __init__(self, critic, optimizer, device, with_lagrange=False):
        self.critic, self.optimizer, self.device = critic, optimizer, device
        self.with_lagrange = with_lagrange
        self.log_alpha = torch.zeros(1, requires_grad=True, device=device)

    def learn(self, states, targets):
        critic_loss = torch.nn.functional.mse_loss(self.critic(states), targets)
        alpha_loss = torch.FloatTensor([0.0])
        if self.with_lagrange:
            alpha_loss = -self.log_alpha.exp() * critic_loss.detach()
        self.optimizer.zero_grad()
        critic_loss.backward()
        self.optimizer.step()
        critic_value = critic_loss.item()  # expect: GPU101
        alpha_value = alpha_loss.item()
        return critic_value, alpha_value


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=1000)
    config = parser.parse_args()
    device = torch.device("cuda")
    critic = torch.nn.Linear(8, 1).to(device)
    agent = CQLAgent(critic, torch.optim.Adam(critic.parameters()), device)
    for step in range(config.steps):
        states, targets = torch.randn(256, 8, device=device), torch.randn(256, 1, device=device)
        print(agent.learn(states, targets))

# %% invalid: the same placeholder where the run turns the switch on
import argparse

import torch


class CQLAgent:
    def __init__(self, critic, optimizer, device, with_lagrange=False):
        self.critic, self.optimizer, self.device = critic, optimizer, device
        self.with_lagrange = with_lagrange
        self.log_alpha = torch.zeros(1, requires_grad=True, device=device)

    def learn(self, states, targets):
        critic_loss = torch.nn.functional.mse_loss(self.critic(states), targets)
        alpha_loss = torch.FloatTensor([0.0])
        if self.with_lagrange:
            alpha_loss = -self.log_alpha.exp() * critic_loss.detach()
        self.optimizer.zero_grad()
        critic_loss.backward()
        self.optimizer.step()
        critic_value = critic_loss.item()  # expect: GPU101
        alpha_value = alpha_loss.item()  # expect: GPU101
        return critic_value, alpha_value


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=1000)
    config = parser.parse_args()
    device = torch.device("cuda")
    critic = torch.nn.Linear(8, 1).to(device)
    agent = CQLAgent(critic, torch.optim.Adam(critic.parameters()), device, with_lagrange=True)
    for step in range(config.steps):
        states, targets = torch.randn(256, 8, device=device), torch.randn(256, 1, device=device)
        print(agent.learn(states, targets))

# %% invalid: PyTorch 0.3 code reads its losses with `.data[0]`
import torch
from torch.autograd import Variable

for epoch in range(90):
    for inputs, targets in train_loader:
        inputs, targets = Variable(inputs.cuda()), Variable(targets.cuda())
        outputs = model(inputs)
        loss = criterion(outputs, targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.update(loss.data[0], inputs.size(0))  # expect: GPU101
        correct += outputs.data.max(1)[1].eq(targets.data).sum()

# %% valid: `.data[0]` of a batch's output is its first row, and `.data[0].cpu()` a copy of one
import torch
from torch.autograd import Variable

for epoch in range(90):
    for inputs, targets in train_loader:
        outputs = model(Variable(inputs.cuda()))
        loss = criterion(outputs, Variable(targets.cuda()))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        firsts.append(outputs.data[0])
        grid = loss.data[0].expand(4)

# %% invalid: 0.4 code reads its loss with `.data[0]` beside an `.item()`: still a number
import torch

for epoch in range(90):
    for inputs, targets in train_loader:
        outputs = model(inputs.cuda())
        loss = criterion(outputs, targets.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        running += loss.data[0]  # expect: GPU101
        first_row = outputs.data[0]
    print(ids[0].item())

# %% invalid: a logging interval whose option defaults to 1 logs on every step
import argparse

parser = argparse.ArgumentParser()
parser.add_argument("-log-interval", type=int, default=1)
args = parser.parse_args()

steps = 0
for epoch in range(10):
    for feature, target in train_iter:
        loss = F.cross_entropy(model(feature.cuda()), target.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        steps += 1
        if steps % args.log_interval == 0:
            print(loss.item())  # expect: GPU101

# %% invalid: an interval option that defaults to 100 is a periodic guard
import argparse

parser = argparse.ArgumentParser()
parser.add_argument("--log-interval", type=int, default=100)
args = parser.parse_args()

steps = 0
for epoch in range(10):
    for feature, target in train_iter:
        loss = F.cross_entropy(model(feature.cuda()), target.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        steps += 1
        if steps % args.log_interval == 0:
            print(loss.item())  # expect: GPU101 info

# %% invalid: a 0.3 script that only prints the torch version still reads its loss the 0.3 way
import torch

print("torch version: {}".format(torch.__version__))
for epoch in range(90):
    for input, target in train_loader:
        output = model(torch.autograd.Variable(input.cuda()))
        loss = criterion(output, torch.autograd.Variable(target.cuda()))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.update(loss.data[0], input.size(0))  # expect: GPU101

# %% invalid: the same reduction read twice in a row waits once
import torch

device = torch.device("cuda")
for epoch in range(25):
    for real_data, _ in loader:
        optimizerD.zero_grad()
        output = netD(real_data.to(device))
        errD_real = criterion(output, label_true)
        errD_real.backward()
        optimizerD.step()
        D_x = output.mean().item()  # expect: GPU101

        D_G_z1 = output.mean().item()  # expect: GPU101 info

# %% invalid: a reduction read after the synchronize that times the step adds one small kernel
import time

import torch

for epoch in range(10):
    for data in loader:
        torch.cuda.synchronize()
        start = time.time()
        out = model(data.cuda())
        loss = out["loss"].mean()
        loss.backward()
        optimizer.step()
        train_loss = loss.item()  # expect: GPU101
        torch.cuda.synchronize()
        end = time.time()
        print("{:.3f} {:.3f} {:.3f}".format(train_loss, out["lm_loss"].mean().item(), end - start))  # expect: GPU101 info

# %% invalid: Python's `max()` of a device tensor compares its elements one by one
import torch
import torch.nn as nn


class ViterbiLoss(nn.Module):
    def forward(self, scores, targets, lengths):
        total = scores.new_zeros(scores.size(0), scores.size(2))
        for t in range(max(lengths)):  # expect: GPU101
            total = total + scores[:, t]
        return total.sum()


criterion = ViterbiLoss()
for epoch in range(10):
    for x, y, lengths in loader:
        x, y, lengths = x.cuda(), y.cuda(), lengths.cuda()
        loss = criterion(model(x), y, lengths)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

# %% valid: `max()` of a batch part still in host memory, and of two numbers
import torch

for epoch in range(10):
    for img, num in loader:
        keep = img[:, :max(int(max(num[:, 1])), 1)]
        loss = model(keep.cuda()).sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        width = max(loss.size(0), 1)

# %% invalid: a robustness check that attacks with backward, run every few steps, is no training loop; the training step is
import torch
import torch.nn.functional as F


def attack_pgd(model, x, y, eps, alpha, iters):
    delta = torch.zeros_like(x, requires_grad=True)
    for _ in range(iters):
        loss = F.cross_entropy(model(x + delta), y)
        loss.backward()
        delta.data = (delta + alpha * delta.grad.sign()).clamp(-eps, eps)
        delta.grad.zero_()
    return delta.detach()


def robust_accuracy(model, batches, eps, alpha, iters):
    correct = 0
    for x, y in batches:
        x, y = x.cuda(), y.cuda()
        delta = attack_pgd(model, x, y, eps, alpha, iters)
        with torch.no_grad():
            correct += (model(x + delta).argmax(1) == y).sum().item()
    return correct


def train(model, opt, train_batches, test_batches, epochs, eval_every):
    iteration = 0
    for epoch in range(epochs):
        for x, y in train_batches:
            x, y = x.cuda(), y.cuda()
            delta = attack_pgd(model, x, y, 8 / 255, 2 / 255, 1)
            loss = F.cross_entropy(model(x + delta), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            print(loss.item())  # expect: GPU101
            iteration += 1
            if iteration % eval_every == 0:
                print(robust_accuracy(model, test_batches, 8 / 255, 2 / 255, 10))

# %% invalid: progress printed only when the caller asks for verbose output is information
import torch
import torch.nn.functional as F


class SquareAttack:
    def __init__(self, model, n_queries=5000, verbose=False):
        self.model, self.n_queries, self.verbose = model, n_queries, verbose

    def perturb(self, x, y):
        x_best = x.clone()
        for i_iter in range(self.n_queries):
            x_new = (x_best + 0.01 * torch.randn_like(x_best)).clamp(0, 1)
            margin = F.cross_entropy(self.model(x_new), y, reduction="none")
            x_best = torch.where((margin > 0)[:, None, None, None], x_new, x_best)
            if self.verbose:
                print(f"{i_iter}: robust accuracy {(margin > 0).float().mean().item():.2%}")  # expect: GPU101 info
        return x_best


def adversarial_training(model, loader, optimizer, cfg):
    attack = SquareAttack(model, n_queries=10, verbose=cfg.attack.verbose)
    for x, y in loader:
        x, y = x.cuda(), y.cuda()
        loss = F.cross_entropy(model(attack.perturb(x, y)), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

# %% invalid: an old `.data[0]` read of a loss kept under a second name that is backpropagated
import torch
from torch.autograd import Variable


class TripletMarginLoss(torch.autograd.Function):
    def __init__(self, margin):
        super(TripletMarginLoss, self).__init__()
        self.margin = margin

    def forward(self, anchor, positive, negative):
        d_p = (anchor - positive).pow(2).sum(1)
        d_n = (anchor - negative).pow(2).sum(1)
        return torch.mean(torch.clamp(self.margin + d_p - d_n, min=0.0))


def train(model, train_loader, optimizer, logger, args):
    for batch_idx, (data_a, data_p, data_n) in enumerate(train_loader):
        data_a, data_p, data_n = data_a.cuda(), data_p.cuda(), data_n.cuda()
        data_a, data_p, data_n = Variable(data_a), Variable(data_p), Variable(data_n)
        out_a, out_p, out_n = model(data_a), model(data_p), model(data_n)
        triplet_loss = TripletMarginLoss(args.margin).forward(out_a, out_p, out_n)
        loss = triplet_loss
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        logger.log_value('selected_triplet_loss', triplet_loss.data[0]).step()  # expect: GPU101
        logger.log_value('selected_total_loss', loss.data[0]).step()  # expect: GPU101
        if batch_idx % args.log_interval == 0:
            print('Loss: {:.6f}'.format(loss.data[0]))  # expect: GPU101 info

# %% invalid: a loss read for the epoch history, then again for a caption built with string methods: the second read is information
import torch


def train(model, loader, optimizer):
    history = {}
    for x, y in loader:
        losses = {"mse": (model(x.cuda()) - y.cuda()).pow(2).mean()}
        optimizer.zero_grad()
        losses["mse"].backward()
        optimizer.step()
        description = "losses: "
        for key, value in losses.items():
            history[key] = history.get(key, 0.0) + value.item()  # expect: GPU101
            description += f"{key.capitalize()}: {value.item():8.4f} "  # expect: GPU101 info
        print(description)

# %% invalid: a training script that patches a library with `unittest.mock` is no test module
from unittest.mock import patch

import torch


def train(model, loader, optimizer):
    with patch("engine.profiling_patch", return_value=None):
        model.cuda()
    for x, y in loader:
        loss = torch.nn.functional.mse_loss(model(x.cuda()), y.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(loss.item())  # expect: GPU101

# %% invalid: a detector hands back a dict of losses: each value read with `float(value.detach())` waits
import torch


def train_one_epoch(model, loader, optimizer, device):
    totals = {}
    for images, targets in loader:
        images = images.to(device)
        losses = model(images, targets)
        total = torch.stack(tuple(losses.values())).sum()
        optimizer.zero_grad()
        total.backward()
        optimizer.step()
        for name, value in losses.items():
            totals[name] = totals.get(name, 0.0) + float(value.detach())  # expect: GPU101
    return totals

# %% invalid: `detach()` proves a tensor, even of a field of a result record the flow cannot follow
import torch


def update(critic, optimizer, real, fake, get_loss):
    losses = get_loss(critic(real.cuda()), critic(fake.cuda()))
    optimizer.zero_grad()
    losses.total.backward()
    optimizer.step()
    return float(losses.total.detach())  # expect: GPU101


def train(critic, optimizer, loader, get_loss):
    for real, fake in loader:
        update(critic, optimizer, real, fake, get_loss)

# %% invalid: one critic per view, each with its own optimizer, updated in turn: parts of one step, whose reads wait every step
import torch


class Trainer:
    def __init__(self, critics, optims, axes):
        self.critics = critics
        self.critic_optims = optims
        self.active_axes = axes

    def update_critics(self, batches):
        total = 0.0
        for axis in self.active_axes:
            critic = self.critics[str(axis)]
            optimizer = self.critic_optims[str(axis)]
            optimizer.zero_grad()
            loss = critic(batches[axis]).mean()
            loss.backward()
            optimizer.step()
            total = total + loss.detach()
        return total

    def step(self, batches):
        critic_loss = self.update_critics(batches)
        return float(critic_loss.detach())  # expect: GPU101


def run_training(trainer: Trainer, loader, steps):
    for step, batches in zip(range(steps), loader):
        metrics = trainer.step({k: v.cuda() for k, v in batches.items()})
        print(metrics)

# %% invalid: a learning-rate finder in a library module, alone in its file: a hundred steps, run once, information
import torch


class LRFinder:
    def __init__(self, model, optimizer, criterion, device="cuda"):
        self.model = model.to(device)
        self.optimizer = optimizer
        self.criterion = criterion
        self.device = device
        self.history = []

    def range_test(self, loader, num_iter=100):
        it = iter(loader)
        for iteration in range(num_iter):
            inputs, labels = next(it)
            loss = self._train_batch(inputs, labels)
            self.history.append(loss)
            if loss > 4 * min(self.history):
                break

    def _train_batch(self, inputs, labels):
        outputs = self.model(inputs.to(self.device))
        loss = self.criterion(outputs, labels.to(self.device))
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return loss.item()  # expect: GPU101 info

# %% valid: the validation hooks of an epoch-end event run in turn, one of them trains a probe: the loop over hooks is no training loop
import torch


class BaseHook:
    def __call__(self, epoch, **data):
        return self.compute(**data)

    def compute(self, **data):
        raise NotImplementedError


class ProbeTrainingHook(BaseHook):
    def __init__(self, model, optimizer):
        self.model = model.cuda()
        self.optimizer = optimizer

    def compute(self, **data):
        for x in data["batches"]:
            loss = self.model(x.cuda()).mean()
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()


class ScoreValidator(BaseHook):
    def compute(self, **data):
        return -torch.nn.functional.mse_loss(data["logits"], data["labels"]).item()


def call_val_hook(hook, collected, epoch):
    if isinstance(hook, BaseHook):
        return hook(epoch, **collected)
    return None


def run_validation(val_hooks, collected, epoch):
    for hook in val_hooks:
        call_val_hook(hook, collected, epoch)

# %% invalid: one epoch function serves every mode, and the training arm of its batch loop runs every step
import torch


class Learner:
    def __init__(self, model, criterion, optimizer):
        self.model = model.cuda()
        self.criterion = criterion
        self.optimizer = optimizer
        self.state = {}

    def train_batch(self, batch):
        raise NotImplementedError

    def eval_batch(self, batch):
        raise NotImplementedError

    def fit(self, train_loader, epochs, val_loader=None):
        for epoch in range(epochs):
            self._run_one_epoch(train_loader, "train")
            if val_loader is not None:
                self._run_one_epoch(val_loader, "eval")

    def _run_one_epoch(self, data_loader, mode):
        for step, batch in enumerate(data_loader):
            if mode == "train":
                self.train_batch(batch)
            else:
                self.eval_batch(batch)


def backward(loss):
    loss.backward()


def optimizer_step(optimizer):
    optimizer.step()


class ClassifierLearner(Learner):
    def train_batch(self, batch):
        inputs, target = batch[0].cuda(non_blocking=True), batch[1].cuda(non_blocking=True)
        self.model.train()
        self.optimizer.zero_grad()
        loss = self.criterion(self.model(inputs), target)
        backward(loss)
        optimizer_step(self.optimizer)
        self.state["loss"] = loss.item()  # expect: GPU101

    def eval_batch(self, batch):
        self.model.eval()
        with torch.no_grad():
            self.state["pred"] = self.model(batch[0].cuda(non_blocking=True))

# %% valid: the step after the batch loop flushes the last micro-batches once an epoch: the epoch loop's own reads are once an epoch
import torch


def train(model, loader, optimizer, epochs, accum_steps, device):
    for epoch in range(epochs):
        n_batches = 0
        replaced = 0
        for batch_idx, (x, y) in enumerate(loader):
            loss = torch.nn.functional.mse_loss(model(x.to(device)), y.to(device))
            (loss / accum_steps).backward()
            n_batches += 1
            if (batch_idx + 1) % accum_steps == 0:
                optimizer.step()
                optimizer.zero_grad(set_to_none=True)
        if n_batches % accum_steps != 0:
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
        total = torch.tensor(replaced, device=device)
        print(int(total.item()))

# %% invalid: an inner loop over the segments of the batch the step loop drew steps too: the step loop's reads still run every step
import torch


def train(model, train_loader, optim, steps, depth, segmented):
    for epoch in range(10):
        train_gen = iter(train_loader)
        for step in range(steps):
            optim.zero_grad()
            batch = next(train_gen)
            if segmented:
                for i in range(depth - 1):
                    optim.zero_grad()
                    batch["switch_at"] = i
                    loss = model(**{k: v.cuda() for k, v in batch.items() if torch.is_tensor(v)}).loss
                    loss.backward()
                    optim.step()
            else:
                loss = model(**{k: v.cuda() for k, v in batch.items()}).loss
                loss.backward()
                optim.step()
                print(loss.detach().item())  # expect: GPU101

# %% valid: the shape tensor is built on the host; its other binding only runs while the model is traced for export
import torch
import torchvision


def resize(image, min_size, max_size):
    if torchvision._is_tracing():
        shape = shape_for_onnx(image)
    else:
        shape = torch.tensor(image.shape[-2:])
    scale = torch.min(min_size / torch.min(shape).to(dtype=torch.float32), max_size / torch.max(shape).to(dtype=torch.float32))
    return torch.nn.functional.interpolate(image[None], scale_factor=scale.item(), mode="bilinear")[0]


def train(model, loader, optimizer):
    for images, targets in loader:
        images = [resize(image.cuda(), 800.0, 1333.0) for image in images]
        loss = model(images, targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

# %% invalid: a trainer with a learning-rate finder beside its training loop: the finder's reads are information, the training loop's and a helper whose name only contains `range_test` keep their warning
import torch


class Trainer:
    def __init__(self, model, optimizer, device="cuda"):
        self.model = model.to(device)
        self.optimizer = optimizer
        self.device = device

    def _step(self, x, y):
        loss = torch.nn.functional.cross_entropy(self.model(x.to(self.device)), y.to(self.device))
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return loss

    def lr_find(self, loader, num_iter=100):
        losses = []
        for i, (x, y) in enumerate(loader):
            losses.append(self._step(x, y).item())  # expect: GPU101 info
            if i + 1 >= num_iter:
                break
        return losses

    def fit(self, loader, epochs):
        for epoch in range(epochs):
            for x, y in loader:
                print(self._step(x, y).item())  # expect: GPU101

    def arrange_test_batches(self, loader):
        for x, y in loader:
            loss = self._step(x, y)
            print(loss.item())  # expect: GPU101

# %% invalid: a training loop over an object named `data_handler` is no loop over callbacks
import torch


class Runner:
    def __init__(self, model, optimizer, data_handler):
        self.model = model.cuda()
        self.optimizer = optimizer
        self.data_handler = data_handler

    def train_one_epoch(self):
        for sample in self.data_handler:
            loss = self.model(sample["x"].cuda(), sample["y"].cuda())
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
            print(loss.item())  # expect: GPU101

# %% invalid: the step closure a trainer's factory stored in an attribute, called through a name picked by mode
import numpy as np
import torch


class StepByStep:
    def __init__(self, model, loss_fn, optimizer):
        self.device = "cuda" if torch.cuda.is_available() else "cpu"
        self.model = model.to(self.device)
        self.loss_fn = loss_fn
        self.optimizer = optimizer
        self.train_step_fn = self._make_train_step_fn()
        self.valid_step_fn = self._make_valid_step_fn()

    def _make_train_step_fn(self):
        def perform_train_step(x, y):
            self.model.train()
            loss = self.loss_fn(self.model(x), y)
            loss.backward()
            self.optimizer.step()
            self.optimizer.zero_grad()
            return loss.item()  # expect: GPU101
        return perform_train_step

    def _make_valid_step_fn(self):
        # The evaluation closure: the shared loop runs it on its validation passes only.
        def perform_val_step(x, y):
            self.model.eval()
            return self.loss_fn(self.model(x), y).item()
        return perform_val_step

    def _mini_batch(self, loader, validation=False):
        if validation:
            step_fn = self.valid_step_fn
        else:
            step_fn = self.train_step_fn
        losses = []
        for x_batch, y_batch in loader:
            losses.append(step_fn(x_batch.to(self.device), y_batch.to(self.device)))
        return np.mean(losses)

    def train(self, train_loader, val_loader, n_epochs):
        for epoch in range(n_epochs):
            self._mini_batch(train_loader)
            with torch.no_grad():
                self._mini_batch(val_loader, validation=True)


sbs = StepByStep(model, torch.nn.MSELoss(), optimizer)
sbs.train(train_loader, val_loader, 100)

# %% invalid: the best-so-far check reads the loss in its test; its arm reads it again, information
import torch

best = float("inf")
for epoch in range(epochs):
    for x, y in loader:
        loss = criterion(model(x.cuda()), y.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if loss.item() < best:  # expect: GPU101
            best = loss.item()  # expect: GPU101 info
            torch.save(model.state_dict(), "best.pt")

# %% invalid: a logging interval a configurator may rebind (`exec(open('configurator.py').read())`) gates its reads, information
import torch

log_interval = 1
max_iters = 600000
exec(open('configurator.py').read())  # overrides from the config file a run passes

model = GPT(config).cuda()
optimizer = torch.optim.AdamW(model.parameters(), lr=6e-4)
iter_num = 0
while iter_num < max_iters:
    X, Y = get_batch("train")
    logits, loss = model(X, Y)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    if iter_num % log_interval == 0:
        print(f"iter {iter_num}: loss {loss.item():.4f}")  # expect: GPU101 info
    iter_num += 1
