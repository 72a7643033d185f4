# GPU402 `graph-kept-across-iterations`: fixture. Sections start at `# %% valid:` (a look-alike that must
# stay silent) or `# %% invalid:` (every `# expect:` mark reported, nothing else). Each
# section is checked on its own, with this rule alone.

# %% invalid: case
total_loss = 0.0
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    total_loss += loss  # expect: GPU402

# %% invalid: lists built before the loop
import torch.nn.functional as F

def train_epoch(model, loader, optimizer):
    history, outputs = [], []
    for x, y in loader:
        out = model(x)
        loss = F.cross_entropy(out, y)
        loss.backward()
        optimizer.step()
        history.append(loss)  # expect: GPU402
        outputs.append(model(x).softmax(-1))  # expect: GPU402
    return history, outputs

# %% invalid: re-assignment form, weighted
epoch_loss = 0
for i, (x, y) in enumerate(loader):
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    epoch_loss = epoch_loss + loss * x.size(0)  # expect: GPU402

# %% invalid: state on the trainer object, step in a method
class Trainer:
    def __init__(self):
        self.losses = {"train": []}
        self.running = 0.0

    def step(self, batch):
        outputs = self.model(**batch)
        outputs.loss.backward()
        self.optimizer.step()
        self.losses["train"].append(outputs.loss)  # expect: GPU402
        self.running += outputs.loss  # expect: GPU402

    def fit(self, loader):
        for batch in loader:
            self.step(batch)

# %% invalid: reset only every N steps: N graphs alive
running = 0.0
for step, (x, y) in enumerate(loader):
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    running += loss  # expect: GPU402
    if step % 100 == 0:
        print(running / 100)
        running = 0.0

# %% invalid: loss from a helper; every 10 steps is info
def compute_loss(model, batch):
    logits = model(batch["x"])
    return F.cross_entropy(logits, batch["y"])

losses = []
for i, batch in enumerate(loader):
    loss = compute_loss(model, batch)
    loss.backward()
    optimizer.step()
    if i % 10 == 0:
        losses.append(loss)  # expect: GPU402 info

# %% valid: already detached
total_loss = 0.0
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    total_loss += loss.detach()

# %% valid: Python numbers
history = []
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    history.append(loss.item())
    running = running + float(loss)

# %% valid: per-step list rebuilt every iteration
import torch
for batch in loader:
    losses = []
    for head in heads:
        losses.append(head(model(batch)).mean())
    torch.stack(losses).mean().backward()
    optimizer.step()

# %% valid: under no_grad
import torch
val_outputs = []
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    with torch.no_grad():
        val_outputs.append(model(x_val))

# %% valid: meta-learning keeps graphs on purpose
import torch
meta_loss = 0.0
for task in tasks:
    fast = inner_adapt(model, task)
    grads = torch.autograd.grad(fast.loss, model.parameters(), create_graph=True)
    meta_loss += fast.query_loss
    meta_loss.backward(retain_graph=True)
    meta_opt.step()

# %% valid: comparisons and argmax carry no graph
correct = torch.zeros((), device="cuda")
preds = []
for x, y in loader:
    logits = model(x)
    loss = criterion(logits, y)
    loss.backward()
    optimizer.step()
    correct += (logits.argmax(1) == y).sum()
    preds.append(logits.argmax(1))

# %% valid: the list is what gets backpropagated
chunk_losses = []
for i, batch in enumerate(loader):
    chunk_losses.append(model(batch).loss)
    if (i + 1) % accum == 0:
        torch.stack(chunk_losses).mean().backward()
        optimizer.step()
        chunk_losses = []

# %% valid: once per epoch keeps one graph at most
for epoch in range(epochs):
    for x, y in loader:
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
    epoch_losses.append(loss)

# %% valid: graph summed on purpose within one step
for batch in loader:
    total = 0
    for micro in batch.split(8):
        total += model(micro).mean()
    total.backward()
    optimizer.step()

# %% valid: the loop variable is rebound by the `for` itself
import torch.nn.functional as F
for x, y in loader:
    x = x + 0.1 * refine_net(x)
    loss = F.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()

# %% valid: two names unpack only the two-element return, whose metrics are detached
import torch


def forward_step(model, batch, return_logits=False):
    outputs = model(batch)
    loss = outputs.mean()
    metrics = {}
    with torch.no_grad():
        metrics["margin"] = loss.clone().detach().mean()
    if return_logits:
        return loss, outputs, metrics
    return loss, metrics


def train(model, loader, optimizer):
    history = []
    for batch in loader:
        loss, metric_dict = forward_step(model, batch)
        loss.backward()
        optimizer.step()
        history.append(metric_dict["margin"])

# %% invalid: three names unpack the return that carries the logits
import torch


def forward_step(model, batch, return_logits=False):
    outputs = model(batch)
    loss = outputs.mean()
    if return_logits:
        return loss, outputs, {}
    return loss, {}


def train(model, loader, optimizer):
    history = []
    for batch in loader:
        loss, logits, _ = forward_step(model, batch, return_logits=True)
        loss.backward()
        optimizer.step()
        history.append(logits)  # expect: GPU402

# %% valid: micro-batches of one step collected in a list the step rebuilds
import torch

for step, (data, targets) in enumerate(train_loader):
    data, targets = data.cuda(), targets.cuda()
    optimizer.zero_grad()
    outputs = []
    for data_chunk, target_chunk in zip(data.chunk(4), targets.chunk(4)):
        output_chunk = model(data_chunk)
        outputs.append(output_chunk)
        loss = loss_func(output_chunk, target_chunk)
        loss.backward()
    outputs = torch.cat(outputs)
    optimizer.step()
    acc = (outputs.argmax(1) == targets).float().mean()

# %% invalid: micro-batches appended to a list kept across steps
import torch

outputs = []
for step, (data, targets) in enumerate(train_loader):
    data, targets = data.cuda(), targets.cuda()
    optimizer.zero_grad()
    for data_chunk, target_chunk in zip(data.chunk(4), targets.chunk(4)):
        output_chunk = model(data_chunk)
        outputs.append(output_chunk)  # expect: GPU402
        loss = loss_func(output_chunk, target_chunk)
        loss.backward()
    optimizer.step()

# %% valid: a running total reset in the branch that steps the optimizer holds one step's micro-batches
import torch


class Recipe:
    def __init__(self, model, optimizer, loader, accumulation=4):
        self._model = model.cuda()
        self._optimizer = optimizer
        self._loader = loader
        self._accumulation = accumulation

    def validate(self, loader):
        self._model.eval()
        with torch.no_grad():
            losses = [self._model(x.cuda()).mean() for x in loader]
        self._model.train()
        return torch.stack(losses).mean()

    def train(self, epochs):
        running_loss = 0
        for epoch in range(epochs):
            for idx, (x, y) in enumerate(self._loader):
                loss = torch.nn.functional.mse_loss(self._model(x.cuda()), y.cuda())
                running_loss += loss
                loss.backward()
                if (idx + 1) % self._accumulation == 0:
                    self._optimizer.step()
                    self._optimizer.zero_grad()
                    print(f"loss {running_loss.detach().item() / self._accumulation:.4f}")
                    running_loss = 0
                if idx % 1000 == 999:
                    self.validate(self._loader)

# %% valid: a collector object that forward builds on every call keeps one step's states
import torch
import torch.nn as nn


class States:
    def __init__(self):
        self.priors = []
        self.posteriors = []

    def append(self, prior, posterior):
        self.priors.append(prior)
        self.posteriors.append(posterior)

    def stacked(self):
        return torch.stack(self.priors, 1), torch.stack(self.posteriors, 1)


class WorldModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.cell = nn.GRUCell(8, 8)

    def forward(self, obs):
        states = States()
        h = torch.zeros(obs.shape[0], 8, device=obs.device)
        for t in range(obs.shape[1]):
            h = self.cell(obs[:, t], h)
            states.append(h, h * 2)
        return states.stacked()


model = WorldModel().cuda()
opt = torch.optim.Adam(model.parameters())
for obs in loader:
    priors, posteriors = model(obs.cuda())
    loss = (priors - posteriors).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()

# %% invalid: a meter object built once before the loop keeps every step's graph
import torch


class Meter:
    def __init__(self):
        self.values = []

    def add(self, value):
        self.values.append(value)  # expect: GPU402


def train(model, loader, opt):
    meter = Meter()
    for x, y in loader:
        loss = torch.nn.functional.mse_loss(model(x.cuda()), y.cuda())
        opt.zero_grad()
        loss.backward()
        opt.step()
        meter.add(loss)

# %% invalid: a reduce helper hands back its argument: the loss it is given keeps its graph, the accuracy does not
import torch
import torch.distributed as dist


def reduce_mean(tensor, nprocs):
    rt = tensor.clone()
    dist.all_reduce(rt, op=dist.ReduceOp.SUM)
    rt /= nprocs
    return rt


def accuracy(output, target):
    with torch.no_grad():
        return (output.argmax(1) == target).float().mean()


def train_epoch(model, loader, optimizer, nprocs):
    loss_total, correct_total = 0, 0
    for x, y in loader:
        out = model(x.cuda())
        loss = torch.nn.functional.cross_entropy(out, y.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        loss_total += reduce_mean(loss, nprocs)  # expect: GPU402
        correct_total += reduce_mean(accuracy(out, y.cuda()), nprocs)
    return loss_total, correct_total
