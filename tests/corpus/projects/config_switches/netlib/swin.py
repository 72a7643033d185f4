import torch.nn as nn
import torch.utils.checkpoint as checkpoint


class SwinStage(nn.Module):
    def __init__(self, dim, depth, use_checkpoint=False):
        super().__init__()
        self.blocks = nn.ModuleList(nn.Linear(dim, dim) for _ in range(depth))
        self.use_checkpoint = use_checkpoint

    def forward(self, x):
        for blk in self.blocks:
            if self.use_checkpoint:
                x = checkpoint.checkpoint(blk, x)  # expect: GPU405 info
            else:
                x = blk(x)
        return x


class Head(nn.Module):
    def __init__(self, dim, recompute=False):
        super().__init__()
        self.fc = nn.Linear(dim, 10)
        self.recompute = recompute

    def forward(self, x):
        if self.recompute:
            return checkpoint.checkpoint(self.fc, x)  # expect: GPU405
        return self.fc(x)


def build_swin(cfg, dim=96):
    stage = SwinStage(dim, cfg.MODEL.SWIN.DEPTH, use_checkpoint=cfg.MODEL.SWIN.USE_CHECKPOINT)
    head = Head(dim, recompute=cfg.MODEL.SWIN.RECOMPUTE_HEAD)
    return nn.Sequential(stage, head)
