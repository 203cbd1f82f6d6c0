"""The verbs: one command module each, more through the `gpurack.commands` entry points, and the help."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import pytest
from cli_helpers import invoke
from gpurack import cli, commands
from gpurack.errors import ExitCode


@dataclass(frozen=True)
class _EntryPoint:
    """What importlib.metadata.entry_points() yields, enough for gpurack.commands."""

    name: str
    module: ModuleType

    def load(self) -> ModuleType:
        return self.module


def _plugin(verb: str, said: str) -> ModuleType:
    module = ModuleType(f"plugin_{verb}")

    def handle(args: argparse.Namespace) -> int:
        print(f"{said} {args.word}")
        return 0

    def register(subparsers: Any) -> None:
        parser = subparsers.add_parser(verb, help=f"the {verb} plugin")
        parser.add_argument("word")
        parser.set_defaults(handler=handle)

    module.register = register  # type: ignore[attr-defined]
    return module


def _installed(monkeypatch: pytest.MonkeyPatch, *points: _EntryPoint) -> None:
    def entry_points(group: str) -> tuple[_EntryPoint, ...]:
        return points if group == commands.ENTRY_POINT_GROUP else ()

    monkeypatch.setattr(commands, "entry_points", entry_points)


def test_help_opens_with_what_gpurack_does_the_common_commands_and_exit_codes() -> None:
    text = cli.build_parser().format_help()
    opening = text.split("\n\n")[1]
    assert opening.startswith("gpurack turns racks of bare-metal GPU servers into validated Kubernetes nodes")
    assert "Command line" not in text and "build the parser" not in text
    for command in (
        "gpurack facts --local",
        "gpurack validate --local",
        "gpurack run site -i",
        "gpurack inventory list",
    ):
        assert command in text
    codes = text[text.index("exit codes:") :]
    for code, meaning in (
        ("0", "ok"),
        ("1", "a check or a play failed"),
        ("2", "could not assess"),
        ("64", "usage or configuration error"),
        ("130", "interrupted"),
    ):
        assert f"  {code.ljust(4)} {meaning}" in codes


def test_help_lists_every_built_in_verb() -> None:
    text = cli.build_parser().format_help()
    for verb in ("capture", "facts", "validate", "run", "inventory", "queue", "report", "platform", "lab"):
        assert f"\n    {verb}" in text


def test_an_entry_point_adds_a_verb(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _installed(monkeypatch, _EntryPoint("hello", _plugin("hello", "hello")))
    result = invoke(capsys, "hello", "world")
    assert (result.code, result.out) == (0, "hello world\n")


def test_an_entry_point_named_lab_replaces_the_built_in_lab(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _installed(monkeypatch, _EntryPoint("lab", _plugin("lab", "lab from the checkout:")))
    result = invoke(capsys, "lab", "up")
    assert (result.code, result.out) == (0, "lab from the checkout: up\n")


def test_lab_without_the_lab_says_it_comes_with_a_checkout(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _installed(monkeypatch)
    result = invoke(capsys, "lab", "up", "--workers", "2")
    assert result.code == ExitCode.USAGE == 64
    assert result.err.count("\n") == 1
    assert "the lab comes with a gpurack checkout" in result.err
    assert "make setup" in result.err


def test_every_built_in_verb_has_its_command_module() -> None:
    for name in commands.BUILTIN:
        assert callable(commands.builtin(name).register)
