"""gpurack: prepare, join and validate GPU servers; keep their inventory."""

from gpurack import collection, project

__version__ = "0.1.0"

# Before any module imports `ansible_collections.gpurack.bootstrap`: the checkout's copy of
# the collection, or the installed one (no .pth file, no checkout needed).
collection.make_importable(project.find_checkout())
