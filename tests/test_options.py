"""Options given for a bot, checked against its handshake: the pure check (arena.options),
the preflight that reads a real bot's handshake (arena.preflight), and ``arena play``."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from arena.bot import load_bot
from arena.cli import cli
from arena.errors import BotStartError, ConfigError
from arena.options import OptionError, check_options
from arena.preflight import preflight, preflight_all
from arena.protocol import OptionDecl, parse_bot_line
from tests.conftest import EXAMPLE_BOTS, ROOT, TEST_BOTS

pytestmark = pytest.mark.usefixtures("no_leftover_children")

def _decl(line: str) -> OptionDecl:
    decl = parse_bot_line(line)
    assert isinstance(decl, OptionDecl)
    return decl


#: the option lines of docs/PROTOCOL.md (*Options*), one of each type
DECLARED = [_decl(line) for line in (
    "option name Seed type spin default 0 min 0 max 2147483647",
    "option name Depth type spin default 4 min 1 max 20",
    "option name Use Book type check default true",
    "option name Style type combo default Normal var Solid var Normal var Risky",
    "option name Book File type string default <empty>",
    "option name Clear Hash type button",
)]


def refusal(options: dict[str, str]) -> str:
    with pytest.raises(OptionError) as info:
        check_options(options, DECLARED, bot="bots/x")
    assert isinstance(info.value, ConfigError)  # exit 2 from the CLI
    return str(info.value)


def test_values_each_type_accepts() -> None:
    check_options({"Seed": "0", "depth": "20", "Use Book": "False", "style": "risky",
                   "Book File": "my book.bin", "Clear Hash": ""},
                  DECLARED, bot="bots/x")
    check_options({}, [], bot="bots/x")
    check_options({"Clear Hash": "true", "Depth": " 1", "Book File": ""},
                  DECLARED, bot="bots/x")


@pytest.mark.parametrize("options, message", [
    ({"Depth": "21"}, "Depth=21: out of range for bots/x (spin 1..20)"),
    ({"Depth": "0"}, "Depth=0: out of range for bots/x (spin 1..20)"),
    ({"Depth": "3.5"}, "Depth=3.5: not an integer for bots/x (spin 1..20)"),
    ({"Seed": "-1"}, "Seed=-1: out of range for bots/x (spin 0..2147483647)"),
    ({"Use Book": "yes"}, "Use Book=yes: not true or false for bots/x (check true/false)"),
    ({"Style": "Wild"}, "Style=Wild: not one of its values for bots/x (combo Solid/Normal/Risky)"),
    ({"Clear Hash": "now"}, "Clear Hash=now: a button takes no value for bots/x "
                            "(button (no value))"),
    ({"Depth": "2", "depth": "3"}, "depth: given twice for bots/x (also as Depth)"),
])
def test_a_value_the_bot_would_refuse_names_the_option_and_the_declaration(
        options: dict[str, str], message: str) -> None:
    assert refusal(options) == message


def test_an_undeclared_option_suggests_a_near_name_and_lists_the_declared_ones() -> None:
    assert refusal({"Dpeth": "3"}) == (
        "Dpeth: bots/x declares no such option (did you mean Depth? it declares Seed, Depth, "
        "Use Book, Style, Book File, Clear Hash)")
    assert refusal({"Threads": "3"}) == (
        "Threads: bots/x declares no such option (it declares Seed, Depth, Use Book, Style, "
        "Book File, Clear Hash)")
    with pytest.raises(OptionError, match=r"^Seed: bots/y declares no options$"):
        check_options({"Seed": "1"}, [], bot="bots/y")


def test_a_long_value_is_cut_and_control_characters_escaped() -> None:
    assert refusal({"Depth": "9" * 100}) == "Depth=" + "9" * 40 + "...: out of range for " \
                                            "bots/x (spin 1..20)"
    assert refusal({"Dep\x1bth": "1"}).startswith("Dep\\x1bth: bots/x declares no such")
    assert refusal({"Style": "\x1b[31m"}).startswith("Style=\\x1b[31m: not one of its values")


# -- the preflight: a real bot's handshake ------------------------------------------------

def test_preflight_reads_the_handshake_and_accepts_declared_options() -> None:
    spec = load_bot(EXAMPLE_BOTS / "alphabeta", options={"depth": 2, "MobilityWeight": -5})
    hs = preflight(spec)
    assert hs.id["name"] == "alphabeta" and hs.option("Depth") is not None


def test_preflight_refuses_an_option_out_of_range() -> None:
    spec = load_bot(EXAMPLE_BOTS / "alphabeta", options={"Depth": 999})
    with pytest.raises(OptionError, match=r"Depth=999: out of range for .*alphabeta "
                                          r"\(spin 1\.\.64\)"):
        preflight(spec)


def test_preflight_raises_the_start_failure_of_a_bot_that_cannot_start() -> None:
    with pytest.raises(BotStartError):
        preflight(load_bot(TEST_BOTS / "exit-at-start", options={"Seed": 1}), handshake_s=2.0)


def test_preflight_all_starts_each_bot_once_and_checks_each_specs_options(tmp_path: Path) -> None:
    """A tournament's bots at once: two specs of one folder (other names and options) start
    one process, each spec's options are checked on its own, and a bot that cannot start is
    that spec's error, in the specs' order."""
    from arena.sandbox import Isolation, Level

    folder = tmp_path / "starter"
    folder.mkdir()
    shutil.copy(EXAMPLE_BOTS / "random" / "bot.py", folder / "random_bot.py")
    (folder / "bot.py").write_text(  # counts its starts, then is bots/random
        "import pathlib, runpy\n"
        "with open(pathlib.Path(__file__).with_name('starts.txt'), 'a') as f:\n"
        "    f.write('start\\n')\n"
        "runpy.run_path(str(pathlib.Path(__file__).with_name('random_bot.py')), "
        "run_name='__main__')\n")
    (folder / "bot.yaml").write_text('command: "{python} bot.py"\n')
    specs = [load_bot(folder, name="a"), load_bot(folder, name="b", options={"Nope": 1}),
             load_bot(TEST_BOTS / "exit-at-start"), load_bot(folder, name="c", options={"Seed": 4})]
    got = preflight_all(specs, isolation=Isolation(Level.NONE), handshake_s=5.0)
    assert (folder / "starts.txt").read_text() == "start\n"
    assert got[0].id["name"] == "random" and got[3].id["name"] == "random"  # type: ignore[union-attr]
    assert isinstance(got[1], OptionError) and "Nope" in str(got[1])
    assert isinstance(got[2], BotStartError)


def _built_bot(tmp_path: Path, build: str) -> Path:
    folder = tmp_path / "built"
    folder.mkdir()
    shutil.copy(EXAMPLE_BOTS / "random" / "bot.py", folder)  # in its folder: bwrap shows no other
    (folder / "bot.yaml").write_text(
        f'command: "{{python}} bot.py"\nbuild: {build!r}\noptions: {{Seed: 3}}\n')
    return folder


def test_preflight_runs_the_build_step_first(tmp_path: Path) -> None:
    folder = _built_bot(tmp_path, "printf built > out.txt")
    preflight(load_bot(folder))
    assert (folder / "out.txt").read_text() == "built"


def test_preflight_raises_a_failed_build_before_starting_the_bot(tmp_path: Path) -> None:
    from arena.build import BuildError

    with pytest.raises(BuildError, match=r"exit 3"):
        preflight(load_bot(_built_bot(tmp_path, "echo broken >&2; exit 3")))


# -- arena play ---------------------------------------------------------------------------

def play(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["play", *args, "--quiet"])
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.output


@pytest.fixture
def at_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)


@pytest.mark.usefixtures("at_root")
def test_play_refuses_an_option_out_of_range_before_the_game() -> None:
    code, out = play("bots/alphabeta", "bots/random", "--option-a", "Depth=999")
    assert code == 2
    assert out == "Error: Depth=999: out of range for bots/alphabeta (spin 1..64)\n"


@pytest.mark.usefixtures("at_root")
def test_play_suggests_the_option_a_mistyped_name_meant() -> None:
    code, out = play("bots/random", "bots/alphabeta", "--option-b", "MobiltyWeight=1")
    assert code == 2
    assert out.startswith("Error: MobiltyWeight: bots/alphabeta declares no such option "
                          "(did you mean MobilityWeight? it declares Seed, Depth, ")
    assert "result:" not in out


@pytest.mark.usefixtures("at_root")
def test_play_refuses_an_undeclared_option_from_bot_yaml(tmp_path: Path) -> None:
    folder = tmp_path / "typo"
    folder.mkdir()
    shutil.copy(EXAMPLE_BOTS / "random" / "bot.py", folder)
    (folder / "bot.yaml").write_text('command: "{python} bot.py"\noptions: {Sede: 3}\n')
    code, out = play(str(folder), "bots/random")
    assert code == 2
    assert out.startswith("Error: Sede: ") and "(did you mean Seed? it declares Seed)" in out


@pytest.mark.usefixtures("at_root")
def test_play_with_options_that_fit_and_the_referees_own_seed() -> None:
    """Declared options in range play; the Seed the referee sends is never checked, even for
    a bot given other options."""
    code, out = play("bots/alphabeta", "bots/random", "--variant", "3mm", "--movetime", "100",
                     "--seed", "5", "--option-a", "Depth=2", "--option-a", "mobilityweight=4")
    assert code == 0, out
    assert "result: " in out
