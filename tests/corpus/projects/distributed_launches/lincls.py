import argparse

import torch
import torch.multiprocessing as mp


def main_worker(gpu, ngpus_per_node, args):
    model = torch.nn.Linear(8, 2)
    if args.distributed:
        torch.distributed.init_process_group(backend="nccl", init_method=args.dist_url,
                                             world_size=args.world_size * ngpus_per_node, rank=args.rank * ngpus_per_node + gpu)
        torch.cuda.set_device(gpu)
        model = torch.nn.parallel.DistributedDataParallel(model.cuda(gpu), device_ids=[gpu])
    else:
        model = torch.nn.DataParallel(model).cuda()  # expect: GPU505 info
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    torch.backends.cuda.matmul.allow_tf32 = True
    for _ in range(10):
        loss = model(torch.randn(4, 8, device="cuda")).sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if not args.distributed:
            print(loss.item())  # expect: GPU101 info


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("data")
    parser.add_argument("-a", "--arch", default="resnet50")
    parser.add_argument("--pretrained", default="")
    parser.add_argument("--dist-url", default="tcp://localhost:10001")
    parser.add_argument("--world-size", type=int, default=-1)
    parser.add_argument("--rank", type=int, default=-1)
    parser.add_argument("--multiprocessing-distributed", action="store_true")
    args = parser.parse_args()
    args.distributed = args.world_size > 1 or args.multiprocessing_distributed
    ngpus_per_node = torch.cuda.device_count()
    if args.multiprocessing_distributed:
        args.world_size = ngpus_per_node * args.world_size
        mp.spawn(main_worker, nprocs=ngpus_per_node, args=(ngpus_per_node, args))
    else:
        main_worker(0, ngpus_per_node, args)


if __name__ == "__main__":
    main()
