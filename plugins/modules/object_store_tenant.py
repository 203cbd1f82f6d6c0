#!/usr/bin/python
# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: object_store_tenant
short_description: Teams' accounts, buckets and seed objects on a versitygw S3 store
description:
  - Makes sure that, for each of O(tenants), the store at O(endpoint) has the user C(access_key)
    with the secret C(secret_key) (role C(user), which sees only its own buckets), that the bucket
    C(bucket) exists and belongs to that user, and that each file of O(seed) is in the bucket with
    the same bytes (single-part ETag and length against the local file's MD5 and size).
  - Users and bucket owners are read once for all tenants and changed with versitygw's admin API
    (C(PATCH /list-users), C(/create-user), C(/update-user), C(/list-buckets),
    C(/change-bucket-owner)), signed with Signature Version 4 and the root or an admin account
    (O(admin_access_key), O(admin_secret_key)); a bucket is created with the root account and
    handed to its user; the objects are uploaded with the user's own credentials, so they are the
    user's.
  - One run for every team, so each seed file is read and hashed once, not once per team.
  - Stdlib only on the controller (no boto3); C(plugins/module_utils/object_store/s3.py).
  - Idempotent; reports only what it changed, and in check mode what it would change.
version_added: "0.1.0"
author: gpurack maintainers (@gpurack)
options:
  endpoint:
    description: The store's URL as the controller reaches it, e.g. C(http://192.0.2.10:7070).
    type: str
    required: true
  region:
    description: The region the store signs with.
    type: str
    default: us-east-1
  admin_access_key:
    description: Access key of the store's root (or an admin) account.
    type: str
    required: true
  admin_secret_key:
    description: Its secret key.
    type: str
    required: true
  tenants:
    description: The teams, each with its account and bucket.
    type: list
    elements: dict
    required: true
    suboptions:
      access_key:
        description: The team's access key (its user name in the store).
        type: str
        required: true
      secret_key:
        description: The team's secret key.
        type: str
        required: true
      bucket:
        description: The team's bucket.
        type: str
        required: true
  seed:
    description:
      - Files to upload, each C(src) (a file or a folder on the controller) and C(key); a folder's
        key ends with C(/) and its files (dot files left out) go under it by relative path.
    type: list
    elements: dict
    default: []
    suboptions:
      src:
        description: A file or a folder on the controller (C(~) is expanded).
        type: path
        required: true
      key:
        description: The object's key; a folder's ends with C(/).
        type: str
        required: true
  timeout:
    description: Seconds each request may take.
    type: int
    default: 60
attributes:
  check_mode:
    support: full
    description: Reads the store and reports what would change; changes nothing.
"""

EXAMPLES = r"""
- name: Alpha's and beta's accounts, buckets and the acceptance assets
  gpurack.bootstrap.object_store_tenant:
    endpoint: http://172.30.42.10:30070
    admin_access_key: "{{ root_access_key }}"
    admin_secret_key: "{{ root_secret_key }}"
    tenants:
      - {access_key: gpurack-alpha, secret_key: "{{ alpha_secret }}", bucket: alpha}
      - {access_key: gpurack-beta, secret_key: "{{ beta_secret }}", bucket: beta}
    seed:
      - {src: ~/.cache/gpurack/acceptance/dataset/vader_lexicon.txt, key: datasets/vader/vader_lexicon.txt}
      - {src: ~/.cache/gpurack/acceptance/model/all-MiniLM-L6-v2, key: models/all-MiniLM-L6-v2/}
  no_log: true
"""

RETURN = r"""
actions:
  description: What changed (or would, in check mode) about the users and the buckets.
  returned: always
  type: list
  elements: str
  sample: [create user gpurack-alpha, create bucket alpha owned by gpurack-alpha]
uploaded:
  description: The objects uploaded (or that would be), as C(bucket/key).
  returned: always
  type: list
  elements: str
  sample: [alpha/datasets/vader/vader_lexicon.txt]
objects:
  description: How many seed files each bucket holds (or will hold) in all.
  returned: always
  type: int
  sample: 12
bytes_uploaded:
  description: The bytes uploaded (or that would be).
  returned: always
  type: int
"""


from typing import Any, NamedTuple

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.gpurack.bootstrap.plugins.module_utils.object_store import (
    Client,
    S3Error,
    describe,
    etag_matches,
    file_digests,
    seed_files,
    tenant_plan,
)

ARGUMENT_SPEC: dict[str, Any] = {
    "endpoint": {"type": "str", "required": True},
    "region": {"type": "str", "default": "us-east-1"},
    "admin_access_key": {"type": "str", "required": True, "no_log": True},
    "admin_secret_key": {"type": "str", "required": True, "no_log": True},
    "tenants": {
        "type": "list",
        "elements": "dict",
        "required": True,
        "options": {
            "access_key": {"type": "str", "required": True, "no_log": False},
            "secret_key": {"type": "str", "required": True, "no_log": True},
            "bucket": {"type": "str", "required": True},
        },
    },
    "seed": {
        "type": "list",
        "elements": "dict",
        "default": [],
        "options": {
            "src": {"type": "path", "required": True},
            "key": {"type": "str", "required": True, "no_log": False},
        },
    },
    "timeout": {"type": "int", "default": 60},
}


class _Hashed(NamedTuple):
    """A seed file, read and hashed once for every team; `prefix` is its entry's key (a folder
    or the file's own), which a bucket is listed under."""

    path: str
    key: str
    md5: str
    sha256: str
    size: int
    prefix: str


def _apply(admin: Client, steps: list[str], bucket: str, access: str, secret: str) -> None:
    """Carry out the tenant plan's steps with the admin account."""
    for step in steps:
        if step == "create-user":
            admin.create_user(access, secret)
        elif step == "update-user":
            admin.update_user(access, secret)
        elif step == "create-bucket":
            admin.create_bucket(bucket)
            admin.change_bucket_owner(bucket, access)
        else:
            admin.change_bucket_owner(bucket, access)


def _seed_tenant(
    module: AnsibleModule, admin: Client, store: tuple[Any, Any], tenant: dict[str, str], files: list[_Hashed]
) -> tuple[list[str], list[str], int]:
    """One team's account, bucket and seed objects: its actions, the keys uploaded, the bytes sent.
    `store` is the users and bucket owners, read once for every team."""
    p = module.params
    users, owners = store
    bucket, access, secret = tenant["bucket"], tenant["access_key"], tenant["secret_key"]
    team = Client(p["endpoint"], access, secret, p["region"], p["timeout"])
    steps = tenant_plan(users, owners, access, secret, bucket)
    if not module.check_mode:
        _apply(admin, steps, bucket, access, secret)
    # A bucket that does not exist yet (check mode) holds nothing.
    reader = admin if module.check_mode and steps else team
    new_bucket = "create-bucket" in steps and module.check_mode
    uploaded: list[str] = []
    sent = 0
    held: dict[str, dict[str, str]] = {}
    for prefix in () if new_bucket else sorted({f.prefix for f in files}):
        held |= reader.list_objects(bucket, prefix)
    for f in files:
        # A key the listing does not show as these bytes is asked for by name before it is
        # sent: the listing may write an unusual key differently.
        if etag_matches(held.get(f.key), f.md5, f.size) or (
            not new_bucket and etag_matches(reader.head_object(bucket, f.key), f.md5, f.size)
        ):
            continue
        if not module.check_mode:
            team.put_file(bucket, f.key, f.path, f.sha256, f.size)
        uploaded.append(f.key)
        sent += f.size
    return describe(steps, bucket, access), uploaded, sent


def main() -> None:
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    p = module.params
    entries = [{"src": str(e["src"]), "key": str(e["key"])} for e in p["seed"]]
    try:
        files = [_Hashed(f.path, f.key, *file_digests(f.path), f.prefix) for f in seed_files(entries)]
    except (ValueError, OSError) as exc:
        module.fail_json(msg=f"object_store_tenant: {exc}")
    admin = Client(p["endpoint"], p["admin_access_key"], p["admin_secret_key"], p["region"], p["timeout"])
    actions: list[str] = []
    uploaded: list[str] = []
    sent = 0
    bucket = ""
    try:
        store = (admin.list_users(), admin.bucket_owners())
        for tenant in p["tenants"]:
            bucket = tenant["bucket"]
            done, keys, size = _seed_tenant(module, admin, store, tenant, files)
            actions += done
            uploaded += [f"{bucket}/{key}" for key in keys]
            sent += size
    except S3Error as exc:
        module.fail_json(msg=f"object_store_tenant ({bucket or 'store'}): {exc}", uploaded=uploaded)
    module.exit_json(
        changed=bool(actions or uploaded),
        actions=actions,
        uploaded=uploaded,
        objects=len(files),
        bytes_uploaded=sent,
    )


if __name__ == "__main__":
    main()
