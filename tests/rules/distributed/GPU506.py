# GPU506 `ddp-accumulation-without-no-sync`: fixture. Sections start at `# %% valid:` (a look-alike that must
# stay silent) or `# %% invalid:` (every `# expect:` mark reported, nothing else). Each
# section is checked on its own, with this rule alone.

# %% invalid: case
from torch.nn.parallel import DistributedDataParallel as DDP
model = DDP(net, device_ids=[rank])
for i, (x, y) in enumerate(loader):
    loss = criterion(model(x), y) / accum
    loss.backward()  # expect: GPU506
    if (i + 1) % accum == 0:
        optimizer.step()
        optimizer.zero_grad()

# %% invalid: GradScaler, combined test
import torch
from torch.nn.parallel import DistributedDataParallel as DDP
model = DDP(net, device_ids=[local_rank])
scaler = torch.amp.GradScaler()
for step, batch in enumerate(train_loader):
    with torch.autocast("cuda", dtype=torch.float16):
        loss = model(**batch).loss / args.gradient_accumulation_steps
    scaler.scale(loss).backward()  # expect: GPU506
    if (step + 1) % args.gradient_accumulation_steps == 0 or step == len(train_loader) - 1:
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad()

# %% invalid: flag computed from a modulo
from torch.nn.parallel import DistributedDataParallel as DDP
model = DDP(net)
for i, (x, y) in enumerate(loader):
    is_update = (i + 1) % accum == 0
    (criterion(model(x), y) / accum).backward()  # expect: GPU506
    if is_update:
        optimizer.step()
        optimizer.zero_grad()

# %% invalid: inner loop of micro-batches
from torch.nn.parallel import DistributedDataParallel as DDP
model = DDP(net, device_ids=[rank])
for it in range(max_iters):
    for micro in range(accum):
        x, y = next(batches)
        loss = model(x, y) / accum
        loss.backward()  # expect: GPU506
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)

# %% invalid: backward in a helper
from torch.nn.parallel import DistributedDataParallel
def train_step(model, batch, accum):
    loss = model(batch).mean() / accum
    loss.backward()  # expect: GPU506
    return loss
model = DistributedDataParallel(model)
for i, batch in enumerate(loader):
    train_step(model, batch, accum)
    if (i + 1) % accum == 0:
        optimizer.step()
        optimizer.zero_grad()

# %% invalid: continue-gated step in a method
from torch.nn.parallel import DistributedDataParallel as DDP
class Trainer:
    def __init__(self, net, rank):
        self.model = DDP(net.to(rank), device_ids=[rank])
    def train_epoch(self, loader):
        for i, batch in enumerate(loader):
            self.compute_loss(batch).backward()  # expect: GPU506
            if (i + 1) % self.accum_steps != 0:
                continue
            self.optimizer.step()
            self.optimizer.zero_grad()

# %% valid: no_sync through nullcontext
import contextlib
from torch.nn.parallel import DistributedDataParallel as DDP
model = DDP(net, device_ids=[rank])
for i, (x, y) in enumerate(loader):
    sync = (i + 1) % accum == 0
    ctx = contextlib.nullcontext() if sync else model.no_sync()
    with ctx:
        loss = criterion(model(x), y) / accum
        loss.backward()
    if sync:
        optimizer.step()
        optimizer.zero_grad()

# %% valid: no_sync on the micro-steps
from torch.nn.parallel import DistributedDataParallel as DDP
model = DDP(net, device_ids=[rank])
for i, (x, y) in enumerate(loader):
    if (i + 1) % accum != 0:
        with model.no_sync():
            (criterion(model(x), y) / accum).backward()
        continue
    (criterion(model(x), y) / accum).backward()
    optimizer.step()
    optimizer.zero_grad()

# %% valid: nanoGPT's require_backward_grad_sync
from torch.nn.parallel import DistributedDataParallel as DDP
model = DDP(net, device_ids=[ddp_local_rank])
for it in range(max_iters):
    for micro_step in range(grad_accum):
        model.require_backward_grad_sync = micro_step == grad_accum - 1
        loss = model(*get_batch()) / grad_accum
        loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)

# %% valid: steps every iteration
from torch.nn.parallel import DistributedDataParallel as DDP
model = DDP(net, device_ids=[rank])
for step, (x, y) in enumerate(loader):
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    if step % 100 == 0:
        log(loss)

# %% valid: Accelerate accumulates
from accelerate import Accelerator
from torch.nn.parallel import DistributedDataParallel
accelerator = Accelerator(gradient_accumulation_steps=4)
model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
for step, batch in enumerate(loader):
    with accelerator.accumulate(model):
        accelerator.backward(model(**batch).loss)
        if step % 4 == 0:
            optimizer.step()

# %% valid: FSDP
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
model = FSDP(net)
for i, batch in enumerate(loader):
    (model(batch).loss / accum).backward()
    if (i + 1) % accum == 0:
        optimizer.step()
        optimizer.zero_grad()

# %% valid: DataParallel has no all-reduce
import torch.nn as nn
model = nn.DataParallel(net)
for i, (x, y) in enumerate(loader):
    (criterion(model(x), y) / accum).backward()
    if (i + 1) % accum == 0:
        optimizer.step()
        optimizer.zero_grad()

# %% valid: GAN: one optimizer steps every iteration
from torch.nn.parallel import DistributedDataParallel as DDP
netD, netG = DDP(netD), DDP(netG)
for i, real in enumerate(loader):
    d_loss(netD, netG, real).backward()
    opt_d.step()
    if i % n_critic == 0:
        g_loss(netD, netG).backward()
        opt_g.step()

# %% valid: backward and step on every iteration, in the else of a scaler test; a modulo test elsewhere logs
import torch
from torch.nn.parallel import DistributedDataParallel as DDP

model = DDP(model.cuda())
for batch_idx, (input, target) in enumerate(loader):
    loss = loss_fn(model(input.cuda()), target.cuda())
    optimizer.zero_grad()
    if loss_scaler is not None:
        loss_scaler(loss, optimizer, parameters=model.parameters())
    else:
        loss.backward()
        optimizer.step()
    if batch_idx % args.log_interval == 0:
        print(f"step {batch_idx}")

# %% invalid: accumulation in one arm of a setting test, a step every iteration in the other
import torch
from torch.nn.parallel import DistributedDataParallel as DDP

model = DDP(model.cuda())
for idx, (samples, targets) in enumerate(data_loader):
    outputs = model(samples.cuda(non_blocking=True))
    if config.accumulation_steps > 1:
        loss = criterion(outputs, targets.cuda()) / config.accumulation_steps
        loss.backward()  # expect: GPU506
        if (idx + 1) % config.accumulation_steps == 0:
            optimizer.step()
            optimizer.zero_grad()
    else:
        loss = criterion(outputs, targets.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

# %% invalid: an option whose default is 1 is still loud when a launch may raise it (its default is 4)
import argparse
from torch.nn.parallel import DistributedDataParallel as DDP

parser = argparse.ArgumentParser()
parser.add_argument("--gradient_accumulation_steps", type=int, default=4)
args = parser.parse_args()
model = DDP(model.cuda())
for step, batch in enumerate(train_dataloader):
    loss = model(**batch).loss / args.gradient_accumulation_steps
    loss.backward()  # expect: GPU506
    if (step + 1) % args.gradient_accumulation_steps == 0:
        optimizer.step()
        optimizer.zero_grad()

# %% invalid: accumulation an option leaves at 1 unless the run asks for more
import argparse
from torch.nn.parallel import DistributedDataParallel as DDP

parser = argparse.ArgumentParser()
parser.add_argument("--gradient_accumulation_steps", type=int, default=1,
                    help="Number of updates steps to accumulate before a backward/update pass.")
args = parser.parse_args()
model = DDP(model.cuda())
for step, batch in enumerate(train_dataloader):
    loss = model(**batch).loss
    if args.gradient_accumulation_steps > 1:
        loss = loss / args.gradient_accumulation_steps
    loss.backward()  # expect: GPU506 info
    if (step + 1) % args.gradient_accumulation_steps == 0:
        optimizer.step()
        optimizer.zero_grad()
