import torch

from detector import model as models


def main(loader, epochs):
    detector = models.detector50(num_classes=80)
    detector = torch.nn.DataParallel(detector).cuda()  # expect: GPU505
    optimizer = torch.optim.Adam(detector.parameters(), lr=1e-5)
    detector.train()
    for epoch in range(epochs):
        for data in loader:
            optimizer.zero_grad()
            loss = detector([data["img"].cuda().float(), data["annot"].cuda()])
            loss.backward()
            optimizer.step()
