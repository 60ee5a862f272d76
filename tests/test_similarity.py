"""The similarity report (arena/similarity.py, ``arena similarity``): copies between two
participants are flagged, disguised or not; the bots shipped in the repository are not; the
folders are read as untrusted uploads (links not followed, special files not opened)."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from arena.cli import cli
from arena.similarity import (MIN_FINGERPRINTS, SUSPECT, Pair, SimilarityError, compare,
                              flagged, normalise, scan)

ROOT = Path(__file__).resolve().parent.parent
GREEDY = ROOT / "bots" / "greedy"
JS_GREEDY = ROOT / "bots" / "js-greedy"
SHIPPED = sorted(p.parent for p in [*ROOT.glob("bots/*/bot.yaml"),
                                    *ROOT.glob("docs/examples/*/bot.yaml")])

#: what a student hiding a copy of bots/greedy renames
PYTHON_RENAMES = {
    "open_twos": "count_pairs", "score_move": "evaluate", "position": "pos", "color": "side",
    "own": "mine", "opp": "theirs", "me": "player", "outcome": "result", "score": "value",
    "threat": "danger", "replies": "answers", "again": "twice", "reply": "answer",
    "lost": "gone", "GreedyBot": "CleverBot", "moves": "options", "scored": "rated",
    "top": "best", "move": "mv", "raw": "r", "WIN": "VICTORY", "CAPTURE": "TAKE",
    "THREAT": "DANGER", "TWO": "PAIR", "DRAW": "TIE"}


def _pair(pairs: list[Pair], a: str, b: str) -> Pair:
    return next(p for p in pairs if {p.a, p.b} == {a, b})


def _copy(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns("__pycache__"))
    return dst


def _disguise_python(text: str) -> str:
    """Every local name renamed, docstrings and comments rewritten, indentation halved,
    blank lines doubled, quotes swapped, a function of its own added."""
    text = re.sub(r'"""(.|\n)*?"""', '"""My own greedy player."""', text)
    text = re.sub(r"#[^\n]*", "# (my note)", text)
    for old, new in PYTHON_RENAMES.items():
        text = re.sub(rf"\b{old}\b", new, text)
    text = re.sub(r"^((?:    )+)", lambda m: "  " * (len(m.group(1)) // 4), text, flags=re.M)
    text = text.replace('"win"', "'win'").replace("\n", "\n\n")
    return text + ("\n\ndef debug_dump(board, depth=0):\n  # print what I see\n"
                   "  for row in range(7):\n    print(board, row, depth, file=sys.stderr)\n"
                   "  return [x for x in board if x] or None\n")


def _disguise_js(text: str) -> str:
    """Every declared function, constant and variable renamed, comments replaced, indented
    with four spaces instead of two."""
    names = sorted(set(re.findall(r"\b(?:function|const|let|var)\s+([A-Za-z_]\w*)", text)))
    text = re.sub(r"//[^\n]*", "/* mine */", text)
    for i, name in enumerate(names):
        text = re.sub(rf"\b{name}\b", f"v{i}_", text)
    return re.sub(r"^( +)", lambda m: m.group(1) * 2, text, flags=re.M)


def test_normalised_tokens_forget_names_literals_comments_and_layout() -> None:
    from pygments.lexers import PythonLexer

    assert normalise("total = count + 1  # the sum\n", PythonLexer()) == ["N", "=", "N", "+", "0"]
    assert normalise('def f(x):\n    """Doc."""\n    return "a" f"{x}b"\n', PythonLexer()) == \
        ["def", "N", "(", "N", ")", ":", "return", "S", "N", "S"]


def test_a_copy_under_another_name_is_flagged(tmp_path: Path) -> None:
    alice = _copy(GREEDY, tmp_path / "alice")
    bob = _copy(GREEDY, tmp_path / "bob")
    (bob / "bot.py").rename(bob / "strategy.py")
    manifest = (bob / "bot.yaml").read_text()
    (bob / "bot.yaml").write_text(manifest.replace("bot.py", "strategy.py")
                                  .replace("greedy", "bob's bot"))
    pairs = compare({"alice": alice, "bob": bob, "random": ROOT / "bots" / "random"})
    pair = _pair(pairs, "alice", "bob")
    assert pair.identical_files == (("bot.py", "strategy.py"),)
    assert pair.score == pytest.approx(1.0)
    assert pair.identical_share > 0.9
    assert "bot.py = strategy.py" in pair.reason
    assert flagged(pairs) == [pair]
    assert pairs[0] == pair  # most similar first


@pytest.mark.parametrize("bot, source, disguise", [
    (GREEDY, "bot.py", _disguise_python),
    (JS_GREEDY, "bot.js", _disguise_js),
])
def test_a_renamed_and_reformatted_copy_is_flagged(tmp_path: Path, bot: Path, source: str,
                                                   disguise: object) -> None:
    assert callable(disguise)
    original = (bot / source).read_text()
    copied = disguise(original)
    assert copied != original
    carol = tmp_path / "carol"
    carol.mkdir()
    (carol / f"main{Path(source).suffix}").write_text(copied)
    (carol / "bot.yaml").write_text(f"name: carol\ncommand: run main{Path(source).suffix}\n")
    pairs = compare({"original": bot, "carol": carol, "random": ROOT / "bots" / "random"})
    pair = _pair(pairs, "original", "carol")
    assert pair.identical_files == ()
    assert pair.code_score >= 0.9, pair
    assert pair.score >= SUSPECT
    assert f"main{Path(source).suffix} ~ {source}" in pair.reason
    assert flagged(pairs) == [pair]


def test_the_shipped_bots_are_not_flagged() -> None:
    """The bots of bots/ and docs/examples/ were written independently (some share a
    protocol loop or the kit's boilerplate): none is flagged against another."""
    bots = {f"{p.parent.name}/{p.name}": p for p in SHIPPED}
    assert len(bots) >= 10
    pairs = compare(bots)
    assert len(pairs) == len(bots) * (len(bots) - 1) // 2
    assert flagged(pairs) == [], pairs[0]
    assert pairs[0].score < 0.6
    assert _pair(pairs, "bots/greedy", "bots/random").score < 0.5
    assert _pair(pairs, "examples/java", "examples/rust").score < 0.2
    assert all(p.identical_files == () for p in pairs)


def test_a_template_the_students_started_from_is_not_evidence(tmp_path: Path) -> None:
    first = ROOT / "docs" / "examples" / "first"
    dave, erin = _copy(first, tmp_path / "dave"), _copy(first, tmp_path / "erin")
    for who in (dave, erin):
        text = (who / "bot.yaml").read_text()
        (who / "bot.yaml").write_text(text + f"# {who.name}'s\n")
    without = compare({"dave": dave, "erin": erin})[0]
    assert without.identical_files == (("bot.py", "bot.py"),)
    assert without.score >= SUSPECT
    with_template = compare({"dave": dave, "erin": erin}, templates=[first])[0]
    assert with_template.identical_files == ()
    assert with_template.score == 0.0
    assert with_template.reason == "no code in common"


def test_code_in_more_bots_than_max_common_is_ignored(tmp_path: Path) -> None:
    bots = {name: _copy(GREEDY, tmp_path / name) for name in ("a", "b", "c")}
    for folder in bots.values():
        (folder / "bot.py").write_text((folder / "bot.py").read_text() + f"\n# {folder.name}\n")
    assert all(p.score == 1.0 for p in compare(bots))
    assert all(p.shared == 0 and p.score < SUSPECT for p in compare(bots, max_common=2))


def test_a_copy_of_a_small_bot_is_flagged_by_its_files(tmp_path: Path) -> None:
    """bots/random has fewer fingerprints than MIN_FINGERPRINTS: its code score counts them
    over that floor (so the kit's idioms alone flag nothing), but a byte-identical copy is
    still flagged by its identical files."""
    random = ROOT / "bots" / "random"
    assert 0 < len(scan(random).files[0].fingerprints) < MIN_FINGERPRINTS
    pair = compare({"random": random, "copy": _copy(random, tmp_path / "copy")})[0]
    assert pair.code_score < SUSPECT
    assert pair.identical_share == 1.0 and pair.score == 1.0


def test_a_link_out_of_the_folder_is_not_followed(tmp_path: Path) -> None:
    outside = _copy(GREEDY, tmp_path / "outside")
    mallory = tmp_path / "mallory"
    mallory.mkdir()
    (mallory / "bot.yaml").write_text("name: mallory\ncommand: python bot.py\n")
    os.symlink(outside / "bot.py", mallory / "bot.py")
    os.symlink(outside, mallory / "lib")
    os.symlink("/etc/passwd", mallory / "passwd.py")
    found = scan(mallory)
    assert [f.path for f in found.files] == ["bot.yaml"]
    assert dict(found.skipped) == {"bot.py": "a symbolic link", "lib": "a symbolic link",
                                   "passwd.py": "a symbolic link"}
    pair = compare({"mallory": mallory, "greedy": GREEDY})[0]
    assert pair.score == 0.0 and pair.shared == 0


def test_binary_and_special_files_are_not_read_as_source(tmp_path: Path) -> None:
    bot = tmp_path / "bot"
    bot.mkdir()
    (bot / "engine.py").write_bytes(b"x = 1\0" * 100)
    os.mkfifo(bot / "pipe.py")  # opening it for reading would wait for a writer
    (bot / "__pycache__").mkdir()
    (bot / "__pycache__" / "engine.cpython-311.pyc").write_bytes(b"\0" * 100)
    found = scan(bot)
    assert [(f.path, f.language, f.fingerprints) for f in found.files] == \
        [("engine.py", None, frozenset())]
    assert dict(found.skipped) == {"pipe.py": "not a regular file"}


def test_an_upload_of_many_files_is_read_up_to_the_cap(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    import arena.similarity

    monkeypatch.setattr(arena.similarity, "MAX_FILES", 4)
    bot = tmp_path / "bot"
    (bot / "a" / "b").mkdir(parents=True)
    for i in range(5):
        (bot / "a" / "b" / f"f{i}.py").write_text(f"x = {i}\n")
    found = scan(bot)
    assert [f.path for f in found.files] == ["a/b/f0.py", "a/b/f1.py"]
    assert found.skipped == (("a/b/f2.py", "more than 4 files and folders: the rest unread"),)


def test_a_missing_folder_is_a_typed_error(tmp_path: Path) -> None:
    with pytest.raises(SimilarityError, match="not a readable folder"):
        scan(tmp_path / "nowhere")
    with pytest.raises(SimilarityError, match="at least two"):
        compare({"one": GREEDY})


def test_the_command_prints_the_flagged_pair_and_exits_0(tmp_path: Path) -> None:
    students = tmp_path / "class"
    students.mkdir()
    _copy(GREEDY, students / "alice")
    _copy(GREEDY, students / "bob")
    _copy(ROOT / "bots" / "random", students / "carol")
    _copy(ROOT / "docs" / "examples" / "minimal", students / "dave")
    done = CliRunner().invoke(cli, ["similarity", "--parent", str(students)])
    assert done.exit_code == 0, done.output
    lines = done.output.splitlines()
    suspect = [line for line in lines if " ~ " in line and "SUSPECT" in line]
    assert len(suspect) == 1
    assert re.search(r"^\s*100%.*alice ~ bob\s+SUSPECT\s+2 identical files: bot.py, bot.yaml",
                     suspect[0])
    assert "1 of 6 pairs at or above 80% (SUSPECT)" in done.output

    folders = [str(students / n) for n in ("alice", "carol", "dave")]
    done = CliRunner().invoke(cli, ["similarity", *folders, "--json"])
    assert done.exit_code == 0, done.output
    report = json.loads(done.output)
    assert report["bots"] == ["alice", "carol", "dave"]
    assert not any(p["suspect"] for p in report["pairs"])


def test_the_command_needs_two_bots(tmp_path: Path) -> None:
    done = CliRunner().invoke(cli, ["similarity", str(GREEDY)])
    assert done.exit_code == 2
    assert "at least two" in done.output
