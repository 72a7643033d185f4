from algo.base import Algo, algo_factory, register_algo
from algo.bc import BC
from algo.cql import CQL
