import torch.nn as nn
import torch.utils.checkpoint as checkpoint


class Encoder(nn.Module):
    """Its switch is handed the script's `--grad-ckpt` option, which the README passes."""

    def __init__(self, dim, depth, use_checkpoint=False):
        super().__init__()
        self.use_checkpoint = use_checkpoint
        self.blocks = nn.ModuleList([nn.Linear(dim, dim) for _ in range(depth)])

    def forward(self, x):
        for blk in self.blocks:
            if self.use_checkpoint:
                x = checkpoint.checkpoint(blk, x)  # expect: GPU405
            else:
                x = blk(x)
        return x


class Decoder(nn.Module):
    """Its switch is set from a setting no config or command turns on."""

    def __init__(self, dim, depth):
        super().__init__()
        self.with_cp = False
        self.blocks = nn.ModuleList([nn.Linear(dim, dim) for _ in range(depth)])

    def enable(self, cfg):
        self.with_cp = cfg.decoder_checkpointing

    def forward(self, x):
        for blk in self.blocks:
            x = checkpoint.checkpoint(blk, x) if self.with_cp else blk(x)  # expect: GPU405 info
        return x


class Neck(nn.Module):
    """Its switch comes from the Python config module, which leaves it off."""

    def __init__(self, channels, neck_cp=False):
        super().__init__()
        self.neck_cp = neck_cp
        self.proj = nn.Linear(channels, channels)

    def forward(self, x):
        if self.neck_cp:
            return checkpoint.checkpoint(self.proj, x)  # expect: GPU405 info
        return self.proj(x)
