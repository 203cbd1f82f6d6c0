#!/usr/bin/python
# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: node_checks
short_description: Run the quick-tier node checks over gathered hardware facts
description:
  - Runs the checks of C(docs/checks.md) over the facts of the gpu_facts, pci_facts, numa_facts, nic_facts,
    nvme_facts and os_facts modules, against the pool's expectations (C(gpurack_expect)).
  - Returns one result per check and component (the node, a GPU, an RDMA port) with a verdict
    (pass, warn, fail, skip) and a summary.
  - The module itself does not fail when checks fail; assert on RV(summary.verdict). It fails only when
    O(expect) does not follow the expectations schema, listing every wrong path.
version_added: "0.1.0"
author: gpurack maintainers (@gpurack)
options:
  facts:
    description:
      - Facts keyed C(gpurack_gpu), C(gpurack_pci), C(gpurack_numa), C(gpurack_nic), C(gpurack_nvme)
        and C(gpurack_os).
      - Any may be missing; the checks that need it skip with a reason.
    type: dict
    required: true
  expect:
    description:
      - The expectations of DESIGN.md (C(gpu), C(rdma), C(numa_nodes), C(nvme), C(driver), C(cuda), C(os)).
      - Only the keys present are checked.
    type: dict
    default: {}
  pool:
    description:
      - The node's pool settings (C(gpurack_pool)); its C(sharing) (C(full-gpu), C(mig), C(time-slicing))
        is compared with each GPU's MIG mode (check C(gpu.mig_mode)).
      - Without it that check skips.
    type: dict
    default: {}
  extra_results:
    description:
      - Results produced before the checks, in the shape of RV(results) (for example one failing
        result per facts module that could not read its tool). They are returned first and
        counted in RV(summary), so the node verdict covers them.
    type: list
    elements: dict
    default: []
  tier:
    description: Which tier to run; this module runs the quick tier (facts only, no load).
    type: str
    choices: [quick]
    default: quick
attributes:
  check_mode:
    support: full
    description: The checks only read facts; check mode runs them unchanged.
  diff_mode:
    support: none
    description: Nothing is changed, so there is nothing to diff.
notes:
  - The check catalogue, limits and remediation are in C(docs/checks.md) of the collection.
"""

EXAMPLES = r"""
- name: Run the quick checks
  gpurack.bootstrap.node_checks:
    facts: "{{ ansible_facts }}"
    expect: "{{ gpurack_expect | default({}) }}"
    pool: "{{ gpurack_pool | default({}) }}"
  register: __validation_quick

- name: Fail the host when a check failed (a warn is shown, not failed)
  ansible.builtin.assert:
    that: __validation_quick.summary.verdict != 'fail'
    fail_msg: >-
      {{ __validation_quick.results | selectattr('verdict', 'eq', 'fail')
         | map(attribute='reason') | list }}
"""

RETURN = r"""
results:
  description: One result per check and component.
  returned: success
  type: list
  elements: dict
  sample:
    - id: gpu.pcie.current_vs_max
      title: GPU PCIe link at capability
      tier: quick
      component: GPU 3 (0000:19:00.0)
      verdict: fail
      measured: {gen: 5, width: 8}
      expected: {gen: 5, width: 16}
      unit: null
      reason: GPU 3 (0000:19:00.0) PCIe link runs at x8, its maximum is x16
      remediation: reseat the GPU or its riser and check the slot
      evidence: {source: nvidia-smi -q -x, lines: ["GPU 3 (0000:19:00.0) PCIe gen 5/5, width x8/x16"]}
      limit_source: "vendor doc: NVIDIA nvidia-smi manual (PCIe link, current vs max)"
      percent: null
      duration_s: null
      details: null
summary:
  description:
    - Counts per verdict and the node verdict, by the rule of C(docs/checks.md) ("Verdicts"), which is
      fail when any result fails, else warn when any warns, else pass when any passed; skip
      only when nothing could be assessed.
  returned: success
  type: dict
  sample: {pass: 14, warn: 1, fail: 1, skip: 12, verdict: fail}
  contains:
    verdict:
      description: The node's verdict, one of V(fail), V(warn), V(pass), V(skip).
      returned: success
      type: str
      sample: fail
not_assessed:
  description:
    - Why the node could not be assessed (every check of it skipped, or none ran), or null when it was.
    - The one skip policy of C(gpurack validate) and the roles; such a node is never admitted.
  returned: success
  type: str
  sample: "nothing was assessed, all 28 checks skipped: GPU facts unavailable: nvidia-smi not found"
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.gpurack.bootstrap.plugins.module_utils.checks import run_checks, validate_expect
from ansible_collections.gpurack.bootstrap.plugins.module_utils.results import (
    CheckResult,
    not_assessed,
    summarise,
)


def main() -> None:
    module = AnsibleModule(
        argument_spec={
            "facts": {"type": "dict", "required": True},
            "expect": {"type": "dict", "default": {}},
            "pool": {"type": "dict", "default": {}},
            "extra_results": {"type": "list", "elements": "dict", "default": []},
            "tier": {"type": "str", "choices": ["quick"], "default": "quick"},
        },
        supports_check_mode=True,
    )
    errors = validate_expect(module.params["expect"])
    if errors:
        module.fail_json(msg="Invalid gpurack_expect: " + "; ".join(errors), errors=errors)
    try:
        extra = [CheckResult.from_dict(r) for r in module.params["extra_results"]]
    except (TypeError, ValueError) as exc:
        module.fail_json(msg=f"Invalid extra_results: {exc}")
    params = module.params
    results = extra + run_checks(params["facts"], params["expect"], params["tier"], params["pool"])
    module.exit_json(
        changed=False,
        results=[r.to_dict() for r in results],
        summary=summarise(results),
        not_assessed=not_assessed(results),
    )


if __name__ == "__main__":
    main()
