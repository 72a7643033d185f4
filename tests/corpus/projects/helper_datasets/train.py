import torch
from accelerate import Accelerator
from torch.utils.data import DataLoader
from torchvision.datasets import ImageFolder

from data.packed import PackedDataset, get_tokenized


def pretrain(model, optimizer, files):
    loader = DataLoader(PackedDataset(files, 1024), batch_size=8, pin_memory=True)
    model.cuda()
    for tokens in loader:
        loss = model(tokens.cuda(non_blocking=True))
        loss.backward()
        optimizer.step()


def finetune(model, optimizer, tokenizer, collate):
    accelerator = Accelerator()
    loader = DataLoader(get_tokenized(tokenizer, 512), batch_size=16, shuffle=True, collate_fn=collate)  # expect: GPU201 info
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
    for batch in loader:
        accelerator.backward(model(**batch).loss)
        optimizer.step()


def classify(model, optimizer, tfm):
    accelerator = Accelerator()
    loader = DataLoader(ImageFolder("pets/train", transform=tfm), batch_size=64, shuffle=True, pin_memory=True)  # expect: GPU202
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
    for images, labels in loader:
        accelerator.backward(torch.nn.functional.cross_entropy(model(images), labels))
        optimizer.step()
