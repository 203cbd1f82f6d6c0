"""gpurack: prepare, join and validate GPU servers; keep their inventory."""

__version__ = "0.1.0"
