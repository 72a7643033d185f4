# GPU105 `synchronize-in-training-loop`: fixture. Sections start at `# %% valid:` (a look-alike that must
# stay silent) or `# %% invalid:` (every `# expect:` mark reported, nothing else). Each
# section is checked on its own, with this rule alone.

# %% invalid: case
import torch
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    torch.cuda.synchronize()  # expect: GPU105

# %% invalid: aliased module
from torch import cuda
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    cuda.synchronize()  # expect: GPU105

# %% invalid: stream synchronize
import torch
stream = torch.cuda.Stream()
for x, y in loader:
    with torch.cuda.stream(stream):
        x = x.cuda(non_blocking=True)
    stream.synchronize()  # expect: GPU105
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()

# %% invalid: through a helper
import torch
def train_step(batch):
    loss = model(batch).mean()
    loss.backward()
    optimizer.step()
    torch.cuda.current_stream().synchronize()  # expect: GPU105

for batch in loader:
    train_step(batch)

# %% invalid: gated
import torch
for step, (x, y) in enumerate(loader):
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    if step % 100 == 0:
        torch.cuda.synchronize()  # expect: GPU105 info

# %% valid: timing
import time, torch
for x, y in loader:
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    torch.cuda.synchronize()
    step_times.append(time.perf_counter() - t0)

# %% valid: once per epoch
import torch
for epoch in range(3):
    for x, y in loader:
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
    torch.cuda.synchronize()

# %% valid: no training
import torch
def benchmark(model, x):
    for _ in range(10):
        model(x)
    torch.cuda.synchronize()

# %% valid: event timing
import torch
start = torch.cuda.Event(enable_timing=True)
end = torch.cuda.Event(enable_timing=True)
for x, y in loader:
    start.record()
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    end.record()
    end.synchronize()
    times.append(start.elapsed_time(end))

# %% valid: other synchronisation primitives
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    barrier.synchronize_all()
    queue.sync()

# %% valid: module level
import torch
torch.cuda.synchronize()
main()

# %% valid: a timing helper of the file around the step
import time
import torch

def timer():
    return time.perf_counter()

for x, y in loader:
    t0 = timer()
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    torch.cuda.synchronize()
    step_times.append(timer() - t0)

# %% valid: the synchronize sits in the timing helper, under a test
import time
import torch

def time_synchronized():
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    return time.time()

for x, y in loader:
    t0 = time_synchronized()
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    print(time_synchronized() - t0)

# %% valid: a timer object of the file's own class
import time
import torch

class Timer:
    def tic(self):
        self.start = time.time()

    def toc(self):
        return time.time() - self.start

timer = Timer()
for x, y in loader:
    timer.tic()
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    torch.cuda.synchronize()
    timer.toc()

# %% invalid: a helper that does not time anything
import torch

def log_step(loss):
    print(loss)

for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    torch.cuda.synchronize()  # expect: GPU105
    log_step(loss)

# %% invalid: the timing helper runs far from the synchronize
import time
import torch

def timer():
    return time.perf_counter()

for x, y in loader:
    t0 = timer()
    x = x.cuda(non_blocking=True)
    y = y.cuda(non_blocking=True)
    out = model(x)
    loss = criterion(out, y)
    loss.backward()
    optimizer.step()
    torch.cuda.synchronize()  # expect: GPU105
    scheduler.step()
    optimizer.zero_grad()
    meter.update(out, y)
    history.append(t0)

# %% valid: a meter from another module, stopped and restarted around the synchronize
import torch
from utils.meters import TrainMeter

def train_epoch(loader, model, optimizer, meter: TrainMeter):
    meter.iter_tic()
    for inputs, labels in loader:
        meter.data_toc()
        loss = loss_fn(model(inputs.cuda()), labels.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        meter.update_stats(loss.detach())
        meter.iter_toc()
        meter.log_iter_stats()
        torch.cuda.synchronize()
        meter.iter_tic()

# %% invalid: the stopwatch starts far from the synchronize
import torch

for inputs, labels in loader:
    progress.iter_tic()
    inputs = inputs.cuda(non_blocking=True)
    labels = labels.cuda(non_blocking=True)
    out = model(inputs)
    loss = criterion(out, labels)
    loss.backward()
    optimizer.step()
    torch.cuda.synchronize()  # expect: GPU105
    scheduler.step()

# %% valid: the end-of-step timer read after a few meter updates
import time
import torch

end = time.time()
for idx, (samples, targets) in enumerate(data_loader):
    outputs = model(samples.cuda(non_blocking=True))
    loss = criterion(outputs, targets.cuda(non_blocking=True))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    torch.cuda.synchronize()
    loss_meter.update(loss.item(), targets.size(0))
    if grad_norm is not None:
        norm_meter.update(grad_norm)
    scaler_meter.update(scale)
    batch_time.update(time.time() - end)
    end = time.time()

# %% invalid: a flag the guarded block turns off runs it once: info
import torch


class MetaArch:
    def __init__(self):
        self.need_to_synchronize_streams = True

    def train_step(self, images):
        loss = self.student(images.cuda()).mean()
        loss.backward()
        self.synchronize_streams()
        return loss.detach()

    def synchronize_streams(self):
        if self.need_to_synchronize_streams:
            torch.cuda.synchronize()  # expect: GPU105 info
            self.student.streams = self.teacher.streams
            self.need_to_synchronize_streams = False


def train(arch, loader, optimizer):
    for images in loader:
        arch.train_step(images)
        optimizer.step()

# %% valid: a longer logging block before the end-of-step timer
import time
import torch

end = time.time()
for idx, (samples, targets) in enumerate(data_loader):
    outputs, aux = model(samples.cuda(non_blocking=True))
    loss = criterion(outputs, targets.cuda(non_blocking=True)) + aux
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    torch.cuda.synchronize()
    loss_meter.update(loss.item(), targets.size(0))
    aux_meter.update(aux.item(), targets.size(0))
    cls_meter.update(loss.item() - aux.item(), targets.size(0))
    norm_meter.update(grad_norm)
    scaler_meter.update(scale)
    lr_meter.update(lr)
    batch_time.update(time.time() - end)
    end = time.time()

# %% invalid: training work between the synchronize and a far timer read
import time
import torch

end = time.time()
for samples, targets in data_loader:
    loss = criterion(model(samples.cuda()), targets.cuda())
    optimizer.zero_grad()
    loss.backward()
    torch.cuda.synchronize()  # expect: GPU105
    loss_meter.update(loss.item())
    aux_meter.update(aux)
    cls_meter.update(cls)
    norm_meter.update(grad_norm)
    optimizer.step()
    scheduler.step()
    lr_meter.update(lr)
    batch_time.update(time.time() - end)
    end = time.time()

# %% valid: the synchronize is all a device test holds, just before the end-of-step clock read
import time
import torch
for step in range(max_steps):
    t0 = time.time()
    x, y = next_batch()
    x, y = x.to(device), y.to(device)
    loss = model(x, y)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    if device_type == "cuda":
        torch.cuda.synchronize()  # wait for the step before reading the clock
    t1 = time.time()
    print(f"step {step} took {(t1 - t0) * 1000:.1f} ms")

# %% valid: a device dispatch chain whose arms only synchronize, just before the end-of-step clock read
import time
import torch
for step in range(max_steps):
    t0 = time.time()
    loss = model(*next_batch())
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    if device == "mps":
        torch.mps.synchronize()
    elif device == "cuda":
        torch.cuda.synchronize()
    t1 = time.time()
    print(f"step {step}: {(t1 - t0) * 1000:.1f} ms")

# %% invalid: the same chain with no clock read after it
import torch
for step in range(max_steps):
    loss = model(*next_batch())
    loss.backward()
    optimizer.step()
    if device == "mps":
        torch.mps.synchronize()
    elif device == "cuda":
        torch.cuda.synchronize()  # expect: GPU105

# %% invalid: the same device test with no clock read after it
import torch
for step in range(max_steps):
    x, y = next_batch()
    x, y = x.to(device), y.to(device)
    loss = model(x, y)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    if device_type == "cuda":
        torch.cuda.synchronize()  # expect: GPU105

# %% invalid: a device test holding more than the synchronize, before a clock read
import time
import torch
for step in range(max_steps):
    x, y = next_batch()
    loss = model(x.to(device), y.to(device))
    loss.backward()
    if device_type == "cuda":
        torch.cuda.synchronize()  # expect: GPU105
        optimizer.step()
        optimizer.zero_grad()
    t1 = time.time()

# %% valid: a synchronize at the end of a block the project's own timer measures
import time

import torch


class Timer:
    def __init__(self, msg):
        self.msg = msg
        self.start_time = None

    def __enter__(self):
        self.start_time = time.time()

    def __exit__(self, exc_type, exc_value, exc_tb):
        print(self.msg % (time.time() - self.start_time))


for images_a, images_b in zip(loader_a, loader_b):
    images_a, images_b = images_a.cuda().detach(), images_b.cuda().detach()
    with Timer("Elapsed time in update: %f"):
        trainer.dis_update(images_a, images_b, config)
        trainer.gen_update(images_a, images_b, config)
        gen_loss = trainer.loss_gen_total
        gen_loss.backward()
        trainer.gen_opt.step()
        torch.cuda.synchronize()

# %% valid: a synchronize before a CUDA timing event is recorded
import torch

for batch in train_dl:
    start_timer = torch.cuda.Event(enable_timing=True)
    end_timer = torch.cuda.Event(enable_timing=True)
    torch.cuda.synchronize()
    start_timer.record()
    loss = model(batch.cuda())
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    end_timer.record()

# %% valid: a synchronize between the records of timing events made before the loop
import torch

data_start = torch.cuda.Event(enable_timing=True)
data_end = torch.cuda.Event(enable_timing=True)
step_start = torch.cuda.Event(enable_timing=True)
step_end = torch.cuda.Event(enable_timing=True)
data_start.record()
for images, targets in train_loader:
    data_end.record()
    torch.cuda.synchronize()
    step_start.record()
    images, targets = images.cuda(), targets.cuda()
    loss = criterion(model(images), targets)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    meter.update(loss.detach())
    scheduler.step()
    ema.update(model)
    step_end.record()
    torch.cuda.synchronize()
    log({"fetch": data_start.elapsed_time(data_end), "run": step_start.elapsed_time(step_end)})
    data_start.record()

# %% invalid: the same loop where the recorded events are plain ones (no timing)
import torch

data_ready = torch.cuda.Event()
for images, targets in train_loader:
    images, targets = images.cuda(), targets.cuda()
    loss = criterion(model(images), targets)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    data_ready.record()
    torch.cuda.synchronize()  # expect: GPU105
    meter.update(loss.detach())

# %% valid: a synchronize helper each of whose calls is followed by a profiler's clock read
import time
import torch


class Profiler:
    def __init__(self):
        self.last = time.perf_counter()

    def tick(self, name):
        now = time.perf_counter()
        print(name, now - self.last)
        self.last = now


def sync(device):
    # For correct profiling: the GPU runs asynchronously.
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def train(model, loader, optimizer, device):
    profiler = Profiler()
    for x, y in loader:
        x, y = x.to(device), y.to(device)
        sync(device)
        profiler.tick("data")
        loss = model(x, y)
        sync(device)
        profiler.tick("forward")
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

# %% invalid: a synchronize helper one of whose calls times nothing
import time
import torch


def sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize(device)  # expect: GPU105


def train(model, loader, optimizer, device):
    for x, y in loader:
        x, y = x.to(device), y.to(device)
        t0 = time.perf_counter()
        loss = model(x, y)
        sync(device)
        print(time.perf_counter() - t0)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        sync(device)
