import torch

from configs import get_args


def main():
    cfg = get_args()
    torch.backends.cuda.matmul.allow_tf32 = True
    model = torch.nn.Linear(8, 2).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=cfg.lr)
    loader = [torch.randn(4, 8) for _ in range(16)]
    for step, x in enumerate(loader):
        loss = model(x.cuda()).pow(2).mean()
        loss.backward()  # expect: GPU406
        if (step + 1) % cfg.gradient_accumulation_steps == 0:
            optimizer.step()
            optimizer.zero_grad()


if __name__ == "__main__":
    main()
