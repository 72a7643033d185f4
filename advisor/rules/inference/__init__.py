"""Inference and evaluation: grad mode, eval mode, batching, caches (GPU6xx)."""
