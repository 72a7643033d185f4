"""Run from gym/: `python experiment.py`. The base trainer's loop calls `self.train_step()`,
which the trainer built here overrides."""
import torch

from dt.training.seq_trainer import SequenceTrainer


def get_batch(batch_size, device="cuda"):
    states = torch.randn(batch_size, 20, 11, device=device)
    return states, torch.randn(batch_size, 20, 3, device=device)


if __name__ == "__main__":
    model = torch.nn.Linear(11, 3).to("cuda")
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    trainer = SequenceTrainer(model, optimizer, batch_size=64, get_batch=get_batch)
    for iteration in range(10):
        trainer.train_iteration(num_steps=10000)
