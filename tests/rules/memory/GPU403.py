# GPU403 `empty-cache-in-training-loop`: fixture. Sections start at `# %% valid:` (a look-alike that must
# stay silent) or `# %% invalid:` (every `# expect:` mark reported, nothing else). Each
# section is checked on its own, with this rule alone.

# %% invalid: case
import torch
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    torch.cuda.empty_cache()  # expect: GPU403

# %% invalid: imported name, helper
from torch.cuda import empty_cache

def train_step(model, batch, optimizer):
    loss = model(**batch).loss
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    empty_cache()  # expect: GPU403

for epoch in range(3):
    for batch in train_loader:
        train_step(model, batch, optimizer)

# %% invalid: every N steps
import torch
for step, (x, y) in enumerate(loader):
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    if step % 50 == 0:
        torch.cuda.empty_cache()  # expect: GPU403 info

# %% invalid: method, at the start of the step
import torch
class Trainer:
    def train_epoch(self, loader):
        for batch in loader:
            torch.cuda.empty_cache()  # expect: GPU403
            out = self.model(batch)
            out.loss.backward()
            self.optimizer.step()

# %% invalid: behind a memory threshold
import torch
import gc
for batch in loader:
    loss = model(batch).loss
    loss.backward()
    optimizer.step()
    del loss
    gc.collect()
    if torch.cuda.memory_reserved() > limit:
        torch.cuda.empty_cache()  # expect: GPU403 info

# %% invalid: while loop, memory module spelling
import torch as th
it = 0
while it < max_iters:
    x, y = get_batch()
    loss = model(x, y)
    loss.backward()
    opt.step()
    th.cuda.memory.empty_cache()  # expect: GPU403
    it += 1

# %% valid: between epochs
import torch
for epoch in range(epochs):
    for x, y in loader:
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
    torch.cuda.empty_cache()

# %% valid: after evaluation, once per epoch
import torch
for epoch in range(epochs):
    train_one_epoch(model, loader)
    evaluate(model, val_loader)
    torch.cuda.empty_cache()

def train_one_epoch(model, loader):
    for x, y in loader:
        criterion(model(x), y).backward()
        optimizer.step()

# %% valid: out-of-memory recovery
import torch
for batch in loader:
    try:
        loss = model(batch).loss
        loss.backward()
        optimizer.step()
    except torch.cuda.OutOfMemoryError:
        optimizer.zero_grad(set_to_none=True)
        torch.cuda.empty_cache()

# %% valid: after a periodic evaluation
import torch
for step, batch in enumerate(loader):
    loss = model(batch).loss
    loss.backward()
    optimizer.step()
    if step % args.eval_steps == 0:
        metrics = evaluate(model, eval_loader)
        torch.cuda.empty_cache()

# %% valid: inference
import torch
@torch.no_grad()
def generate_all(model, prompts):
    for p in prompts:
        yield model.generate(p)
        torch.cuda.empty_cache()

# %% valid: between hyper-parameter trials
import gc, torch
def free_memory():
    gc.collect()
    torch.cuda.empty_cache()

for trial in range(n_trials):
    model = build(trial)
    train(model)
    free_memory()

def train(model):
    for x, y in loader:
        criterion(model(x), y).backward()
        optimizer.step()

# %% valid: some other cache
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    cache.empty_cache()
    tokenizer_cache.clear()

# %% invalid: optimizer state moved back to the GPU on the first step of a resumed run: info
import torch


def states_to_gpu(state_dict):
    torch.cuda.empty_cache()  # expect: GPU403 info
    for state in state_dict["state"].values():
        for key, value in state.items():
            state[key] = value.to("cuda")
    torch.cuda.empty_cache()  # expect: GPU403 info


class Trainer:
    def train(self, loader):
        for batch in loader:
            self.iteration_step += 1
            loss = self.model(batch).mean()
            loss.backward()
            if self.resume_path is not None and self.iteration_step == self.initial_iter_step:
                states_to_gpu(self.optimizer.state_dict())
            self.optimizer.step()

# %% invalid: the accumulation boundary is every optimizer update, also after early returns that end training
import torch


class DepthTrainer:
    def train(self, max_iter):
        accumulated = 0
        for epoch in range(100):
            for batch in self.train_loader:
                self.model.unet.train()
                loss = self.model.unet(batch["rgb"].cuda()).mean() / self.accumulation_steps
                loss.backward()
                accumulated += 1
                if accumulated >= self.accumulation_steps:
                    self.optimizer.step()
                    self.optimizer.zero_grad()
                    accumulated = 0
                    self.effective_iter += 1
                    if self.effective_iter >= max_iter:
                        self.save_checkpoint()
                        return
                    torch.cuda.empty_cache()  # expect: GPU403

# %% invalid: the same trainer emptying the cache only when a batch fails: info
import torch


class DepthTrainer:
    def train(self, max_iter):
        for epoch in range(100):
            for batch in self.train_loader:
                loss = self.model.unet(batch["rgb"].cuda()).mean()
                if not torch.isfinite(loss):
                    torch.cuda.empty_cache()  # expect: GPU403 info
                    continue
                loss.backward()
                self.optimizer.step()
                self.optimizer.zero_grad()

# %% invalid: a helper that frees the cache when a step ran out of memory, called only from an `except` arm: information
import gc

import torch


def handle_oom(batch_size):
    gc.collect()
    torch.cuda.empty_cache()  # expect: GPU403 info
    return int(batch_size * 0.9)


def handle_error(error, batch_size):
    if "out of memory" in str(error):
        return handle_oom(batch_size)
    raise error


def train(model, loader, optimizer, batch_size):
    for x, y in loader:
        try:
            loss = torch.nn.functional.mse_loss(model(x.cuda()), y.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        except RuntimeError as error:
            batch_size = handle_error(error, batch_size)
    return batch_size
