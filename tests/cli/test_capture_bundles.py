"""gpurack facts|validate over hostile or damaged capture bundles: refused by name, never leaked."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from ansible_collections.gpurack.bootstrap.plugins.module_utils.errors import excerpt
from cli_helpers import invoke

SECRET = "TOPSECRET root:$6$hash"


@pytest.fixture
def bundle(h200x1: Path, writable_capture: Callable[[Path, str], Path]) -> Path:
    """A writable copy of the real 1x H200 capture, named after a site node."""
    return writable_capture(h200x1, "site-node-07")


@pytest.fixture
def secret(tmp_path: Path) -> Path:
    path = tmp_path / "shadow"
    path.write_text(SECRET + "\n")
    return path


def _edit(path: Path, old: bytes, new: bytes) -> None:
    data = path.read_bytes()
    assert old in data
    path.write_bytes(data.replace(old, new, 1))


@pytest.mark.parametrize("name", ["nvidia-smi-q.xml", "uname.txt", "lspci-vvv.txt", "capture.json"])
def test_facts_file_linked_out_of_the_bundle_exits_2_naming_it_without_its_content(
    capsys: pytest.CaptureFixture[str], bundle: Path, secret: Path, name: str
) -> None:
    (bundle / name).unlink(missing_ok=True)
    (bundle / name).symlink_to(secret)
    result = invoke(capsys, "facts", "--from-capture", bundle, "--format", "json")
    assert result.code == 2
    assert f"{bundle / name}: is a link that leaves the capture bundle" in result.err
    assert "TOPSECRET" not in result.out + result.err


def test_facts_sys_linked_to_the_host_sys_exits_2_instead_of_mixing_in_the_host(
    capsys: pytest.CaptureFixture[str], bundle: Path
) -> None:
    shutil.rmtree(bundle / "sys")
    (bundle / "sys").symlink_to("/sys")
    result = invoke(capsys, "facts", "--from-capture", bundle, "--format", "json")
    assert result.code == 2
    assert "is a link that leaves the capture bundle" in result.err
    assert result.out == ""


def test_facts_oversize_file_exits_2_with_a_short_message(
    capsys: pytest.CaptureFixture[str], bundle: Path
) -> None:
    with (bundle / "lspci-vvv.txt").open("r+b") as handle:
        handle.truncate(100_000_000)
    result = invoke(capsys, "facts", "--from-capture", bundle, "--format", "json")
    assert result.code == 2
    assert "lspci-vvv.txt: 100000000 bytes is over the 16 MiB a capture file may hold" in result.err
    assert len(result.err) < 500


def test_facts_one_long_line_comes_back_as_an_80_character_excerpt(
    capsys: pytest.CaptureFixture[str], bundle: Path
) -> None:
    (bundle / "lspci-vvv.txt").write_bytes(b"A" * 10_000_000)
    result = invoke(capsys, "facts", "--from-capture", bundle, "--format", "json")
    assert result.code == 2
    assert repr("A" * 80) + "... (10000000 characters)" in result.err
    assert len(result.err) < 500


def test_facts_undecodable_bytes_are_replaced_and_the_file_named_in_a_warning(
    capsys: pytest.CaptureFixture[str], bundle: Path
) -> None:
    _edit(bundle / "nvidia-smi-q.xml", b"NVIDIA H200", b"NVIDIA H\xff200")
    result = invoke(capsys, "facts", "--from-capture", bundle, "--format", "json")
    assert result.code == 0, result.err
    assert json.loads(result.out)["facts"]["gpurack_gpu"]["gpus"][0]["name"] == "NVIDIA H\ufffd200"
    assert "gpurack: warning: " in result.err
    assert "nvidia-smi-q.xml: 1 undecodable byte sequence(s) replaced by U+FFFD" in result.err


def test_validate_undecodable_capture_is_a_warning_result_and_a_warn_verdict(
    capsys: pytest.CaptureFixture[str], bundle: Path
) -> None:
    _edit(bundle / "sys/class/net/eth0/operstate", b"up", b"u\xffp")
    result = invoke(capsys, "validate", "--from-capture", bundle, "--no-record", "--json")
    data = json.loads(result.out)
    decoding = [r for r in data["results"] if r["id"] == "capture.decoding"]
    assert [r["verdict"] for r in decoding] == ["warn"]
    assert "sys/class/net/eth0/operstate" in decoding[0]["evidence"]["lines"][0]
    assert data["summary"]["verdict"] in ("warn", "fail")


def test_facts_hostname_with_non_utf8_bytes_is_refused_not_replaced_by_the_folder_name(
    capsys: pytest.CaptureFixture[str], bundle: Path
) -> None:
    _edit(bundle / "uname.txt", b"Linux vm ", b"Linux v\xffm ")
    result = invoke(capsys, "facts", "--from-capture", bundle, "--format", "json")
    assert result.code == 2
    assert "uname.txt: the node name 'v\ufffdm' has bytes that are not UTF-8" in result.err
    assert "site-node-07" not in result.out


def test_validate_manifest_host_with_non_utf8_bytes_records_nothing(
    capsys: pytest.CaptureFixture[str], bundle: Path
) -> None:
    (bundle / "capture.json").write_bytes(b'{"schema_version": 1, "host": "gpu\xff01"}\n')
    result = invoke(capsys, "validate", "--from-capture", bundle)
    assert result.code == 2
    assert "capture.json: the node name 'gpu\ufffd01' has bytes that are not UTF-8" in result.err
    listed = invoke(capsys, "inventory", "list", "--json")
    assert "site-node-07" not in listed.out
    assert '"vm"' not in listed.out


def test_facts_manifest_host_with_an_escape_sequence_is_refused(
    capsys: pytest.CaptureFixture[str], bundle: Path
) -> None:
    (bundle / "capture.json").write_text('{"schema_version": 1, "host": "gpu01\\u001b[31m"}\n')
    result = invoke(capsys, "facts", "--from-capture", bundle, "--format", "json")
    assert result.code == 2
    assert "has control characters or spaces" in result.err
    assert "\x1b" not in result.err


@pytest.mark.parametrize(
    ("manifest", "message"),
    [
        ('{"schema_version": 1}', "capture.json: `host` must be the node's name (text), got 'None'"),
        ('{"host": null}', "`host` must be the node's name (text), got 'None'"),
        ('{"host": 7}', "`host` must be the node's name (text), got '7'"),
        ('{"host": ["gpu01"]}', "`host` must be the node's name (text), got \"['gpu01']\""),
        ('{"host": ""}', "`host` must be the node's name (text), got"),
        ('{"host": "GPU01"}', "the node name 'GPU01' is not a Kubernetes node name"),
        ('{"host": "../../etc"}', "the node name '../../etc' is not a Kubernetes node name"),
        ('{"host": "a/b"}', "the node name 'a/b' is not a Kubernetes node name"),
        ('{"host": "' + "n" * 254 + '"}', "is not a Kubernetes node name"),
        ('{"host": "gpu01", ', "capture.json: not JSON"),
        ('["gpu01"]', "capture.json: must be a JSON object, got list"),
    ],
)
@pytest.mark.parametrize("verb", ["facts", "validate"])
def test_a_manifest_without_a_usable_host_is_refused_never_guessed(
    capsys: pytest.CaptureFixture[str], bundle: Path, manifest: str, message: str, verb: str
) -> None:
    (bundle / "capture.json").write_text(manifest)
    result = invoke(capsys, verb, "--from-capture", bundle)
    assert result.code == 2, result
    assert message in result.err and len(result.err.splitlines()) == 1, result.err
    listed = invoke(capsys, "inventory", "list", "--json")
    assert '"vm"' not in listed.out and "site-node-07" not in listed.out


def test_a_uname_node_name_kubernetes_refuses_is_refused(
    capsys: pytest.CaptureFixture[str], bundle: Path
) -> None:
    _edit(bundle / "uname.txt", b"Linux vm ", b"Linux Node_07 ")
    result = invoke(capsys, "validate", "--from-capture", bundle)
    assert result.code == 2
    assert "uname.txt: the node name 'Node_07' is not a Kubernetes node name" in result.err


@pytest.mark.parametrize("folder", ["Node-07", "node_07", "node..07", "-node-07", "n" * 254])
@pytest.mark.parametrize("verb", ["facts", "validate"])
def test_a_folder_name_kubernetes_refuses_is_refused_when_it_is_the_only_name(
    capsys: pytest.CaptureFixture[str],
    h200x1: Path,
    writable_capture: Callable[[Path, str], Path],
    folder: str,
    verb: str,
) -> None:
    copy = writable_capture(h200x1, folder)
    (copy / "capture.json").unlink(missing_ok=True)
    (copy / "uname.txt").unlink()
    result = invoke(capsys, verb, "--from-capture", copy)
    assert result.code == 2, result
    assert len(result.err.splitlines()) == 1, result.err
    if len(folder) < 64:  # a longer one makes the line long enough to be cut short
        assert f"the node name {excerpt(folder)} (the folder's name" in result.err, result.err
        assert "is not a Kubernetes node name" in result.err
    assert folder not in invoke(capsys, "inventory", "list", "--json").out


def test_a_folder_name_kubernetes_accepts_names_the_node(
    capsys: pytest.CaptureFixture[str], h200x1: Path, writable_capture: Callable[[Path, str], Path]
) -> None:
    copy = writable_capture(h200x1, "site-node-08")
    (copy / "capture.json").unlink(missing_ok=True)
    (copy / "uname.txt").unlink()
    result = invoke(capsys, "facts", "--from-capture", copy, "--format", "json")
    assert result.code == 0, result
    assert json.loads(result.out)["host"] == "site-node-08"
