"""A trainer object that draws its batches itself and starts each new pass of the loader."""


class Worker:
    def __init__(self, train_loader, dis, optimizer, distributed, d_updates=2):
        self.train_loader = train_loader
        self.dis = dis
        self.optimizer = optimizer
        self.distributed = distributed
        self.d_updates = d_updates
        self.epoch = 0

    def prepare_train_iter(self, epoch):
        self.epoch = epoch
        if self.distributed:
            self.train_loader.sampler.set_epoch(epoch)
        self.train_iter = iter(self.train_loader)

    def sample_batch(self):
        try:
            images, labels = next(self.train_iter)
        except StopIteration:
            self.epoch += 1
            if self.distributed:
                self.train_loader.sampler.set_epoch(self.epoch)
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
