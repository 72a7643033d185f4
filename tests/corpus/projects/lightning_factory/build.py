from classifier import Classifier


def build_model(config):
    return Classifier(config.model.hidden)
