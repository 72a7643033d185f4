def accuracy(output, target):
    return (output.argmax(dim=1) == target).float().mean()
