"""A graph library's own loader class, stood in for here."""


class GraphLoader:
    def __init__(self, dataset, batch_size):
        self.dataset = dataset
        self.batch_size = batch_size

    def __iter__(self):
        for start in range(0, len(self.dataset), self.batch_size):
            yield self.dataset[start:start + self.batch_size]
