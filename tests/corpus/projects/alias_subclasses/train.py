import torch

from nets.backbones.resnext import ResNeXt


def main():
    model = ResNeXt(8).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(1000):
        x = torch.randn(8, 64, 32, 32, device="cuda", requires_grad=True)
        loss = model(x).mean()
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()


if __name__ == "__main__":
    main()
