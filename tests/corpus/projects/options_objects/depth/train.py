from depth.trainer import Trainer
from depth.options import Options

options = Options()
opts = options.parse()

if __name__ == "__main__":
    trainer = Trainer(opts)
    trainer.train()
