from .losses import SmoothedLoss


def main():
    criterion = SmoothedLoss()
    return criterion
