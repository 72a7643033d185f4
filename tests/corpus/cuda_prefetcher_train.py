"""DDP training with a hand-rolled CUDA-stream data prefetcher and an EMA of the weights.

The prefetcher overlaps host-to-device copies with compute on a side stream; the EMA
update runs on another side stream. (This file also exercises `# noqa` suppression.)

    torchrun --nproc_per_node=8 cuda_prefetcher_train.py
"""
import argparse
import copy
import os

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler


class UInt8Images(Dataset):
    def __init__(self, n, size=224, num_classes=1000):
        self.n, self.size, self.num_classes = n, size, num_classes

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(i)
        return torch.randint(0, 256, (3, self.size, self.size), dtype=torch.uint8, generator=g), i % self.num_classes


class CudaPrefetcher:
    """Yields batches whose copy to the GPU was issued one iteration ahead."""

    def __init__(self, loader, device):
        self.loader = loader
        self.device = device
        self.stream = torch.cuda.Stream(device=device)
        self.mean = torch.tensor([0.485, 0.456, 0.406], device=device).view(1, 3, 1, 1) * 255
        self.std = torch.tensor([0.229, 0.224, 0.225], device=device).view(1, 3, 1, 1) * 255

    def __iter__(self):
        pending = None
        for images, targets in self.loader:
            with torch.cuda.stream(self.stream):
                images = images.to(self.device, non_blocking=True)
                targets = targets.to(self.device, non_blocking=True)
                images = images.float().sub_(self.mean).div_(self.std)
            if pending is not None:
                yield pending
            torch.cuda.current_stream().wait_stream(self.stream)  # trap: GPU105
            images.record_stream(torch.cuda.current_stream())
            targets.record_stream(torch.cuda.current_stream())
            pending = (images, targets)
        if pending is not None:
            yield pending


class ModelEma:
    def __init__(self, model, decay=0.9998):
        self.module = copy.deepcopy(model).eval()
        self.decay = decay
        for p in self.module.parameters():
            p.requires_grad_(False)

    @torch.no_grad()
    def update(self, model):
        for ema_v, v in zip(self.module.state_dict().values(), model.state_dict().values()):
            if ema_v.dtype.is_floating_point:
                ema_v.mul_(self.decay).add_(v, alpha=1 - self.decay)

    def state_dict(self):
        return self.module.state_dict()


def accuracy(output, target):
    return (output.argmax(dim=1) == target).float().mean() * 100


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--epochs", type=int, default=90)
    p.add_argument("--batch-size", type=int, default=192)
    p.add_argument("--lr", type=float, default=0.4)
    p.add_argument("--workers", type=int, default=10)
    p.add_argument("--out", default="runs/prefetch")
    args = p.parse_args()

    dist.init_process_group("nccl")
    rank = dist.get_rank()
    local_rank = int(os.environ["LOCAL_RANK"])
    device = torch.device("cuda", local_rank)
    torch.cuda.set_device(device)

    dataset = UInt8Images(1_281_167)
    sampler = DistributedSampler(dataset, drop_last=True)  # expect: GPU501
    loader = DataLoader(  # trap: GPU201
        dataset, batch_size=args.batch_size, sampler=sampler, num_workers=args.workers, pin_memory=True, drop_last=True
    )

    model = nn.Sequential(
        nn.Conv2d(3, 64, 7, 2, 3), nn.BatchNorm2d(64), nn.ReLU(), nn.MaxPool2d(3, 2, 1),  # expect: GPU704 info, GPU706 info
        nn.Conv2d(64, 256, 3, 2, 1), nn.BatchNorm2d(256), nn.ReLU(),  # expect: GPU706 info
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(256, 1000),
    ).to(device)
    model = DDP(model, device_ids=[local_rank])
    ema = ModelEma(model.module)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9, weight_decay=3e-5)
    ema_stream = torch.cuda.Stream(device=device)
    ema_done = torch.cuda.Event()
    log_stream = torch.cuda.Stream(device=device)
    loss_host = torch.zeros((), pin_memory=True)

    for epoch in range(args.epochs):
        model.train()
        losses = []
        for step, (images, targets) in enumerate(CudaPrefetcher(loader, device)):
            with torch.cuda.amp.autocast(dtype=torch.float16):  # expect: GPU301  # expect: GPU303
                output = model(images)
                loss = F.cross_entropy(output, targets, label_smoothing=0.1)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()

            with torch.cuda.stream(ema_stream):
                ema_stream.wait_stream(torch.cuda.current_stream())
                ema.update(model.module)
                ema_done.record(ema_stream)
            ema_done.synchronize()  # expect: GPU105

            with torch.cuda.stream(log_stream):
                log_stream.wait_stream(torch.cuda.current_stream())
                loss_host.copy_(loss.detach(), non_blocking=True)
            log_stream.synchronize()  # expect: GPU105
            losses.append(loss_host.clone())
            top1 = accuracy(output, targets).item()  # noqa: GPU101
            if rank == 0 and top1 < 0.1:
                print(f"epoch {epoch} step {step}: top1 collapsed to {top1:.2f}%")  # trap: GPU102

        if rank == 0:
            epoch_loss = torch.stack(losses).mean().item()  # trap: GPU101
            print(f"epoch {epoch}: loss {epoch_loss:.4f}")  # trap: GPU102
            torch.save(model.state_dict(), os.path.join(args.out, "model.pt"))  # expect: GPU503
            torch.save(ema.state_dict(), os.path.join(args.out, "model_ema.pt"))  # trap: GPU503
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
