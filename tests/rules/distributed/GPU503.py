# GPU503 `wrapped-model-state-dict-saved`: fixture. Sections start at `# %% valid:` (a look-alike that must
# stay silent) or `# %% invalid:` (every `# expect:` mark reported, nothing else). Each
# section is checked on its own, with this rule alone.

# %% invalid: case
import torch
from torch.nn.parallel import DistributedDataParallel as DDP
model = DDP(model, device_ids=[rank])
torch.save(model.state_dict(), "ckpt.pt")  # expect: GPU503

# %% invalid: checkpoint dict
import torch
import torch.nn as nn
model = nn.DataParallel(Net()).cuda()
checkpoint = {
    "epoch": epoch,
    "model": model.state_dict(),  # expect: GPU503
    "optimizer": optimizer.state_dict(),
}
torch.save(checkpoint, path)

# %% invalid: through a saving helper
import torch
from torch.nn.parallel import DistributedDataParallel
def save_checkpoint(state, path):
    torch.save(state, path)
def main():
    model = DistributedDataParallel(build_model())
    save_checkpoint({"model": model.state_dict()}, "last.pt")  # expect: GPU503

# %% invalid: wrapped only sometimes
import torch
from torch.nn.parallel import DistributedDataParallel as DDP
if args.distributed:
    model = DDP(model)
torch.save(model.state_dict(), "ckpt.pt")  # expect: GPU503

# %% invalid: attribute of a trainer class
import torch
from torch.nn.parallel import DistributedDataParallel as DDP
class Trainer:
    def __init__(self, model, rank):
        self.model = DDP(model.to(rank), device_ids=[rank])
    def save(self, path):
        state = self.model.state_dict()  # expect: GPU503
        torch.save(state, path)

# %% invalid: wrapped model passed to a helper
import torch
from torch.nn.parallel import DistributedDataParallel as DDP
def save(model, path):
    torch.save(model.state_dict(), path)  # expect: GPU503
ddp_model = DDP(net)
save(ddp_model, "a.pt")

# %% valid: already unwrapped
import torch
from torch.nn.parallel import DistributedDataParallel as DDP
model = DDP(model)
torch.save(model.module.state_dict(), "ckpt.pt")

# %% valid: saved before wrapping, other name
import torch
from torch.nn.parallel import DistributedDataParallel as DDP
net = Net()
torch.save(net.state_dict(), "init.pt")
model = DDP(net)

# %% valid: never wrapped
import torch
model = Net()
torch.save({"model": model.state_dict()}, "ckpt.pt")

# %% valid: Accelerate unwrap
import torch
from accelerate import Accelerator
accelerator = Accelerator()
model = accelerator.prepare(model)
torch.save(accelerator.unwrap_model(model).state_dict(), "ckpt.pt")

# %% valid: same name, saved before wrapping
import torch
from torch.nn.parallel import DistributedDataParallel as DDP
model = Net()
torch.save(model.state_dict(), "init.pt")
model = DDP(model)

# %% valid: state dict not saved
import torch.nn as nn
model = nn.DataParallel(model)
sd = model.state_dict()
print(len(sd))

# %% valid: unwrapped with a conditional expression
import torch
from torch.nn.parallel import DistributedDataParallel as DDP
if ddp:
    model = DDP(model, device_ids=[local_rank])
raw_model = model.module if ddp else model
torch.save({"model": raw_model.state_dict(), "iter": it}, "ckpt.pt")

# %% valid: hasattr unwrap
import torch
import torch.nn as nn
model = nn.parallel.DistributedDataParallel(model, device_ids=[rank])
to_save = model.module if hasattr(model, "module") else model
torch.save(to_save.state_dict(), "m.pt")
