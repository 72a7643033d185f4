class Trainer:
    def __init__(self, model, optimizer, batch_size, get_batch):
        self.model = model
        self.optimizer = optimizer
        self.batch_size = batch_size
        self.get_batch = get_batch

    def train_iteration(self, num_steps):
        losses = []
        for _ in range(num_steps):
            losses.append(self.train_step())
        return losses

    def train_step(self):
        states, actions = self.get_batch(self.batch_size)
        loss = (self.model(states) - actions).square().mean()
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return loss.detach()
