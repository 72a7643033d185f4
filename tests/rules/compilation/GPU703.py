# GPU703 `graph-break-in-compiled-code`: fixture. Sections start at `# %% valid:` (a look-alike that must
# stay silent) or `# %% invalid:` (every `# expect:` mark reported, nothing else). Each
# section is checked on its own, with this rule alone.

# %% invalid: print and item on one line
import torch

@torch.compile
def train_step(x, y):
    loss = criterion(model(x), y)
    print("loss", loss.item())  # expect: GPU703
    return loss

# %% invalid: tensor test in a submodule of a compiled model
import torch
import torch.nn as nn

class Gate(nn.Module):
    def forward(self, x):
        score = self.proj(x).sigmoid()
        if score.mean() > 0.5:  # expect: GPU703
            return x * score
        return x

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.gate = Gate()

model = Net().cuda()
model = torch.compile(model, mode="max-autotune")

# %% invalid: partial(torch.compile) alias
import functools
import torch

fast = functools.partial(torch.compile, fullgraph=False)

@fast
def decode(logits):
    ids = logits.argmax(-1).tolist()  # expect: GPU703
    return ids

# %% invalid: model.compile(), a helper method, numpy
import torch
import torch.nn as nn

class Model(nn.Module):
    def helper(self, h):
        while h.norm() > 1.0:  # expect: GPU703
            h = h / 2
        return h

    def forward(self, x):
        h = self.helper(self.body(x))
        arr = h.detach().cpu().numpy()  # expect: GPU703 info
        return h

net = Model()
net.compile()

# %% invalid: function passed to torch.compile
import torch

def step_fn(batch):
    out = model(batch["x"])
    n_pos = (out > 0).sum().item()  # expect: GPU703
    if self_debug:
        print(out)  # expect: GPU703 info
    return out

compiled_step = torch.compile(step_fn)

# %% invalid: decorator factory bound to a name
import torch

compile_fn = torch.compile(mode="reduce-overhead")

@compile_fn
def policy(obs):
    logits = net(obs)
    action = torch.distributions.Categorical(logits=logits).sample()
    return action.item()  # expect: GPU703

# %% invalid: a module the compiled function calls
import torch
from torch import nn

class WeightedMSE(nn.Module):
    def forward(self, pred, y):
        w = (y > 0).float().mean().item()  # expect: GPU703
        return ((pred - y) ** 2).mean() * w

loss_fn = WeightedMSE()

@torch.compile(dynamic=True)
def step(pred, y):
    return loss_fn(pred, y)

# %% valid: the read happens outside the compiled function
import torch

@torch.compile
def loss_fn(logits, target):
    return torch.nn.functional.cross_entropy(logits, target)

for x, y in loader:
    loss = loss_fn(model(x), y)
    loss.backward()
    optimizer.step()
    print(loss.item())

# %% valid: None checks, shapes and flags do not break
import torch
import torch.nn as nn

class Net(nn.Module):
    def forward(self, x, mask=None):
        if mask is not None:
            x = x.masked_fill(mask, 0.0)
        if x.dim() == 4 and x.shape[1] > 3:
            x = x.flatten(2)
        if self.training:
            x = self.drop(x)
        return self.fc(x)

model = torch.compile(Net())

# %% valid: not compiled
import torch
import torch.nn as nn

class Net(nn.Module):
    def forward(self, x):
        print("shape", x.shape)
        return self.fc(x).item()

model = Net().cuda()

# %% valid: NumPy scalar
import numpy as np
import torch

@torch.compile(fullgraph=False)
def augment(x, cfg):
    scale = np.float32(cfg.scale).item()
    return x * scale

# %% valid: helper excluded from compilation on purpose
import torch

@torch.compiler.disable
def log_stats(t):
    print(t.mean().item())

@torch.compile
def step(x):
    y = x.relu()
    log_stats(y)
    return y

# %% valid: re.compile
import re
import torch

pattern = re.compile(r"\d+")

def parse(line):
    print(line)
    return int(pattern.match(line).group())

# %% valid: an imported model is compiled, not this class
import torch
import torch.nn as nn
from transformers import AutoModel

class Wrapper(nn.Module):
    def forward(self, x):
        out = self.backbone(x)
        print(out.shape)
        return out

backbone = torch.compile(AutoModel.from_pretrained("bert-base-uncased"))
head = Wrapper()

# %% valid: compiling a LightningModule traces forward, not training_step
import lightning as L
import torch
import torch.nn.functional as F

class LitClassifier(L.LightningModule):
    def forward(self, x):
        return self.net(x)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.cross_entropy(self(x), y)
        print(f"step {batch_idx}: {loss.item():.3f}")
        self.log("train_loss", loss)
        return loss

model = torch.compile(LitClassifier())
L.Trainer(max_epochs=3).fit(model, loader)
