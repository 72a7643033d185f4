from modeling.swin import SwinBlock


class LargeSwinBlock(SwinBlock):
    """A subclass that always recomputes: the base class's flag is on in its instances."""

    def __init__(self, dim):
        super().__init__(dim)
        self.recompute = True
