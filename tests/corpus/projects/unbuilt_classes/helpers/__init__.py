from .loops import fit, fit_with_logging
