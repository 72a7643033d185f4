# GPU104 `data-dependent-sync-in-training-loop`: fixture. Sections start at `# %% valid:` (a look-alike that must
# stay silent) or `# %% invalid:` (every `# expect:` mark reported, nothing else). Each
# section is checked on its own, with this rule alone.

# %% invalid: NaN check on a tensor
import torch
for x, y in loader:
    x, y = x.cuda(), y.cuda()
    loss = criterion(model(x), y)
    if torch.isnan(loss):  # expect: GPU104
        continue
    loss.backward()
    optimizer.step()

# %% invalid: comparison and assert
for step, (x, y) in enumerate(loader):
    out = model(x.to(device))
    loss = criterion(out, y.to(device))
    loss.backward()
    optimizer.step()
    if loss > 10:  # expect: GPU104
        print("loss spike at", step)
    assert (out != 0).any(), "dead output"  # expect: GPU104

# %% invalid: boolean mask through a name, in a helper
import torch
def train_step(batch):
    logits = model(batch["input_ids"].cuda())
    labels = batch["labels"].cuda()
    keep = labels != -100
    loss = F.cross_entropy(logits[keep], labels[keep])  # expect: GPU104
    loss.backward()
    optimizer.step()
    return loss

for batch in train_loader:
    train_step(batch)

# %% invalid: data-dependent output sizes
import torch
for x, y in loader:
    x, y = x.cuda(), y.cuda()
    emb = model(x)
    pos = torch.nonzero(y == 1)  # expect: GPU104
    classes = y.unique()  # expect: GPU104
    idx = torch.where(y > 0)  # expect: GPU104
    sel = emb.masked_select(y[:, None] > 0)  # expect: GPU104
    loss = criterion(emb, y) + aux(pos, classes, idx, sel)
    loss.backward()
    optimizer.step()

# %% invalid: gated checks are info, also when a periodic test short-circuits them
import torch
for i, (x, y) in enumerate(loader):
    loss = criterion(model(x.cuda()), y.cuda())
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    if i % 100 == 0:
        if not torch.isfinite(loss).all():  # expect: GPU104 info
            print("non-finite loss")
    if i % 10 == 0 and loss > 5.0:  # expect: GPU104 info
        print("loss spike")

# %% invalid: while test
import torch
for x, y in loader:
    x = x.cuda()
    loss = model(x).mean()
    while not torch.isfinite(loss):  # expect: GPU104
        x = x * 0.5
        loss = model(x).mean()
    loss.backward()
    optimizer.step()

# %% invalid: inline mask and bare tensor test
for x, y in loader:
    x, y = x.cuda(), y.cuda()
    logits = model(x)
    loss = criterion(logits[y != -100], y[y != -100])  # expect: GPU104
    if loss:  # expect: GPU104
        loss.backward()
        optimizer.step()

# %% valid: tests on Python values
for step, (x, y) in enumerate(loader):
    x, y = x.cuda(), y.cuda()
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    if step > 0 and args.debug:
        print("debug step")

# %% valid: already a Python float (GPU101's finding)
for x, y in loader:
    loss = criterion(model(x.cuda()), y.cuda())
    loss.backward()
    optimizer.step()
    loss_value = loss.item()
    if loss_value > 10:
        print("spike")

# %% valid: integer and slice indexes
for x, y in loader:
    first = x[0]
    tail = x[:, 1:]
    picked = x[idx]
    x = x.cuda()
    loss = criterion(model(x), y.cuda())
    loss.backward()
    optimizer.step()

# %% valid: host-memory batch before it is moved
import torch
for x, y in loader:
    valid = y != -1
    x, y = x[valid], y[valid]
    if (y == 0).all():
        continue
    x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()

# %% valid: once per epoch
import torch
for epoch in range(epochs):
    for x, y in loader:
        loss = criterion(model(x.cuda()), y.cuda())
        loss.backward()
        optimizer.step()
    if torch.isnan(loss):
        break
    ids = torch.nonzero(loss > 1)

# %% valid: host-side random draw, `is None` tests
import torch
for x, y in loader:
    if torch.rand(1) < 0.5:
        x = x.flip(-1)
    if loss_fn is not None and outputs is not None:
        pass
    outputs = model(x.cuda())
    loss = loss_fn(outputs, y.cuda())
    loss.backward()
    optimizer.step()

# %% valid: NumPy and pandas
import numpy as np
import pandas as pd
for batch in loader:
    labels = np.asarray(batch["label"])
    classes = np.unique(labels)
    seen = frame["user"].unique()
    idx = labels.nonzero()
    loss = model(batch["x"].cuda()).mean()
    loss.backward()
    optimizer.step()

# %% valid: three-argument where, masked store
import torch
for x, y in loader:
    x, y = x.cuda(), y.cuda()
    out = model(x)
    out = torch.where(out > 0, out, torch.zeros_like(out))
    out[y == 0] = 0.0
    loss = criterion(out, y)
    loss.backward()
    optimizer.step()

# %% valid: Lightning step: no loop of ours
import lightning as L

class Net(L.LightningModule):
    def training_step(self, batch, batch_idx):
        x, y = batch
        logits = self(x)
        if (y == 0).all():
            return None
        return self.loss(logits[y != -100], y[y != -100])
