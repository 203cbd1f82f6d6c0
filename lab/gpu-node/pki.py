"""The certificates and kubeconfigs of a one-node cluster on the GPU machine (node-stage.sh):
gpurack_lab.pki for an API server at https://127.0.0.1:6443 and kubelet NODE_NAME. Lab only:
made on the CPU machine and carried, since the GPU machine may lack openssl.

    .venv/bin/python lab/gpu-node/pki.py OUT_DIR NODE_NAME
"""

from __future__ import annotations

import sys
from pathlib import Path

from gpurack_lab.pki import write_pki

if __name__ == "__main__":
    write_pki(Path(sys.argv[1]), sys.argv[2])
