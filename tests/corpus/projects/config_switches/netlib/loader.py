from torch.utils.data import DataLoader


def construct_loader(cfg, dataset):
    if cfg.MULTIGRID.SHORT_CYCLE:
        return DataLoader(  # expect: GPU204 info
            dataset,
            batch_size=cfg.TRAIN.BATCH_SIZE // 2,
            num_workers=cfg.DATA_LOADER.NUM_WORKERS,
            pin_memory=cfg.DATA_LOADER.PIN_MEMORY,
        )
    return DataLoader(  # expect: GPU204
        dataset,
        batch_size=cfg.TRAIN.BATCH_SIZE,
        num_workers=cfg.DATA_LOADER.NUM_WORKERS,
        pin_memory=cfg.DATA_LOADER.PIN_MEMORY,
    )
