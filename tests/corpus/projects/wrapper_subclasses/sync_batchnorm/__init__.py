from .replicate import DataParallelWithCallback, PlainStateParallel
