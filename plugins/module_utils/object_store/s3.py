# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""A small S3 client for the object_store role (stdlib only: no boto3 on the controller).

Signature Version 4 (`sign`, checked against AWS's documented example), the S3 calls the role
makes (a bucket's listing, HEAD and PUT of an object, PUT of a bucket) and versitygw's admin API (PATCH
/list-users, /create-user, /update-user, /list-buckets, /change-bucket-owner: signed like S3
requests with the root credentials). `seed_files` and `tenant_plan` are pure: what to upload
and what to change, from what the store already holds.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import urllib.error
import urllib.parse
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, BinaryIO

from ansible.module_utils.urls import open_url

EMPTY_SHA256 = hashlib.sha256(b"").hexdigest()
_UNRESERVED = "-_.~"
_CHUNK = 1 << 20


class S3Error(Exception):
    """A request the store refused or could not answer; the message names the call."""

    def __init__(self, message: str, status: int = 0, code: str = "") -> None:
        super().__init__(message)
        self.status = status
        self.code = code


def _hmac(key: bytes, text: str) -> bytes:
    return hmac.new(key, text.encode(), hashlib.sha256).digest()


def _quote(text: str, safe: str = "/") -> str:
    return urllib.parse.quote(text, safe=_UNRESERVED + safe)


def sign(
    method: str,
    url: str,
    headers: Mapping[str, str],
    *,
    payload_sha256: str,
    access_key: str,
    secret_key: str,
    region: str,
    now: datetime,
    service: str = "s3",
) -> dict[str, str]:
    """The headers of a request signed with SigV4: `headers` plus host, x-amz-date,
    x-amz-content-sha256 and authorization. Every header given is signed."""
    parts = urllib.parse.urlsplit(url)
    amz_date = now.astimezone(timezone.utc).strftime("%Y%m%dT%H%M%SZ")  # noqa: UP017 - modules keep 3.9 syntax
    day = amz_date[:8]
    signed = {k.lower(): " ".join(str(v).split()) for k, v in headers.items()}
    signed["host"] = parts.netloc
    signed["x-amz-date"] = amz_date
    signed["x-amz-content-sha256"] = payload_sha256
    names = sorted(signed)
    query = urllib.parse.parse_qsl(parts.query, keep_blank_values=True)
    canonical_query = "&".join(f"{_quote(k, '')}={_quote(v, '')}" for k, v in sorted(query))
    canonical = "\n".join(
        [
            method,
            _quote(urllib.parse.unquote(parts.path or "/")),
            canonical_query,
            "".join(f"{n}:{signed[n]}\n" for n in names),
            ";".join(names),
            payload_sha256,
        ]
    )
    scope = f"{day}/{region}/{service}/aws4_request"
    to_sign = "\n".join(["AWS4-HMAC-SHA256", amz_date, scope, hashlib.sha256(canonical.encode()).hexdigest()])
    key = _hmac(_hmac(_hmac(_hmac(f"AWS4{secret_key}".encode(), day), region), service), "aws4_request")
    signature = hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest()
    out = dict(headers.items())
    out.update({"x-amz-date": amz_date, "x-amz-content-sha256": payload_sha256})
    out["Authorization"] = (
        f"AWS4-HMAC-SHA256 Credential={access_key}/{scope}, "
        f"SignedHeaders={';'.join(names)}, Signature={signature}"
    )
    return out


def file_digests(path: str) -> tuple[str, str, int]:
    """MD5 (an S3 single-part ETag), SHA-256 and size of a file, in one read."""
    md5, sha = hashlib.md5(usedforsecurity=False), hashlib.sha256()
    size = 0
    with open(path, "rb") as handle:
        while chunk := handle.read(_CHUNK):
            md5.update(chunk)
            sha.update(chunk)
            size += len(chunk)
    return md5.hexdigest(), sha.hexdigest(), size


@dataclass(frozen=True)
class SeedFile:
    """A file to upload as `key`; `prefix` is its entry's key (a folder's, or the file's own)."""

    path: str
    key: str
    prefix: str = ""


def seed_files(entries: Iterable[Mapping[str, str]]) -> list[SeedFile]:
    """The files to upload: each entry's `src` is a file (uploaded as `key`) or, when `key` ends
    with '/', a folder whose files (dot files left out) go under that prefix, by relative path.

    Raises:
        ValueError: a source that does not exist, a folder whose key does not end with '/', or
            two files for one key (which one the store holds would change from run to run).
    """
    out: list[SeedFile] = []
    for entry in entries:
        src, key = str(entry["src"]), str(entry["key"]).lstrip("/")
        if os.path.isdir(src):
            if not key.endswith("/"):
                raise ValueError(f"seed source {src} is a folder: its key must end with '/', got {key!r}")
            for root, dirs, files in os.walk(src):
                dirs[:] = sorted(d for d in dirs if not d.startswith("."))
                for name in sorted(files):
                    if name.startswith("."):
                        continue
                    path = os.path.join(root, name)
                    out.append(SeedFile(path, key + os.path.relpath(path, src).replace(os.sep, "/"), key))
        elif os.path.isfile(src):
            out.append(SeedFile(src, key + os.path.basename(src) if key.endswith("/") else key, key))
        else:
            raise ValueError(f"seed source {src} does not exist")
    keys = [seed.key for seed in out]
    if twice := sorted({key for key in keys if keys.count(key) > 1}):
        raise ValueError(f"seed keys given by more than one file: {', '.join(twice)}")
    return out


def tenant_plan(
    users: Mapping[str, Mapping[str, str]],
    owners: Mapping[str, str],
    access_key: str,
    secret_key: str,
    bucket: str,
) -> list[str]:
    """What to change so that user `access_key` has `secret_key` and owns `bucket`, given the
    store's users (access key -> {secret, role}) and buckets (name -> owner):
    `create-user`, `update-user` (a secret or a role that differs), `create-bucket`,
    `change-bucket-owner`, in that order."""
    steps: list[str] = []
    user = users.get(access_key)
    if user is None:
        steps.append("create-user")
    elif user.get("secret") != secret_key or user.get("role") != "user":
        steps.append("update-user")
    if bucket not in owners:
        steps.append("create-bucket")
    elif owners[bucket] != access_key:
        steps.append("change-bucket-owner")
    return steps


def parse_users(body: bytes) -> dict[str, dict[str, str]]:
    """versitygw's ListUserAccountsResult: access key -> {secret, role}."""
    root = ET.fromstring(body)
    out: dict[str, dict[str, str]] = {}
    for acc in root.iter():
        if _local(acc.tag) not in ("Accounts", "Account"):
            continue
        fields = {_local(c.tag): (c.text or "") for c in acc}
        if "Access" in fields:
            out[fields["Access"]] = {"secret": fields.get("Secret", ""), "role": fields.get("Role", "")}
    return out


def parse_bucket_owners(body: bytes) -> dict[str, str]:
    """versitygw's admin ListBucketsResult: bucket name -> owner's access key."""
    root = ET.fromstring(body)
    out: dict[str, str] = {}
    for node in root.iter():
        fields = {_local(c.tag): (c.text or "") for c in node}
        # versitygw writes each bucket as a <Buckets> element; S3's ListBuckets as <Bucket>
        if _local(node.tag) in ("Bucket", "Buckets") and "Name" in fields:
            out[fields["Name"]] = fields.get("Owner", "")
    return out


def parse_listing(body: bytes) -> tuple[dict[str, dict[str, str]], str]:
    """A ListObjectsV2 page: each key's ETag and size in a HEAD's header names (for
    `etag_matches`), and the continuation token of the next page ('' on the last).

    Raises:
        S3Error: the body is not XML, or the page says more follow without a token.
    """
    try:
        root = ET.fromstring(body)
    except ET.ParseError as exc:
        raise S3Error(f"unreadable listing: {exc}") from None
    objects: dict[str, dict[str, str]] = {}
    fields = {_local(node.tag): (node.text or "") for node in root if _local(node.tag) != "Contents"}
    for node in root:
        if _local(node.tag) == "Contents":
            item = {_local(c.tag): (c.text or "") for c in node}
            if "Key" in item:
                objects[item["Key"]] = {"etag": item.get("ETag", ""), "content-length": item.get("Size", "")}
    token = fields.get("NextContinuationToken", "")
    if fields.get("IsTruncated", "").lower() == "true" and not token:
        raise S3Error("a truncated listing without a continuation token")
    return objects, token


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def account_xml(access_key: str, secret_key: str, role: str = "user") -> bytes:
    acc = ET.Element("Account")
    for name, value in (("Access", access_key), ("Secret", secret_key), ("Role", role)):
        ET.SubElement(acc, name).text = value
    return ET.tostring(acc)


def props_xml(secret_key: str, role: str = "user") -> bytes:
    props = ET.Element("MutableProps")
    ET.SubElement(props, "Secret").text = secret_key
    ET.SubElement(props, "Role").text = role
    return ET.tostring(props)


def error_code(body: bytes) -> str:
    try:
        root = ET.fromstring(body)
    except ET.ParseError:
        return ""
    code = next((c.text or "" for c in root.iter() if _local(c.tag) == "Code"), "")
    message = next((c.text or "" for c in root.iter() if _local(c.tag) == "Message"), "")
    return f"{code}: {message}" if message else code


class Client:
    """Signed requests to one endpoint with one pair of credentials."""

    def __init__(
        self, endpoint: str, access_key: str, secret_key: str, region: str, timeout: float = 30.0
    ) -> None:
        self.endpoint = endpoint.rstrip("/")
        self.access_key, self.secret_key, self.region = access_key, secret_key, region
        self.timeout = timeout

    def request(
        self,
        method: str,
        path: str,
        query: Mapping[str, str] | None = None,
        *,
        body: bytes | BinaryIO = b"",
        payload_sha256: str | None = None,
        headers: Mapping[str, str] | None = None,
        ok: tuple[int, ...] = (200,),
    ) -> tuple[int, dict[str, str], bytes]:
        """(status, headers, body) of a signed request; S3Error for a status not in `ok`."""
        url = self.endpoint + _quote(path)
        if query:
            url += "?" + urllib.parse.urlencode(query, quote_via=urllib.parse.quote)
        if payload_sha256 is None:
            payload_sha256 = hashlib.sha256(body).hexdigest() if isinstance(body, bytes) else EMPTY_SHA256
        signed = sign(
            method,
            url,
            dict(headers or {}),
            payload_sha256=payload_sha256,
            access_key=self.access_key,
            secret_key=self.secret_key,
            region=self.region,
            now=datetime.now(timezone.utc),  # noqa: UP017 - modules keep 3.9 syntax
        )
        try:
            with open_url(
                url, data=body if body != b"" else None, method=method, headers=signed, timeout=self.timeout
            ) as resp:
                status, got, data = resp.status, dict(resp.headers.items()), resp.read()
        except urllib.error.HTTPError as exc:
            status, got, data = exc.code, dict(exc.headers.items()), exc.read()
        except (urllib.error.URLError, OSError) as exc:
            raise S3Error(f"{method} {self.endpoint}{path}: {getattr(exc, 'reason', exc)}") from None
        if status not in ok:
            code = error_code(data)
            raise S3Error(f"{method} {self.endpoint}{path}: HTTP {status} {code}".rstrip(), status, code)
        return status, {k.lower(): v for k, v in got.items()}, data

    # --- versitygw's admin API (root or an admin account) ---------------------------------
    def list_users(self) -> dict[str, dict[str, str]]:
        return parse_users(self.request("PATCH", "/list-users")[2])

    def create_user(self, access_key: str, secret_key: str) -> None:
        self.request("PATCH", "/create-user", body=account_xml(access_key, secret_key), ok=(200, 201))

    def update_user(self, access_key: str, secret_key: str) -> None:
        self.request("PATCH", "/update-user", {"access": access_key}, body=props_xml(secret_key))

    def bucket_owners(self) -> dict[str, str]:
        return parse_bucket_owners(self.request("PATCH", "/list-buckets")[2])

    def change_bucket_owner(self, bucket: str, owner: str) -> None:
        self.request("PATCH", "/change-bucket-owner", {"bucket": bucket, "owner": owner})

    # --- S3 ------------------------------------------------------------------------------
    def create_bucket(self, bucket: str) -> None:
        body = b""
        if self.region != "us-east-1":
            body = (
                '<CreateBucketConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/">'
                f"<LocationConstraint>{self.region}</LocationConstraint></CreateBucketConfiguration>"
            ).encode()
        self.request("PUT", f"/{bucket}", body=body)

    def list_objects(self, bucket: str, prefix: str) -> dict[str, dict[str, str]]:
        """The bucket's objects under `prefix`, as `parse_listing` gives them: one request per
        1,000 keys instead of a HEAD per object, whatever else the bucket holds."""
        objects: dict[str, dict[str, str]] = {}
        query, seen = {"list-type": "2", "prefix": prefix}, set()
        while True:
            try:
                page, token = parse_listing(self.request("GET", f"/{bucket}", query)[2])
            except S3Error as exc:
                raise S3Error(
                    f"GET {self.endpoint}/{bucket}?list-type=2: {exc}", exc.status, exc.code
                ) from None
            objects.update(page)
            if not token:
                return objects
            if token in seen:
                raise S3Error(f"GET {self.endpoint}/{bucket}?list-type=2: the same continuation token twice")
            seen.add(token)
            query = {"list-type": "2", "prefix": prefix, "continuation-token": token}

    def head_object(self, bucket: str, key: str) -> dict[str, str] | None:
        try:
            return self.request("HEAD", f"/{bucket}/{key}")[1]
        except S3Error as exc:
            if exc.status == 404:
                return None
            raise

    def put_file(self, bucket: str, key: str, path: str, sha256: str, size: int) -> None:
        with open(path, "rb") as handle:
            self.request(
                "PUT",
                f"/{bucket}/{key}",
                body=handle,
                payload_sha256=sha256,
                headers={"Content-Length": str(size), "Content-Type": "application/octet-stream"},
            )


def etag_matches(head: Mapping[str, str] | None, md5: str, size: int) -> bool:
    """Whether an object's HEAD says it holds these bytes (single-part ETag and length)."""
    if head is None:
        return False
    return head.get("etag", "").strip('"') == md5 and head.get("content-length") == str(size)


def describe(steps: Iterable[str], bucket: str, access_key: str) -> list[str]:
    """One line per step, for the module's result."""
    words = {
        "create-user": f"create user {access_key}",
        "update-user": f"update user {access_key} (secret or role)",
        "create-bucket": f"create bucket {bucket} owned by {access_key}",
        "change-bucket-owner": f"give bucket {bucket} to {access_key}",
    }
    return [words[s] for s in steps]


def summary(result: Mapping[str, Any]) -> str:
    """A short line: what a run changed."""
    actions = list(result.get("actions", []))
    uploads = list(result.get("uploaded", []))
    if not actions and not uploads:
        return "nothing to change"
    return "; ".join([*actions, *(f"upload {u}" for u in uploads)])
