"""Distributed training: samplers, checkpoints, DDP options, seeds (GPU5xx)."""
