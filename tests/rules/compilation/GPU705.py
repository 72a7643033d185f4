# GPU705 `debug-api-left-on`: fixture. Sections start at `# %% valid:` (a look-alike that must
# stay silent) or `# %% invalid:` (every `# expect:` mark reported, nothing else). Each
# section is checked on its own, with this rule alone.

# %% invalid: case
import torch

torch.autograd.set_detect_anomaly(True)  # expect: GPU705
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()

# %% invalid: keyword argument, aliased module
from torch import autograd

def main():
    autograd.set_detect_anomaly(mode=True)  # expect: GPU705
    train(model, loader)

def train(model, loader):
    for batch in loader:
        model(batch).loss.backward()
        optimizer.step()

if __name__ == "__main__":
    main()

# %% invalid: anomaly context in the loop
import torch

for x, y in loader:
    with torch.autograd.detect_anomaly():  # expect: GPU705
        loss = criterion(model(x), y)
        loss.backward()
    optimizer.step()

# %% invalid: legacy profiler around training
import torch.autograd.profiler as profiler

def train_epoch(model, loader, opt):
    for x, y in loader:
        loss = model(x, y)
        loss.backward()
        opt.step()

with profiler.profile(use_cuda=True) as prof:  # expect: GPU705
    train_epoch(model, loader, opt)
print(prof.key_averages().table())

# %% invalid: gradcheck on every step
import torch
from torch.autograd import gradcheck

class Trainer:
    def step(self, batch):
        x = batch.double().requires_grad_()
        gradcheck(self.layer, (x,))  # expect: GPU705
        loss = self.model(batch).mean()
        loss.backward()
        self.optimizer.step()

# %% invalid: main guard is not a flag
import torch

if __name__ == "__main__":
    torch.autograd.set_detect_anomaly(True)  # expect: GPU705
    with torch.autograd.profiler.emit_nvtx():  # expect: GPU705
        for x, y in loader:
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()

# %% valid: behind a flag
import torch

if args.debug:
    torch.autograd.set_detect_anomaly(True)
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()

# %% valid: switch from the configuration
import torch

torch.autograd.set_detect_anomaly(cfg.detect_anomaly)
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()

# %% valid: switched off
import torch

torch.autograd.set_detect_anomaly(False)
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()

# %% valid: gradcheck in a test
import torch
from torch.autograd import gradcheck

def test_custom_op():
    x = torch.randn(4, 4, dtype=torch.double, requires_grad=True)
    assert gradcheck(MyOp.apply, (x,))

# %% valid: profiler enabled by a parameter
import torch

def train(model, loader, opt, profile=False):
    with torch.autograd.profiler.profile(enabled=profile) as prof:
        for x, y in loader:
            loss = model(x, y)
            loss.backward()
            opt.step()

# %% valid: conditional expression on a flag
import torch
from contextlib import nullcontext

for x, y in loader:
    ctx = torch.autograd.detect_anomaly() if args.debug else nullcontext()
    with ctx:
        loss = criterion(model(x), y)
        loss.backward()
    optimizer.step()

# %% valid: torch.profiler with a schedule is deliberate
import torch
from torch.profiler import profile, ProfilerActivity, schedule

with profile(activities=[ProfilerActivity.CUDA], schedule=schedule(wait=1, warmup=1, active=3)) as p:
    for step, (x, y) in enumerate(loader):
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        p.step()

# %% valid: a script that never trains
import torch

torch.autograd.set_detect_anomaly(True)
with torch.autograd.detect_anomaly():
    out = model(sample)
    print(out.shape)

# %% valid: Lightning's own switches, off unless asked for
import lightning as L

trainer = L.Trainer(max_epochs=10, detect_anomaly=args.detect_anomaly, profiler="simple")
trainer.fit(LitModel(), datamodule=dm)

# %% valid: a profiling script measures a few counted steps and reads the records
import torch
from torch.autograd import profiler


def profile_steps(model, optimizer, make_batch):
    with profiler.profile(profile_memory=True, use_cuda=True) as prof:
        with profiler.record_function("train_steps"):
            for _ in range(10):
                inputs, targets = make_batch()
                loss = torch.nn.functional.cross_entropy(model(inputs), targets)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
    print(prof.key_averages().table(sort_by="cuda_time_total", row_limit=10))
    prof.export_chrome_trace("trace.json")

# %% valid: NVTX ranges for a run under nvprof that the script starts and stops itself
import torch
import torch.cuda.profiler as cuda_profiler

with torch.autograd.profiler.emit_nvtx():
    cuda_profiler.start()
    loss = model(batch).sum()
    loss.backward()
    optimizer.step()
    cuda_profiler.stop()

# %% invalid: the same counted steps, profiled with nobody reading the records
import torch
from torch.autograd import profiler


def profile_steps(model, optimizer, make_batch):
    with profiler.profile(use_cuda=True):  # expect: GPU705
        for _ in range(10):
            inputs, targets = make_batch()
            loss = torch.nn.functional.cross_entropy(model(inputs), targets)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
