"""gpurack's load tool for the model server: locust as a library, one JSON line of exact figures."""

__version__ = "0.3.0"
