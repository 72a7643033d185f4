from transformers import Trainer


class BaseTrainer(Trainer):
    def __init__(self, *args, predict_dataset=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.predict_dataset = predict_dataset
