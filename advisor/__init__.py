"""torch-advisor: finds the mistakes that make PyTorch training slow or silently wrong."""

__version__ = "0.1.0"
