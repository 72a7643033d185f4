import torch

from gpt import TinyGPT, greedy_decode, perplexity


def sample(model, prompt):
    model.eval()
    out = greedy_decode(model, prompt, steps=20)
    model.train()
    return out


def main(batches, held_out):
    model = TinyGPT().cuda()
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
    for step, idx in enumerate(batches):
        idx = idx.cuda(non_blocking=True)
        logits = model(idx[:, :-1])
        loss = torch.nn.functional.cross_entropy(logits.transpose(1, 2), idx[:, 1:])
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        if step % 500 == 0:
            print(sample(model, idx[:1, :8]))  # expect: GPU102 info
            print(perplexity(model, held_out))  # expect: GPU102 info


if __name__ == "__main__":
    main([], None)
