from .loss import build_criterion
from .post import build_postprocess


def build_yolo(cfg, device, trainable=False):
    model = None
    criterion = None
    if trainable:
        criterion = build_criterion(cfg, device)
    return model, criterion, build_postprocess(cfg)
