# GPU202 `dataloader-without-workers`: fixture. Sections start at `# %% valid:` (a look-alike that must
# stay silent) or `# %% invalid:` (every `# expect:` mark reported, nothing else). Each
# section is checked on its own, with this rule alone.

# %% invalid: no num_workers
from torch.utils.data import DataLoader
loader = DataLoader(train_set, batch_size=32, shuffle=True)  # expect: GPU202
for x, y in loader:
    x, y = x.cuda(), y.cuda()
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()

# %% invalid: explicit zero, module alias
import torch.utils.data as tud
device = "cuda:0"
train_loader = tud.DataLoader(  # expect: GPU202
    train_set,
    batch_size=64,
    num_workers=0,
)
for batch in train_loader:
    batch = {k: v.to(device) for k, v in batch.items()}
    model(**batch).loss.backward()
    optimizer.step()

# %% invalid: kwargs dict without it
from torch.utils.data import DataLoader as DL
import torch
loader_kwargs = dict(batch_size=8, pin_memory=True)
loader = DL(ds, **loader_kwargs)  # expect: GPU202
def train(loader, device):
    for x, y in loader:
        loss = model(x.to(device), y.to(device))
        loss.backward()
        opt.step()
train(loader, torch.device("cuda"))

# %% invalid: unresolvable kwargs
from torch.utils.data.dataloader import DataLoader
loader = DataLoader(ds, batch_size=8, **cfg.loader_options)  # expect: GPU202 info
for x, y in loader:
    loss = model(x.cuda(non_blocking=True), y.cuda(non_blocking=True))
    loss.backward()
    optimizer.step()

# %% invalid: positional num_workers
from torch.utils.data import DataLoader
loader = DataLoader(images, 64, True, None, None, 0, None, True)  # expect: GPU202
for epoch in range(epochs):
    for x, y in loader:
        loss = criterion(model(x.cuda(non_blocking=True)), y.cuda(non_blocking=True))
        loss.backward()
        optimizer.step()

# %% invalid: built in a helper, moved by a helper, trained by a helper
import torch
from torch.utils.data import DataLoader
def make_loaders(train_ds, val_ds):
    train = DataLoader(train_ds, batch_size=64, shuffle=True, pin_memory=True)  # expect: GPU202
    val = DataLoader(val_ds, batch_size=64, num_workers=4)
    return train, val
def to_device(batch, device):
    return {k: v.to(device, non_blocking=True) for k, v in batch.items()}
def train_step(batch):
    model(**batch).loss.backward()
    optimizer.step()
train_loader, val_loader = make_loaders(a, b)
for batch in train_loader:
    train_step(to_device(batch, torch.device("cuda")))

# %% invalid: a training loop iterates it, whatever its name
from torch.utils.data import DataLoader
test_loader = DataLoader(test_set, batch_size=128)  # expect: GPU202
for x, y in test_loader:
    loss = criterion(model(x.cuda()), y.cuda())
    loss.backward()
    optimizer.step()

# %% valid: num_workers from argparse
from torch.utils.data import DataLoader
loader = DataLoader(ds, batch_size=32, shuffle=True, num_workers=args.workers)
for x, y in loader:
    x = x.cuda()

# %% valid: kwargs dict carries it; module alias
import torch.utils.data as tud
loader_kwargs = {"batch_size": 64, "num_workers": 8, "pin_memory": True}
loader = tud.DataLoader(train_set, shuffle=True, **loader_kwargs)
for x, y in loader:
    x = x.to("cuda", non_blocking=True)

# %% valid: in-memory TensorDataset: nothing to load
import torch
from torch.utils.data import DataLoader, TensorDataset
X, Y = torch.randn(512, 8), torch.randn(512, 1)
loader = DataLoader(TensorDataset(X, Y), batch_size=64, shuffle=True)
for x, y in loader:
    x, y = x.cuda(), y.cuda()

# %% valid: derived from IterableDataset
from torch.utils.data import DataLoader, IterableDataset

class TokenStream(IterableDataset):
    def __iter__(self):
        yield from read_shards()

class ShuffledStream(TokenStream):
    pass

loader = DataLoader(ShuffledStream(), batch_size=16)
for batch in loader:
    batch = batch.to("cuda")

# %% valid: validation loader
from torch.utils.data import DataLoader
train_loader = DataLoader(train_set, batch_size=64, shuffle=True, num_workers=4)
val_loader = DataLoader(val_set, batch_size=256)
for x, y in train_loader:
    x = x.cuda()

# %% valid: Lightning moves batches itself
import lightning as L
from torch.utils.data import DataLoader

class Data(L.LightningDataModule):
    def train_dataloader(self):
        return DataLoader(self.train_set, batch_size=64, shuffle=True)

trainer = L.Trainer(accelerator="cuda", devices=1)

# %% valid: Accelerate places batches (and no CUDA text)
from accelerate import Accelerator
from torch.utils.data import DataLoader
accelerator = Accelerator()
loader = DataLoader(ds, batch_size=16, shuffle=True)
model, opt, loader = accelerator.prepare(model, opt, loader)
for batch in loader:
    accelerator.backward(model(**batch).loss)
    opt.step()

# %% valid: CPU-only script
from torch.utils.data import DataLoader
loader = DataLoader(ds, batch_size=32)
for x, y in loader:
    out = model(x)

# %% valid: the dataset or collate_fn uses CUDA: workers could not
import torch
from torch.utils.data import DataLoader, Dataset

class OnDevice(Dataset):
    def __init__(self, table):
        self.table = table
    def __len__(self):
        return len(self.table)
    def __getitem__(self, i):
        return self.table[i].to("cuda")

def gpu_collate(items):
    return torch.stack(items).cuda()

a = DataLoader(OnDevice(rows), batch_size=64, shuffle=True)
b = DataLoader(rows, batch_size=64, shuffle=True, collate_fn=gpu_collate)
for x in a:
    x = x.cuda()

# %% valid: only an inference loop iterates it
import torch
from torch.utils.data import DataLoader
loader = DataLoader(images, batch_size=256)
with torch.inference_mode():
    for x in loader:
        preds.append(model(x.cuda()).argmax(1))
