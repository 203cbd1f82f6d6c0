#!/usr/bin/python
# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: k8s_apply
short_description: Server-side apply a list of Kubernetes objects in one kubernetes.core.k8s run
description:
  - Applies every object of O(objects) with C(kubernetes.core.k8s) (server-side apply, field
    manager O(field_manager), conflicts forced so that a field edited by hand is taken back) in
    B(one) module run on the controller, rather than one run per object in a loop (one Python
    start and one API client for all of them). A site with 50 teams has about 500 objects.
  - Reports which objects changed (RV(changed_objects)) and, with C(--diff), one diff per changed
    object under its kind, namespace and name.
  - In check mode the API server dry-runs each object. An object in a namespace that the same
    list creates cannot be dry-run (its namespace does not exist yet); it is reported as one that
    would change rather than as an error.
  - Every object is tried; the task fails after the last one when any failed, naming each with
    the API server's message.
  - This is an action plugin; C(kubernetes.core) and the C(kubernetes) Python package must be on
    the controller.
version_added: "0.1.0"
author: gpurack maintainers (@gpurack)
options:
  objects:
    description: The objects, in the order to apply them (namespaces first).
    type: list
    elements: dict
    required: true
  kubeconfig:
    description: The kubeconfig to use; C(kubernetes.core)'s defaults when omitted.
    type: path
  field_manager:
    description: The server-side apply field manager.
    type: str
    default: gpurack
attributes:
  check_mode:
    support: full
    description: The API server dry-runs every object; nothing is changed.
  diff_mode:
    support: full
    description: One diff per changed object.
"""

EXAMPLES = r"""
- name: Apply the tenancy objects
  gpurack.bootstrap.k8s_apply:
    kubeconfig: /etc/kubernetes/admin.conf
    objects: "{{ tenancy_objects.objects }}"
  delegate_to: localhost
  run_once: true
"""

RETURN = r"""
changed_objects:
  description: The objects that changed (or would, in check mode), as C(Kind namespace/name).
  returned: always
  type: list
  elements: str
  sample: [ResourceQuota alpha/alpha]
objects:
  description: How many objects were applied.
  returned: always
  type: int
  sample: 22
failed_objects:
  description: Each object that failed, with the API server's message.
  returned: when any failed
  type: list
  elements: str
"""
