"""Kubernetes objects and values built from inventory (the platform layer)."""
