from .replicate import DataParallelWithCallback, ParallelCriterion, PlainStateParallel
