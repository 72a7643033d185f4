"""Mixed precision: autocast, GradScaler and matmul precision (GPU3xx)."""
