"""A retriever whose document encoder keeps an indexing arm (host copies) that training never takes."""
import torch
import torch.nn as nn


class Retriever(nn.Module):
    def __init__(self, dims):
        super().__init__()
        self.encoder = nn.Linear(dims, dims)

    def forward(self, queries, docs):
        q = self.encoder(queries)
        d, mask = self.doc(*docs, keep_dims="return_mask")
        return (q @ d.transpose(1, 2)).max(-1).values.sum(-1), mask

    def doc(self, ids, mask, keep_dims=True):
        d = self.encoder(ids) * mask
        if keep_dims is False:
            d, mask = d.cpu(), mask.bool().cpu()
            return [row[m] for row, m in zip(d, mask)]
        elif keep_dims == "return_mask":
            return d, mask.bool()
        return d

    def summary(self, ids, mask, full=None):
        d = self.encoder(ids) * mask
        if full is None:
            return d.mean(1)
        return d.sum().item()  # expect: GPU101


class Speaker(nn.Module):
    def __init__(self, dims):
        super().__init__()
        self.proj = nn.Linear(dims, dims)

    def forward(self, text, resp=None, max_steps=50):
        if resp is not None:
            return ((self.proj(text) - resp) ** 2).mean()
        return self.generate(text, max_steps)

    def generate(self, text, max_steps):
        out = text
        for _ in range(max_steps):
            out = self.proj(out)
            if (out.abs() > 10).all().item():
                break
        return out


def fit(model, speaker, batches, optimizer):
    for batch in batches:
        batch = {k: v.cuda(non_blocking=True) for k, v in batch.items()}
        scores, _ = model(batch["q"], [batch["d"], batch["m"]])
        summary = model.summary(batch["d"], batch["m"], full=[1])
        speech = speaker(batch["text"], resp=batch["resp"])
        loss = -scores.mean() + speech + summary
        optimizer.zero_grad()
        loss.backward()  # expect: GPU305 info
        optimizer.step()


def main():
    model, speaker = Retriever(64).cuda(), Speaker(64).cuda()
    optimizer = torch.optim.SGD(list(model.parameters()) + list(speaker.parameters()), lr=0.1)
    fit(model, speaker, torch.load("batches.pt"), optimizer)


if __name__ == "__main__":
    main()
