"""Parses the run's options and trains."""
import argparse

from exp.exp_forecast import ExpForecast

if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--seq_len", type=int, default=96)
    parser.add_argument("--pred_len", type=int, default=96)
    parser.add_argument("--learning_rate", type=float, default=1e-4)
    parser.add_argument("--train_epochs", type=int, default=10)
    parser.add_argument("--gpu", type=int, default=0)
    parser.add_argument("--use_gpu", action="store_true", default=True)
    parser.add_argument("--use_multi_gpu", action="store_true", default=False)
    parser.add_argument("--devices", type=str, default="0,1,2,3")
    args = parser.parse_args()
    args.device_ids = [int(d) for d in args.devices.split(",")]
    exp = ExpForecast(args)
    exp.train(None)
