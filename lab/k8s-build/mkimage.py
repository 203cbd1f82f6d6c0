#!/usr/bin/env python3
"""Write a single-layer OCI image archive without a registry or a Docker daemon.

The archive holds an OCI image layout (oci-layout, index.json, blobs/sha256/...) and,
beside it, a Docker-style manifest.json, so both of these load it:

    ctr -n k8s.io images import --label io.cri-containerd.pinned=pinned IMAGE.tar
    docker load -i IMAGE.tar

The output is reproducible: sorted entries, uid/gid 0, a fixed mtime, gzip without a
timestamp, and a fixed `created` date, so the same inputs give the same image digest.

Usage (every option may repeat where it makes sense):

    mkimage.py --ref registry.gpurack.lab/pause:3.10.2 --out pause.tar \
        --file bin/pause:/pause:0755 --entrypoint '["/pause"]'
    --host-file /usr/sbin/nft        copy a host file and the shared libraries that
                                     `ldd` says it needs, at the same paths
    --host-tree /usr/lib/x86_64-linux-gnu/xtables   copy a host directory (and the
                                     libraries its .so files need)
    --symlink /usr/sbin/iptables:xtables-nft-multi
    --dir /tmp:1777   --env PATH=...  --cmd '[...]'  --workdir /  --user 0
    --tree /tmp/stage/venv:/opt/venv  copy a staged directory tree as is (files, links,
                                     modes; no ldd), read from disk while writing: a layer
                                     of gigabytes never sits in memory
    --gzip-level 1                   faster compression for a large layer (default 6)
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from typing import BinaryIO

PASSWD = (
    "root:x:0:0:root:/root:/sbin/nologin\n"
    "nobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\n"
    "nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n"
)
GROUP = "root:x:0:\nnobody:x:65534:\nnonroot:x:65532:\n"


class Layer:
    def __init__(self) -> None:
        # path (no leading slash) -> (kind, data/target/None, mode)
        self.entries: dict[str, tuple[str, object, int]] = {}

    def add_dir(self, path: str, mode: int = 0o755) -> None:
        path = path.strip("/")
        if not path:
            return
        parent = os.path.dirname(path)
        if parent:
            self.add_dir(parent)
        # A later, explicit non-default mode wins over the implicit 0755 of a parent.
        if path not in self.entries or (self.entries[path][0] == "dir" and mode != 0o755):
            self.entries[path] = ("dir", None, mode)

    def add_bytes(self, path: str, data: bytes, mode: int) -> None:
        path = path.strip("/")
        self.add_dir(os.path.dirname(path))
        self.entries[path] = ("file", data, mode)

    def add_symlink(self, path: str, target: str) -> None:
        path = path.strip("/")
        self.add_dir(os.path.dirname(path))
        self.entries[path] = ("symlink", target, 0o777)

    def add_tree(self, src: str, dest: str) -> None:
        """A staged tree under `dest`, in a stable order; file contents are read when the tar is written."""
        for root, dirs, names in os.walk(src):
            dirs.sort()
            rel = os.path.relpath(root, src)
            base = dest.strip("/") if rel == "." else os.path.join(dest.strip("/"), rel)
            self.add_dir(base, os.stat(root).st_mode & 0o7777)
            for name in sorted(names) + [d for d in dirs if os.path.islink(os.path.join(root, d))]:
                host = os.path.join(root, name)
                path = os.path.join(base, name)
                if os.path.islink(host):
                    self.add_symlink(path, os.readlink(host))
                else:
                    self.entries[path] = ("hostfile", host, os.stat(host).st_mode & 0o7777)

    def add_host_path(self, path: str) -> None:
        """Copy a host file (following the symlink chain, keeping each link)."""
        seen = set()
        while os.path.islink(path) and path not in seen:
            seen.add(path)
            target = os.readlink(path)
            self.add_symlink(path, target)
            path = os.path.normpath(os.path.join(os.path.dirname(path), target))
        with open(path, "rb") as f:
            data = f.read()
        self.add_bytes(path, data, os.stat(path).st_mode & 0o7777)

    def tar(self, mtime: int, out: BinaryIO) -> None:
        with tarfile.open(fileobj=out, mode="w", format=tarfile.PAX_FORMAT) as tf:
            for path in sorted(self.entries):
                kind, data, mode = self.entries[path]
                info = tarfile.TarInfo(path)
                info.mtime = mtime
                info.uid = info.gid = 0
                info.uname = info.gname = ""
                info.mode = mode
                if kind == "dir":
                    info.type = tarfile.DIRTYPE
                    tf.addfile(info)
                elif kind == "symlink":
                    info.type = tarfile.SYMTYPE
                    info.linkname = str(data)
                    tf.addfile(info)
                elif kind == "hostfile":
                    assert isinstance(data, str)
                    with open(data, "rb") as f:
                        info.size = os.fstat(f.fileno()).st_size
                        tf.addfile(info, f)
                else:
                    assert isinstance(data, bytes)
                    info.size = len(data)
                    tf.addfile(info, io.BytesIO(data))


def shared_libs(path: str) -> list[str]:
    """Host paths of the shared libraries (and loader) that `path` needs, per ldd."""
    out = subprocess.run(["ldd", path], capture_output=True, text=True, check=False)
    if out.returncode != 0:  # static executable or not an ELF object
        return []
    libs = []
    for line in out.stdout.splitlines():
        parts = line.split()
        if "=>" in parts:
            i = parts.index("=>")
            if i + 1 < len(parts) and parts[i + 1].startswith("/"):
                libs.append(parts[i + 1])
        elif parts and parts[0].startswith("/"):
            libs.append(parts[0])  # the dynamic loader
    return libs


def add_with_libs(layer: Layer, path: str) -> None:
    layer.add_host_path(path)
    for lib in shared_libs(path):
        if lib.strip("/") not in layer.entries:
            layer.add_host_path(lib)
    # the loader is also looked up through /lib64 on amd64
    loader = "/lib64/ld-linux-x86-64.so.2"
    if os.path.exists(loader) and loader.strip("/") not in layer.entries and shared_libs(path):
        layer.add_host_path(loader)


def sha256(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def sha256_file(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            h.update(chunk)
    return "sha256:" + h.hexdigest()


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--ref", required=True, help="image name:tag, e.g. registry.gpurack.lab/pause:3.10.2")
    p.add_argument("--out", required=True)
    p.add_argument("--file", action="append", default=[], help="SRC:DEST[:MODE]")
    p.add_argument("--host-file", action="append", default=[])
    p.add_argument("--host-tree", action="append", default=[])
    p.add_argument("--symlink", action="append", default=[], help="PATH:TARGET")
    p.add_argument("--tree", action="append", default=[], help="SRC:DEST (a staged directory, as is)")
    p.add_argument("--gzip-level", type=int, default=6)
    p.add_argument("--dir", action="append", default=[], help="PATH[:MODE]")
    p.add_argument("--env", action="append", default=[])
    p.add_argument("--entrypoint")
    p.add_argument("--cmd")
    p.add_argument("--workdir", default="/")
    p.add_argument("--user", default="0")
    p.add_argument("--created", default="1970-01-01T00:00:00Z")
    p.add_argument("--mtime", type=int, default=0)
    p.add_argument("--label", action="append", default=[], help="KEY=VALUE (image config label)")
    return p.parse_args(argv)


def add_host_tree(layer: Layer, top: str) -> None:
    """Copy every file under a host directory, in a stable order, with the libraries each needs."""
    for root, dirs, names in os.walk(top):
        dirs.sort()
        for name in sorted(names):
            add_with_libs(layer, os.path.join(root, name))


def build_layer(a: argparse.Namespace) -> Layer:
    """The image's one layer: the base files, then each option's entries in command-line order."""
    layer = Layer()
    layer.add_bytes("etc/passwd", PASSWD.encode(), 0o644)
    layer.add_bytes("etc/group", GROUP.encode(), 0o644)
    layer.add_bytes("etc/nsswitch.conf", b"hosts: files dns\n", 0o644)
    layer.add_dir("tmp", 0o1777)
    for spec in a.dir:
        path, _, mode = spec.partition(":")
        layer.add_dir(path, int(mode, 8) if mode else 0o755)
    for spec in a.file:
        parts = spec.split(":")
        src, dest = parts[0], parts[1]
        file_mode = int(parts[2], 8) if len(parts) > 2 else 0o755
        with open(src, "rb") as f:
            layer.add_bytes(dest, f.read(), file_mode)
    for path in a.host_file:
        add_with_libs(layer, path)
    for top in a.host_tree:
        add_host_tree(layer, top)
    for spec in a.tree:
        src, _, dest = spec.partition(":")
        layer.add_tree(src, dest)
    for spec in a.symlink:
        path, _, target = spec.partition(":")
        layer.add_symlink(path, target)
    return layer


def gzip_file(src: str, dest: str, level: int) -> None:
    """Gzip without a name or timestamp, so the same input gives the same bytes."""
    with (
        open(src, "rb") as f,
        open(dest, "wb") as out,
        gzip.GzipFile(fileobj=out, mode="wb", compresslevel=level, mtime=0, filename="") as g,
    ):
        shutil.copyfileobj(f, g, 1 << 20)


def canonical_json(doc: object) -> bytes:
    return json.dumps(doc, sort_keys=True, separators=(",", ":")).encode()


def image_config(a: argparse.Namespace, diff_id: str) -> bytes:
    """The OCI image config blob."""
    cfg: dict[str, object] = {"WorkingDir": a.workdir, "User": a.user}
    env = a.env or ["PATH=/usr/local/bin:/usr/local/sbin:/usr/bin:/usr/sbin:/bin:/sbin"]
    cfg["Env"] = env
    if a.entrypoint:
        cfg["Entrypoint"] = json.loads(a.entrypoint)
    if a.cmd:
        cfg["Cmd"] = json.loads(a.cmd)
    if a.label:
        cfg["Labels"] = dict(kv.split("=", 1) for kv in a.label)
    config = {
        "created": a.created,
        "architecture": "amd64",
        "os": "linux",
        "config": cfg,
        "rootfs": {"type": "layers", "diff_ids": [diff_id]},
        "history": [{"created": a.created, "created_by": "tools/k8s-build/mkimage.py"}],
    }
    return canonical_json(config)


def image_manifest(config_blob: bytes, layer_digest: str, layer_size: int) -> bytes:
    """The OCI image manifest blob: one config, one gzip layer."""
    manifest = {
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": {
            "mediaType": "application/vnd.oci.image.config.v1+json",
            "digest": sha256(config_blob),
            "size": len(config_blob),
        },
        "layers": [
            {
                "mediaType": "application/vnd.oci.image.layer.v1.tar+gzip",
                "digest": layer_digest,
                "size": layer_size,
            }
        ],
    }
    return canonical_json(manifest)


def image_index(ref: str, manifest_blob: bytes) -> bytes:
    """The OCI layout's index.json, naming the image `ref` for containerd."""
    tag = ref.rsplit(":", 1)[1] if ":" in ref.rsplit("/", 1)[-1] else "latest"
    index = {
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.index.v1+json",
        "manifests": [
            {
                "mediaType": "application/vnd.oci.image.manifest.v1+json",
                "digest": sha256(manifest_blob),
                "size": len(manifest_blob),
                "platform": {"architecture": "amd64", "os": "linux"},
                "annotations": {"io.containerd.image.name": ref, "org.opencontainers.image.ref.name": tag},
            }
        ],
    }
    return canonical_json(index)


def docker_manifest(ref: str, config_blob: bytes, layer_digest: str) -> bytes:
    """The manifest.json that `docker load` reads."""
    manifest = [
        {
            "Config": "blobs/sha256/" + sha256(config_blob)[7:],
            "RepoTags": [ref],
            "Layers": ["blobs/sha256/" + layer_digest[7:]],
        }
    ]
    return json.dumps(manifest, separators=(",", ":")).encode()


def write_archive(out: str, mtime: int, files: dict[str, bytes | str]) -> None:
    """Write the archive beside `out` and move it into place, so a reader never sees half of it."""
    tmp = out + ".tmp"
    with tarfile.open(tmp, mode="w", format=tarfile.PAX_FORMAT) as tf:
        for d in ("blobs", "blobs/sha256"):
            info = tarfile.TarInfo(d)
            info.type, info.mode, info.mtime = tarfile.DIRTYPE, 0o755, mtime
            tf.addfile(info)
        for name in sorted(files):
            info = tarfile.TarInfo(name)
            info.mode, info.mtime = 0o644, mtime
            content = files[name]
            if isinstance(content, str):  # a blob written to disk (the layer)
                info.size = os.path.getsize(content)
                with open(content, "rb") as f:
                    tf.addfile(info, f)
            else:
                info.size = len(content)
                tf.addfile(info, io.BytesIO(content))
    os.replace(tmp, out)


def main(argv: list[str]) -> int:
    a = parse_args(argv)
    # The layer goes through files beside the output, so its size is bounded by disk, not memory.
    with tempfile.TemporaryDirectory(dir=os.path.dirname(os.path.abspath(a.out))) as work:
        raw, gz = os.path.join(work, "layer.tar"), os.path.join(work, "layer.tar.gz")
        with open(raw, "wb") as f:
            build_layer(a).tar(a.mtime, f)
        gzip_file(raw, gz, a.gzip_level)
        diff_id, layer_digest, layer_size = sha256_file(raw), sha256_file(gz), os.path.getsize(gz)
        os.unlink(raw)
        config_blob = image_config(a, diff_id)
        manifest_blob = image_manifest(config_blob, layer_digest, layer_size)
        files: dict[str, bytes | str] = {
            "oci-layout": json.dumps({"imageLayoutVersion": "1.0.0"}).encode(),
            "index.json": image_index(a.ref, manifest_blob),
            "manifest.json": docker_manifest(a.ref, config_blob, layer_digest),
            "blobs/sha256/" + layer_digest[7:]: gz,
        }
        for blob in (config_blob, manifest_blob):
            files["blobs/sha256/" + sha256(blob)[7:]] = blob
        write_archive(a.out, a.mtime, files)
    print(f"{a.ref} {sha256(manifest_blob)} {layer_size} {os.path.basename(a.out)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
