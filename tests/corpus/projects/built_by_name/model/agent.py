import torch


class Agent:
    def __init__(self, model, args):
        self.model = model.cuda()
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=args["lr"])

    def train_step(self, batch):
        loss = self.model(batch)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return loss
