# GPU507 `same-seed-on-every-rank`: fixture. Sections start at `# %% valid:` (a look-alike that must
# stay silent) or `# %% invalid:` (every `# expect:` mark reported, nothing else). Each
# section is checked on its own, with this rule alone.

# %% invalid: case
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
dist.init_process_group("nccl")
torch.manual_seed(42)  # expect: GPU507 info
model = DDP(Net().to(rank), device_ids=[rank])

# %% invalid: module constant, reported once
import random
import numpy as np
import torch
import torch.distributed as dist
SEED = 2024
def main():
    dist.init_process_group("nccl")
    random.seed(SEED)  # expect: GPU507 info
    np.random.seed(SEED)
    torch.cuda.manual_seed_all(SEED)

# %% invalid: seeding helper of the file
import random
import numpy as np
import torch
from torch.nn.parallel import DistributedDataParallel
def seed_everything(seed=0):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
seed_everything(7)  # expect: GPU507 info
model = DistributedDataParallel(model)

# %% invalid: transformers.set_seed
import torch
import torch.distributed as dist
from transformers import set_seed
dist.init_process_group(backend="nccl")
set_seed(13)  # expect: GPU507 info

# %% invalid: imported names
from torch import manual_seed
from torch.distributed import init_process_group
init_process_group("nccl")
manual_seed(-1)  # expect: GPU507 info

# %% invalid: rank known but not used in the seed
import torch
import torch.distributed as dist
class Trainer:
    def __init__(self, cfg):
        dist.init_process_group("nccl")
        self.rank = dist.get_rank()
        torch.manual_seed(0)  # expect: GPU507 info

# %% valid: rank term
import torch
import torch.distributed as dist
dist.init_process_group("nccl")
rank = dist.get_rank()
torch.manual_seed(1234 + rank)

# %% valid: seeding helper called with a rank term
import random
import numpy as np
import torch
import torch.distributed as dist
def set_seed(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
dist.init_process_group("nccl")
set_seed(42 + dist.get_rank())

# %% valid: reseeded per rank after building the model
import torch
import torch.distributed as dist
SEED = 0
dist.init_process_group("nccl")
torch.manual_seed(SEED)
model = DDP(Net().cuda(local_rank))
torch.manual_seed(SEED + local_rank)

# %% valid: nanoGPT's seed_offset
import torch
import torch.distributed as dist
master_process = ddp_rank == 0
seed_offset = ddp_rank
dist.init_process_group("nccl")
torch.manual_seed(1337 + seed_offset)

# %% valid: not distributed
import torch
torch.manual_seed(42)
model = Net().cuda()

# %% valid: a generator that must match on every rank
import torch
import torch.distributed as dist
dist.init_process_group("nccl")
g = torch.Generator().manual_seed(0)
perm = torch.randperm(len(dataset), generator=g)

# %% valid: seed from the command line
import torch
from torch.nn.parallel import DistributedDataParallel as DDP
torch.manual_seed(args.seed)
model = DDP(Net().to(rank), device_ids=[rank])

# %% valid: Accelerate's per-device seed
from accelerate import Accelerator
from accelerate.utils import set_seed
from torch.nn.parallel import DistributedDataParallel
set_seed(42, device_specific=True)
