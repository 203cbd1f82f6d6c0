"""object_store_tenant against an in-memory store: first run creates, second changes nothing,
check mode changes nothing and says what it would."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from ansible_collections.gpurack.bootstrap.plugins.module_utils.object_store import s3 as _s3
from module_helpers import run_module

MODULE = "ansible_collections.gpurack.bootstrap.plugins.modules.object_store_tenant"


class FakeStore:
    def __init__(self) -> None:
        self.users: dict[str, dict[str, str]] = {}
        self.owners: dict[str, str] = {}
        self.objects: dict[tuple[str, str], tuple[str, int]] = {}
        self.calls: list[str] = []
        self.listed: list[str] = []
        self.heads: list[str] = []

    def client(self, endpoint: str, access: str, secret: str, region: str, timeout: float) -> Any:
        store = self

        class Client:
            def list_users(self) -> dict[str, dict[str, str]]:
                return {k: dict(v) for k, v in store.users.items()}

            def bucket_owners(self) -> dict[str, str]:
                return dict(store.owners)

            def create_user(self, a: str, s: str) -> None:
                store.calls.append(f"create-user {a}")
                store.users[a] = {"secret": s, "role": "user"}

            def update_user(self, a: str, s: str) -> None:
                store.calls.append(f"update-user {a}")
                store.users[a] = {"secret": s, "role": "user"}

            def create_bucket(self, b: str) -> None:
                store.calls.append(f"create-bucket {b}")
                store.owners[b] = access

            def change_bucket_owner(self, b: str, o: str) -> None:
                store.owners[b] = o

            def list_objects(self, b: str, prefix: str) -> dict[str, dict[str, str]]:
                if access != store.owners.get(b) and access != "root":
                    raise _s3.S3Error("403", 403)
                store.listed.append(f"{b}/{prefix}")
                return {
                    key: {"etag": f'"{md5}"', "content-length": str(size)}
                    for (bucket, key), (md5, size) in store.objects.items()
                    if bucket == b and key.startswith(prefix)
                }

            def head_object(self, b: str, k: str) -> dict[str, str] | None:
                store.heads.append(k)
                found = store.objects.get((b, k))
                return None if found is None else {"etag": f'"{found[0]}"', "content-length": str(found[1])}

            def put_file(self, b: str, k: str, path: str, sha: str, size: int) -> None:
                assert access == store.owners[b], "objects are uploaded with the team's own credentials"
                store.calls.append(f"put {k}")
                store.objects[(b, k)] = (_s3.file_digests(path)[0], size)

        return Client()


@pytest.fixture
def store(monkeypatch: pytest.MonkeyPatch) -> FakeStore:
    import importlib

    fake = FakeStore()
    monkeypatch.setattr(importlib.import_module(MODULE), "Client", fake.client)
    return fake


def _args(tmp_path: Path, secret: str = "s1") -> dict[str, Any]:
    (tmp_path / "m").mkdir(exist_ok=True)
    (tmp_path / "m" / "config.json").write_text("{}")
    (tmp_path / "lexicon.txt").write_text("good 1.9\n")
    return {
        "endpoint": "http://store:7070",
        "admin_access_key": "root",
        "admin_secret_key": "rootsecret",
        "tenants": [{"access_key": "gpurack-alpha", "secret_key": secret, "bucket": "alpha"}],
        "seed": [
            {"src": str(tmp_path / "lexicon.txt"), "key": "datasets/vader/vader_lexicon.txt"},
            {"src": str(tmp_path / "m"), "key": "models/m/"},
        ],
    }


def test_first_run_creates_then_nothing_changes(
    store: FakeStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    check = run_module(
        monkeypatch, capsys, "object_store_tenant", **_args(tmp_path), _ansible_check_mode=True
    )
    assert check["changed"] is True and store.calls == []
    assert check["actions"] == ["create user gpurack-alpha", "create bucket alpha owned by gpurack-alpha"]
    assert check["uploaded"] == ["alpha/datasets/vader/vader_lexicon.txt", "alpha/models/m/config.json"]

    first = run_module(monkeypatch, capsys, "object_store_tenant", **_args(tmp_path))
    assert first["changed"] is True and first["objects"] == 2
    assert store.calls == [
        "create-user gpurack-alpha",
        "create-bucket alpha",
        "put datasets/vader/vader_lexicon.txt",
        "put models/m/config.json",
    ]
    assert store.owners == {"alpha": "gpurack-alpha"}

    again = run_module(monkeypatch, capsys, "object_store_tenant", **_args(tmp_path))
    assert again["changed"] is False and again["actions"] == [] and again["uploaded"] == []
    assert "s1" not in str(again), "the secret key is never in the result"


def test_a_new_secret_or_changed_file_is_all_that_changes(
    store: FakeStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    run_module(monkeypatch, capsys, "object_store_tenant", **_args(tmp_path))
    store.calls.clear()
    args = _args(tmp_path, secret="s2")
    (tmp_path / "lexicon.txt").write_text("bad -2.5\n")
    result = run_module(monkeypatch, capsys, "object_store_tenant", **args)
    assert result["actions"] == ["update user gpurack-alpha (secret or role)"]
    assert result["uploaded"] == ["alpha/datasets/vader/vader_lexicon.txt"]
    assert store.calls == ["update-user gpurack-alpha", "put datasets/vader/vader_lexicon.txt"]


def test_a_missing_seed_source_fails_before_any_request(
    store: FakeStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    args = {**_args(tmp_path), "seed": [{"src": str(tmp_path / "gone"), "key": "k"}]}
    result = run_module(monkeypatch, capsys, "object_store_tenant", **args)
    assert result["failed"] is True and "does not exist" in result["msg"]
    assert store.calls == []


def test_every_team_gets_its_own_account_and_bucket_from_one_reading_of_the_files(
    store: FakeStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import importlib

    module = importlib.import_module(MODULE)
    hashed: list[str] = []

    def counting(path: str) -> tuple[str, str, int]:
        hashed.append(Path(path).name)
        return _s3.file_digests(path)

    monkeypatch.setattr(module, "file_digests", counting)
    args = _args(tmp_path)
    args["tenants"] = [
        {"access_key": "gpurack-alpha", "secret_key": "s1", "bucket": "alpha"},
        {"access_key": "gpurack-beta", "secret_key": "s2", "bucket": "beta"},
    ]
    result = run_module(monkeypatch, capsys, "object_store_tenant", **args)
    assert store.owners == {"alpha": "gpurack-alpha", "beta": "gpurack-beta"}
    assert sorted(result["uploaded"]) == [
        "alpha/datasets/vader/vader_lexicon.txt",
        "alpha/models/m/config.json",
        "beta/datasets/vader/vader_lexicon.txt",
        "beta/models/m/config.json",
    ]
    assert sorted(hashed) == ["config.json", "lexicon.txt"], "each file is read once, not once per team"
    store.listed.clear()
    store.heads.clear()
    again = run_module(monkeypatch, capsys, "object_store_tenant", **args)
    assert again["changed"] is False and "s2" not in str(again)
    # Each bucket listed under each seed entry's key only, and no object asked for by name.
    expected = [
        f"{b}/{k}" for b in ("alpha", "beta") for k in ("datasets/vader/vader_lexicon.txt", "models/m/")
    ]
    assert (store.listed, store.heads) == (expected, [])
