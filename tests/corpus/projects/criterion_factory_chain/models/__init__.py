from .yolo.build import build_yolo


def build_model(args, cfg, device, trainable=False):
    if args.model == "yolo":
        return build_yolo(cfg, device, trainable)
    raise NotImplementedError(args.model)
