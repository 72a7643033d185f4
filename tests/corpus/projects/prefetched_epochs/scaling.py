import os


def scale_learning_rates(args):
    world_size = int(os.environ.get("WORLD_SIZE", 1))
    scale = (args.batch_size * world_size / 16) ** 0.5
    for name in ["lr", "lr_backbone"]:
        setattr(args, name, getattr(args, name) * scale)
