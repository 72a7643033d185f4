def load(path):
    return open(path, "rb").read()
