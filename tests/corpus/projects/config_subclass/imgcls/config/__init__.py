from .defaults import get_default_config
