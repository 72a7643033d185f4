from data import load_data
from train_util import TrainLoop


def main(model):
    data = load_data(files=[], batch_size=8)
    TrainLoop(model=model.cuda(), data=data, batch_size=8, microbatch=4, lr=1e-4).run_loop()
