"""The trainer picks its classes from the table by the name on the command line; both its
training and its evaluation loops move each batch with a generator over the batch's parts."""
import torch
from torch.utils.data import DataLoader, RandomSampler, SequentialSampler

from tables import MODEL_CLASSES


class Trainer:
    def __init__(self, args, train_dataset, dev_dataset):
        self.args = args
        self.train_dataset = train_dataset
        self.dev_dataset = dev_dataset
        self.config_class, self.model_class, _ = MODEL_CLASSES[args.model_type]
        self.device = "cuda" if torch.cuda.is_available() else "cpu"
        self.model = self.model_class.from_pretrained(args.model_dir, num_tags=args.num_tags)
        self.model.to(self.device)

    def train(self):
        loader = DataLoader(self.train_dataset, sampler=RandomSampler(self.train_dataset), batch_size=32, pin_memory=True)
        optimizer = torch.optim.AdamW(self.model.parameters(), lr=5e-5)
        for epoch in range(self.args.epochs):
            for batch in loader:
                self.model.train()
                batch = tuple(t.to(self.device, non_blocking=True) for t in batch)
                inputs = {"input_ids": batch[0], "attention_mask": batch[1], "labels": batch[2]}
                loss = self.model(**inputs)[0]
                loss.backward()
                optimizer.step()
                optimizer.zero_grad()
            self.evaluate()

    def evaluate(self):
        loader = DataLoader(self.dev_dataset, sampler=SequentialSampler(self.dev_dataset), batch_size=64, pin_memory=True)
        self.model.eval()
        for batch in loader:
            batch = tuple(t.to(self.device, non_blocking=True) for t in batch)
            with torch.no_grad():
                inputs = {"input_ids": batch[0], "attention_mask": batch[1], "labels": batch[2]}
                self.model(**inputs)
