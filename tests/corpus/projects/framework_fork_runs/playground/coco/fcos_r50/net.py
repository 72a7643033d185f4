from detlib.modeling import Fcos


def build_model(cfg):
    return Fcos(cfg.num_classes)
