"""The package's models; scripts import them from their modules."""
