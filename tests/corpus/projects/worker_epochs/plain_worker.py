"""The same trainer object without `set_epoch`: each pass of the loader repeats the order."""


class PlainWorker:
    def __init__(self, train_loader, dis, optimizer, d_updates=2):
        self.train_loader = train_loader
        self.dis = dis
        self.optimizer = optimizer
        self.d_updates = d_updates

    def prepare_train_iter(self):
        self.train_iter = iter(self.train_loader)

    def sample_batch(self):
        try:
            images, labels = next(self.train_iter)
        except StopIteration:
            self.train_iter = iter(self.train_loader)
            images, labels = next(self.train_iter)
        return images, labels

    def train_discriminator(self, step):
        images, labels = self.sample_batch()
        for _ in range(self.d_updates):
            self.optimizer.zero_grad()
            loss = self.dis(images.cuda(non_blocking=True), labels.cuda(non_blocking=True)).mean()
            loss.backward()
            self.optimizer.step()
