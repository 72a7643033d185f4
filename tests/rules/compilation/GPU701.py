# GPU701 `unfused-elementwise-forward`: fixture. Sections start at `# %% valid:` (a look-alike that must
# stay silent) or `# %% invalid:` (every `# expect:` mark reported, nothing else). Each
# section is checked on its own, with this rule alone.

# %% invalid: focal loss
import torch
import torch.nn as nn
import torch.nn.functional as F

class FocalLoss(nn.Module):
    def __init__(self, alpha=0.25, gamma=2.0):
        super().__init__()
        self.alpha, self.gamma = alpha, gamma

    def forward(self, logits, target):  # expect: GPU701 info
        ce = F.cross_entropy(logits, target, reduction="none")
        p = torch.exp(-ce)
        loss = self.alpha * (1 - p) ** self.gamma * ce
        return loss.mean()

# %% invalid: hand-written GELU
import math
import torch
from torch import nn

class NewGELU(nn.Module):
    def forward(self, x):  # expect: GPU701 info
        return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))

# %% invalid: subclass of a module subclass, tensor methods
import torch
import torch.nn as nn

class Base(nn.Module):
    pass

class SoftClip(Base):
    def __init__(self):
        super().__init__()
        self.scale = nn.Parameter(torch.ones(1))

    def forward(self, x):  # expect: GPU701 info
        y = x / self.scale
        y = y.sigmoid() * 2 - 1
        y = y.clamp(-0.99, 0.99)
        return y.abs().sqrt() * y.sign()

# %% invalid: another class is compiled, not this one
import torch
from torch.nn import Module

class RMSNormGate(Module):
    def forward(self, x, gate):  # expect: GPU701 info
        x = x.float()
        x = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)
        x = x * self.weight
        return x * torch.sigmoid(gate) + gate * 0.1

class Other(Module):
    def forward(self, x):
        return x

compiled = torch.compile(Other())

# %% invalid: loss module used in a training loop
import torch
import torch.nn as nn

class MaskedMSE(nn.Module):
    def forward(self, pred, target, mask=None):  # expect: GPU701 info
        diff = pred - target
        err = diff * diff
        if mask is not None:
            err = err * mask
        err = torch.where(torch.isnan(err), torch.zeros_like(err), err)
        return err.sum() / (mask.sum() + 1e-8)

criterion = MaskedMSE()
for x, y, m in loader:
    loss = criterion(model(x), y, m)
    loss.backward()
    optimizer.step()

# %% invalid: only an unrelated model is traced
import torch
import torch.nn as nn

class Snake(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.alpha = nn.Parameter(torch.ones(1, channels, 1))

    def forward(self, x):  # expect: GPU701 info
        a = self.alpha
        return x + (1.0 / (a + 1e-9)) * torch.sin(a * x).pow(2)

class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(1, 64, 7)

encoder = torch.jit.trace(Encoder().eval(), example)

# %% valid: activation module inside a compiled model
import torch
import torch.nn as nn

class NewGELU(nn.Module):
    def forward(self, x):
        return 0.5 * x * (1.0 + torch.tanh(0.7978845608 * (x + 0.044715 * torch.pow(x, 3.0))))

class MLP(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.fc = nn.Linear(d, 4 * d)
        self.act = NewGELU()
        self.proj = nn.Linear(4 * d, d)

    def forward(self, x):
        return self.proj(self.act(self.fc(x)))

model = torch.compile(MLP(768).cuda())

# %% valid: attention: mostly matmuls and submodules
import math
import torch.nn as nn
import torch.nn.functional as F

class CausalSelfAttention(nn.Module):
    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
        att = F.softmax(att, dim=-1)
        y = self.attn_dropout(att) @ v
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.resid_dropout(self.c_proj(y))

# %% valid: residual block calling submodules
import torch.nn as nn

class Block(nn.Module):
    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        x = x + self.mlp(self.ln_2(x))
        return x

# %% valid: tiny forward
import torch
import torch.nn as nn

class Swish(nn.Module):
    def forward(self, x):
        return x * torch.sigmoid(x)

# %% valid: forward decorated with torch.compile
import torch
import torch.nn as nn

class ScaledTanh(nn.Module):
    @torch.compile(mode="max-autotune")
    def forward(self, x, y):
        z = torch.tanh(x * self.a + y * self.b)
        return torch.clamp(z * 2 - 1, -1, 1) + torch.exp(-x)

# %% valid: LightningModule, not an nn.Module subclass here
import pytorch_lightning as pl
import torch

class LitRegressor(pl.LightningModule):
    def forward(self, x, y):
        r = (x - y) / (y.abs() + 1e-6)
        w = torch.exp(-r * r) * torch.sigmoid(x)
        return w * r

# %% valid: mostly submodule calls
import torch
from torch import nn

class Head(nn.Module):
    def forward(self, feats, boxes):
        h = self.conv(feats)
        h = self.norm(h)
        h = self.act(h)
        h = self.pool(h)
        h = self.drop(h)
        out = self.fc(h.flatten(1) * self.gain)
        return out * 2 + boxes, torch.sigmoid(out) - 0.5, out.relu()

# %% valid: module compiled through a helper
import torch
import torch.nn as nn

class FocalLoss(nn.Module):
    def forward(self, logits, target):
        p = torch.sigmoid(logits)
        ce = -(target * torch.log(p) + (1 - target) * torch.log(1 - p))
        return (self.alpha * (1 - p) ** self.gamma * ce).mean()

def build(cfg):
    model = Detector(cfg).cuda()
    if cfg.compile:
        model = torch.compile(model)
    return model, FocalLoss()

def make_criterion():
    crit = FocalLoss()
    return torch.compile(crit)

# %% valid: called from a compiled function: Dynamo traces it
import torch
import torch.nn as nn

class LabelSmoothing(nn.Module):
    def forward(self, logp, target):
        nll = -logp.gather(-1, target[:, None])[:, 0]
        smooth = -logp.mean(-1)
        loss = (1 - self.eps) * nll + self.eps * smooth
        return torch.where(target >= 0, loss, torch.zeros_like(loss)).sum() / (target >= 0).sum()

criterion = LabelSmoothing()

@torch.compile
def train_step(net, x, y):
    return criterion(net(x).log_softmax(-1), y)
