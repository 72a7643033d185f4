import torch
import torch.multiprocessing as mp
from torch.nn.parallel import DistributedDataParallel as DDP

from utils.env import init_dist
from utils.opt import opt


def main_worker(gpu, opt):
    opt.gpu = gpu
    init_dist(opt)
    model = DDP(torch.nn.Linear(128, 10).cuda(gpu), device_ids=[gpu])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(opt.epochs):
        for _ in range(100):
            x = torch.randn(64, 128, device=f"cuda:{gpu}")
            loss = model(x).pow(2).mean()
            optimizer.zero_grad()
            loss.backward()  # expect: GPU305 info
            optimizer.step()
        if opt.log:
            torch.save(model.module.state_dict(), f"model_{epoch}.pth")
    torch.save(model.module.state_dict(), "final.pth")  # expect: GPU504 info


def main():
    opt.ngpus_per_node = torch.cuda.device_count()
    opt.world_size = opt.ngpus_per_node * opt.world_size
    mp.spawn(main_worker, nprocs=opt.ngpus_per_node, args=(opt,))


if __name__ == "__main__":
    main()
