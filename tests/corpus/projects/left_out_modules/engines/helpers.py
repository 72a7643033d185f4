from .distill import distill_one_epoch


def run_twice(model, loader, optimizer):
    """Imported by nothing, but it imports a sibling: that says nothing of its own use. Its
    package is used from outside, so this too is left out."""
    distill_one_epoch(model, loader, optimizer)
    distill_one_epoch(model, loader, optimizer)
