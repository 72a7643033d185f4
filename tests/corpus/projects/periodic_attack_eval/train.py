import torch
import torch.nn.functional as F

from attacks import gradient_report, input_grad


def main(model, train_batches, test_batches, epochs, eval_every):
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    iteration = 0
    for epoch in range(epochs):
        for x, y in train_batches:
            x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)
            grad = input_grad(model, x, y, 8 / 255)
            loss = F.cross_entropy(model(x), y) + grad.pow(2).sum()
            opt.zero_grad()
            loss.backward()
            opt.step()
            iteration += 1
            if iteration % eval_every == 0:
                print(gradient_report(model, test_batches, 8 / 255).mean())
