from modeling.mlp import MlpBlock


def build_mlp(cfg):
    # The flag is read here, in the module that builds the block from the loaded settings.
    return MlpBlock(96, recompute=cfg['MODEL']['MLP']['RECOMPUTE'])
