class Replay:
    def __init__(self):
        self.items = []

    def update(self, *transition):
        self.items.append(transition)
