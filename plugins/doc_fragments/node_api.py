# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""The options and requirement of the modules that read and patch Nodes from the controller
(k8s_node_metadata, k8s_nodes_metadata; their client is module_utils/node/kube_api.py's)."""

from __future__ import annotations


class ModuleDocFragment:
    DOCUMENTATION = r"""
requirements:
  - kubernetes (the Python client)
options:
  kubeconfig:
    description: Path of the kubeconfig file on the controller.
    type: path
    required: true
  context:
    description: Context of the kubeconfig to use; the current context when omitted.
    type: str
"""
