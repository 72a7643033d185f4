from .config_node import ConfigNode

config = ConfigNode()

config.train = ConfigNode()
config.train.batch_size = 128
config.train.dataloader = ConfigNode()
config.train.dataloader.num_workers = 2
config.train.dataloader.pin_memory = False

config.validation = ConfigNode()
config.validation.batch_size = 256
config.validation.dataloader = ConfigNode()
config.validation.dataloader.num_workers = 2
config.validation.dataloader.pin_memory = True


def get_default_config():
    return config.clone()
