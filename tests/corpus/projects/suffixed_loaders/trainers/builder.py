from importlib import import_module


def get_trainer(config):
    """The trainer module is chosen by name: only modules named `<name>_trainer` can load."""
    module = import_module(f"trainers.{config.trainer}_trainer")
    return getattr(module, "Trainer")


def get_model(config):
    module_name = f"models.{config.model}"
    return import_module(module_name).build(config)
