"""Every code name the reference documentation gives exists in the tree.

The rules, applied to each inline code span (text between single backticks,
outside fenced ``` blocks) in README.md and docs/*.md:

- A span with no spaces that contains a `/` and ends in a source or data file
  extension (the ones in FILE_EXTENSIONS) names a file.  It must be the path of
  a file in the repository, either from the repository's root or as the tail
  of a path (`x86_64/rtm_insn.h` names lock/x86_64/rtm_insn.h).  Spans under a
  generated folder (build/, results/, .deps/, .venv/), absolute paths and spans
  with a placeholder (`<`, `*`, `$`, `{`) name no file in the tree and are not
  checked.
- A span that is an identifier followed at once by `(` and ending in `)`, such
  as `derive_cap()` or `wait_eq(&s.running, 1)`, names a function (or
  function-like macro).  The identifier must occur as a whole word in a C,
  assembly, Python, Java or linker source of the repository (this test file
  left out, since it names wrong names on purpose).  lwIP's sources are
  fetched into .deps/, outside the check, so the docs name an lwIP function
  that our sources never call without the `()`.

docs/design.md's source map must name every folder at the top of the tree and
every folder directly under userland/ (hidden folders, such as tool caches, left
out), as a backticked `folder/` or a backticked path inside it (`arch/x86_64/`
names arch/), so that a new part of the tree cannot go unmapped.

README.md's list of documentation links every docs/*.md.

The test reads only text files; it builds nothing and runs in well under a
second.
"""
from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent

FILE_EXTENSIONS = {
    "c", "h", "S", "py", "md", "mk", "ld", "json", "java", "xml", "sh", "cfg", "cmd", "txt",
}
SOURCE_EXTENSIONS = {".c", ".h", ".S", ".py", ".java", ".ld"}
GENERATED_FOLDERS = ("build/", "results/", ".deps/", ".venv/", "/")
PLACEHOLDER_CHARACTERS = set("<*${")
SKIPPED_FOLDERS = {".git", "build", "results", ".deps", ".venv", "__pycache__"}

THIS_FILE = Path(__file__).resolve().relative_to(REPO).as_posix()

FENCE = re.compile(r"^\s*```")
SPAN = re.compile(r"`([^`\n]+)`")
PATH = re.compile(r"^[\w.\-/]+\.(\w+)$")
CALL = re.compile(r"^([A-Za-z_]\w*)\(.*\)$")


def doc_files() -> list[Path]:
    return [REPO / "README.md"] + sorted((REPO / "docs").glob("*.md"))


def code_spans(path: Path) -> list[tuple[int, str]]:
    """The inline code spans of one Markdown file, with their line numbers."""
    spans = []
    in_fence = False
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if FENCE.match(line):
            in_fence = not in_fence
            continue
        if not in_fence:
            spans.extend((number, span) for span in SPAN.findall(line))
    return spans


def repository_files() -> list[str]:
    """Every file of the tree, as a path from its root, generated folders left out."""
    found = []
    for folder, subfolders, names in os.walk(REPO):
        subfolders[:] = [s for s in subfolders if s not in SKIPPED_FOLDERS]
        relative = Path(folder).relative_to(REPO)
        found.extend((relative / name).as_posix() for name in names)
    return found


def named_path(span: str) -> str | None:
    """The file path a span names, or None when it names none to check."""
    if " " in span or "/" not in span:
        return None
    if span.startswith(GENERATED_FOLDERS) or PLACEHOLDER_CHARACTERS & set(span):
        return None
    match = PATH.match(span)
    if not match or match.group(1) not in FILE_EXTENSIONS:
        return None
    return span.removeprefix("./")


def named_function(span: str) -> str | None:
    match = CALL.match(span)
    return match.group(1) if match else None


def path_exists(path: str, files: list[str]) -> bool:
    return any(f == path or f.endswith("/" + path) for f in files)


@pytest.fixture(scope="module")
def files() -> list[str]:
    return repository_files()


@pytest.fixture(scope="module")
def source_words(files: list[str]) -> set[str]:
    words: set[str] = set()
    for name in files:
        if Path(name).suffix in SOURCE_EXTENSIONS and name != THIS_FILE:
            words.update(re.findall(r"[A-Za-z_]\w*", (REPO / name).read_text(errors="replace")))
    return words


def test_rules_recognise_paths_and_functions() -> None:
    assert named_path("kernel/fastpath.c") == "kernel/fastpath.c"
    assert named_path("tests/test_docs.py") == "tests/test_docs.py"
    assert named_path("build/x86_64-fine/kernel.elf") is None
    assert named_path("make kernel ARCH=x86_64") is None
    assert named_path("kernel/") is None
    assert named_path("arch/<port>/boot.c") is None
    assert named_function("derive_cap()") == "derive_cap"
    assert named_function("wait_eq(&s.running, 1)") == "wait_eq"
    assert named_function("LOCK=fine") is None


def test_a_wrong_name_is_caught(files: list[str], source_words: set[str]) -> None:
    assert not path_exists("kernel/no_such_file.c", files)
    assert path_exists("kernel/fastpath.c", files)
    assert path_exists("x86_64/rtm_insn.h", files)
    assert "object_locks_acquire_three" not in source_words
    assert "kernel_lock_acquire" in source_words


@pytest.mark.parametrize("doc", doc_files(), ids=lambda p: p.relative_to(REPO).as_posix())
def test_named_files_exist(doc: Path, files: list[str]) -> None:
    missing = [f"line {n}: `{span}`" for n, span in code_spans(doc)
               if (path := named_path(span)) and not path_exists(path, files)]
    assert not missing, "names of files that do not exist:\n" + "\n".join(missing)


@pytest.mark.parametrize("doc", doc_files(), ids=lambda p: p.relative_to(REPO).as_posix())
def test_named_functions_exist(doc: Path, source_words: set[str]) -> None:
    missing = [f"line {n}: `{span}`" for n, span in code_spans(doc)
               if (name := named_function(span)) and name not in source_words]
    assert not missing, "names of functions found in no source:\n" + "\n".join(missing)


def mapped_folders() -> list[str]:
    """The folders design.md's source map must name: the top level and userland/."""
    folders = []
    for parent in (REPO, REPO / "userland"):
        for path in sorted(parent.iterdir()):
            hidden = path.name.startswith(".")
            if path.is_dir() and not path.is_symlink() and not hidden and path.name not in SKIPPED_FOLDERS:
                folders.append(path.relative_to(REPO).as_posix() + "/")
    return folders


def test_source_map_names_every_folder() -> None:
    spans = {span for _, span in code_spans(REPO / "docs" / "design.md")}
    named = {folder for span in spans for folder in re.split(r",\s*", span)}
    missing = [f for f in mapped_folders() if not any(n.startswith(f) for n in named)]
    assert not missing, "folders missing from docs/design.md's source map: " + ", ".join(missing)


def test_readme_lists_every_doc() -> None:
    readme = (REPO / "README.md").read_text()
    missing = [d.name for d in sorted((REPO / "docs").glob("*.md")) if f"](docs/{d.name})" not in readme]
    assert not missing, "docs missing from README.md's list: " + ", ".join(missing)
