"""The documentation: the site builds with --strict (so CI checks it), README stays a short landing page whose
links resolve, and no text speaks of the project's own history (work sessions, issue numbers)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from service.cli.docs import build_site

REPO = Path(__file__).resolve().parents[1]
README_MAX_BYTES = 10 * 1024

# Relative targets of Markdown links and images: [text](target) and ![alt](target).
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
# The project's own history: numbered work sessions, issue numbers, `#12`-style references.
HISTORY = (
    re.compile(r"\bsessions? \d+\b", re.IGNORECASE),
    re.compile(r"\bissues?[ -]\d+\b", re.IGNORECASE),
    re.compile(r"(?:^|[\s(\[])#\d+\b"),
)
HISTORY_ROOTS = ("service", "sandbox", "bench", "docs", "tests", "README.md", "mkdocs.yml")
# Not prose: stored rows and this file's own patterns; a completion's "#3" marks a sample, not an issue.
HISTORY_SKIPPED = ("tests/data", "tests/test_docs.py")
TEXT_SUFFIXES = {".py", ".md", ".yml", ".yaml", ".toml", ".html", ".js", ".css", ".txt", ".cfg", ".ini", ".sh", ""}


def _markdown_files() -> list[Path]:
    return [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]


def _relative_links(path: Path) -> list[str]:
    text = re.sub(r"```.*?```", "", path.read_text(encoding="utf-8"), flags=re.DOTALL)  # code blocks hold no links
    return [target for target in LINK.findall(text)
            if not re.match(r"^[a-z][a-z0-9+.-]*:", target) and not target.startswith(("/", "#"))]


def _anchors(path: Path) -> set[str]:
    """The ids MkDocs gives a page's headings (lower case, punctuation dropped, spaces to hyphens)."""
    anchors = set()
    for heading in re.findall(r"^#+\s+(.*)$", path.read_text(encoding="utf-8"), flags=re.MULTILINE):
        text = re.sub(r"[`*_]", "", heading).strip().lower()
        anchors.add(re.sub(r"[\s]+", "-", re.sub(r"[^\w\s-]", "", text)))
    return anchors


def test_the_site_builds_strictly(tmp_path: Path) -> None:
    """`mkdocs build --strict`, as `passk docs build` and the image run it: a broken link or page fails here."""
    build_site(tmp_path / "site")
    site = tmp_path / "site"
    assert (site / "index.html").is_file() and (site / "search" / "search_index.js").is_file()
    cli = (site / "cli.html").read_text(encoding="utf-8")
    # The CLI reference comes from the parser: every subcommand is there.
    for command in ("passk submit", "passk runs list", "passk docs build", "passk languages", "passk report"):
        assert f"<code>{command}</code>" in cli, command
    # Nothing in the site is fetched from elsewhere (fonts, scripts, styles).
    for page in site.rglob("*.html"):
        html = page.read_text(encoding="utf-8")
        assert not re.search(r"<(?:script|link)[^>]+(?:src|href)=\"https?://", html), page


def test_readme_is_a_short_landing_page() -> None:
    readme = REPO / "README.md"
    assert readme.stat().st_size <= README_MAX_BYTES, f"README.md is {readme.stat().st_size} bytes"
    text = readme.read_text(encoding="utf-8")
    # The two set-up commands, CI's included (.ci/run calls `./dev test`).
    assert "./dev up" in text and "./dev test" in text


@pytest.mark.parametrize("path", _markdown_files(), ids=lambda p: str(p.relative_to(REPO)))
def test_every_relative_link_resolves(path: Path) -> None:
    broken = []
    for target in _relative_links(path):
        file_part, _, anchor = target.partition("#")
        resolved = (path.parent / file_part).resolve() if file_part else path
        if not resolved.exists():
            broken.append(target)
        elif anchor and resolved.suffix == ".md" and anchor not in _anchors(resolved):
            broken.append(target)
    assert not broken, f"{path.relative_to(REPO)}: links that resolve to nothing: {broken}"


def test_no_words_about_the_project_history() -> None:
    hits = []
    for root in HISTORY_ROOTS:
        base = REPO / root
        files = [base] if base.is_file() else sorted(f for f in base.rglob("*") if f.is_file())
        for path in files:
            relative = path.relative_to(REPO).as_posix()
            if path.suffix not in TEXT_SUFFIXES or "__pycache__" in path.parts or relative.startswith(HISTORY_SKIPPED):
                continue
            try:
                text = path.read_text(encoding="utf-8")
            except UnicodeDecodeError:
                continue
            for number, line in enumerate(text.splitlines(), start=1):
                if any(pattern.search(line) for pattern in HISTORY):
                    hits.append(f"{path.relative_to(REPO)}:{number}: {line.strip()[:120]}")
    assert not hits, "the project's own history in its text:\n" + "\n".join(hits)
