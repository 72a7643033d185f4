from .agent import Agent
from .net import CaptionNet


def load_model(args):
    model = globals()[args["model_name"]](**args)
    return Agent(model, args)
