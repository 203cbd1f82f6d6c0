"""Every ansible-test sanity ignore carries its reason and is listed in docs/development.md."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
IGNORES = sorted((REPO / "tests" / "sanity").glob("ignore-*.txt"))


def _entries() -> list[tuple[str, str, str]]:
    """(path, test:code, reason) of each ignore line."""
    out: list[tuple[str, str, str]] = []
    for ignore_file in IGNORES:
        for line in ignore_file.read_text().splitlines():
            if not line.strip():
                continue
            entry, _sep, reason = line.partition("#")
            path, test_code = entry.split()
            out.append((path, test_code, reason.strip()))
    return out


def test_there_is_an_ignore_file_for_this_ansible_core() -> None:
    from ansible.release import __version__

    major_minor = ".".join(__version__.split(".")[:2])
    assert (REPO / "tests" / "sanity" / f"ignore-{major_minor}.txt") in IGNORES


def test_every_ignore_names_a_file_that_exists_and_gives_a_reason() -> None:
    for path, test_code, reason in _entries():
        assert (REPO / path).is_file(), path
        assert ":" in test_code or test_code.isidentifier(), test_code
        assert len(reason) >= 20, f"{path} {test_code}: no reason after '#'"


def test_every_ignored_test_code_is_explained_in_the_development_docs() -> None:
    docs = (REPO / "docs" / "development.md").read_text()
    for _path, test_code, _reason in _entries():
        assert f"`{test_code}`" in docs, test_code
