from .planner import PlanDetector  # noqa: F401
