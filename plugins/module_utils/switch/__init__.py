# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""Top-of-rack switches: what netmiko reads from them, parsed per platform, and the cabling plan.

Pure functions only; the switch_facts and switch_config modules are the thin runners.
"""
