import torch
from torch.utils.data import DataLoader, RandomSampler

from utils_glue import *


def main(train_features, images, labels, model, optimizer):
    train_data, _ = get_tensor_data("classification", train_features)
    train_loader = DataLoader(train_data, sampler=RandomSampler(train_data), batch_size=32)  # expect: GPU201 info
    image_data, _ = get_image_data(images, labels)
    image_loader = DataLoader(image_data, batch_size=32, num_workers=4, persistent_workers=True)  # expect: GPU201 info
    model.cuda()
    torch.backends.cuda.matmul.allow_tf32 = True
    for loader in (train_loader, image_loader):
        for inputs, mask, targets in loader:
            loss = model(inputs.cuda(), mask.cuda(), targets.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
