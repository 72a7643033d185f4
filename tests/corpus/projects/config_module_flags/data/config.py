"""Every recipe the training script may select, each a copy of the base with changes."""


class Config(object):
    def __init__(self, config_dict):
        for key, val in config_dict.items():
            self.__setattr__(key, val)

    def copy(self, new_config_dict={}):
        ret = Config(vars(self))
        for key, val in new_config_dict.items():
            ret.__setattr__(key, val)
        return ret

    def replace(self, new_config_dict):
        if isinstance(new_config_dict, Config):
            new_config_dict = vars(new_config_dict)
        for key, val in new_config_dict.items():
            self.__setattr__(key, val)


base_config = Config({
    "lr": 1e-3,
    "max_iter": 400000,
    "use_class_balanced_conf": False,
    "use_objectness_score": False,
    "use_mask_scoring": False,
})

large_config = base_config.copy({
    "max_iter": 800000,
})

plus_config = base_config.copy({
    "use_mask_scoring": True,
})

cfg = base_config.copy()


def set_cfg(config_name):
    global cfg
    cfg.replace(eval(config_name))
