"""The input pipeline: DataLoader options and batch copies (GPU2xx)."""
