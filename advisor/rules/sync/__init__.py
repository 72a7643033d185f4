"""Host-device synchronisation in the training loop (GPU1xx)."""
