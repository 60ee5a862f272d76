"""Bot manifests (:mod:`arena.manifest`): what ``bot.yaml`` says becomes a ``BotSpec``, and it
is read safely (issue 10, point 4): the referee reads manifests outside any sandbox, often as
root, so a manifest is a regular file inside its bot folder, at most 64 KiB, and no error
shows anything of a file beyond a key's name.

Every path that loads a bot goes through ``load_bot``: ``arena check``, ``arena play``,
``arena run`` (the tournament file's ``bots``) and ``arena sprt``; each is tried here.
"""

from __future__ import annotations

import os
import shutil
import sys
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner

from arena.cli import cli
from arena.errors import ConfigError
from arena.manifest import MANIFEST_CAP, load_bot
from tests.conftest import TEST_BOTS

ROOT = Path(__file__).resolve().parent.parent
RANDOM = ROOT / "bots" / "random"
#: what a root-only file holds; it must never appear in any output
SECRET = "SECRETHASH"
SHADOW_LINE = f"root:$6${SECRET}$x:19000:0:99999:7:::\n"


@pytest.fixture
def secret_file(tmp_path: Path) -> Path:
    """A file outside every bot folder, standing for /etc/shadow."""
    path = tmp_path / "shadow"
    path.write_text(SHADOW_LINE)
    return path


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The current directory, with a copy of the example random bot at ``random/``."""
    work = tmp_path / "work"
    shutil.copytree(RANDOM, work / "random")
    monkeypatch.chdir(work)
    return work


def linked_bot(folder: Path, target: Path) -> Path:
    """A bot folder whose bot.yaml is a symbolic link to ``target``."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "bot.yaml").symlink_to(target)
    return folder


def refusal(folder: Path) -> str:
    with pytest.raises(ConfigError) as info:
        load_bot(folder)
    return str(info.value)


# -- what a manifest says: keys, values, defaults -----------------------------------------


def write_bot(folder: Path, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "bot.yaml").write_text(text)
    return folder


def test_load_bot_reads_the_manifest(tmp_path: Path) -> None:
    (tmp_path / "b" / "sub").mkdir(parents=True)
    folder = write_bot(tmp_path / "b", "name: mine\nauthor: me\ncommand: '{python} {dir}/x.py -v'\n"
                       "cwd: sub\noptions: {Depth: 3, Fast: true}\n")
    spec = load_bot(folder, options={"Depth": 5, "Extra": "a b"})
    assert spec.name == "mine" and spec.author == "me"
    assert spec.command == (sys.executable, f"{folder.resolve()}/x.py", "-v")
    assert spec.cwd == str((folder / "sub").resolve())
    assert spec.options == {"Depth": "5", "Fast": "true", "Extra": "a b"}
    assert spec.folder_name == "b"
    assert load_bot(folder, name="other").name == "other"


def test_load_bot_defaults(tmp_path: Path) -> None:
    folder = write_bot(tmp_path / "plain", "command: [./run, --fast]\n")
    spec = load_bot(folder)
    assert spec.name == "plain" and spec.author == "" and spec.options == {}
    assert spec.command == ("./run", "--fast") and spec.cwd == str(folder.resolve())
    assert spec.build == () and not spec.legal_moves and spec.variants == ()


def test_load_bot_reads_build_legal_moves_and_variants(tmp_path: Path) -> None:
    folder = write_bot(tmp_path / "c", "command: ./bot\nbuild: cc -O2 -o bot bot.c && strip bot\n"
                                       "build_timeout: 60\nlegal_moves: true\n"
                                       "variants: [nine-mens-morris, 12mm, nine-mens-morris]\n")
    spec = load_bot(folder)
    assert spec.build == ("/bin/sh", "-c", "cc -O2 -o bot bot.c && strip bot")
    assert spec.build_timeout_s == 60.0 and spec.legal_moves is True
    assert spec.variants == ("nine-mens-morris", "twelve-mens-morris")
    listed = load_bot(write_bot(tmp_path / "d", "command: ./bot\nbuild: [make, bot]\n"))
    assert listed.build == ("make", "bot")


@pytest.mark.parametrize("text,message", [
    ("command: [", "broken YAML"),
    ("- a\n- b\n", "expected a mapping"),
    ("command: x\ncolour: red\n", "colour: unknown key"),
    ("name: x\n", "command: expected a command"),
    ("command: []\n", "command: the command is empty"),
    ("command: {a: 1}\n", "expected a command"),
    ("command: x\ncwd: nowhere\n", "cwd: no such folder"),
    ("command: x\noptions: [1, 2]\n", "options: expected a mapping"),
    ("command: x\noptions: {A: [1]}\n", "options.A: expected a number"),
    ("command: x\nname: [1]\n", "name: expected a string"),
    ("command: x\ndescription: [1]\n", "description: expected a string"),
    ("command: x\nlanguage: {c: 1}\n", "language: expected a string"),
    ("command: x\nversion: [1, 2]\n", "version: expected a string or a number"),
    ("command: x\nbuild: ''\n", "build: expected a build command"),
    ("command: x\nbuild: {make: 1}\n", "build: expected a build command"),
    ("command: x\nbuild: make\nbuild_timeout: 0\n", "build_timeout: expected a number"),
    ("command: x\nbuild: make\nbuild_timeout: 99999\n", "build_timeout: expected a number"),
    ("command: x\nlegal_moves: yes please\n", "legal_moves: expected true or false"),
    ("command: x\nvariants: []\n", "variants: expected a list"),
    ("command: x\nvariants: [chess]\n", "variants[0]: not a variant"),
])
def test_load_bot_rejects(tmp_path: Path, text: str, message: str) -> None:
    folder = write_bot(tmp_path / "bad", text)
    with pytest.raises(ConfigError, match=message.replace("[", r"\[")):
        load_bot(folder)


def test_load_bot_needs_a_folder_with_a_manifest(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="bot folder not found"):
        load_bot(tmp_path / "nope")
    with pytest.raises(ConfigError, match="no bot.yaml"):
        load_bot(tmp_path)


def test_every_test_bot_loads() -> None:
    folders = [p for p in TEST_BOTS.iterdir() if p.is_dir() and not p.name.startswith("_")]
    assert len(folders) >= 15
    for folder in folders:
        assert load_bot(folder).name == folder.name


# -- links --------------------------------------------------------------------------------


def test_a_link_out_of_the_folder_is_refused_without_showing_the_file(
        workdir: Path, secret_file: Path) -> None:
    linked_bot(workdir / "b", secret_file)
    message = refusal(Path("b"))
    assert message == ("b/bot.yaml: a link leading outside the bot folder: refused (bot.yaml "
                       "must be a file inside the bot folder)")
    # also through a chain of links that starts inside the folder
    (workdir / "c").mkdir()
    (workdir / "c" / "inner.yaml").symlink_to(secret_file)
    (workdir / "c" / "bot.yaml").symlink_to("inner.yaml")
    assert "a link leading outside the bot folder" in refusal(Path("c"))
    # and to a sibling folder whose name starts like this one's
    shutil.copytree(RANDOM, workdir / "d2")
    linked_bot(workdir / "d", workdir / "d2" / "bot.yaml")
    assert "outside the bot folder" in refusal(Path("d"))


def test_links_inside_the_folder_and_a_linked_folder_are_fine(workdir: Path,
                                                              secret_file: Path) -> None:
    folder = workdir / "b"
    (folder / "conf").mkdir(parents=True)
    (folder / "conf" / "manifest.yaml").write_text("name: linked\ncommand: '{python} x.py'\n")
    (folder / "bot.yaml").symlink_to("conf/manifest.yaml")
    assert load_bot(folder).name == "linked"
    (workdir / "alias").symlink_to(folder)  # users link bot folders; that is fine
    assert load_bot(workdir / "alias").name == "linked"
    # a bot folder linked elsewhere whose manifest links back out of it is still refused
    (workdir / "out").symlink_to(linked_bot(workdir / "e", secret_file))
    assert "outside the bot folder" in refusal(Path("out"))


@pytest.mark.parametrize("command", [
    ["check", "b"],
    ["play", "b", "random", "--quiet"],
    ["play", "random", "b", "--quiet"],
    ["sprt", "b", "random"],
    ["sprt", "random", "b:Depth=2"],
])
def test_every_command_refuses_the_link_and_never_prints_the_file(
        workdir: Path, secret_file: Path, command: list[str]) -> None:
    linked_bot(workdir / "b", secret_file)
    result = CliRunner().invoke(cli, command)
    assert result.exit_code == 2, result.output
    assert result.output == ("Error: b/bot.yaml: a link leading outside the bot folder: "
                             "refused (bot.yaml must be a file inside the bot folder)\n")
    assert SECRET not in result.output


@pytest.mark.parametrize("entry", ["b", "class/*"])
def test_a_tournament_refuses_the_link_even_among_a_glob(workdir: Path, secret_file: Path,
                                                         entry: str) -> None:
    """A glob does not skip the linked folder quietly: it is an error like any other."""
    linked_bot(workdir / ("class/a" if entry == "class/*" else "b"), secret_file)
    shutil.copytree(RANDOM, workdir / "class" / "z")
    (workdir / "t.yaml").write_text(f"bots: [random, '{entry}']\n")
    before = sorted(os.listdir(workdir))
    result = CliRunner().invoke(cli, ["run", "t.yaml"])
    assert result.exit_code == 2, result.output
    assert "outside the bot folder" in result.output and SECRET not in result.output
    assert result.output.startswith("Error: t.yaml: bots[1].path: ")
    assert sorted(os.listdir(workdir)) == before


# -- what is not a regular file, and size -------------------------------------------------


def test_a_fifo_is_refused_without_blocking(workdir: Path) -> None:
    folder = workdir / "b"
    folder.mkdir()
    os.mkfifo(folder / "bot.yaml")
    outcome: list[BaseException | object] = []

    def load() -> None:
        try:
            outcome.append(load_bot("b"))
        except BaseException as e:  # noqa: BLE001 (reported below)
            outcome.append(e)

    thread = threading.Thread(target=load, daemon=True)
    thread.start()
    thread.join(5)
    if thread.is_alive():  # unblock the reader before failing
        fd = os.open(folder / "bot.yaml", os.O_WRONLY | os.O_NONBLOCK)
        os.close(fd)
        thread.join(5)
        pytest.fail("load_bot blocked on a FIFO")
    assert isinstance(outcome[0], ConfigError)
    assert str(outcome[0]) == "b/bot.yaml: not a regular file: refused"


def test_a_folder_named_bot_yaml_is_refused(workdir: Path) -> None:
    (workdir / "b" / "bot.yaml").mkdir(parents=True)
    assert refusal(Path("b")) == "b/bot.yaml: not a regular file: refused"


def test_an_oversize_manifest_is_refused(workdir: Path) -> None:
    folder = workdir / "b"
    folder.mkdir()
    padding = "# padding\n" * (MANIFEST_CAP // 10 + 1)
    (folder / "bot.yaml").write_text("command: '{python} x.py'\n" + padding)
    assert refusal(folder.relative_to(workdir)) == "b/bot.yaml: bot.yaml is larger than 64 KiB"
    (folder / "bot.yaml").write_text("command: '{python} x.py'\n" + padding[:60_000])
    assert load_bot(folder).command[1] == "x.py"  # under the cap: fine


# -- errors show nothing of the file ------------------------------------------------------


@pytest.mark.parametrize("text,expected", [
    (SHADOW_LINE, "bot.yaml:<a key that is not a plain name>: unknown key"),
    (f"command: x\na: *{SECRET}\n", "bot.yaml: broken YAML at line 2, column 4: found "
                                    "undefined alias ..."),
    (f"command: x\nx: !!int {SECRET}\n", "bot.yaml: broken YAML: a value that cannot be read"),
    (f"command: x\noptions: {{A: [{SECRET}]}}\n",
     "bot.yaml:options.A: expected a number, string or true/false, got a list"),
    (f"command: x\noptions: {{'{SECRET} x': [1]}}\n",
     "bot.yaml:options.<a key that is not a plain name>: expected a number"),
    (f"command: x\nname: [{SECRET}]\n", "bot.yaml:name: expected a string, got a list"),
    (f"command: x\nname: \"a\\n{SECRET}\"\n", "bot.yaml:name: expected a display name"),
    (f"command: x\ncwd: {SECRET}\n", "bot.yaml:cwd: no such folder"),
    (f"command: x\n{SECRET}: [", "bot.yaml: broken YAML at line 2, column 14: expected the node "
                                 "content, but found '<stream end>'"),
    (f"command: x\nname: \"a\\u202e{SECRET}\"\n", "bot.yaml:name: expected a display name"),
    (f"command: x\n'{SECRET} x': 1\n'{SECRET} x': 2\n",
     "bot.yaml: the key <a key that is not a plain name> is given twice (line 3)"),
])
def test_errors_name_the_key_never_the_content(workdir: Path, text: str, expected: str) -> None:
    folder = workdir / "b"
    folder.mkdir()
    (folder / "bot.yaml").write_text(text)
    result = CliRunner().invoke(cli, ["check", "b"])
    assert result.exit_code == 2, result.output
    assert result.output.startswith(f"Error: b/{expected}"), result.output
    assert SECRET not in result.output and len(result.output.splitlines()) == 1


def test_bytes_that_are_not_utf8_are_one_line_errors(workdir: Path) -> None:
    folder = workdir / "b"
    folder.mkdir()
    (folder / "bot.yaml").write_bytes(b"command: x\nname: \xff" + SECRET.encode())
    result = CliRunner().invoke(cli, ["check", "b"])
    assert result.exit_code == 2, result.output
    assert result.output == "Error: b/bot.yaml: not UTF-8 text (byte 18)\n"


def test_deep_nesting_is_an_error_not_a_crash(workdir: Path) -> None:
    folder = workdir / "b"
    folder.mkdir()
    (folder / "bot.yaml").write_text("command: " + "[" * 20_000)
    assert refusal(folder.relative_to(workdir)).startswith("b/bot.yaml: broken YAML")


def test_a_key_given_twice_is_an_error(workdir: Path) -> None:
    folder = workdir / "b"
    folder.mkdir()
    (folder / "bot.yaml").write_text("command: '{python} good.py'\ncommand: './other'\n")
    assert refusal(Path("b")) == "b/bot.yaml: the key command is given twice (line 2)"
