# The project's own config node: a yacs node with a friendlier print.
import yacs.config


class ConfigNode(yacs.config.CfgNode):
    def __init__(self, init_dict=None, key_list=None, new_allowed=False):
        super().__init__(init_dict, key_list, new_allowed)

    def __str__(self):
        return "\n".join(f"{key}: {value}" for key, value in self.items())
