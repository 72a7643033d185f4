# GPU303 `deprecated-amp-api`: fixture. Sections start at `# %% valid:` (a look-alike that must
# stay silent) or `# %% invalid:` (every `# expect:` mark reported, nothing else). Each
# section is checked on its own, with this rule alone.

# %% invalid: case
import torch
scaler = torch.cuda.amp.GradScaler()  # expect: GPU303
with torch.cuda.amp.autocast():  # expect: GPU303
    loss = criterion(model(x), y)

# %% invalid: names imported; positional arguments become keywords
import torch
from torch.cuda.amp import GradScaler, autocast
scaler = GradScaler(init_scale=1024, growth_interval=100)  # expect: GPU303
for x, y in loader:
    with autocast(True, torch.float16, cache_enabled=False):  # expect: GPU303
        loss = criterion(model(x), y)

# %% invalid: module alias, decorator, positional init_scale
import torch as th
import torch.cuda.amp as amp

@amp.autocast(dtype=th.bfloat16)  # expect: GPU303
def forward(model, x):
    return model(x)

scaler = amp.GradScaler(65536.0)  # expect: GPU303

# %% invalid: CPU autocast
import torch
with torch.cpu.amp.autocast(dtype=torch.bfloat16):  # expect: GPU303
    out = model(features)

# %% invalid: no `torch` name to write the new call with: reported without a fix
from torch.cuda.amp import autocast

def train_step(model, batch, opt):
    with autocast():  # expect: GPU303
        loss = model(batch).mean()
    loss.backward()
    opt.step()

# %% invalid: `from torch.cuda import amp`
import torch
from torch.cuda import amp
class Trainer:
    def __init__(self, cfg):
        self.scaler = amp.GradScaler(enabled=cfg.fp16)  # expect: GPU303

    def step(self, batch):
        with amp.autocast(enabled=self.cfg.fp16):  # expect: GPU303
            return self.model(batch)

# %% valid: the new API
import torch
scaler = torch.amp.GradScaler("cuda")
with torch.amp.autocast("cuda", dtype=torch.float16):
    loss = criterion(model(x), y)

# %% valid: top-level spellings
import torch
scaler = torch.GradScaler()
with torch.autocast(device_type="cuda"):
    loss = criterion(model(x), y)

# %% valid: imported from torch.amp
from torch.amp import GradScaler, autocast
scaler = GradScaler("cuda")
with autocast("cuda", dtype=torch.bfloat16):
    out = model(x)

# %% valid: type annotations and isinstance are not calls
from torch.cuda.amp import GradScaler

def train(model, scaler: GradScaler):
    assert isinstance(scaler, GradScaler)
    return model

# %% valid: Accelerate's own autocast
from accelerate import Accelerator
accelerator = Accelerator(mixed_precision="fp16")
with accelerator.autocast():
    loss = model(batch).loss

# %% valid: apex amp is a different package
import apex.amp as amp
model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
with amp.scale_loss(loss, optimizer) as scaled_loss:
    scaled_loss.backward()

# %% valid: device chosen at run time
import torch
device = "cuda" if torch.cuda.is_available() else "cpu"
with torch.autocast(device_type=device, dtype=torch.bfloat16):
    out = model(x)

# %% valid: a compat import that prefers torch.amp and falls back on old torch
import torch
try:
    from torch.amp import GradScaler, autocast
except ImportError:
    from torch.cuda.amp import GradScaler, autocast
scaler = GradScaler()
with autocast("cuda", dtype=torch.float16):
    loss = criterion(model(x), y)

# %% valid: the script's own autocast shadows the import
import contextlib
import torch
from torch.cuda.amp import autocast

def autocast(enabled=True):
    return contextlib.nullcontext()

def train_step(model, batch):
    with autocast():
        return model(batch).mean()

# %% valid: rebound to a no-op when amp is off
import contextlib
import torch
from torch.cuda.amp import autocast
if not args.amp:
    autocast = contextlib.nullcontext
with autocast():
    loss = criterion(model(x), y)

# %% valid: a parameter of the same name
import contextlib
import torch
from torch.cuda.amp import autocast

def evaluate(model, batch, autocast=contextlib.nullcontext):
    with autocast():
        return model(batch)

# %% valid: the module alias comes from either place
import torch
try:
    from torch import amp
    amp.autocast("cuda")
except ImportError:
    from torch.cuda import amp
with amp.autocast(enabled=True):
    out = model(x)

# %% invalid: a method of the same name does not shadow the import
import torch
from torch.cuda.amp import autocast

class Runner:
    def autocast(self):
        return autocast(dtype=torch.bfloat16)  # expect: GPU303

with autocast():  # expect: GPU303
    loss = criterion(model(x), y)

# %% invalid: the same import twice, in a try and its fallback
import torch
try:
    from torch.cuda.amp import autocast
except ImportError:
    from torch.cuda.amp import autocast
with autocast():  # expect: GPU303
    loss = criterion(model(x), y)

# %% valid: a fallback for old torch in a conditional expression
import torch

TORCH_2_4 = tuple(int(p) for p in torch.__version__.split(".")[:2]) >= (2, 4)
scaler = torch.amp.GradScaler("cuda", enabled=amp) if TORCH_2_4 else torch.cuda.amp.GradScaler(enabled=amp)

# %% valid: a fallback for old torch in the other arm of an `if`
import torch


def make_scaler(enabled):
    if hasattr(torch.amp, "GradScaler"):
        scaler = torch.amp.GradScaler("cuda", enabled=enabled)
    else:
        scaler = torch.cuda.amp.GradScaler(enabled=enabled)
    return scaler

# %% valid: a fallback in the handler of a `try` that calls the new API
import torch


def make_scaler(device):
    try:
        return torch.amp.GradScaler(device=device)
    except (AttributeError, TypeError):
        return torch.cuda.amp.GradScaler()

# %% invalid: the other arm does something else
import torch


def make_scaler(enabled):
    if enabled:
        scaler = torch.cuda.amp.GradScaler()  # expect: GPU303
    else:
        scaler = None
    return scaler

# %% invalid: the old autocast kept in a name, as timm's training scripts do
import torch
from contextlib import suppress


def train(model, loader, optimizer, use_amp):
    amp_autocast = suppress
    if use_amp:
        amp_autocast = torch.cuda.amp.autocast  # expect: GPU303
    for x, y in loader:
        with amp_autocast():
            loss = model(x.cuda(), y.cuda())
        loss.backward()
        optimizer.step()

# %% valid: the device-generic autocast kept in a name
import functools
import torch


def train(model, loader, optimizer):
    amp_autocast = functools.partial(torch.amp.autocast, "cuda")
    plain = torch.autocast
    for x, y in loader:
        with amp_autocast(dtype=torch.bfloat16):
            loss = model(x.cuda(), y.cuda())
        loss.backward()
        optimizer.step()

# %% valid: the old autocast kept in a name inside a try whose except defines a stand-in for old torch
import torch

try:
    autocast = torch.cuda.amp.autocast
except AttributeError:
    class autocast:
        def __init__(self, enabled):
            pass

        def __enter__(self):
            pass

        def __exit__(self, *args):
            pass

# %% invalid: the old autocast chosen by a conditional expression and kept in a name
from contextlib import nullcontext

import torch


def train(model, loader, optimizer, use_fp16):
    autocast = torch.cuda.amp.autocast if use_fp16 else nullcontext  # expect: GPU303
    for batch in loader:
        with autocast():
            loss = model(**batch).loss
        loss.backward()
        optimizer.step()

# %% valid: the old spelling kept for torch 1.x under a version test
from functools import partial

import torch

if torch.__version__.startswith("2"):
    autocast = partial(torch.autocast, device_type="cuda")
else:
    autocast = torch.cuda.amp.autocast


def update(net, x):
    with autocast(enabled=True):
        return net(x)

# %% valid: a version check decides which scaler to build
import torch
from packaging import version

if version.parse(torch.__version__) >= version.parse("2.3"):
    scaler = torch.amp.GradScaler("cuda")
else:
    scaler = torch.cuda.amp.GradScaler()

# %% invalid: a test of something else than the torch version does not make a fallback
import torch

if args.fp16:
    autocast = torch.cuda.amp.autocast  # expect: GPU303
else:
    autocast = torch.autocast

# %% invalid: the old API under a flag that no construction turns on is information
import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self, dim, use_amp=False):
        super().__init__()
        self.use_amp = use_amp
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        if self.use_amp:
            with torch.cuda.amp.autocast():  # expect: GPU303 info
                return self.proj(x)
        return self.proj(x)


block = Block(64).cuda()

# %% invalid: the same flag turned on where the block is built stays a warning
import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self, dim, use_amp=False):
        super().__init__()
        self.use_amp = use_amp
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        if self.use_amp:
            with torch.cuda.amp.autocast():  # expect: GPU303
                return self.proj(x)
        return self.proj(x)


block = Block(64, use_amp=True).cuda()

# %% invalid: a helper returns the old autocast for its callers to enter
import torch
from contextlib import suppress


def get_autocast(precision):
    if precision == "amp":
        return torch.cuda.amp.autocast  # expect: GPU303
    elif precision == "amp_bf16":
        return lambda: torch.cuda.amp.autocast(dtype=torch.bfloat16)
    return suppress


def train_one_epoch(model, loader, opt, args):
    autocast = get_autocast(args.precision)
    for x, y in loader:
        with autocast():
            loss = model(x.cuda(), y.cuda())
        loss.backward()
        opt.step()

# %% valid: a helper returns the new autocast, or the old one only for old torch
import functools
import torch


def get_autocast(precision):
    if precision == "amp":
        return functools.partial(torch.amp.autocast, "cuda")
    return lambda: torch.amp.autocast("cuda", dtype=torch.bfloat16)


def legacy_autocast():
    try:
        return functools.partial(torch.amp.autocast, "cuda")
    except AttributeError:
        return torch.cuda.amp.autocast

# %% invalid: the `else` of `if not fp16:` where every call passes a flag left False: information
import torch

fp16 = False


def fit_one_epoch(model, optimizer, gen, fp16):
    for imgs, labels in gen:
        optimizer.zero_grad()
        if not fp16:
            loss = model(imgs.cuda(), labels.cuda())
            loss.backward()
            optimizer.step()
        else:
            from torch.cuda.amp import autocast
            with autocast():  # expect: GPU303 info
                loss = model(imgs.cuda(), labels.cuda())
            loss.backward()
            optimizer.step()


for epoch in range(100):
    fit_one_epoch(model, optimizer, gen, fp16)

# %% invalid: the same `else` arm when a call turns the flag on
import torch


def fit_one_epoch(model, optimizer, gen, fp16):
    for imgs, labels in gen:
        optimizer.zero_grad()
        if not fp16:
            loss = model(imgs.cuda(), labels.cuda())
        else:
            from torch.cuda.amp import autocast
            with autocast():  # expect: GPU303
                loss = model(imgs.cuda(), labels.cuda())
        loss.backward()
        optimizer.step()


for epoch in range(100):
    fit_one_epoch(model, optimizer, gen, True)
