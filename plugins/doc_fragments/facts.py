# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""The option and attribute support levels every gpurack facts module shares.

Modules list it after ansible.builtin.action_common_attributes(.facts), which describe
the attributes themselves.
"""

from __future__ import annotations


class ModuleDocFragment:
    DOCUMENTATION = r"""
options:
  root:
    description:
      - Root of the node to read. V(/) reads the live host.
      - A capture bundle folder (see C(docs/capture-format.md)) replays its command files and
        reads its C(sys/) tree instead, on any machine.
    type: path
    default: /
attributes:
  check_mode:
    support: full
    details: The module only reads; check mode runs it unchanged.
  diff_mode:
    support: none
    details: Nothing is changed, so there is nothing to diff.
  facts:
    support: full
  platform:
    platforms: posix
"""
