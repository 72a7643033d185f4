# GPU301 `fp16-autocast-without-grad-scaler`: fixture. Sections start at `# %% valid:` (a look-alike that must
# stay silent) or `# %% invalid:` (every `# expect:` mark reported, nothing else). Each
# section is checked on its own, with this rule alone.

# %% invalid: case
import torch
for x, y in loader:
    with torch.autocast("cuda", dtype=torch.float16):  # expect: GPU301
        loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()

# %% invalid: default CUDA dtype is fp16
import torch
for x, y in loader:
    with torch.autocast(device_type="cuda"):  # expect: GPU301
        loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()

# %% invalid: deprecated API, helper
from torch.cuda.amp import autocast
def train_step(model, batch, opt):
    with autocast():  # expect: GPU301
        loss = model(batch).mean()
    loss.backward()
    opt.step()

# %% invalid: dtype through a constant
import torch
AMP_DTYPE = torch.half
for x, y in loader:
    with torch.amp.autocast("cuda", dtype=AMP_DTYPE):  # expect: GPU301
        loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()

# %% invalid: device unknown
import torch
for x, y in loader:
    with torch.autocast(device_type=device.type):  # expect: GPU301 info
        loss = criterion(model(x.cuda()), y.cuda())
    loss.backward()
    optimizer.step()

# %% invalid: methods; the no_grad teacher pass is not on the backward path
import torch as th
class Trainer:
    def step(self, batch):
        with th.autocast("cuda", dtype=th.float16), th.no_grad():
            target = self.teacher(batch)
        with th.autocast("cuda", dtype=th.float16):  # expect: GPU301
            loss = self.loss_fn(self.model(batch), target)
        loss.backward()
        self.optimizer.step()

# %% invalid: autocast around the whole loop
import torch
if __name__ == "__main__":
    with torch.autocast("cuda", dtype=torch.float16):  # expect: GPU301
        for x, y in loader:
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()

# %% valid: scaler present
import torch
scaler = torch.amp.GradScaler("cuda")
for x, y in loader:
    with torch.autocast("cuda", dtype=torch.float16):
        loss = criterion(model(x), y)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()

# %% valid: bf16
import torch
for x, y in loader:
    with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
        loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()

# %% invalid: a loss helper autocasts; the training function that calls it runs backward and steps
import torch


def loss_step(batch, unet, mixed_precision=False):
    latents = batch["latents"].cuda()
    if mixed_precision:
        with torch.cuda.amp.autocast():  # expect: GPU301
            pred = unet(latents)
    else:
        pred = unet(latents)
    return torch.nn.functional.mse_loss(pred, latents)


def train_inversion(unet, dataloader, optimizer, steps, mixed_precision=False):
    for step in range(steps):
        for batch in dataloader:
            loss = loss_step(batch, unet, mixed_precision=mixed_precision)
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()

# %% valid: inference only
import torch
@torch.no_grad()
def predict(model, loader):
    for x in loader:
        with torch.autocast("cuda"):
            yield model(x)

# %% valid: CPU autocast is bf16
import torch
for x, y in loader:
    with torch.autocast("cpu"):
        loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()

# %% valid: scaler passed in
from torch.cuda.amp import autocast, GradScaler
def train(model, loader, optimizer, scaler: GradScaler):
    for x, y in loader:
        with autocast():
            loss = model(x, y)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()

# %% valid: Accelerate scales the loss
import torch
from accelerate import Accelerator
accelerator = Accelerator(mixed_precision="fp16")
for batch in loader:
    with torch.autocast("cuda", dtype=torch.float16):
        loss = model(**batch).loss
    accelerator.backward(loss)
    optimizer.step()

# %% valid: disabled
import torch
for x, y in loader:
    with torch.autocast("cuda", dtype=torch.float16, enabled=False):
        loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()

# %% valid: fp16 only for validation
import torch
for epoch in range(10):
    for x, y in train_loader:
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
    for x, y in val_loader:
        with torch.autocast("cuda", dtype=torch.float16):
            val_loss = criterion(model(x), y)

# %% valid: timm's NativeScaler scales the loss (it wraps a GradScaler) when called with it and the optimizer
import torch
from timm.utils import NativeScaler

loss_scaler = NativeScaler()
for epoch in range(epochs):
    for inputs, targets in loader:
        inputs, targets = inputs.cuda(), targets.cuda()
        with torch.cuda.amp.autocast():
            loss = criterion(model(inputs), targets)
        optimizer.zero_grad()
        loss_scaler(loss, optimizer, parameters=model.parameters())

# %% valid: a batch-size probe runs backward under float16 autocast but never steps an optimizer
import torch


def profile(model, sizes):
    peaks = []
    for size in sizes:
        x = torch.randn(size, 3, 640, 640, device="cuda")
        y = model(x)
        y.sum().backward()
        peaks.append(torch.cuda.max_memory_allocated())
    return peaks


def check_train_batch_size(model, amp=True):
    with torch.cuda.amp.autocast(amp):
        return profile(model.train(), [1, 2, 4, 8, 16])

# %% valid: a timed forward-backward benchmark in fp16 that steps no optimizer
import time

import torch


def benchmark(loader, model, rounds=20):
    model.cuda().train()
    criterion = torch.nn.CrossEntropyLoss()
    for images, targets in loader:
        images, targets = images.cuda(non_blocking=True), targets.cuda(non_blocking=True)
        start = time.time()
        for _ in range(rounds):
            with torch.autocast("cuda", dtype=torch.float16):
                loss = criterion(model(images), targets)
                loss.backward()
        torch.cuda.synchronize()
        return (time.time() - start) / rounds

# %% invalid: a feature scaler of scikit-learn is no loss scaler
import torch
from sklearn.preprocessing import StandardScaler

scaler = StandardScaler()
for batch, target in loader:
    with torch.cuda.amp.autocast(dtype=torch.float16):  # expect: GPU301
        loss = criterion(model(batch.cuda()), target.cuda())
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
