import loading.cifar


def set_loader(args, train_set, test_set):
    return loading.cifar.get_loaders(train_set, test_set, args.batch_size)


class InfiniteLoader:
    """Draws from its loader for ever, starting a new pass when one ends."""

    def __init__(self, iterable):
        self.iterable = iterable
        self.data_loader = iter(self.iterable)

    def __iter__(self):
        return self

    def __next__(self):
        while True:
            try:
                obj = next(self.data_loader)
                return obj
            except StopIteration:
                self.data_loader = iter(self.iterable)
