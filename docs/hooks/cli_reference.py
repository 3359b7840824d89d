"""MkDocs hook: the CLI reference page, generated from `passk`'s own argparse parser at build time.

docs/cli.md holds the prose and the marker `<!-- cli-reference -->`; this hook replaces the marker with one
section per subcommand (and per nested subcommand): its usage line, description and every argument with its
help text, all read from service.cli.build_parser(), so the page cannot drift from the command.
"""

from __future__ import annotations

import argparse
import os

MARKER = "<!-- cli-reference -->"


def _subcommands(parser: argparse.ArgumentParser) -> list[tuple[str, str, argparse.ArgumentParser]]:
    """(name, one-line help, parser) of each subcommand, in the order they were registered."""
    for action in parser._actions:  # argparse keeps no public view of its subparsers
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help or "" for choice in action._choices_actions}
            seen: set[int] = set()
            found = []
            for name, sub in action.choices.items():
                if id(sub) in seen:  # an alias of a subcommand already listed
                    continue
                seen.add(id(sub))
                found.append((name, helps.get(name, ""), sub))
            return found
    return []


def _arguments(parser: argparse.ArgumentParser) -> list[str]:
    rows = []
    for action in parser._actions:
        if isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)) or action.help == argparse.SUPPRESS:
            continue
        if action.option_strings:
            name = ", ".join(action.option_strings)
            if action.nargs != 0:
                name += " " + (action.metavar if isinstance(action.metavar, str) else action.dest.upper())
        else:
            name = action.metavar or action.dest
        text = (action.help or "").replace("%(default)s", str(action.default)).replace("%%", "%")
        if action.choices and not isinstance(action, argparse._SubParsersAction):
            text += f" (one of: {', '.join(map(str, action.choices))})"
        rows.append(f"| `{name}` | {text.replace('|', '&#124;')} |")
    return rows


def _section(path: list[str], help_line: str, parser: argparse.ArgumentParser, depth: int) -> list[str]:
    lines = [f"{'#' * depth} `{' '.join(path)}`", ""]
    if help_line:
        lines += [help_line, ""]
    if parser.description and parser.description != help_line:
        lines += [parser.description, ""]
    usage = " ".join(parser.format_usage().split())
    lines += ["```text", usage.removeprefix("usage: "), "```", ""]
    rows = _arguments(parser)
    if rows:
        lines += ["| argument | meaning |", "|---|---|", *rows, ""]
    for name, sub_help, sub in _subcommands(parser):
        lines += _section([*path, name], sub_help, sub, min(depth + 1, 4))
    return lines


def reference() -> str:
    from service.cli import build_parser

    os.environ.setdefault("COLUMNS", "100")  # argparse wraps usage lines at the terminal's width
    parser = build_parser()
    lines: list[str] = []
    for name, help_line, sub in _subcommands(parser):
        lines += _section(["passk", name], help_line, sub, 2)
    return "\n".join(lines)


def on_page_markdown(markdown: str, page, config, files) -> str:
    if MARKER in markdown:
        return markdown.replace(MARKER, reference())
    return markdown
