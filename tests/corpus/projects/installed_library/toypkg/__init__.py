"""A package its users install: their code builds its classes."""
