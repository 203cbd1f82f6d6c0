"""Host and check text in report.md and report.html is text: no link, tag, cell or heading comes from it.

Each test records the same run twice, once with a hostile string in every field a host or a
check supplies and once with a plain word there, and compares what the documents are made of:
the tags and attributes of report.html (html.parser), the Markdown elements of report.md
(markdown-it, CommonMark with GitHub's tables and strikethrough). A link, a tag, an extra table
cell or a list that only the hostile run has came from the data.
"""

from __future__ import annotations

import html
import re
from datetime import UTC, datetime
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import invoke
from gpurack import render
from gpurack.inventory import NodeRecord, RunRecord, open_store
from gpurack.mdtext import cell_code, escape
from gpurack.report import page as page_module
from inventory_helpers import hgx_facts
from markdown_it import MarkdownIt

HOSTILE = (
    "[x](javascript:alert(1)) <script>alert(1)</script> ![i](https://e.example/i.png) "
    '<img src=x onerror=alert(1)> <a href="javascript:alert(2)">y</a> `tick` ``` a|b \\| *em* _u_ '
    "~~s~~ &amp; <!-- c --> https://evil.example/p www.evil.example ops@evil.example #\n"
    "# heading\n- item\n1. one\n    indented\n| c | d |\n"
)
# What may start a paragraph or a cell: a list, a heading, a rule, a block of HTML.
STARTS = ("- item", "1. one", "# heading", "+ x", "=== ", "---", "<script>x</script>", "> quote")
PLAIN = "plain"


def _node(word: str) -> NodeRecord:
    facts = hgx_facts()
    gpu = facts["gpurack_gpu"]
    gpu["driver_version"], gpu["cuda_version"] = word, word
    gpu["gpus"][0].update(name=word, serial=word, vbios=word, bus_id=word)
    facts["gpurack_os"]["kernel"] = word

    def result(component: str) -> dict[str, Any]:
        fields = ("id", "title", "reason", "remediation", "measured", "expected", "unit", "limit_source")
        evidence = {"source": word, "lines": [word, f"{word} again"]}
        return {
            **dict.fromkeys(fields, word),
            "component": component,
            "verdict": "fail",
            "evidence": evidence,
        }

    results = [
        result(f"A {word}"),
        result(f"B {word}"),
        {**result(word), "verdict": "warn", "id": f"{word}2"},
    ]
    return NodeRecord(f"host {word}", word, word, facts, {f"k {word}": word}, results, k8s_node_name=word)


def _documents(capsys: pytest.CaptureFixture[str], folder: Path, word: str) -> tuple[str, str]:
    folder.mkdir()
    url = f"sqlite:///{folder / 'inventory.db'}"
    with open_store(url) as store:
        run = RunRecord("validate", source=word, playbook=word, started=datetime(2026, 11, 30, 9, tzinfo=UTC))
        store.record(run, [_node(word)])
    result = invoke(capsys, "report", "1", "--db", url, "--output", folder / "r", "--format", "md,html")
    assert result.code == 0, result.err
    return (folder / "r/report.md").read_text(), (folder / "r/report.html").read_text()


class _Shape(HTMLParser):
    """Every start and end tag with its attributes, in order; the text between them apart."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, str, tuple[tuple[str, str | None], ...]]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(("start", tag, tuple(attrs)))

    def handle_endtag(self, tag: str) -> None:
        self.tags.append(("end", tag, ()))

    def handle_data(self, data: str) -> None:
        self.text.append(data)

    def handle_comment(self, data: str) -> None:
        self.tags.append(("comment", data, ()))


def _html_shape(page: str) -> _Shape:
    shape = _Shape()
    shape.feed(page)
    shape.close()
    return shape


_LITERAL = {"text", "text_special", "code_inline"}  # what reads as the characters it holds


def _markdown_shape(text: str) -> list[tuple[str, ...]]:
    """The Markdown elements of a document, runs of literal text as one `text`."""
    shape: list[tuple[str, ...]] = []
    tokens = MarkdownIt("commonmark").enable(["table", "strikethrough"]).parse(text)
    for token in tokens:
        shape.append((token.type, token.tag, repr(sorted(token.attrs.items())), token.info))
        for child in token.children or []:
            kind = "text" if child.type in _LITERAL else child.type
            if not (kind == "text" and shape[-1] == ("text",)):
                shape.append((kind,) if kind == "text" else (kind, child.tag, repr(child.attrs)))
    return shape


_GFM_AUTOLINK = re.compile(r"(?:https?://|www\.)\S+|[\w.+-]+@[\w-]+\.\S+", re.IGNORECASE)


def _autolinks(text: str) -> list[str]:
    """What GitHub's extended autolinks would link: URLs and addresses whole within one text node.

    Like cmark-gfm, this looks at text only after escapes are split off (an escaped colon is a node of
    its own) and never inside code spans or blocks.
    """
    found: list[str] = []

    def scan(state: Any) -> None:
        for token in state.tokens:
            for child in token.children or []:
                if child.type == "text":
                    found.extend(_GFM_AUTOLINK.findall(child.content))

    parser = MarkdownIt("commonmark").enable(["table", "strikethrough"])
    parser.core.ruler.before("text_join", "autolink_probe", scan)
    parser.parse(text)
    return found


@pytest.fixture
def documents(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> dict[str, tuple[str, str]]:
    return {word: _documents(capsys, tmp_path / name, word) for name, word in (("p", PLAIN), ("h", HOSTILE))}


def test_report_html_takes_no_element_or_attribute_from_data(documents: dict[str, tuple[str, str]]) -> None:
    plain, hostile = (_html_shape(documents[w][1]) for w in (PLAIN, HOSTILE))
    assert hostile.tags == plain.tags
    opened = {tag for kind, tag, _ in hostile.tags if kind == "start"}
    assert not opened & {"script", "img", "iframe", "object", "embed", "form", "base", "link"}
    hrefs = [value for _, _, attrs in hostile.tags for name, value in attrs if name == "href"]
    assert hrefs and all(value is not None and value.startswith("#node-") for value in hrefs)
    assert not any(name.startswith("on") for _, _, attrs in hostile.tags for name, _ in attrs)
    shown = "".join(hostile.text)
    assert "<script>alert(1)</script>" in shown and "[x](javascript:alert(1))" in shown  # as text


def test_report_markdown_takes_no_element_from_data(documents: dict[str, tuple[str, str]]) -> None:
    plain, hostile = (documents[w][0] for w in (PLAIN, HOSTILE))
    assert _markdown_shape(hostile) == _markdown_shape(plain)
    rendered = _html_shape(MarkdownIt("commonmark").enable(["table", "strikethrough"]).render(hostile))
    assert not {tag for kind, tag, _ in rendered.tags if kind == "start"} & {"a", "img", "script", "li"}
    assert "<script>alert(1)</script>" in "".join(rendered.text)  # shown, as text
    # GitHub also links bare URLs and addresses in text (not in code): none is left whole in one.
    assert _autolinks(plain) == [] and _autolinks(hostile) == []
    assert _autolinks("see https://evil.example/p, www.evil.example or ops@evil.example") == [
        "https://evil.example/p,",
        "www.evil.example",
        "ops@evil.example",
    ]
    assert "https\\://evil.example" in hostile and "www\\.evil" in hostile and "ops\\@evil" in hostile


@pytest.mark.parametrize("start", STARTS)
def test_markdown_escape_never_starts_a_block(start: str) -> None:
    parser = MarkdownIt("commonmark").enable(["table", "strikethrough"])
    paragraph = [t.type for t in parser.parse(f"{escape(start)}\n")]
    assert paragraph == ["paragraph_open", "inline", "paragraph_close"], start
    table = f"| a | b |\n| --- | --- |\n| {escape(start)} | {cell_code(f'{start}|x')} |\n"
    cells = [t.type for t in parser.parse(table) if t.type == "td_open"]
    assert len(cells) == 2 and html.escape(start.strip(), quote=False) in parser.render(table)


def test_markdown_cell_code_keeps_a_pipe_inside_its_cell() -> None:
    assert cell_code("gpu.xid") == "`gpu.xid`"
    assert cell_code("a|b") == "a\\|b"
    assert cell_code("a\\|b") == "a\\\\\\|b"
    assert escape("see https://x.example or www.x.example") == "see https\\://x.example or www\\.x.example"
    assert escape("09:00:00, 10.0.0.1, -512, gpu01.rack") == "09:00:00, 10.0.0.1, -512, gpu01.rack"


def test_report_html_environment_autoescapes_and_the_template_marks_nothing_safe() -> None:
    env = page_module.environment()
    assert env.autoescape is True
    assert env.from_string("{{ x }}").render(x="<b>") == "&lt;b&gt;"
    source = (Path(page_module.__file__).parent / "templates" / page_module.TEMPLATE).read_text()
    for marker in ("|safe", "| safe", "autoescape false", "Markup"):
        assert marker not in source


def test_validation_markdown_takes_no_element_from_data() -> None:
    # `gpurack validate --output` writes validation.md from a capture, which anyone can hand over.
    def results(word: str) -> list[dict[str, Any]]:
        fields = ("id", "title", "component", "measured", "expected", "unit", "reason", "remediation")
        return [{**dict.fromkeys(fields, word), "verdict": v} for v in ("fail", "warn", "skip", "pass")]

    summary = {"verdict": "fail", "pass": 1, "warn": 1, "fail": 1, "skip": 1}
    plain, hostile = (render.results_markdown(f"host {w}", results(w), summary) for w in (PLAIN, HOSTILE))
    assert _markdown_shape(hostile) == _markdown_shape(plain)
    assert _autolinks(hostile) == [] and "<script" not in hostile and "[x](" not in hostile
