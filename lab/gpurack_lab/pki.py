"""The certificates and kubeconfigs of a control plane on one machine's loopback: the GPU
machine's one-node cluster (lab/gpu-node/pki.py, node-stage.sh) and the scale plane of the
1,000-node benchmark (scale_plane.py).

A CA; the API server's serving certificate (127.0.0.1, localhost, the service IP); client
certificates for the admin (system:masters, used by the controller-manager and the scheduler
too) and, given a node name, the kubelet (system:node:NODE); the service-account signing key;
and a kubeconfig for each client. Lab only: nothing here is what a real node uses (that is
kubeadm's, roles/kubeadm_*).
"""

from __future__ import annotations

import datetime
import ipaddress
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

SERVER = "https://127.0.0.1:6443"
DAYS = 30


def _key() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def _pem_key(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


def _name(common: str, org: str | None = None) -> x509.Name:
    parts = [x509.NameAttribute(NameOID.COMMON_NAME, common)]
    if org:
        parts.append(x509.NameAttribute(NameOID.ORGANIZATION_NAME, org))
    return x509.Name(parts)


def _cert(
    subject: x509.Name,
    key: ec.EllipticCurvePrivateKey,
    issuer: tuple[x509.Name, ec.EllipticCurvePrivateKey] | None,
    *,
    ca: bool = False,
    sans: list[x509.GeneralName] | None = None,
) -> x509.Certificate:
    now = datetime.datetime.now(datetime.UTC)
    issuer_name, issuer_key = issuer or (subject, key)
    builder = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=DAYS))
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
    )
    if sans:
        builder = builder.add_extension(x509.SubjectAlternativeName(sans), critical=False)
    return builder.sign(issuer_key, hashes.SHA256())


def _kubeconfig(server: str, user: str, cert: str, key: str) -> str:
    return f"""apiVersion: v1
kind: Config
clusters:
- name: gpu-node
  cluster: {{server: "{server}", certificate-authority: ca.crt}}
users:
- name: {user}
  user: {{client-certificate: {cert}, client-key: {key}}}
contexts:
- name: {user}
  context: {{cluster: gpu-node, user: {user}}}
current-context: {user}
"""


def write_pki(out: Path, node: str | None = None, server: str = SERVER) -> None:
    """Write the CA, the API server's and the clients' certificates and keys, the service-account
    key pair and admin.conf (and with `node` kubelet.conf) for an API server at `server` into
    `out`; the kubeconfigs name the files beside them."""
    out.mkdir(parents=True, exist_ok=True)
    ca_key = _key()
    ca_cert = _cert(_name("gpurack-lab-gpu-node-ca"), ca_key, None, ca=True)
    issuer = (ca_cert.subject, ca_key)
    files: dict[str, bytes] = {
        "ca.crt": ca_cert.public_bytes(serialization.Encoding.PEM),
        "ca.key": _pem_key(ca_key),
    }
    sans: list[x509.GeneralName] = [
        x509.DNSName("localhost"),
        x509.DNSName("kubernetes"),
        x509.DNSName("kubernetes.default.svc"),
        x509.IPAddress(ipaddress.ip_address("127.0.0.1")),
        x509.IPAddress(ipaddress.ip_address("10.96.0.1")),
    ]
    clients = [
        ("apiserver", _name("kube-apiserver"), sans),
        ("admin", _name("kubernetes-admin", "system:masters"), None),
    ]
    if node:
        clients.append(("kubelet", _name(f"system:node:{node}", "system:nodes"), None))
    for name, subject, extra in clients:
        key = _key()
        files[f"{name}.crt"] = _cert(subject, key, issuer, sans=extra).public_bytes(
            serialization.Encoding.PEM
        )
        files[f"{name}.key"] = _pem_key(key)
    sa = _key()
    files["sa.key"] = _pem_key(sa)
    files["sa.pub"] = sa.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    files["admin.conf"] = _kubeconfig(server, "admin", "admin.crt", "admin.key").encode()
    if node:
        kubelet = _kubeconfig(server, f"system:node:{node}", "kubelet.crt", "kubelet.key")
        files["kubelet.conf"] = kubelet.encode()
    for name, data in files.items():
        (out / name).write_bytes(data)
