"""Per-volume evaluation helpers. The first turns the volume into NumPy on the host and sends new
slices to the GPU one by one; the second moves the batch it is given."""
import numpy as np
import torch


def evaluate_volume(image, label, net, case=None):
    image, label = image.squeeze(0).cpu().numpy(), label.squeeze(0).cpu().numpy()
    scores = []
    for index in range(image.shape[0]):
        piece = torch.from_numpy(image[index]).unsqueeze(0).unsqueeze(0).float().cuda()
        with torch.no_grad():
            predicted = net(piece).argmax(1).squeeze(0).cpu().numpy()  # expect: GPU603
        scores.append(float((predicted == label[index]).mean()))
    return np.mean(scores), case


def predict_batch(image, net):
    with torch.no_grad():
        return net(image.cuda()).argmax(1)
