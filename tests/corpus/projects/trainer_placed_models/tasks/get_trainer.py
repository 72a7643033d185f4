from transformers import AutoConfig

from model.utils import get_model
from training.trainer_base import BaseTrainer


def get_trainer(model_args, training_args, dataset):
    config = AutoConfig.from_pretrained(model_args.model_name_or_path, num_labels=2)
    config.pre_seq_len = model_args.pre_seq_len
    model = get_model(model_args, config)
    return BaseTrainer(model=model, args=training_args, train_dataset=dataset)
