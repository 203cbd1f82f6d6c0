"""`gpurack report --output`: an earlier report stays unless --force; each file is whole or absent."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

import pytest
from cli_helpers import invoke
from gpurack import outfile
from gpurack.errors import ExitCode, UsageError
from gpurack.inventory import NodeRecord, RunRecord, open_store
from inventory_helpers import hgx_facts

NAMES = ("report.md", "report.html", "report.json")
EARLIER = "the report of last week's acceptance\n"


@pytest.fixture
def db(tmp_path: Path) -> str:
    url = f"sqlite:///{tmp_path / 'inventory.db'}"
    with open_store(url) as store:
        store.record(
            RunRecord("validate", source="local", started=datetime(2026, 11, 30, 9, tzinfo=UTC)),
            [NodeRecord("gpu01", "h200", "local", hgx_facts(), {}, [{"id": "gpu.count", "verdict": "pass"}])],
        )
    return url


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name not in NAMES)


def test_report_keeps_an_earlier_report_without_force(
    capsys: pytest.CaptureFixture[str], db: str, tmp_path: Path
) -> None:
    out = tmp_path / "r"
    out.mkdir()
    (out / "report.html").write_text(EARLIER)
    result = invoke(capsys, "report", "1", "--db", db, "--output", out)
    assert result.code == ExitCode.USAGE and result.out == ""
    assert result.err == f"gpurack: {out / 'report.html'} already exists (--force replaces it)\n"
    # Nothing written, not even the files that were not there: no report is half old, half new.
    assert sorted(p.name for p in out.iterdir()) == ["report.html"]
    assert (out / "report.html").read_text() == EARLIER


def test_report_twice_into_one_folder_refuses_the_second_time(
    capsys: pytest.CaptureFixture[str], db: str, tmp_path: Path
) -> None:
    out = tmp_path / "r"
    assert invoke(capsys, "report", "1", "--db", db, "--output", out, "--format", "md").code == 0
    first = (out / "report.md").read_text()
    again = invoke(capsys, "report", "latest", "--db", db, "--output", out, "--format", "md")
    assert again.code == ExitCode.USAGE and len(again.err.splitlines()) == 1
    assert str(out / "report.md") in again.err and (out / "report.md").read_text() == first


def test_report_force_replaces_every_file(
    capsys: pytest.CaptureFixture[str], db: str, tmp_path: Path
) -> None:
    out = tmp_path / "r"
    out.mkdir()
    for name in NAMES:
        (out / name).write_text(EARLIER)
    result = invoke(capsys, "report", "1", "--db", db, "--output", out, "--force")
    assert result.code == 0, result.err
    assert result.out.splitlines() == [str(out / name) for name in NAMES]
    assert all((out / name).read_text() != EARLIER for name in NAMES)
    assert "gpu01" in (out / "report.md").read_text() and _leftovers(out) == []
    mode = 0o666 & ~_umask()
    assert all((out / name).stat().st_mode & 0o777 == mode for name in NAMES)


def test_report_force_replaces_a_link_never_its_target(
    capsys: pytest.CaptureFixture[str], db: str, tmp_path: Path
) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("not a report\n")
    out = tmp_path / "r"
    out.mkdir()
    (out / "report.md").symlink_to(victim)
    refused = invoke(capsys, "report", "1", "--db", db, "--output", out, "--format", "md")
    assert refused.code == ExitCode.USAGE and "report.md already exists" in refused.err
    assert invoke(capsys, "report", "1", "--db", db, "--output", out, "--format", "md", "--force").code == 0
    assert not (out / "report.md").is_symlink() and victim.read_text() == "not a report\n"


def test_report_crash_while_writing_leaves_the_earlier_file_whole(
    capsys: pytest.CaptureFixture[str], db: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "r"
    out.mkdir()
    (out / "report.md").write_text(EARLIER)

    def full_disk(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", full_disk)
    result = invoke(capsys, "report", "1", "--db", db, "--output", out, "--format", "md", "--force")
    assert result.code == ExitCode.USAGE
    assert result.err == f"gpurack: cannot write {out / 'report.md'}: No space left on device\n"
    assert (out / "report.md").read_text() == EARLIER and _leftovers(out) == []


def test_write_text_loses_a_race_for_a_new_name_without_overwriting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Another writer takes the name between the check and the write: its file stays.
    target = tmp_path / "report.md"
    real_link = os.link

    def racing_link(src: str, dst: str, **kwargs: bool) -> None:
        Path(dst).write_text("the other writer's\n")
        real_link(src, dst, **kwargs)

    monkeypatch.setattr(os, "link", racing_link)
    with pytest.raises(UsageError, match="already exists"):
        outfile.write_text(target, "mine\n")
    assert target.read_text() == "the other writer's\n" and _leftovers(tmp_path) == []


def test_write_text_without_hard_links_still_refuses_an_existing_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_links(src: str, dst: str, **kwargs: bool) -> None:
        raise OSError(1, "Operation not permitted")

    monkeypatch.setattr(os, "link", no_links)
    outfile.write_text(tmp_path / "new.md", "one\n")
    assert (tmp_path / "new.md").read_text() == "one\n"
    with pytest.raises(UsageError, match="already exists"):
        outfile.write_text(tmp_path / "new.md", "two\n")
    assert (tmp_path / "new.md").read_text() == "one\n" and sorted(os.listdir(tmp_path)) == ["new.md"]


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask
