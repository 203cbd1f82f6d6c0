"""Where a model comes from: every object under an `s3://bucket/prefix` (boto3, the standard
AWS_* environment the team's gpurack-object-store Secret sets, path-style addressing), or a
local folder (`file:///path` or a plain path: the H200 run starts from local disk)."""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gpurack_serving.cache import Source
from gpurack_serving.errors import InputError


def source_for(uri: str) -> Source:
    """The source of a model URI.

    Raises:
        InputError: another scheme, or an S3 URI without a bucket or a prefix.
    """
    if uri.startswith("s3://"):
        bucket, _, prefix = uri[5:].partition("/")
        if not bucket or not prefix.strip("/"):
            raise InputError(f"model {uri!r}: an S3 model is s3://BUCKET/PREFIX (a folder of files)")
        return S3Source(uri, bucket, prefix.strip("/") + "/")
    if "://" in uri and not uri.startswith("file://"):
        raise InputError(f"model {uri!r}: use s3://bucket/prefix or a local folder")
    path = uri.removeprefix("file://")
    if not path:
        raise InputError("the model URI is empty")
    return DirSource(uri, Path(path))


@dataclass
class S3Source:
    uri: str
    bucket: str
    prefix: str  # ends with "/"
    _objects: list[tuple[str, int]] | None = field(default=None, repr=False)

    def size(self) -> int:
        return sum(size for _, size in self._listing())

    def fetch(self, into: Path) -> None:
        from boto3.exceptions import Boto3Error  # noqa: PLC0415
        from botocore.exceptions import BotoCoreError, ClientError  # noqa: PLC0415

        client = _client()
        for key, _size in self._listing():
            target = into.joinpath(*_relative_parts(self.uri, key[len(self.prefix) :]))
            target.parent.mkdir(parents=True, exist_ok=True)
            try:
                client.download_file(self.bucket, key, str(target))
            except (ClientError, BotoCoreError, Boto3Error) as exc:
                raise InputError(f"cannot read s3://{self.bucket}/{key}: {exc}") from None

    def _listing(self) -> list[tuple[str, int]]:
        if self._objects is None:
            from botocore.exceptions import BotoCoreError, ClientError  # noqa: PLC0415

            found: list[tuple[str, int]] = []
            try:
                pages = (
                    _client()
                    .get_paginator("list_objects_v2")
                    .paginate(Bucket=self.bucket, Prefix=self.prefix)
                )
                for page in pages:
                    found.extend((o["Key"], int(o["Size"])) for o in page.get("Contents", []))
            except (ClientError, BotoCoreError) as exc:
                raise InputError(f"cannot list {self.uri}: {exc}") from None
            found = [(key, size) for key, size in found if not key.endswith("/")]
            if not found:
                raise InputError(f"model {self.uri}: no objects under it")
            for key, _size in found:
                _relative_parts(self.uri, key[len(self.prefix) :])  # refuse before any download
            self._objects = found
        return self._objects


@dataclass
class DirSource:
    uri: str
    path: Path

    def size(self) -> int:
        if not self.path.is_dir():
            raise InputError(f"model {self.uri}: no folder {self.path}")
        return sum(f.stat().st_size for f in self.path.rglob("*") if f.is_file())

    def fetch(self, into: Path) -> None:
        shutil.copytree(self.path, into)


def _relative_parts(uri: str, name: str) -> list[str]:
    """An object's path under the model's folder, as parts; a key that would leave the folder
    (`..`, an absolute or empty part: `prefix//x`) is refused.

    Raises:
        InputError: for such a key.
    """
    parts = name.split("/")
    if any(part in ("", ".", "..") for part in parts):
        raise InputError(f"model {uri}: object {name!r} would land outside the model's folder")
    return parts


def _client() -> Any:
    import boto3  # noqa: PLC0415 - a local model needs no boto3
    from botocore.config import Config  # noqa: PLC0415

    endpoint = os.environ.get("AWS_ENDPOINT_URL") or None
    try:
        return boto3.client(
            "s3",
            endpoint_url=endpoint,
            region_name=os.environ.get("AWS_REGION") or "us-east-1",
            config=Config(s3={"addressing_style": "path"}, retries={"max_attempts": 5, "mode": "standard"}),
        )
    except ValueError as exc:  # a malformed endpoint URL
        raise InputError(f"AWS_ENDPOINT_URL {endpoint!r}: {exc}") from None
