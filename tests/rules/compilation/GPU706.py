# GPU706 `kernel-shape-knobs`: fixture. Sections start at `# %% valid:` (a look-alike that must
# stay silent) or `# %% invalid:` (every `# expect:` mark reported, nothing else). Each
# section is checked on its own, with this rule alone.

# %% invalid: hidden width under autocast
import torch
import torch.nn as nn

class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(768, 3100)  # expect: GPU706 info
        self.fc2 = nn.Linear(3100, 768)  # expect: GPU706 info
        self.head = nn.Linear(768, 1000)

with torch.autocast("cuda", dtype=torch.float16):
    y = MLP().cuda()(x)

# %% invalid: conv bias cancelled by BatchNorm
import torch.nn as nn

def block(cin, cout):
    return nn.Sequential(
        nn.Conv2d(cin, cout, 3, padding=1),  # expect: GPU706 info
        nn.BatchNorm2d(cout),
        nn.ReLU(inplace=True),
    )

# %% invalid: explicit bias=True
from torch import nn

stem = nn.Sequential(nn.Conv2d(3, 32, 3, 2, 1, bias=True), nn.SyncBatchNorm(32), nn.SiLU())  # expect: GPU706 info

# %% invalid: foreach disabled
import torch

opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.1, foreach=False)  # expect: GPU706 info

# %% invalid: tied vocabulary not a multiple of 8
import torch
import torch.nn as nn

class GPT(nn.Module):
    def __init__(self):
        super().__init__()
        self.wte = nn.Embedding(50257, 768)  # expect: GPU706 info
        self.lm_head = nn.Linear(768, 50257, bias=False)
        self.wte.weight = self.lm_head.weight

model = GPT().to(device="cuda", dtype=torch.bfloat16)

# %% invalid: imported names, keyword sizes
import torch
from torch.nn import Linear, Embedding
from torch.optim import SGD

enc = Linear(in_features=100, out_features=256)  # expect: GPU706 info
pos = Embedding(512, 100)  # expect: GPU706 info
opt = SGD(enc.parameters(), lr=0.1, momentum=0.9, foreach=False)  # expect: GPU706 info
scaler = torch.amp.GradScaler("cuda")

# %% valid: no mixed precision
import torch
import torch.nn as nn

model = nn.Sequential(nn.Linear(784, 500), nn.ReLU(), nn.Linear(500, 10)).cuda()
for x, y in loader:
    loss = criterion(model(x.cuda()), y.cuda())
    loss.backward()
    optimizer.step()

# %% valid: output layers: last of a Sequential, named heads, small class counts
import torch
import torch.nn as nn

class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(1024, 512), nn.GELU(), nn.Linear(512, 1001))
        self.classifier = nn.Linear(512, 1001)
        self.fc_out = nn.Linear(256, 37)

with torch.autocast("cuda", dtype=torch.bfloat16):
    out = Classifier().cuda()(x)

# %% valid: bias off, or no BatchNorm right after
import torch.nn as nn

block = nn.Sequential(
    nn.Conv2d(64, 128, 3, padding=1, bias=False),
    nn.BatchNorm2d(128),
    nn.ReLU(inplace=True),
    nn.Conv2d(128, 128, 3, padding=1),
    nn.ReLU(inplace=True),
    nn.BatchNorm2d(128),
)

# %% valid: foreach on or configured
import torch

optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4, foreach=True)
optimizer2 = torch.optim.SGD(params, lr=0.1, foreach=cfg.foreach)
sched = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=1e-3, total_steps=100)

# %% valid: untied vocabulary, small sizes, sizes from variables
import torch
import torch.nn as nn

class Tiny(nn.Module):
    def __init__(self, vocab, dim):
        super().__init__()
        self.emb = nn.Embedding(50257, 768)
        self.small = nn.Linear(30, 50)
        self.proj = nn.Linear(dim, 4 * dim)

model = Tiny(100, 64).cuda().half()

# %% valid: not a plain Sequential literal
import torch
import torch.nn as nn
from collections import OrderedDict

stem = nn.Sequential(OrderedDict([("conv", nn.Conv2d(3, 64, 7, 2, 3)), ("bn", nn.BatchNorm2d(64))]))
layers = [nn.Conv2d(64, 64, 3), nn.BatchNorm2d(64)]
body = nn.Sequential(*layers)

# %% valid: the last Linear a module builds: its output size is the task's
import torch
import torch.nn as nn

class Regressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.hidden = nn.Linear(512, 256)
        self.predict = nn.Linear(256, 100)

scaler = torch.cuda.amp.GradScaler()
