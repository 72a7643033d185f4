import torch
import torch.distributed as dist


def init_dist(opt):
    """Joins the process group; only the first process of each node logs and saves."""
    opt.rank = opt.rank * opt.ngpus_per_node + opt.gpu
    dist.init_process_group(backend="nccl", init_method=opt.dist_url, world_size=opt.world_size, rank=opt.rank)
    torch.cuda.set_device(opt.gpu)
    if opt.rank % opt.ngpus_per_node == 0:
        opt.log = True
    else:
        opt.log = False
