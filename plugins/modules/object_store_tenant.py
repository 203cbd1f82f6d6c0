#!/usr/bin/python
# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: object_store_tenant
short_description: A team's account, bucket and seed objects on a versitygw S3 store
description:
  - Makes sure that the store at O(endpoint) has the user O(access_key) with the secret
    O(secret_key) (role C(user), which sees only its own buckets), that the bucket O(bucket) exists and
    belongs to that user, and that each file of O(seed) is in the bucket with the same bytes
    (single-part ETag and length against the local file's MD5 and size).
  - Users and bucket owners are read and changed with versitygw's admin API (C(PATCH /list-users),
    C(/create-user), C(/update-user), C(/list-buckets), C(/change-bucket-owner)), signed with
    Signature Version 4 and the root or an admin account (O(admin_access_key), O(admin_secret_key));
    the bucket is created with the root account and handed to the user; the objects are uploaded
    with the user's own credentials, so they are the user's.
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
- name: Alpha's account, bucket and the acceptance assets
  gpurack.bootstrap.object_store_tenant:
    endpoint: http://172.30.42.10:30070
    admin_access_key: "{{ root_access_key }}"
    admin_secret_key: "{{ root_secret_key }}"
    access_key: gpurack-alpha
    secret_key: "{{ alpha_secret }}"
    bucket: alpha
    seed:
      - {src: ~/.cache/gpurack/acceptance/dataset/vader_lexicon.txt, key: datasets/vader/vader_lexicon.txt}
      - {src: ~/.cache/gpurack/acceptance/model/all-MiniLM-L6-v2, key: models/all-MiniLM-L6-v2/}
  no_log: true
"""

RETURN = r"""
actions:
  description: What changed (or would, in check mode) about the user and the bucket.
  returned: always
  type: list
  elements: str
  sample: [create user gpurack-alpha, create bucket alpha owned by gpurack-alpha]
uploaded:
  description: The keys uploaded (or that would be).
  returned: always
  type: list
  elements: str
  sample: [datasets/vader/vader_lexicon.txt]
objects:
  description: How many seed files the bucket holds (or will hold) in all.
  returned: always
  type: int
  sample: 12
bytes_uploaded:
  description: The bytes uploaded (or that would be).
  returned: always
  type: int
"""


from typing import Any

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
    "access_key": {"type": "str", "required": True, "no_log": False},
    "secret_key": {"type": "str", "required": True, "no_log": True},
    "bucket": {"type": "str", "required": True},
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


def main() -> None:
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    p = module.params
    entries = [{"src": str(e["src"]), "key": str(e["key"])} for e in p["seed"]]
    try:
        files = seed_files(entries)
    except ValueError as exc:
        module.fail_json(msg=f"object_store_tenant: {exc}")
    admin = Client(p["endpoint"], p["admin_access_key"], p["admin_secret_key"], p["region"], p["timeout"])
    team = Client(p["endpoint"], p["access_key"], p["secret_key"], p["region"], p["timeout"])
    bucket, access = p["bucket"], p["access_key"]
    uploaded: list[str] = []
    sent = 0
    try:
        steps = tenant_plan(admin.list_users(), admin.bucket_owners(), access, p["secret_key"], bucket)
        if not module.check_mode:
            _apply(admin, steps, bucket, access, p["secret_key"])
        # A bucket that does not exist yet (check mode) holds nothing.
        reader = admin if module.check_mode and steps else team
        for f in files:
            md5, sha, size = file_digests(f.path)
            new_bucket = "create-bucket" in steps and module.check_mode
            if etag_matches(None if new_bucket else reader.head_object(bucket, f.key), md5, size):
                continue
            if not module.check_mode:
                team.put_file(bucket, f.key, f.path, sha, size)
            uploaded.append(f.key)
            sent += size
    except S3Error as exc:
        module.fail_json(msg=f"object_store_tenant ({bucket}): {exc}", uploaded=uploaded)
    actions = describe(steps, bucket, access)
    module.exit_json(
        changed=bool(actions or uploaded),
        actions=actions,
        uploaded=uploaded,
        objects=len(files),
        bytes_uploaded=sent,
    )


if __name__ == "__main__":
    main()
