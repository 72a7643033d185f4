from prefetch_generator import BackgroundGenerator
from torch.utils.data import DataLoader


class DataLoaderX(DataLoader):
    """Prefetching loader: the batches come from a background thread."""

    def __iter__(self):
        return BackgroundGenerator(super().__iter__())
