import torch
from torch.utils.data import Dataset


class CaptionData(Dataset):
    def __init__(self, records):
        self.records = records

    def __getitem__(self, i):
        ids = torch.tensor(self.records[i]["ids"])
        keep = ids != 0
        return {"input_ids": ids[keep], "n": int((ids == -200).sum())}

    def __len__(self):
        return len(self.records)


def collate(items):
    lengths = torch.tensor([len(it["input_ids"]) for it in items])
    if (lengths > 512).any():
        raise ValueError("too long")
    return {"input_ids": torch.nn.utils.rnn.pad_sequence([it["input_ids"] for it in items], batch_first=True)}
