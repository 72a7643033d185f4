from .loops import fit, fit_quietly, fit_with_logging
