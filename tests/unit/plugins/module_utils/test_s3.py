"""_s3: SigV4 against AWS's documented example, the seed list, the tenant plan, versitygw's XML."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from ansible_collections.gpurack.bootstrap.plugins.module_utils.object_store import s3 as _s3

# docs.aws.amazon.com/AmazonS3/latest/API/sig-v4-header-based-auth.html, "Example: GET Object"
AWS_ACCESS = "AKIAIOSFODNN7EXAMPLE"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"


def test_sign_matches_the_aws_get_object_example() -> None:
    headers = _s3.sign(
        "GET",
        "https://examplebucket.s3.amazonaws.com/test.txt",
        {"Range": "bytes=0-9"},
        payload_sha256=_s3.EMPTY_SHA256,
        access_key=AWS_ACCESS,
        secret_key=AWS_SECRET,
        region="us-east-1",
        now=datetime(2013, 5, 24, tzinfo=UTC),
    )
    assert headers["Authorization"] == (
        "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, "
        "SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, "
        "Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41"
    )
    assert headers["x-amz-date"] == "20130524T000000Z"


def test_sign_matches_the_aws_put_object_example() -> None:
    # The same page, "Example: PUT Object": a body, its hash, a Date and a storage-class header.
    body_sha = "44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072"
    headers = _s3.sign(
        "PUT",
        "https://examplebucket.s3.amazonaws.com/test%24file.text",
        {"Date": "Fri, 24 May 2013 00:00:00 GMT", "x-amz-storage-class": "REDUCED_REDUNDANCY"},
        payload_sha256=body_sha,
        access_key=AWS_ACCESS,
        secret_key=AWS_SECRET,
        region="us-east-1",
        now=datetime(2013, 5, 24, tzinfo=UTC),
    )
    assert headers["Authorization"].endswith(
        "SignedHeaders=date;host;x-amz-content-sha256;x-amz-date;x-amz-storage-class, "
        "Signature=98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd"
    )


def test_seed_files_walks_folders_by_relative_path_without_dot_files(tmp_path: Path) -> None:
    (tmp_path / "dataset").mkdir()
    (tmp_path / "dataset" / "vader_lexicon.txt").write_text("x")
    model = tmp_path / "model" / "m"
    (model / "1_Pooling").mkdir(parents=True)
    for name in ("config.json", ".gitattributes"):
        (model / name).write_text("{}")
    (model / "1_Pooling" / "config.json").write_text("{}")
    files = _s3.seed_files(
        [
            {
                "src": str(tmp_path / "dataset" / "vader_lexicon.txt"),
                "key": "datasets/vader/vader_lexicon.txt",
            },
            {"src": str(model), "key": "models/m/"},
        ]
    )
    assert [f.key for f in files] == [
        "datasets/vader/vader_lexicon.txt",
        "models/m/config.json",
        "models/m/1_Pooling/config.json",
    ]
    with pytest.raises(ValueError, match="does not exist"):
        _s3.seed_files([{"src": str(tmp_path / "nope"), "key": "k"}])
    with pytest.raises(ValueError, match="must end with '/'"):
        _s3.seed_files([{"src": str(model), "key": "models/m"}])


@pytest.mark.parametrize(
    ("users", "owners", "steps"),
    [
        ({}, {}, ["create-user", "create-bucket"]),
        ({"gpurack-a": {"secret": "s", "role": "user"}}, {"a": "gpurack-a"}, []),
        ({"gpurack-a": {"secret": "old", "role": "user"}}, {"a": "gpurack-a"}, ["update-user"]),
        ({"gpurack-a": {"secret": "s", "role": "admin"}}, {"a": "gpurack-a"}, ["update-user"]),
        ({"gpurack-a": {"secret": "s", "role": "user"}}, {"a": "root"}, ["change-bucket-owner"]),
        ({"gpurack-a": {"secret": "s", "role": "user"}}, {}, ["create-bucket"]),
    ],
)
def test_tenant_plan_changes_only_what_differs(
    users: dict[str, dict[str, str]], owners: dict[str, str], steps: list[str]
) -> None:
    assert _s3.tenant_plan(users, owners, "gpurack-a", "s", "a") == steps


def test_versitygw_admin_answers_parse() -> None:
    users = (
        b'<?xml version="1.0" encoding="UTF-8"?>\n'
        b"<ListUserAccountsResult><Accounts><Access>gpurack-a</Access>"
        b"<Secret>s</Secret><Role>user</Role><UserID>0</UserID></Accounts></ListUserAccountsResult>"
    )
    assert _s3.parse_users(users) == {"gpurack-a": {"secret": "s", "role": "user"}}
    buckets = (
        b'<?xml version="1.0" encoding="UTF-8"?>\n'
        b"<ListBucketsResult><Buckets><Name>a</Name><Owner>root</Owner>"
        b"</Buckets><Buckets><Name>b</Name><Owner>gpurack-b</Owner></Buckets></ListBucketsResult>"
    )
    assert _s3.parse_bucket_owners(buckets) == {"a": "root", "b": "gpurack-b"}
    assert _s3.parse_users(b"<ListUserAccountsResult></ListUserAccountsResult>") == {}
    assert _s3.error_code(b"<Error><Code>AccessDenied</Code><Message>Access Denied.</Message></Error>") == (
        "AccessDenied: Access Denied."
    )
    assert b"<Role>user</Role>" in _s3.account_xml("gpurack-a", "s")


def test_etag_matches_needs_the_same_md5_and_length() -> None:
    head = {"etag": '"0cc175b9c0f1b6a831c399e269772661"', "content-length": "1"}
    assert _s3.etag_matches(head, "0cc175b9c0f1b6a831c399e269772661", 1)
    assert not _s3.etag_matches(head, "0cc175b9c0f1b6a831c399e269772661", 2)
    assert not _s3.etag_matches(None, "x", 1)


def test_a_listing_page_gives_each_key_as_a_head_would_and_the_next_token() -> None:
    page = (
        b'<?xml version="1.0" encoding="UTF-8"?>\n'
        b'<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>alpha</Name>'
        b"<IsTruncated>true</IsTruncated><NextContinuationToken>t2</NextContinuationToken>"
        b"<Contents><Key>model/config.json</Key><ETag>&quot;0cc175b9c0f1b6a831c399e269772661&quot;</ETag>"
        b"<Size>1</Size></Contents></ListBucketResult>"
    )
    objects, token = _s3.parse_listing(page)
    assert token == "t2"
    assert _s3.etag_matches(objects["model/config.json"], "0cc175b9c0f1b6a831c399e269772661", 1)
    last, token = _s3.parse_listing(b"<ListBucketResult><IsTruncated>false</IsTruncated></ListBucketResult>")
    assert (last, token) == ({}, "")


@pytest.mark.parametrize(
    "body",
    [b"<html>proxy error</html", b"<ListBucketResult><IsTruncated>true</IsTruncated></ListBucketResult>"],
    ids=["not-xml", "truncated-without-token"],
)
def test_a_listing_that_cannot_be_trusted_is_an_s3_error(body: bytes) -> None:
    with pytest.raises(_s3.S3Error):
        _s3.parse_listing(body)


def test_two_files_for_one_seed_key_are_refused(tmp_path: Path) -> None:
    (tmp_path / "a").write_text("1")
    (tmp_path / "b").write_text("2")
    entries = [{"src": str(tmp_path / "a"), "key": "k"}, {"src": str(tmp_path / "b"), "key": "k"}]
    with pytest.raises(ValueError, match="more than one file: k"):
        _s3.seed_files(entries)
