import torch
from torch.utils.data import DataLoader

from metrics import predict_batch


def run(slices, net):
    net = net.cuda().eval()
    slice_loader = DataLoader(slices, batch_size=64, shuffle=False, num_workers=4)  # expect: GPU201
    predictions = []
    for image in slice_loader:
        predictions.append(predict_batch(image, net))
    return torch.cat(predictions)
