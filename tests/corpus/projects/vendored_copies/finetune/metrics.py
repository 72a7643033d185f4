def accuracy(value):
    return value
