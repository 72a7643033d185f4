# GPU205 `invalid-dataloader-arguments`: fixture. Sections start at `# %% valid:` (a look-alike that must
# stay silent) or `# %% invalid:` (every `# expect:` mark reported, nothing else). Each
# section is checked on its own, with this rule alone.

# %% invalid: shuffle next to a sampler
from torch.utils.data import DataLoader, DistributedSampler
sampler = DistributedSampler(train_set)
loader = DataLoader(train_set, batch_size=64, shuffle=True, sampler=sampler)  # expect: GPU205

# %% invalid: persistent workers without workers (its comment stays)
from torch.utils.data import DataLoader
loader = DataLoader(
    ds,
    batch_size=32,
    num_workers=0,
    persistent_workers=True,  # expect: GPU205
)

# %% invalid: prefetch_factor with no num_workers
import torch.utils.data as tud
loader = tud.DataLoader(ds, batch_size=32, prefetch_factor=4)  # expect: GPU205

# %% invalid: batch_size next to a batch_sampler
from torch.utils.data import BatchSampler, DataLoader, SequentialSampler
batches = BatchSampler(SequentialSampler(ds), batch_size=64, drop_last=False)
loader = DataLoader(ds, batch_size=64, batch_sampler=batches)  # expect: GPU205

# %% invalid: drop_last and sampler next to a batch_sampler; the sampler conflict has no automatic fix
from torch.utils.data import DataLoader, RandomSampler
loader = DataLoader(
    ds,
    batch_sampler=BucketBatchSampler(ds, max_tokens=4096),
    drop_last=True,  # expect: GPU205
    sampler=RandomSampler(ds),  # expect: GPU205
)

# %% invalid: shuffle for an IterableDataset; negative worker count
from torch.utils.data import DataLoader, IterableDataset

class Shards(IterableDataset):
    def __iter__(self):
        yield from range(10)

loader = DataLoader(Shards(), batch_size=8, shuffle=True)  # expect: GPU205
workers = DataLoader(Shards(), batch_size=8, num_workers=-1)  # expect: GPU205

# %% invalid: positional shuffle becomes False
from torch.utils.data import DataLoader, RandomSampler
from torch.utils.data.distributed import DistributedSampler
loader = DataLoader(ds, 64, True, DistributedSampler(ds))  # expect: GPU205

# %% valid: the usual guarded sampler
from torch.utils.data import DataLoader, DistributedSampler
sampler = DistributedSampler(ds) if distributed else None
loader = DataLoader(ds, batch_size=32, shuffle=(sampler is None), sampler=sampler)

# %% valid: workers present
from torch.utils.data import DataLoader
loader = DataLoader(ds, batch_size=32, num_workers=4, prefetch_factor=4, persistent_workers=True)

# %% valid: values from argparse
from torch.utils.data import DataLoader
loader = DataLoader(
    ds,
    batch_size=32,
    num_workers=args.workers,
    persistent_workers=args.workers > 0,
    prefetch_factor=2 if args.workers else None,
)

# %% valid: workers in a kwargs dict; unresolvable kwargs
import torch.utils.data as tud
kw = {"num_workers": 4, "pin_memory": True}
loader = tud.DataLoader(ds, batch_size=32, persistent_workers=True, **kw)
loader2 = tud.DataLoader(ds, batch_size=32, persistent_workers=True, **cfg.loader)

# %% valid: batch_sampler alone (or with the default batch size)
from torch.utils.data import BatchSampler, DataLoader, RandomSampler
batches = BatchSampler(RandomSampler(ds), batch_size=64, drop_last=True)
loader = DataLoader(ds, batch_sampler=batches, num_workers=4)
one = DataLoader(ds, batch_size=1, batch_sampler=batches)

# %% valid: shuffle=False with a sampler; prefetch_factor=None
from torch.utils.data import DataLoader
loader = DataLoader(ds, batch_size=32, shuffle=False, sampler=my_sampler, prefetch_factor=None)

# %% valid: Lightning data module with an expression for shuffle
import lightning as L
from torch.utils.data import DataLoader

class Data(L.LightningDataModule):
    def train_dataloader(self):
        sampler = self.sampler
        return DataLoader(self.ds, batch_size=64, shuffle=sampler is None, sampler=sampler)

# %% invalid: persistent workers while the worker option defaults to none: no automatic fix
import argparse
from torch.utils.data import DataLoader
parser = argparse.ArgumentParser()
parser.add_argument("--workers", type=int, default=0)
args = parser.parse_args()
loader = DataLoader(ds, batch_size=32, num_workers=args.workers, persistent_workers=True)  # expect: GPU205

# %% invalid: no workers read from a settings dict
from torch.utils.data import DataLoader
CFG = {"num_workers": 0, "prefetch": 4}
loader = DataLoader(ds, batch_size=32, num_workers=CFG["num_workers"], prefetch_factor=4)  # expect: GPU205

# %% valid: an option's default with workers; a negative default means "all cores" to the script
import argparse
from torch.utils.data import DataLoader
parser = argparse.ArgumentParser()
parser.add_argument("--workers", type=int, default=4)
parser.add_argument("--cores", type=int, default=-1)
args = parser.parse_args()
loader = DataLoader(ds, batch_size=32, num_workers=args.workers, persistent_workers=True, prefetch_factor=4)
cores = os.cpu_count() if args.cores < 0 else args.cores
other = DataLoader(ds, batch_size=32, num_workers=cores)
