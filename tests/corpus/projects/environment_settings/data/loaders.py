"""Loader settings read from the environment, with the defaults a plain run gets."""
import os

from torch.utils.data import DataLoader

PIN_MEMORY = str(os.getenv("PIN_MEMORY", True)).lower() == "true"  # pinned unless PIN_MEMORY=false
NUM_WORKERS = int(os.environ.get("NUM_WORKERS", "4"))
EVAL_PIN = os.getenv("EVAL_PIN", "0") == "1"


def build_train_loader(dataset, batch_size):
    return DataLoader(dataset, batch_size=batch_size, shuffle=True, num_workers=NUM_WORKERS, pin_memory=PIN_MEMORY)  # expect: GPU204


def build_eval_loader(dataset, batch_size):
    return DataLoader(dataset, batch_size=batch_size, num_workers=NUM_WORKERS, pin_memory=EVAL_PIN)  # expect: GPU201 info, GPU204
