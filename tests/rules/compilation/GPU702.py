# GPU702 `compile-in-loop`: fixture. Sections start at `# %% valid:` (a look-alike that must
# stay silent) or `# %% invalid:` (every `# expect:` mark reported, nothing else). Each
# section is checked on its own, with this rule alone.

# %% invalid: re-wrapped every epoch
import torch

for epoch in range(epochs):
    model = torch.compile(model)  # expect: GPU702
    for x, y in loader:
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()

# %% invalid: every step
import torch

for x, y in loader:
    fast = torch.compile(model)  # expect: GPU702
    loss = criterion(fast(x), y)
    loss.backward()
    optimizer.step()

# %% invalid: inside the per-step helper
import torch

def train_step(model, batch, optimizer):
    step_model = torch.compile(model, mode="max-autotune")  # expect: GPU702
    loss = step_model(batch).mean()
    loss.backward()
    optimizer.step()

for batch in loader:
    train_step(model, batch, optimizer)

# %% invalid: helper called once per epoch recompiles the same model
import torch as T

def evaluate(model, loader):
    fast = T.compile(model)  # expect: GPU702
    return sum(fast(x).sum() for x in loader)

for epoch in range(10):
    train_one_epoch(model)
    evaluate(model, val_loader)

# %% invalid: aliased import, while loop, attribute target
from torch import compile as tcompile

class Trainer:
    def fit(self, loader):
        while self.step < self.max_steps:
            self.model = tcompile(self.model)  # expect: GPU702
            for batch in loader:
                loss = self.model(batch).mean()
                loss.backward()
                self.optimizer.step()
                self.step += 1

# %% invalid: behind a flag in the loop; periodic
import torch

for i, (x, y) in enumerate(loader):
    if args.compile:
        model_c = torch.compile(model)  # expect: GPU702
    else:
        model_c = model
    loss = criterion(model_c(x), y)
    loss.backward()
    optimizer.step()
    if i % 1000 == 0:
        model_c = torch.compile(model)  # expect: GPU702 info

# %% valid: compiled once before the loop
import torch

model = torch.compile(Net().cuda())
for epoch in range(10):
    for x, y in loader:
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()

# %% valid: decorator
import torch

@torch.compile(mode="reduce-overhead")
def train_step(x, y):
    loss = criterion(model(x), y)
    loss.backward()
    return loss

for x, y in loader:
    train_step(x, y)
    optimizer.step()

# %% valid: hyper-parameter sweep: a new model each iteration
import torch

results = {}
for lr in [1e-3, 3e-4, 1e-4]:
    model = build_model(cfg).cuda()
    model = torch.compile(model)
    opt = torch.optim.AdamW(model.parameters(), lr=lr)
    results[lr] = train(model, opt)

# %% valid: each model of a collection compiled once
import torch

compiled = {name: None for name in models}
for name, m in models.items():
    compiled[name] = torch.compile(m, dynamic=False)

# %% valid: lazy compile behind a run-once guard
import torch

class Trainer:
    def train_step(self, batch):
        if self.fast_model is None:
            self.fast_model = torch.compile(self.model)
        loss = self.fast_model(batch).mean()
        loss.backward()
        self.optimizer.step()

    def fit(self, loader):
        for batch in loader:
            self.train_step(batch)

# %% valid: re.compile
import re
import torch

for line in open("log.txt"):
    pattern = re.compile(r"loss=(\S+)")
    m = pattern.search(line)

# %% valid: a helper that builds and compiles a new model
import torch

def make_model(cfg):
    net = Net(cfg)
    return torch.compile(net)

for cfg in configs:
    model = make_model(cfg)
    evaluate(model)

# %% valid: behind a flag, outside the loop
import torch

def main(args):
    model = Net().cuda()
    if args.compile:
        model = torch.compile(model)
    for epoch in range(args.epochs):
        train_one_epoch(model, loader)

# %% valid: Accelerate script compiling once before training
import torch
from accelerate import Accelerator
from transformers import AutoModelForSequenceClassification

accelerator = Accelerator(mixed_precision="bf16")
model = AutoModelForSequenceClassification.from_pretrained(args.model_name, num_labels=2)
if args.torch_compile:
    model = torch.compile(model)
model, optimizer, train_dl = accelerator.prepare(model, optimizer, train_dl)
for epoch in range(args.epochs):
    for batch in train_dl:
        outputs = model(**batch)
        accelerator.backward(outputs.loss)
        optimizer.step()
        optimizer.zero_grad()

# %% valid: each model of a list compiled once, before training
import torch

models = [build(name).cuda() for name in ("student", "teacher")]
for model_idx in range(len(models)):
    models[model_idx] = torch.compile(models[model_idx])
compiled = []
for m in models:
    compiled.append(torch.compile(m))

# %% invalid: the same model compiled on every pass of a loop
import torch

model = build().cuda()
for epoch in range(10):
    model = torch.compile(model)  # expect: GPU702
    train_one_epoch(model)

# %% valid: the model each weight averager keeps, compiled once per averager before training
import torch


def setup(model, averagers):
    model = torch.compile(model)
    if averagers is not None:
        for k in averagers.avgs_dict:
            averagers.avgs_dict[k].av_model = torch.compile(averagers.avgs_dict[k].av_model)
    return model

# %% invalid: one averager's model compiled again on every pass
import torch


def setup(model, averagers, epochs):
    for epoch in range(epochs):
        averagers.avgs_dict["ema"].av_model = torch.compile(averagers.avgs_dict["ema"].av_model)  # expect: GPU702
        train_one_epoch(model, averagers)
