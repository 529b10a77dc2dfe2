#!/usr/bin/env python3
"""figures.py checks that measured figures have one home.

docs/benchmarks.md, "Figures at a glance", is the register: one row per
figure that another page quotes, with its value, date, machine and command.

    python3 hack/figures.py            # the check (make verify-figures)
    python3 hack/figures.py --list     # the register as the check reads it

It fails when
  1. a page cites a registered figure, [28.7 min](docs/benchmarks.md#fig-…),
     with link text that does not carry the register's value, or cites an
     id the register does not have (two places disagree);
  2. a line on an entry page (the README, the docs index, install and
     guide pages, make's help comments, a script's header comment) states
     a figure-looking value (a number with s, min, h, ×, MiB, GiB or %)
     outside code, in a paragraph with no link to docs/benchmarks.md or
     docs/testing.md (a figure restated instead of linked);
  3. a register row lacks a value, a date or a command.

A paragraph of an entry page whose numbers are settings or requirements
rather than measurements carries the comment <!-- figures: not measured -->.

The topic pages (noise.md, changepoints.md, reports.md, agent.md, …)
explain their measurements next to the reasoning they support and are not
checked by rule 2: what they quote from the register they cite by link,
and rule 1 holds them to its value.
"""
import pathlib
import re
import sys

REGISTER_HEADING = "## Figures at a glance"

# Pages a newcomer reads first: they link to figures, never restate them.
ENTRY_PAGES = ["README.md", "docs/README.md", "docs/install.md", "docs/guide.md"]
# Where the measured figures live: a paragraph linking here may quote one.
HOMES = ("benchmarks.md", "testing.md")

FIGURE = re.compile(r"(?<![\w.\-])\d[\d,]*(?:\.\d+)?\s?(?:–\s?\d[\d,]*(?:\.\d+)?\s?)?"
                    r"(?:s|min|minutes|h|hours|×|MiB|GiB|%)(?![\w])")
CITATION = re.compile(r"\[([^\]]+)\]\(([^)\s]*benchmarks\.md)#(fig-[\w-]+)\)")
ROW_ID = re.compile(r'<a id="(fig-[\w-]+)"></a>')
# A paragraph whose numbers are settings or requirements, not measurements
# (a confidence level, the memory a machine needs), says so with this
# comment, which a reviewer sees in the diff.
NOT_MEASURED = "<!-- figures: not measured -->"
HOME_LINK = re.compile(r"\]\([^)]*(?:" + "|".join(re.escape(h) for h in HOMES) + r")[^)]*\)")


def register(root):
    """The register's rows: id -> (value, line), and its problems."""
    rows, problems = {}, []
    text = (root / "docs" / "benchmarks.md").read_text().splitlines()
    try:
        start = text.index(REGISTER_HEADING)
    except ValueError:
        return rows, [f"docs/benchmarks.md: no '{REGISTER_HEADING}' section"]
    for n, line in enumerate(text[start + 1:], start + 2):
        if line.startswith("## "):
            break
        m = ROW_ID.search(line)
        if not m or not line.startswith("|"):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        # | figure | value | measured | command |
        if len(cells) < 4 or not all(cells[1:4]):
            problems.append(f"docs/benchmarks.md:{n}: {m.group(1)}: a row needs a value, when and where, and a command")
            continue
        if m.group(1) in rows:
            problems.append(f"docs/benchmarks.md:{n}: {m.group(1)} registered twice")
        rows[m.group(1)] = (normalise(cells[1].replace("**", "")), n)
    if not rows:
        problems.append("docs/benchmarks.md: the register has no rows")
    return rows, problems


def normalise(s):
    return re.sub(r"\s+", " ", s.replace("\u202f", " ").replace("\u00a0", " ")).strip()


def prose(path):
    """(line number, text, paragraph text) for each line outside code, with
    inline code spans removed; for shell and make files, the comments that
    document them."""
    lines = path.read_text().splitlines()
    out = []
    if path.suffix == ".md":
        in_fence = False
        para, members = [], []
        for n, line in enumerate(lines, 1):
            if line.lstrip().startswith("```"):
                in_fence = not in_fence
                continue
            if in_fence:
                continue
            if not line.strip():
                out.extend((m, t, " ".join(para)) for m, t in members)
                para, members = [], []
                continue
            stripped = re.sub(r"`[^`]*`", "", line)
            stripped = re.sub(r"!\[[^\]]*\]\([^)]*\)", "", stripped)  # image alt text
            para.append(line)
            members.append((n, stripped))
        out.extend((m, t, " ".join(para)) for m, t in members)
    elif path.name == "Makefile":
        for n, line in enumerate(lines, 1):
            if "##" in line:
                text = re.sub(r"`[^`]*`", "", line.split("##", 1)[1])
                out.append((n, text, text))
    else:  # a script: its header comment
        para = []
        header = []
        for n, line in enumerate(lines, 1):
            if n == 1 and line.startswith("#!"):
                continue
            if not line.startswith("#"):
                break
            header.append((n, re.sub(r"`[^`]*`", "", line)))
        text = " ".join(t for _, t in header)
        out.extend((n, t, text) for n, t in header)
    return out


def citations(root, paths, rows):
    problems = []
    for path in paths:
        rel = path.relative_to(root)
        for n, line in enumerate(path.read_text().splitlines(), 1):
            for m in CITATION.finditer(line):
                text, fid = normalise(m.group(1)), m.group(3)
                if fid not in rows:
                    problems.append(f"{rel}:{n}: cites {fid}, which docs/benchmarks.md does not register")
                    continue
                value = rows[fid][0]
                if value not in text:
                    problems.append(f"{rel}:{n}: cites {fid} as '{text}', but the register says '{value}' "
                                    f"(docs/benchmarks.md:{rows[fid][1]})")
    return problems


def restated(root, paths):
    problems = []
    for path in paths:
        rel = path.relative_to(root)
        for n, text, paragraph in prose(path):
            found = FIGURE.findall(text)
            if found and NOT_MEASURED in paragraph:
                continue
            if found and not HOME_LINK.search(paragraph) and "benchmarks.md" not in paragraph \
                    and "testing.md" not in paragraph:
                problems.append(f"{rel}:{n}: states {', '.join(repr(f) for f in found)} without a link to "
                                "docs/benchmarks.md (or docs/testing.md): cite the register instead of restating")
    return problems


def scripts(root):
    return sorted((root / "hack").rglob("*.sh"))


def check(root):
    """Every problem under root, one line each."""
    rows, problems = register(root)
    pages = [root / "README.md"] + sorted((root / "docs").glob("*.md"))
    problems += citations(root, [p for p in pages if p.exists()] + [root / "Makefile"] + scripts(root), rows)
    entry = [root / p for p in ENTRY_PAGES if (root / p).exists()]
    problems += restated(root, entry + [root / "Makefile"] + scripts(root))
    return rows, problems


def self_test():
    """The rules on a small tree, so the check can be seen to fail."""
    import tempfile
    reg = ("# B\n\n" + REGISTER_HEADING + "\n\n| figure | value | measured | command |\n|---|---|---|---|\n"
           '| <a id="fig-t"></a>t | **28.7 min** | 2026-11-29 | `make t` |\n'
           '| <a id="fig-u"></a>u | 3 s | | `make u` |\n\n## Next\n')
    cases = [
        ("[28.7 min](docs/benchmarks.md#fig-t), `300 s` is code\n\n```\ntook 9 s\n```\n", 0),
        ("It takes [30 min](docs/benchmarks.md#fig-t).\n", 1),          # disagrees
        ("It takes [28.7 min](docs/benchmarks.md#fig-x).\n", 1),        # no such row
        ("It takes 28.7 min.\n\nThe next paragraph links [b](docs/benchmarks.md).\n", 1),  # restated
        ("It takes 28.7 min (docs/testing.md).\n", 0),                  # linked in its paragraph
        ("Needs 8 GiB. " + NOT_MEASURED + "\n", 0),                       # a requirement, said so
    ]
    for n, (readme, want) in enumerate(cases):
        with tempfile.TemporaryDirectory() as d:
            root = pathlib.Path(d)
            (root / "docs").mkdir()
            (root / "hack").mkdir()
            (root / "docs" / "benchmarks.md").write_text(reg)
            (root / "README.md").write_text(readme)
            (root / "Makefile").write_text("t: ## runs t\n")
            _, problems = check(root)
            # The register's own incomplete row (fig-u) is one problem in every case.
            got = len(problems) - 1
            if got != want:
                print(f"figures self-test case {n}: {got} problem(s), want {want}: {problems}", file=sys.stderr)
                return 1
    return 0


def main(argv):
    if self_test():
        return 1
    root = pathlib.Path(__file__).resolve().parent.parent
    rows, problems = check(root)
    if "--list" in argv:
        for fid, (value, n) in sorted(rows.items()):
            print(f"{fid}\t{value}\tdocs/benchmarks.md:{n}")
        return 0
    for p in problems:
        print(p, file=sys.stderr)
    if problems:
        print(f"figures: {len(problems)} problem(s); the register is docs/benchmarks.md, "
              f"'{REGISTER_HEADING[3:]}'", file=sys.stderr)
        return 1
    print(f"figures: {len(rows)} registered, every citation agrees, entry pages link instead of restating")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
