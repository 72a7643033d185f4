class TrainerBase(object):
    def __init__(self, args, train_loader=None, val_loader=None):
        self.args = args
        self.train_loader = train_loader
        self.val_loader = val_loader
        self.verbose = True
