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
