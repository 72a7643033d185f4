import argparse

parser = argparse.ArgumentParser()
parser.add_argument("--aux_loss", action="store_true", help="add the contrastive term")
parser.add_argument("--epochs", type=int, default=10)
args = parser.parse_args()

if args.aux_loss:
    print("pretraining with the contrastive term for", args.epochs, "epochs")
