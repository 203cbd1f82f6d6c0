"""The acceptance test's trainer: MiniLM plus a regression head, fine-tuned for a fixed window."""

__version__ = "0.1.0"
