import sys

from transformers import HfArgumentParser, TrainingArguments

from tasks.get_trainer import get_trainer


def main(argv):
    parser = HfArgumentParser(TrainingArguments)
    (training_args,) = parser.parse_args_into_dataclasses(argv)
    trainer = get_trainer(training_args, training_args, dataset=None)
    trainer.train()


if __name__ == "__main__":
    main(sys.argv[1:])
