class Normalizer:
    def __init__(self, mean, std):
        self.mean, self.std = mean, std

    def scale(self, x):
        return (x - self.mean) / self.std
