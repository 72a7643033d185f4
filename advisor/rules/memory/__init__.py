"""Memory: gradients, graphs, caches and checkpointing (GPU4xx)."""
