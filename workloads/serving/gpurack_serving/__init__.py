"""gpurack's model server launcher: the node-local model cache, then the runtime (vLLM)."""

__version__ = "0.1.2"
