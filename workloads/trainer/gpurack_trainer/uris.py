"""Where the trainer reads and writes: `s3://bucket/key` through boto3, or a local path.

S3 uses the standard environment (AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
AWS_REGION) with path-style addressing, as versitygw and other self-hosted stores want.
A write is all or nothing: one S3 PUT (or a completed multipart upload) is atomic; a local
file is written beside its final name, fsynced and renamed.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from gpurack_trainer.errors import InputError


@dataclass(frozen=True, slots=True)
class Uri:
    scheme: str  # "s3" or "file"
    bucket: str  # "" for file
    path: str  # S3 key (no leading slash) or local path

    def join(self, name: str) -> Uri:
        if self.scheme == "s3":
            key = f"{self.path.rstrip('/')}/{name}" if self.path.strip("/") else name
            return Uri("s3", self.bucket, key)
        return Uri("file", "", os.path.join(self.path, name))

    def __str__(self) -> str:
        return f"s3://{self.bucket}/{self.path}" if self.scheme == "s3" else self.path


def parse_uri(text: str) -> Uri:
    """`s3://bucket/key-or-prefix`, `file:///path` or a plain path.

    Raises:
        InputError: for another scheme or an S3 URI without a bucket.
    """
    if text.startswith("s3://"):
        bucket, _, key = text[5:].partition("/")
        if not bucket:
            raise InputError(f"no bucket in {text!r}")
        return Uri("s3", bucket, key)
    if text.startswith("file://"):
        return Uri("file", "", text[7:])
    if "://" in text:
        raise InputError(f"unsupported URI {text!r}: use s3://bucket/key or a local path")
    if not text:
        raise InputError("empty path")
    return Uri("file", "", text)


_S3_CLIENT: Any = None


def _s3() -> Any:
    global _S3_CLIENT  # noqa: PLW0603 - one client per process, made on first use
    if _S3_CLIENT is None:
        import boto3  # noqa: PLC0415 - only S3 runs need boto3
        from botocore.config import Config  # noqa: PLC0415

        _S3_CLIENT = boto3.client(
            "s3",
            endpoint_url=os.environ.get("AWS_ENDPOINT_URL") or None,
            region_name=os.environ.get("AWS_REGION") or "us-east-1",
            config=Config(s3={"addressing_style": "path"}, retries={"max_attempts": 5, "mode": "standard"}),
        )
    return _S3_CLIENT


def _s3_error(uri: Uri, exc: Exception) -> InputError:
    return InputError(f"cannot read {uri}: {exc}")


def read_bytes(uri: Uri) -> bytes:
    """The whole object or file.

    Raises:
        InputError: when it does not exist or cannot be read.
    """
    if uri.scheme == "file":
        try:
            with open(uri.path, "rb") as f:
                return f.read()
        except OSError as exc:
            raise InputError(f"cannot read {uri}: {exc.strerror}") from None
    from botocore.exceptions import BotoCoreError, ClientError  # noqa: PLC0415

    try:
        body = _s3().get_object(Bucket=uri.bucket, Key=uri.path)["Body"]
        data: bytes = body.read()
        return data
    except (ClientError, BotoCoreError) as exc:
        raise _s3_error(uri, exc) from None


def list_names(prefix: Uri) -> list[str]:
    """Names directly under a folder or prefix (not recursive); [] when it does not exist."""
    if prefix.scheme == "file":
        try:
            return sorted(os.listdir(prefix.path))
        except FileNotFoundError:
            return []
    from botocore.exceptions import BotoCoreError, ClientError  # noqa: PLC0415

    key = prefix.path.rstrip("/") + "/" if prefix.path.strip("/") else ""
    names: list[str] = []
    try:
        pages = (
            _s3().get_paginator("list_objects_v2").paginate(Bucket=prefix.bucket, Prefix=key, Delimiter="/")
        )
        for page in pages:
            names.extend(obj["Key"][len(key) :] for obj in page.get("Contents", []))
    except (ClientError, BotoCoreError) as exc:
        raise InputError(f"cannot list {prefix}: {exc}") from None
    return sorted(names)


# One PUT takes up to 5 GiB; above that a multipart upload, which is atomic too (the object
# appears only when CompleteMultipartUpload succeeds).
_SINGLE_PUT_MAX = 5 * 1024**3


def write_bytes(uri: Uri, data: bytes | memoryview) -> None:
    """Write all of `data` so that a reader sees either nothing or all of it."""
    if uri.scheme == "file":
        folder = os.path.dirname(uri.path) or "."
        os.makedirs(folder, exist_ok=True)
        tmp = os.path.join(folder, f".{os.path.basename(uri.path)}.{os.getpid()}.tmp")
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, uri.path)
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)  # the rename itself survives a crash
        finally:
            os.close(fd)
        return
    if len(data) < _SINGLE_PUT_MAX:
        _s3().put_object(Bucket=uri.bucket, Key=uri.path, Body=bytes(data))
    else:
        import io  # noqa: PLC0415

        _s3().upload_fileobj(io.BytesIO(data), uri.bucket, uri.path)


def delete(uri: Uri) -> None:
    if uri.scheme == "file":
        os.unlink(uri.path)
    else:
        _s3().delete_object(Bucket=uri.bucket, Key=uri.path)
