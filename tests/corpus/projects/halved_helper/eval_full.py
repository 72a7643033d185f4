"""The same with a helper that copies the loader's video as it is."""
import torch
from torch.utils.data import DataLoader, Dataset

from vlm import answer_full


class VideoQuestions(Dataset):
    def __init__(self, items):
        self.items = items

    def __len__(self):
        return len(self.items)

    def __getitem__(self, index):
        path, question = self.items[index]
        return torch.load(path), question


def main(model, tokenizer, items):
    model = model.cuda().eval()
    dataset = VideoQuestions(items)
    loader = DataLoader(dataset, batch_size=1, num_workers=4)  # expect: GPU201
    out = []
    for videos, questions in loader:
        out.append(answer_full(videos[0], questions[0], model, tokenizer))
    return out


if __name__ == "__main__":
    main(None, None, [])
