# GPU504 `checkpoint-saved-on-every-rank`: fixture. Sections start at `# %% valid:` (a look-alike that must
# stay silent) or `# %% invalid:` (every `# expect:` mark reported, nothing else). Each
# section is checked on its own, with this rule alone.

# %% invalid: case
import torch
import torch.distributed as dist
dist.init_process_group("nccl")
for epoch in range(epochs):
    train(model)
    torch.save(model.module.state_dict(), f"epoch_{epoch}.pt")  # expect: GPU504

# %% invalid: one call site of the helper is not guarded
import torch
from torch.nn.parallel import DistributedDataParallel as DDP
def save_checkpoint(model, optimizer, path):
    state = {"model": model.module.state_dict(), "optim": optimizer.state_dict()}
    torch.save(state, path)  # expect: GPU504
model = DDP(net, device_ids=[local_rank])
for epoch in range(args.epochs):
    train(model)
    if local_rank == 0:
        save_checkpoint(model, optimizer, "best.pt")
save_checkpoint(model, optimizer, "last.pt")

# %% invalid: a periodic test is not a rank test
import torch
import torch.distributed as dist
def main():
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    for epoch in range(args.epochs):
        train(model)
        if epoch % args.save_every == 0:
            torch.save(model.module.state_dict(), "ckpt.pt")  # expect: GPU504

# %% invalid: a trainer method called unguarded
import torch
from torch import distributed as dist
from torch.nn.parallel import DistributedDataParallel
class Trainer:
    def __init__(self, model):
        self.model = DistributedDataParallel(model)
    def save(self, path):
        torch.save(  # expect: GPU504
            {"model": self.model.module.state_dict(), "epoch": self.epoch},
            path,
        )
    def fit(self):
        for epoch in range(self.epochs):
            self.train_epoch()
            self.save("last.pt")

# %% invalid: the guard covers only the print
import torch
import torch.distributed as dist
def save_checkpoint(state, path):
    if dist.get_rank() == 0:
        print("saving", path)
    torch.save(state, path)  # expect: GPU504
dist.init_process_group("nccl")
save_checkpoint(state, "a.pt")

# %% invalid: helper with no call site in the file
import torch
import torch.distributed as dist
def dump_checkpoint(state, path):
    torch.save(state, path)  # expect: GPU504 info
dist.init_process_group("nccl")

# %% invalid: the early return leaves rank 0 out, not the others
import torch
import torch.distributed as dist
def save(model, path, rank):
    if rank == 0:
        return
    torch.save(model.state_dict(), path)  # expect: GPU504
dist.init_process_group("nccl")
save(model, "m.pt", dist.get_rank())

# %% valid: rank-0 guard
import torch
import torch.distributed as dist
dist.init_process_group("nccl")
rank = dist.get_rank()
for epoch in range(epochs):
    train(model)
    if rank == 0:
        torch.save(model.module.state_dict(), "ckpt.pt")

# %% valid: every call site of the helper is guarded
import torch
import torch.distributed as dist
def save_checkpoint(state, path):
    torch.save(state, path)
def main():
    dist.init_process_group("nccl")
    for epoch in range(args.epochs):
        train(model)
        if dist.get_rank() == 0:
            save_checkpoint({"model": model.module.state_dict()}, "last.pt")

# %% valid: early return off rank 0
import torch
import torch.distributed as dist
def save_checkpoint(model, path):
    if dist.get_rank() != 0:
        return
    torch.save(model.module.state_dict(), path)
dist.init_process_group("nccl")
save_checkpoint(model, "last.pt")

# %% valid: `local_rank in (-1, 0)` from argparse
import torch
from torch.nn.parallel import DistributedDataParallel as DDP
model = DDP(net, device_ids=[args.local_rank])
if args.local_rank in (-1, 0):
    torch.save(model.module.state_dict(), args.out)

# %% valid: Accelerate saves on the main process
import torch
from accelerate import Accelerator
accelerator = Accelerator()
model = accelerator.prepare(model)
accelerator.wait_for_everyone()
accelerator.save(accelerator.unwrap_model(model).state_dict(), "model.pt")

# %% valid: one file per rank
import torch
import torch.distributed as dist
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
dist.init_process_group("nccl")
rank = dist.get_rank()
model = FSDP(net)
torch.save(model.state_dict(), f"ckpt/shard_rank{rank}.pt")

# %% valid: not a distributed script
import torch
def export(model, path):
    torch.save(model.state_dict(), path)
export(model, "model.pt")

# %% valid: rank_zero_only decorator
import torch
import torch.distributed as dist
from lightning.pytorch.utilities import rank_zero_only
@rank_zero_only
def dump(state, path):
    torch.save(state, path)
dist.init_process_group("nccl")
dump(state, "s.pt")

# %% valid: method guarded at its call site
import torch
import torch.distributed as dist
class Trainer:
    def __init__(self):
        dist.init_process_group("nccl")
        self.is_main = dist.get_rank() == 0
    def save(self, path):
        torch.save(self.model.module.state_dict(), path)
    def fit(self):
        for epoch in range(self.epochs):
            self.train_epoch()
            if self.is_main:
                self.save("last.pt")

# %% valid: mp.spawn worker guarded by its device index
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
def worker(gpu, args):
    dist.init_process_group("nccl", rank=gpu, world_size=args.world_size)
    for epoch in range(args.epochs):
        train(model, gpu)
        if gpu == 0:
            torch.save(model.module.state_dict(), "model.pt")
mp.spawn(worker, args=(args,), nprocs=args.world_size)

# %% valid: saved in a helper two and three calls below the rank-0 test
import io
import torch
import torch.distributed as dist
from storage import upload_bytes
class Trainer:
    def __init__(self, model, local_rank):
        dist.init_process_group("nccl")
        self.local_rank = local_rank
        self.model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[local_rank])
    def _write(self, snapshot, path):
        buffer = io.BytesIO()
        torch.save(snapshot, buffer)
        upload_bytes(buffer.getvalue(), path)
    def _upload(self, snapshot, path):
        self._write(snapshot, path)
    def _save_snapshot(self, epoch):
        snapshot = {"model": self.model.module.state_dict(), "epoch": epoch}
        self._upload(snapshot, self.snapshot_path)
    def train(self, max_epochs):
        for epoch in range(max_epochs):
            self._run_epoch(epoch)
            if self.local_rank == 0 and epoch % self.save_every == 0:
                self._save_snapshot(epoch)

# %% invalid: two calls up, one of the paths is not guarded
import torch
import torch.distributed as dist
def write_checkpoint(state, path):
    torch.save(state, path)  # expect: GPU504
def save_snapshot(model, epoch):
    write_checkpoint({"model": model.module.state_dict(), "epoch": epoch}, f"epoch{epoch}.pt")
def main():
    dist.init_process_group("nccl")
    for epoch in range(args.epochs):
        train_one_epoch(model)
        if dist.get_rank() == 0:
            save_snapshot(model, epoch)
    save_snapshot(model, args.epochs)

# %% invalid: the rank-0 test is four calls up: too far to trust
import torch
import torch.distributed as dist
def write(state, path):
    torch.save(state, path)  # expect: GPU504
def level1(state):
    write(state, "a.pt")
def level2(state):
    level1(state)
def level3(state):
    level2(state)
def main():
    dist.init_process_group("nccl")
    if dist.get_rank() == 0:
        level3({"w": 1})

# %% valid: a rank constant of the module tested against a set literal
import os
import torch
from torch.nn.parallel import DistributedDataParallel as DDP

RANK = int(os.getenv("RANK", -1))


def train(model, loader, optimizer, epochs):
    model = DDP(model.cuda())
    for epoch in range(epochs):
        for x, y in loader:
            loss = model(x.cuda()).sum()
            loss.backward()
            optimizer.step()
        if RANK in {-1, 0}:
            ckpt = {"epoch": epoch, "model": model.module.state_dict()}
            torch.save(ckpt, "last.pt")

# %% valid: a flag bound to a rank test, and a save hook that refuses to run on more than one process
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def is_master(args):
    return args.rank == 0


def save_screening_checkpoint(model, path, step):
    if not path:
        return
    if dist.get_world_size() != 1:
        raise RuntimeError("a single-GPU screening hook: run with one process")
    torch.save({"step": step, "model": model.state_dict()}, path)


def main(args, model, loader, optimizer):
    dist.init_process_group("nccl")
    model = DDP(model.cuda())
    args.save_logs = args.logs and args.logs.lower() != "none" and is_master(args)
    for epoch in range(args.epochs):
        for x, y in loader:
            loss = model(x.cuda()).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if args.save_logs:
            torch.save({"state_dict": model.module.state_dict()}, "latest.pt")
        save_screening_checkpoint(model.module, args.screen_path, epoch)

# %% invalid: a flag that is not a rank test, and a world-size test that lets every rank through
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def save_hook(model, path):
    if dist.get_world_size() == 1:
        raise RuntimeError("needs several processes")
    torch.save(model.state_dict(), path)  # expect: GPU504


def main(args, model, loader, optimizer):
    dist.init_process_group("nccl")
    model = DDP(model.cuda())
    args.save_logs = args.logs and args.logs.lower() != "none"
    for epoch in range(args.epochs):
        for x, y in loader:
            loss = model(x.cuda()).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if args.save_logs:
            torch.save({"state_dict": model.module.state_dict()}, "latest.pt")  # expect: GPU504
        save_hook(model.module, args.path)

# %% valid: a periodic save under a master flag set from the rank in the same worker
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def save_checkpoint(path, epoch, model, optimizer):
    torch.save({"epoch": epoch, "state_dict": model.module.state_dict(), "optimizer": optimizer.state_dict()}, path)


def main_worker(index, opt):
    dist.init_process_group("nccl", rank=opt.dist_rank, world_size=opt.world_size)
    opt.is_master_node = not opt.distributed or opt.dist_rank == 0
    model = DDP(build_model(opt).cuda())
    optimizer = torch.optim.SGD(model.parameters(), lr=opt.lr)
    for i in range(opt.begin_epoch, opt.n_epochs + 1):
        train_epoch(i, loader, model, optimizer)
        if i % opt.checkpoint == 0 and opt.is_master_node:
            save_checkpoint(f"save_{i}.pth", i, model, optimizer)

# %% valid: a state saved into an in-memory buffer to be read back, on every rank
import io

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def load_for_ema(model_ema, checkpoint):
    buffer = io.BytesIO()
    torch.save(checkpoint, buffer)
    buffer.seek(0)
    model_ema.load(buffer)


def main(model, checkpoint):
    dist.init_process_group("nccl")
    model = DDP(model.cuda())
    load_for_ema(model, checkpoint)

# %% valid: the saving helper's caller returns off rank 0 part-way, before it calls the helper
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


class Trainer:
    def __init__(self, model):
        dist.init_process_group("nccl")
        self.distributed_rank = dist.get_rank()
        self.model = DDP(model.cuda())

    def save_checkpoint(self, epoch, paths):
        checkpoint = {"epoch": epoch, "model": self.model.module.state_dict()}
        # DDP replicas are identical: rank 0 writes for all
        if self.distributed_rank != 0:
            return
        for path in paths:
            self._save_checkpoint(checkpoint, path)

    def _save_checkpoint(self, checkpoint, path):
        with open(path + ".tmp", "wb") as f:
            torch.save(checkpoint, f)

# %% valid: the rank kept in the run's settings dict, tested by key
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


class Trainer:
    def __init__(self, config, net):
        self.config = config
        dist.init_process_group("nccl", rank=config["global_rank"], world_size=config["world_size"])
        self.net = DDP(net.cuda(), device_ids=[config["local_rank"]])

    def save(self, it):
        if self.config["global_rank"] == 0:
            path = f"{self.config['save_dir']}/net_{it:05d}.pth"
            torch.save({"net": self.net.module.state_dict()}, path)


    def fit(self, loader, optimizer, iterations):
        for it, (x, y) in enumerate(loader):
            loss = torch.nn.functional.mse_loss(self.net(x.cuda()), y.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            self.save(it)

# %% invalid: a key of the same dict that holds something else than the rank
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


class Trainer:
    def __init__(self, config, net):
        self.config = config
        dist.init_process_group("nccl", rank=config["global_rank"], world_size=config["world_size"])
        self.net = DDP(net.cuda(), device_ids=[config["local_rank"]])

    def save(self, it):
        if self.config["save_every"] > 0:
            path = f"{self.config['save_dir']}/net_{it:05d}.pth"
            torch.save({"net": self.net.module.state_dict()}, path)  # expect: GPU504


    def fit(self, loader, optimizer, iterations):
        for it, (x, y) in enumerate(loader):
            loss = torch.nn.functional.mse_loss(self.net(x.cuda()), y.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            self.save(it)

# %% valid: the save helper runs only on the process whose GPU index (the local rank) is 0
import torch


class Trainer:
    def __init__(self, model, gpu_index):
        self.GPU_INDEX = gpu_index
        self.model = torch.nn.parallel.DistributedDataParallel(model.cuda(gpu_index), device_ids=[gpu_index])

    def save_checkpoints(self, epoch):
        torch.save({"epoch": epoch, "model": self.model.module.state_dict()}, "latest.pth")

    def run(self, loader, optimizer):
        for epoch in range(100):
            for x in loader:
                loss = self.model(x.cuda(self.GPU_INDEX, non_blocking=True)).mean()
                optimizer.zero_grad(set_to_none=True)
                loss.backward()
                optimizer.step()
            if self.GPU_INDEX == 0:
                self.save_checkpoints(epoch)

# %% valid: a flag set true only on rank 0 of a distributed launch, or in a single-process run
import torch
import torch.distributed as dist


def main(args, model, loader, optimizer):
    default_gpu = False
    if dist.is_available() and args.local_rank != -1:
        dist.init_process_group(backend="nccl")
        rank = dist.get_rank()
        if rank == 0:
            default_gpu = True
    else:
        default_gpu = True
    for epoch in range(args.epochs):
        for x, y in loader:
            loss = model(x.cuda(), y.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if default_gpu:
            torch.save(model.module.state_dict(), f"model_{epoch}.bin")


# %% valid: saves on rank 0 when the script starts the process group, and in the `else` of that same test
import os

import torch


class Engine:
    def __init__(self, model, optimizer, logdir):
        self.model, self.optimizer, self.logdir = model, optimizer, logdir

    def save(self):
        torch.save(self.model.state_dict(), os.path.join(self.logdir, "model.pth"))
        torch.save(self.optimizer.state_dict(), os.path.join(self.logdir, "optimizer.pth"))


def main(args, build_model, loader):
    parallel = bool(args.parallel_training)
    if (parallel == True):
        rank = int(os.environ["RANK"])
        torch.distributed.init_process_group(backend="nccl", init_method="env://")
    else:
        rank = 0
    model = build_model().cuda()
    if parallel == True:
        model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    engine = Engine(model, optimizer, args.logdir)
    for epoch in range(args.epochs):
        for x, y in loader:
            loss = torch.nn.functional.mse_loss(model(x.cuda(non_blocking=True)), y.cuda(non_blocking=True))
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
        if parallel == True:
            torch.distributed.barrier()
            if rank == 0:
                engine.save()
        else:
            engine.save()

# %% invalid: the `else` of a test that has nothing to do with the process group runs on every rank
import torch


def main(args, model, loader, optimizer):
    torch.distributed.init_process_group(backend="nccl")
    model = torch.nn.parallel.DistributedDataParallel(model.cuda())
    for epoch in range(args.epochs):
        for x, y in loader:
            loss = model(x.cuda(non_blocking=True)).mean()
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
        if args.keep_all:
            torch.save(model.module.state_dict(), f"model_{epoch}.pth")  # expect: GPU504
        else:
            torch.save(model.module.state_dict(), "model.pth")  # expect: GPU504

# %% invalid: the worker runs directly in the `else` of the launch test, and spawned on every rank in its true arm
import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def main_worker(gpu, ngpus, args, model, loader, optimizer):
    if args.dist == "ddp":
        dist.init_process_group(backend="nccl", rank=gpu, world_size=ngpus)
        model = torch.nn.parallel.DistributedDataParallel(model.cuda(gpu), device_ids=[gpu])
    for x, y in loader:
        loss = model(x.cuda(gpu, non_blocking=True)).mean()
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
    torch.save(model.state_dict(), "checkpoint.pth.tar")  # expect: GPU504


def main(args, model, loader, optimizer):
    ngpus = torch.cuda.device_count()
    if args.dist == "ddp":
        mp.spawn(main_worker, args=(ngpus, args, model, loader, optimizer), nprocs=ngpus)
    else:
        main_worker(0, 1, args, model, loader, optimizer)

# %% valid: the XLA main ordinal saves
import torch
import torch.distributed as dist
import torch_xla.core.xla_model as xm
dist.init_process_group("nccl")
for epoch in range(epochs):
    train(model)
    if xm.is_master_ordinal():
        torch.save(model.module.state_dict(), "ckpt.pt")

# %% valid: a Trainer's arguments hold `should_save` on the main process only
import torch
import torch.distributed as dist
dist.init_process_group("nccl")
for epoch in range(epochs):
    train(model)
    if args.should_save:
        torch.save(model.module.state_dict(), f"epoch_{epoch}.pt")

# %% invalid: the callbacks' `control.should_save` is a schedule that every rank follows
import torch
import torch.distributed as dist
dist.init_process_group("nccl")
for epoch in range(epochs):
    train(model)
    if control.should_save:
        torch.save(model.module.state_dict(), f"epoch_{epoch}.pt")  # expect: GPU504

# %% valid: a save under `if not args.distributed:` (the single-process side of the launch switch) runs on one process
import os

import torch


def main(args, build_model, loader):
    args.distributed = int(os.environ.get("WORLD_SIZE", 1)) > 1
    if args.distributed:
        torch.distributed.init_process_group(backend="nccl", init_method="env://")
    model = build_model().cuda()
    if args.distributed:
        model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[args.local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    for epoch in range(args.epochs):
        for x, y in loader:
            loss = model(x.cuda(), y.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if not args.distributed:
            torch.save(model.state_dict(), "checkpoint.pth")

# %% valid: a helper that returns at once unless it runs on rank 0, or for another reason
import os
import torch
import torch.distributed as dist


class Saver:
    def __init__(self, args):
        self.args = args

    def is_world_process_zero(self):
        return dist.get_rank() == 0

    def push_checkpoint(self, folder):
        if not self.is_world_process_zero() or self.args.hub_strategy == "end":
            return
        torch.save(self.args, os.path.join(folder, "training_args.bin"))


def train(args, model, loader, optimizer):
    dist.init_process_group("nccl")
    model = torch.nn.parallel.DistributedDataParallel(model.cuda())
    saver = Saver(args)
    for step, (x, y) in enumerate(loader):
        loss = model(x.cuda(), y.cuda())
        loss.backward()
        optimizer.step()
        saver.push_checkpoint(args.output_dir)

# %% valid: a flag set to the process index test in the multi-process branch of a spawned worker
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.nn.parallel import DistributedDataParallel as DDP


def train(gpu, opt, output_dir):
    if opt.distribution_type == "multi":
        dist.init_process_group("nccl", rank=gpu, world_size=opt.world_size)
        should_diag = gpu == 0
    else:
        should_diag = True
    model = DDP(torch.nn.Linear(8, 8).cuda(gpu), device_ids=[gpu])
    for epoch in range(opt.epochs):
        if (epoch + 1) % opt.save_iter == 0:
            if should_diag:
                torch.save(model.module.state_dict(), f"{output_dir}/epoch_{epoch}.pth")


def main(opt):
    mp.spawn(train, nprocs=opt.gpus, args=(opt, "out"))

# %% invalid: the same test of a device index in a worker every process calls itself
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def train(gpu, opt, output_dir):
    dist.init_process_group("nccl", init_method="env://")
    should_diag = gpu == 0
    model = DDP(torch.nn.Linear(8, 8).cuda(gpu), device_ids=[gpu])
    for epoch in range(opt.epochs):
        if should_diag:
            torch.save(model.module.state_dict(), f"{output_dir}/epoch_{epoch}.pth")  # expect: GPU504


def main(opt):
    train(opt.gpu, opt, "out")

# %% invalid: the run's parsed options saved beside the checkpoint on every rank are a few hundred bytes; the checkpoint itself is reported
import argparse
import os

import torch
import torch.distributed as dist

parser = argparse.ArgumentParser()
parser.add_argument("--output_dir", default="runs")
parser.add_argument("--local_rank", type=int, default=-1)


def main():
    args = parser.parse_args()
    dist.init_process_group("nccl")
    model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(8, 2).cuda(), device_ids=[args.local_rank])
    torch.save(args, os.path.join(args.output_dir, "run_args.bin"))
    torch.save(model.module.state_dict(), os.path.join(args.output_dir, "model.pt"))  # expect: GPU504


if __name__ == "__main__":
    main()

# %% valid: a helper that saves under an option `main()` sets from a rank test
import argparse
import os

import torch
import torch.distributed as dist


def is_master(args):
    return args.rank == 0


def save_checkpoint(args, model, epoch):
    if args.save_logs:
        torch.save({"epoch": epoch, "state_dict": model.module.state_dict()}, os.path.join(args.logs, f"epoch_{epoch}.pt"))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--logs", default="./logs")
    parser.add_argument("--epochs", type=int, default=10)
    args = parser.parse_args()
    dist.init_process_group("nccl")
    args.rank = dist.get_rank()
    args.save_logs = args.logs and args.logs.lower() != "none" and is_master(args)
    model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(8, 2).cuda())
    for epoch in range(args.epochs):
        save_checkpoint(args, model, epoch)


if __name__ == "__main__":
    main()

# %% invalid: the same helper where the option is set on every rank
import argparse
import os

import torch
import torch.distributed as dist


def save_checkpoint(args, model, epoch):
    if args.save_logs:
        torch.save({"epoch": epoch, "state_dict": model.module.state_dict()}, os.path.join(args.logs, f"epoch_{epoch}.pt"))  # expect: GPU504


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--logs", default="./logs")
    parser.add_argument("--epochs", type=int, default=10)
    args = parser.parse_args()
    dist.init_process_group("nccl")
    args.save_logs = args.logs and args.logs.lower() != "none"
    model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(8, 2).cuda())
    for epoch in range(args.epochs):
        save_checkpoint(args, model, epoch)


if __name__ == "__main__":
    main()

# %% valid: a flag set true, then to a comparison of the RANK variable converted with int() in a distributed run
import os
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel


def init_distributed(args):
    if "WORLD_SIZE" not in os.environ or int(os.environ["WORLD_SIZE"]) < 1:
        return False
    dist.init_process_group(backend="nccl", init_method="env://")
    return True


def main(args, model, loader, opt):
    is_distributed = init_distributed(args)
    master = True
    if is_distributed and os.environ["RANK"]:
        master = int(os.environ["RANK"]) == 0
    model = DistributedDataParallel(model.cuda())
    for epoch in range(10):
        for x in loader:
            loss = model(x.cuda()).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        if master:
            torch.save(model.module.state_dict(), "w.pth")

# %% invalid: a flag set from another environment variable converted with int() is no rank test
import os
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel


def init_distributed(args):
    if "WORLD_SIZE" not in os.environ or int(os.environ["WORLD_SIZE"]) < 1:
        return False
    dist.init_process_group(backend="nccl", init_method="env://")
    return True


def main(args, model, loader, opt):
    is_distributed = init_distributed(args)
    master = True
    if is_distributed:
        master = int(os.environ["SAVE_EVERY"]) == 0
    model = DistributedDataParallel(model.cuda())
    for epoch in range(10):
        for x in loader:
            loss = model(x.cuda()).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        if master:
            torch.save(model.module.state_dict(), "w.pth")  # expect: GPU504

# %% valid: a save under a condition that includes `is_master_process`
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel


def train(model, loader, optimizer, args, is_master_process):
    dist.init_process_group("nccl")
    model = DistributedDataParallel(model.cuda())
    for step, x in enumerate(loader):
        loss = model(x.cuda()).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if args.save_every and step % args.save_every == 0 and is_master_process:
            torch.save(model.module.state_dict(), f"ckpt_{step}.pt")
