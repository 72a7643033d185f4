# GPU305 `fp32-matmul-highest-precision`: fixture. Sections start at `# %% valid:` (a look-alike that must
# stay silent) or `# %% invalid:` (every `# expect:` mark reported, nothing else). Each
# section is checked on its own, with this rule alone.

# %% invalid: case
import torch
import torch.nn as nn

model = nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 10)).cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for x, y in loader:
    loss = nn.functional.cross_entropy(model(x.cuda()), y.cuda())
    loss.backward()  # expect: GPU305 info
    optimizer.step()

# %% invalid: inserted after the last module-level import
"""Train a small GPT."""
from __future__ import annotations
import math
import torch
from torch import nn
from model import GPT

def train(model, loader, optimizer, device="cuda"):
    model.train()
    for step, (x, y) in enumerate(loader):
        logits = model(x.to(device))
        loss = nn.functional.cross_entropy(logits.flatten(0, 1), y.to(device).flatten())
        optimizer.zero_grad(set_to_none=True)
        loss.backward()  # expect: GPU305 info
        optimizer.step()

attn = nn.MultiheadAttention(512, 8)

# %% invalid: torch imported under another name: no fix
import torch as th
model = th.nn.LSTM(128, 256, num_layers=2).cuda()
for seq, target in loader:
    out, _ = model(seq.cuda())
    loss = th.nn.functional.mse_loss(out, target.cuda())
    loss.backward()  # expect: GPU305 info
    opt.step()

# %% invalid: a Hugging Face model trained by hand
import torch
from transformers import AutoModel

class Trainer:
    def fit(self, loader):
        for batch in loader:
            out = self.model(**{k: v.to("cuda") for k, v in batch.items()})
            out.loss.backward()  # expect: GPU305 info
            self.optimizer.step()
            self.optimizer.zero_grad()

model = AutoModel.from_pretrained("bert-base-uncased")

# %% invalid: training step in a helper
import torch
import torch.nn.functional as F

def train_step(w, x, y, opt):
    loss = F.mse_loss(torch.matmul(x, w), y)
    loss.backward()  # expect: GPU305 info
    opt.step()

for x, y in loader:
    train_step(w, x.cuda(), y.cuda(), opt)

# %% invalid: a comment on an earlier import line
import os
import torch  # noqa: F401
import torch.nn as nn
device = torch.device("cuda")
model = nn.Linear(4096, 4096).to(device)
for x in loader:
    model(x.to(device)).pow(2).mean().backward()  # expect: GPU305 info
    optimizer.step()

# %% valid: TF32 allowed with the old flags
import torch
torch.backends.cuda.matmul.allow_tf32 = True
torch.backends.cudnn.allow_tf32 = True
model = nn.Linear(1024, 1024).cuda()
for x, y in loader:
    loss = criterion(model(x.cuda()), y.cuda())
    loss.backward()
    optimizer.step()

# %% valid: the torch 2.9 setting, in a helper
import torch
import torch.nn as nn

def configure(cfg):
    torch.backends.cuda.matmul.fp32_precision = "tf32"

model = nn.TransformerEncoder(layer, num_layers=6).cuda()
for x, y in loader:
    loss = criterion(model(x.cuda()), y.cuda())
    loss.backward()
    optimizer.step()

# %% valid: bf16 autocast
import torch
import torch.nn as nn
model = nn.Sequential(nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 10)).cuda()
for x, y in loader:
    with torch.autocast("cuda", dtype=torch.bfloat16):
        loss = criterion(model(x.cuda()), y.cuda())
    loss.backward()
    optimizer.step()

# %% valid: Lightning chooses the precision
import lightning as L
import torch.nn as nn

class LitModel(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(128, 10)

trainer = L.Trainer(accelerator="cuda", precision="bf16-mixed")
trainer.fit(LitModel())

# %% valid: a bf16 checkpoint
from transformers import AutoModelForCausalLM
import torch
model = AutoModelForCausalLM.from_pretrained(name, torch_dtype=torch.bfloat16).cuda()
for batch in loader:
    loss = model(**{k: v.cuda() for k, v in batch.items()}).loss
    loss.backward()
    optimizer.step()

# %% valid: precision chosen by a flag
import torch
import torch.nn as nn
torch.set_float32_matmul_precision(args.matmul_precision)
model = nn.Linear(64, 64).to("cuda")
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()

# %% valid: no CUDA in the script
import torch
import torch.nn as nn
model = nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 1))
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()

# %% valid: explicitly kept at full precision
import torch
import torch.nn as nn
torch.backends.cuda.matmul.allow_tf32 = False  # bit-exact regression tests
model = nn.Linear(256, 256).cuda()
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()

# %% valid: dtype chosen from a table at run time
import torch
import torch.nn as nn
PTDTYPE = {"float32": torch.float32, "bfloat16": torch.bfloat16}[cfg.dtype]
model = GPT(cfg).cuda().to(PTDTYPE)
for x, y in loader:
    loss = model(x, y)
    loss.backward()
    optimizer.step()
layer = nn.Linear(8, 8)

# %% valid: a convolution network with one linear head (convolutions already use TF32)
import torch
import torch.nn as nn
import torchvision
model = torchvision.models.resnet50(num_classes=10).cuda()
model.fc = nn.Linear(2048, 10).cuda()
for x, y in loader:
    loss = criterion(model(x.cuda()), y.cuda())
    loss.backward()
    optimizer.step()
conv = nn.Conv2d(3, 3, 1)
