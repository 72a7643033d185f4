"""Recipes a user calls from a notebook: no file of the project imports this module, and it has no
`__main__` block, so its functions are what its user runs."""
import torch


def quick_finetune(model, loader, steps=100):
    model = model.cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    torch.backends.cuda.matmul.allow_tf32 = True
    for images, target in loader:
        loss = torch.nn.functional.cross_entropy(model(images.cuda()), target.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print("loss", loss.item())  # expect: GPU101
