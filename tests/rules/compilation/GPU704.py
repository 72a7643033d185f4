# GPU704 `cudnn-benchmark-off`: fixture. Sections start at `# %% valid:` (a look-alike that must
# stay silent) or `# %% invalid:` (every `# expect:` mark reported, nothing else). Each
# section is checked on its own, with this rule alone.

# %% invalid: case
import torch
import torch.nn as nn

model = nn.Sequential(
    nn.Conv2d(3, 64, 3, padding=1),  # expect: GPU704 info
    nn.ReLU(),
).cuda()
for x, y in loader:
    loss = criterion(model(x.cuda()), y.cuda())
    loss.backward()
    optimizer.step()

# %% invalid: torchvision model
import torch
from torchvision import models

device = torch.device("cuda")
model = models.resnet50(weights=None).to(device)  # expect: GPU704 info
for images, labels in train_loader:
    images, labels = images.to(device), labels.to(device)
    loss = criterion(model(images), labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

# %% invalid: RandomResizedCrop gives a fixed size; deterministic explicitly off
import torch
import torch.nn as nn
import torchvision.transforms as T

train_tf = T.Compose([T.RandomResizedCrop(224), T.ToTensor()])

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 32, 3)  # expect: GPU704 info
        self.head = nn.Linear(32, 10)

def train(model, loader, opt):
    for x, y in loader:
        loss = nn.functional.cross_entropy(model(x.cuda()), y.cuda())
        loss.backward()
        opt.step()

if __name__ == "__main__":
    torch.backends.cudnn.deterministic = False
    train(Net().cuda(), loader, opt)

# %% invalid: 3-D convolutions
import torch  # the framework
import torch.nn as nn
from torch.cuda.amp import autocast

model = nn.Conv3d(1, 16, 3).cuda()  # expect: GPU704 info
for vol in loader:
    with autocast():
        loss = model(vol.cuda()).mean()
    loss.backward()
    optimizer.step()

# %% invalid: torch not imported as `torch`: no fix
import torch.backends.cudnn as cudnn
from torch import nn

cudnn.enabled = True
net = nn.ConvTranspose2d(64, 3, 4, 2, 1).cuda()  # expect: GPU704 info
for z in loader:
    loss = net(z.cuda()).pow(2).mean()
    loss.backward()
    optim.step()

# %% invalid: inserted after the last top-level import line
import torch
import torch.nn as nn
try:
    import wandb
except ImportError:
    wandb = None
# model
net = nn.Conv2d(3, 3, 1).cuda()  # expect: GPU704 info
for x in loader:
    net(x.cuda()).sum().backward()
    optimizer.step()

# %% valid: set through an alias
import torch
import torch.backends.cudnn as cudnn
import torch.nn as nn

cudnn.benchmark = True
model = nn.Sequential(nn.Conv2d(3, 64, 3), nn.ReLU()).cuda()
for x, y in loader:
    loss = criterion(model(x.cuda()), y.cuda())
    loss.backward()
    optimizer.step()

# %% valid: determinism requested
import torch
import torch.nn as nn

def setup(args):
    torch.backends.cudnn.deterministic = True
    torch.backends.cudnn.benchmark = False

model = nn.Conv2d(3, 8, 3).cuda()
for x in loader:
    model(x.cuda()).mean().backward()
    optimizer.step()

# %% valid: CPU script
import torch.nn as nn

model = nn.Sequential(nn.Conv2d(3, 16, 3), nn.ReLU(), nn.Flatten(), nn.LazyLinear(10))
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()

# %% valid: custom collate: sizes may vary
import torch
from torch.utils.data import DataLoader
import torchvision

def collate(batch):
    return pad_to_max(batch)

loader = DataLoader(ds, batch_size=8, collate_fn=collate)
model = torchvision.models.resnet18().cuda()
for x, y in loader:
    loss = criterion(model(x.cuda()), y.cuda())
    loss.backward()
    optimizer.step()

# %% valid: detection: variable image sizes
import torch
import torchvision

model = torchvision.models.detection.fasterrcnn_resnet50_fpn(weights="DEFAULT").cuda()
for images, targets in loader:
    losses = model([i.cuda() for i in images], targets)
    sum(losses.values()).backward()
    optimizer.step()

# %% valid: inference only: no training loop
import torch
import torch.nn as nn

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 32, 3)

model = Net().to("cuda")
model.eval()
with torch.no_grad():
    for x in loader:
        preds = model(x.cuda())

# %% valid: Lightning: the Trainer owns the loop (and its `benchmark` flag)
import lightning as L
import torch.nn as nn

class Lit(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 16, 3)

    def training_step(self, batch, idx):
        return self.conv(batch[0]).mean()

trainer = L.Trainer(accelerator="cuda", benchmark=True)
trainer.fit(Lit())

# %% valid: deterministic algorithms
import torch
import torch.nn as nn

torch.use_deterministic_algorithms(True)
model = nn.Conv3d(1, 8, 3).cuda()
for x in loader:
    loss = model(x.cuda()).mean()
    loss.backward()
    optimizer.step()
