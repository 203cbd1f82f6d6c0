# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""The platform layer's one code path: the site from inventory, and every Kubernetes object built from it.

site (inventory -> Site), capacity (quota against GPUs), kueue and tenancy (the objects),
objects (all of them in apply order). Stdlib only: the module, the filter and the driver's
`gpurack platform render` all build through here.
"""
