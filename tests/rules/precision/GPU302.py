# GPU302 `grad-scaler-with-bf16-autocast`: fixture. Sections start at `# %% valid:` (a look-alike that must
# stay silent) or `# %% invalid:` (every `# expect:` mark reported, nothing else). Each
# section is checked on its own, with this rule alone.

# %% invalid: case
import torch
scaler = torch.amp.GradScaler("cuda")  # expect: GPU302
for x, y in loader:
    with torch.autocast("cuda", dtype=torch.bfloat16):
        loss = criterion(model(x), y)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()

# %% invalid: dtype through a module constant
import torch
AMP_DTYPE = torch.bfloat16

def train(model, loader, optimizer):
    scaler = torch.cuda.amp.GradScaler()  # expect: GPU302
    for batch in loader:
        with torch.autocast(device_type="cuda", dtype=AMP_DTYPE):
            loss = model(**batch).loss
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()

# %% invalid: deprecated spellings, literal enabled=True
from torch.cuda.amp import GradScaler, autocast
import torch

class Trainer:
    def __init__(self, model, optimizer):
        self.model, self.optimizer = model, optimizer
        self.scaler = GradScaler(init_scale=2.0**16, enabled=True)  # expect: GPU302

    def step(self, batch):
        with autocast(dtype=torch.bfloat16):
            loss = self.model(batch).mean()
        self.scaler.scale(loss).backward()
        self.scaler.step(self.optimizer)
        self.scaler.update()

# %% invalid: aliased torch, positional dtype
import torch as th
scaler = th.GradScaler()  # expect: GPU302
for step, (x, y) in enumerate(loader):
    with th.autocast("cuda", th.bfloat16):
        loss = criterion(model(x), y)
    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)
    th.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    scaler.step(optimizer)
    scaler.update()

# %% invalid: scaler passed to the training function
import torch

def train_one_epoch(model, loader, optimizer, scaler):
    for x, y in loader:
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = torch.nn.functional.cross_entropy(model(x), y)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()

def main():
    scaler = torch.amp.GradScaler(  # expect: GPU302
        "cuda",
        growth_interval=1000,
    )
    for epoch in range(10):
        train_one_epoch(model, loader, optimizer, scaler)

# %% invalid: a disabled autocast elsewhere does not count
import torch
scaler = torch.amp.GradScaler("cuda")  # expect: GPU302
model.eval()
with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16, enabled=False):
    baseline = evaluate(model)
model.train()
for x, y in loader:
    with torch.autocast("cuda", dtype=torch.bfloat16):
        loss = criterion(model(x), y)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()

# %% valid: enabled only for fp16
import torch
amp_dtype = torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
scaler = torch.amp.GradScaler("cuda", enabled=(amp_dtype == torch.float16))
for x, y in loader:
    with torch.autocast("cuda", dtype=amp_dtype):
        loss = criterion(model(x), y)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()

# %% valid: enabled by a flag
import torch
from torch.cuda.amp import GradScaler
use_fp16 = args.precision == "fp16"
scaler = GradScaler(enabled=use_fp16)
for x, y in loader:
    with torch.autocast("cuda", dtype=torch.bfloat16):
        loss = criterion(model(x), y)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()

# %% valid: fp16 training, bf16 only for inference
import torch
scaler = torch.amp.GradScaler("cuda")
for x, y in loader:
    with torch.autocast("cuda", dtype=torch.float16):
        loss = criterion(model(x), y)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()

@torch.no_grad()
def export_logits(model, x):
    with torch.autocast("cuda", dtype=torch.bfloat16):
        return model(x)

# %% valid: dtype chosen from a config table
import torch
AMP = {"fp16": torch.float16, "bf16": torch.bfloat16}
dtype = AMP[cfg.precision]
scaler = torch.cuda.amp.GradScaler()
for batch in loader:
    with torch.autocast(device_type="cuda", dtype=dtype):
        loss = model(**batch).loss
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()

# %% valid: already disabled
import torch
scaler = torch.amp.GradScaler("cuda", enabled=False)
for x, y in loader:
    with torch.autocast("cuda", dtype=torch.bfloat16):
        loss = criterion(model(x), y)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()

# %% valid: the scaler serves the fp16 path
import torch
scaler = torch.amp.GradScaler("cuda")

def train_step(x, y):
    with torch.autocast("cuda", dtype=torch.float16):
        loss = criterion(model(x), y)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()

def finetune_step(x, y):
    with torch.autocast("cuda", dtype=torch.bfloat16):
        loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()

# %% valid: arguments from a kwargs dict
import torch
scaler = torch.amp.GradScaler("cuda", **scaler_kwargs)
for x, y in loader:
    with torch.autocast("cuda", dtype=torch.bfloat16):
        loss = criterion(model(x), y)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
