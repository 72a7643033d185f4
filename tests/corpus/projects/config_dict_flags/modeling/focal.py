import torch.nn as nn
import torch.utils.checkpoint as checkpoint


class FocalBlock(nn.Module):
    def __init__(self, dim, use_checkpoint=False):
        super().__init__()
        self.mlp = nn.Sequential(nn.Linear(dim, dim), nn.GELU(), nn.Linear(dim, dim))
        self.use_checkpoint = use_checkpoint

    def forward(self, x):
        if self.use_checkpoint:
            return x + checkpoint.checkpoint(self.mlp, x)  # expect: GPU405 info
        return x + self.mlp(x)


def build_focal(cfg):
    """The four stages of the backbone.

    To trade compute for memory, build the blocks as FocalBlock(96, use_checkpoint=True).
    """
    # The settings come from a YAML file loaded into a plain dict.
    use_checkpoint = cfg['MODEL']['BACKBONE']['FOCAL']['USE_CHECKPOINT']
    return nn.Sequential(*[FocalBlock(96, use_checkpoint=use_checkpoint) for _ in range(4)])
