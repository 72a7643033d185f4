from .solvers import integrate
