import policy.libraries.mingpt.trainer as mingpt_trainer


def make_config(epochs):
    return mingpt_trainer.TrainerConfig(max_epochs=epochs)
