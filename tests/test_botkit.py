"""The bot kit and the example bots.

In-process tests of the kit's pieces (options, time budget, the protocol session), then every
example bot (the node one included) as a real subprocess driven through scripted transcripts:
handshake, options, several variants, position + go, quit.
"""

from __future__ import annotations

import dataclasses
import os
import random
import selectors
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Iterator

import pytest
import yaml

from arena import protocol as P
from arena.botkit import Bot, Clock, Options, SeededBot, Session, check, combo, compute_budget, spin, string
from arena.errors import ArenaError
from arena.rules import Move, Position, Termination
from arena.variants import PRESETS, Variant, get_variant

BOTS_DIR = Path(__file__).resolve().parent.parent / "bots"
EXAMPLE_BOTS = ["random", "greedy", "alphabeta", "js-greedy"]
HAS_NODE = shutil.which("node") is not None


# ======================================================================================
# The kit in process
# ======================================================================================


def test_options_are_typed_by_their_declarations() -> None:
    opts = Options([spin("Depth", 3, 1, 9), check("Book", True), combo("Style", "Normal", ["Solid", "Normal"]),
                    string("File")])
    assert dict(opts) == {"Depth": 3, "Book": True, "Style": "Normal", "File": ""}
    assert opts.set("depth", "7") == 7 and opts["DEPTH"] == 7
    assert opts.set("Book", "false") is False and opts["book"] is False
    assert opts.set("style", "solid") == "Solid"
    assert opts.set("File", "a b.txt") == "a b.txt"
    for name, bad in (("Depth", "10"), ("Depth", "x"), ("Book", "maybe"), ("Style", "Wild")):
        with pytest.raises(ValueError):
            opts.set(name, bad)
    assert opts["Depth"] == 7  # unchanged by the rejected values
    with pytest.raises(KeyError):
        opts.set("Nope", "1")
    with pytest.raises(ArenaError):
        Options([spin("A", 1, 0, 2), spin("a", 1, 0, 2)])


def test_budget_from_movetime_and_clocks() -> None:
    assert compute_budget(P.Go(movetime=1000), True) == pytest.approx(0.95)
    assert compute_budget(P.Go(movetime=100), True) == pytest.approx(0.08)
    white = compute_budget(P.Go(wtime=50_000, btime=5_000, winc=1000, binc=0), True)
    black = compute_budget(P.Go(wtime=50_000, btime=5_000, winc=1000, binc=0), False)
    assert white == pytest.approx((50_000 / 25 + 750) / 1000)
    assert black == pytest.approx(5_000 / 25 / 1000)
    # little time left: never more than half of it, less a reserve; never below 1 ms
    assert compute_budget(P.Go(wtime=200, btime=200, winc=5000), True) < 0.1
    assert compute_budget(P.Go(wtime=0, btime=0), True) == pytest.approx(0.001)
    # both limits: the smaller
    assert compute_budget(P.Go(wtime=100_000, btime=100_000, movetime=100), True) == pytest.approx(0.08)
    assert compute_budget(P.Go(), True) > 0


class _Recorder(Bot):
    """Records what the kit passes to it and plays ``self.answer`` (or the first legal move)."""

    name, author = "recorder", "tests"
    option_decls = (spin("Depth", 2, 1, 5), check("Ponder", False))

    def __init__(self) -> None:
        super().__init__()
        self.answer: object = None
        self.seen: list[Position] = []
        self.clocks: list[Clock] = []
        self.events: list[str] = []

    def set_option(self, name: str, value: object) -> None:
        self.events.append(f"option {name}={value!r}")

    def new_game(self, variant: Variant) -> None:
        self.events.append(f"newgame {variant.name}")

    def game_over(self, result: str, reason: str) -> None:
        self.events.append(f"gameover {result} {reason}")

    def choose(self, position: Position, clock: Clock) -> object:  # type: ignore[override]
        self.seen.append(position)
        self.clocks.append(clock)
        if self.answer == "raise":
            raise RuntimeError("bug in the bot")
        return self.answer if self.answer is not None else position.legal_moves()[0]


def _session(bot: Bot) -> tuple[Session, list[str], list[str]]:
    out: list[str] = []
    warnings: list[str] = []
    return Session(bot, out.append, warnings.append), out, warnings


def test_session_handshake_options_newgame_and_quit() -> None:
    bot = _Recorder()
    session, out, warnings = _session(bot)
    assert session.handle("morris 1\r\n")
    assert out == ["id name recorder", "id author tests",
                   "option name Depth type spin default 2 min 1 max 5",
                   "option name Ponder type check default false", "morrisok"]
    out.clear()
    session.handle("setoption name depth value 4")
    session.handle("setoption name Depth value 99")   # out of range: ignored with a warning
    session.handle("setoption name Colour value red")  # unknown: ignored with a warning
    session.handle("frobnicate 12")                    # unknown command: ignored
    assert bot.options["Depth"] == 4
    assert len(warnings) == 3 and out == []
    variant = get_variant("twelve-mens-morris")
    session.handle(P.format_newgame(variant.name, variant.to_params()))
    assert bot.variant == variant and session.position.variant == variant
    session.handle("isready")
    assert out == ["readyok"]
    session.handle("gameover 1/2-1/2 repetition")
    assert bot.events == ["option Depth=4", "newgame twelve-mens-morris",
                          "gameover 1/2-1/2 repetition"]
    assert session.handle("quit") is False


def _drive(session: Session, variant: Variant, moves: list[str]) -> Position:
    """Send ``position`` for the game ``moves`` as the referee would; the reference position."""
    ref = Position(variant)
    for m in moves:
        ref.push_text(m)
    session.handle(P.format_position(ref.to_text(), moves))
    return ref


def test_position_keeps_history_so_repetitions_are_seen() -> None:
    variant = get_variant("six-mens-morris")
    session, out, warnings = _session(_Recorder())
    session.handle(P.format_newgame(variant.name, variant.to_params()))
    # place all 12 men, then shuffle two men back and forth
    game = ["a1", "a7", "d2", "d1", "f6", "g4", "b4", "b2", "g7", "f4", "d6", "d7"]
    cycle = ["a1-a4", "d1-g1", "a4-a1", "g1-d1"]
    ref = _drive(session, variant, game)
    assert session.position.to_text() == ref.to_text()
    for m in cycle * 2:
        game.append(m)
        ref = _drive(session, variant, game)
        assert len(session.position.move_stack) == len(game)  # replayed, not rebuilt from text
    assert session.position.outcome() == ref.outcome()
    assert ref.outcome() is not None and ref.outcome().termination is Termination.REPETITION
    assert warnings == []
    # a position text alone (no moves) is taken as it is, without history
    session.handle(P.format_position(ref.to_text()))
    assert session.position.move_stack == [] and session.position.outcome() is None


@pytest.mark.parametrize("name, start", [
    ("zhi-qi", "BWBWBWBWBBBWBWWBWWWW.WBB b 0 1 23 - - 23"),   # the board fills: both remove
    ("zhi-qi", "BWWBBWBBBB..BBW...B....B w 0 0 0 - - 60"),   # white is blocked: removes, moves
    ("el-filja", "WWBBBWWBBBWBWWBBBWWW.BWW b 0 1 23 - - 23"),  # no mill: own men removed
])
def test_kit_plays_removal_only_turns(name: str, start: str) -> None:
    """The kit reads positions with owed removals (remove=) and answers removal-only turns
    (xg7); a blocked player's removal is followed by its own next move."""
    variant = get_variant(name)
    bot = _Recorder()
    session, out, warnings = _session(bot)
    session.handle(P.format_newgame(variant.name, variant.to_params()))
    ref = Position.from_text(variant, start)
    played: list[str] = []
    removals = 0
    while ref.outcome() is None and len(played) < 6:
        session.handle(P.format_position(ref.to_text()))  # a hand-built start: text only
        assert session.position.to_text() == ref.to_text()
        out.clear()
        session.handle("go movetime 100")
        reply = P.parse_bot_line(out[-1])
        assert isinstance(reply, P.BestMove)
        move = ref.parse_move(reply.move)
        removals += move.dst is None
        ref.push(move)
        played.append(reply.move)
    assert removals >= 1 and warnings == []


def test_position_falls_back_to_the_text_when_the_moves_disagree() -> None:
    variant = get_variant("nine-mens-morris")
    session, out, warnings = _session(_Recorder())
    session.handle(P.format_newgame(variant.name, variant.to_params()))
    ref = Position(variant)
    ref.push_text("d6")
    session.handle(P.format_position(ref.to_text(), ["d2"]))
    assert session.position.to_text() == ref.to_text()
    assert len(warnings) == 1
    session.handle(P.format_position(ref.to_text(), ["zz9"]))
    assert session.position.to_text() == ref.to_text() and len(warnings) == 2


def test_go_gives_a_budget_and_a_copy_and_answers_bestmove() -> None:
    bot = _Recorder()
    session, out, warnings = _session(bot)
    variant = get_variant("nine-mens-morris")
    session.handle(P.format_newgame(variant.name, variant.to_params()))
    _drive(session, variant, ["d6", "d2"])
    before = time.monotonic()
    session.handle("go movetime 500", before)
    clock = bot.clocks[-1]
    assert clock.budget_s == pytest.approx(0.45) and clock.deadline == pytest.approx(before + 0.45)
    assert 0 < clock.remaining() <= 0.45 and not clock.expired()
    assert clock.options["Depth"] == 2
    assert bot.seen[-1] is not session.position and bot.seen[-1].to_text() == session.position.to_text()
    assert out == [f"bestmove {session.position.legal_moves()[0]}"]


def test_legalmoves_reaches_the_bot_as_clock_legal_for_that_turn_only() -> None:
    bot = _Recorder()
    session, out, warnings = _session(bot)
    ref = _drive(session, session.variant, ["d6"])
    legal = [str(m) for m in ref.legal_moves()]
    session.handle(P.format_legalmoves(legal))
    session.handle("go movetime 50")
    assert bot.clocks[-1].legal == tuple(legal)
    _drive(session, session.variant, ["d6", "d2"])  # a new position without the line
    session.handle("go movetime 50")
    assert bot.clocks[-1].legal is None
    session.handle(P.format_legalmoves(["a1"]))
    _drive(session, session.variant, ["d6", "d2", "a1"])  # position clears an earlier line
    session.handle("go movetime 50")
    assert bot.clocks[-1].legal is None and warnings == []


@pytest.mark.parametrize("answer", ["g7-a1", "zz", 42])
def test_a_bad_choice_reaches_the_referee_unchanged(answer: object) -> None:
    bot = _Recorder()
    bot.answer = answer
    session, out, warnings = _session(bot)
    _drive(session, session.variant, ["d6"])
    session.handle("go movetime 50")
    assert out == [f"bestmove {answer}"]
    with pytest.raises(ValueError):
        session.position.parse_move(str(answer))


def test_a_choose_that_raises_exits_with_a_traceback_on_stderr() -> None:
    bot = _Recorder()
    bot.answer = "raise"
    session, out, warnings = _session(bot)
    _drive(session, session.variant, ["d6"])
    with pytest.raises(SystemExit) as exc:
        session.handle("go movetime 50")
    assert exc.value.code == 1 and out == []
    assert len(warnings) == 1 and "Traceback" in warnings[0]


@pytest.mark.parametrize("answer", ["g7-a1", "zz", 42, "raise"])
def test_a_forgiving_kit_replaces_a_bad_choice_by_a_legal_move(answer: object) -> None:
    bot = _Recorder()
    bot.answer = answer
    session, out, warnings = _session(bot)
    session.forgiving = True
    _drive(session, session.variant, ["d6"])
    session.handle("go movetime 50")
    assert len(out) == 1 and len(warnings) == 1
    move = P.parse_bot_line(out[0])
    assert isinstance(move, P.BestMove)
    session.position.parse_move(move.move)


def test_move_text_and_move_objects_are_both_accepted() -> None:
    bot = _Recorder()
    session, out, warnings = _session(bot)
    bot.answer = "d6"
    session.handle("go")
    bot.answer = Move(None, "a1")
    session.handle("go")
    assert out == ["bestmove d6", "bestmove a1"] and warnings == []


def test_seeded_bot_reseeds_at_every_newgame() -> None:
    class Draw(SeededBot):
        def choose(self, position: Position, clock: Clock) -> Move:
            return self.rng.choice(position.legal_moves())

    bot = Draw()
    session, out, _ = _session(bot)
    for seed in (5, 5, 6):
        session.handle(f"setoption name Seed value {seed}")
        session.handle("newgame nine-mens-morris")
        for _ in range(3):
            session.handle("go")
    assert out[0:3] == out[3:6] and out[0:3] != out[6:9]


# ======================================================================================
# Example bots as subprocesses
# ======================================================================================


class BotPipe:
    """A bot subprocess with line I/O under deadlines (test helper; the referee has its own)."""

    def __init__(self, folder: Path) -> None:
        manifest = yaml.safe_load((folder / "bot.yaml").read_text())
        command = manifest["command"]
        argv = shlex.split(command) if isinstance(command, str) else list(command)
        argv = [a.replace("{python}", sys.executable) for a in argv]
        self.name = manifest["name"]
        self.proc = subprocess.Popen(argv, cwd=folder / manifest.get("cwd", "."), text=True,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, bufsize=1, start_new_session=True)
        self.buffer = b""
        assert self.proc.stdout is not None
        self.selector = selectors.DefaultSelector()
        self.selector.register(self.proc.stdout, selectors.EVENT_READ)

    def send(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def read(self, timeout: float = 10.0) -> str:
        """The next stdout line; fails the test after ``timeout`` seconds."""
        assert self.proc.stdout is not None
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buffer:
            if not self.selector.select(max(0.0, deadline - time.monotonic())):
                pytest.fail(f"{self.name}: no output within {timeout} s")
            chunk = os.read(self.proc.stdout.fileno(), 65536)
            assert chunk, f"{self.name}: closed its output"
            self.buffer += chunk
        line, _, self.buffer = self.buffer.partition(b"\n")
        return line.decode()

    def until(self, first_word: str, timeout: float = 10.0, allowed: tuple[str, ...] = ("info",)) -> list[str]:
        """Lines up to and including one starting with ``first_word``; only lines starting with
        a word in ``allowed`` may come before it."""
        lines = []
        while True:
            line = self.read(timeout)
            lines.append(line)
            if line.split()[0] == first_word:
                return lines
            assert line.split()[0] in allowed, f"{self.name}: unexpected line {line!r}"

    def handshake(self) -> list[P.BotMessage]:
        self.send("morris 1")
        lines = self.until("morrisok", allowed=("id", "option", "info"))
        return [P.parse_bot_line(line) for line in lines]

    def best_move(self, position: Position, moves: list[str], go: str) -> tuple[str, float]:
        """Send position + go; the reply (parsed as a legal move) and the seconds it took."""
        self.send(P.format_position(position.to_text(), moves))
        start = time.monotonic()
        self.send(go)
        reply = P.parse_bot_line(self.until("bestmove")[-1])
        elapsed = time.monotonic() - start
        assert isinstance(reply, P.BestMove)
        return str(position.parse_move(reply.move)), elapsed

    def quit(self) -> int:
        self.send("quit")
        try:
            return self.proc.wait(timeout=5)
        finally:
            self.close()

    def close(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, 9)
            self.proc.wait()
        self.selector.close()
        for stream in (self.proc.stdin, self.proc.stdout):
            if stream is not None:
                try:
                    stream.close()
                except OSError:
                    pass


def _bot_params() -> list[object]:
    """The example bots as test parameters (the node one skipped where node is missing)."""
    no_node = pytest.mark.skipif(not HAS_NODE, reason="node is not installed")
    return [pytest.param(name, marks=[no_node] if name.startswith("js") else [], id=name)
            for name in EXAMPLE_BOTS]


@pytest.fixture
def start_bot() -> Iterator[object]:
    started: list[BotPipe] = []

    def start(name: str) -> BotPipe:
        bot = BotPipe(BOTS_DIR / name)
        started.append(bot)
        return bot

    yield start
    for bot in started:
        bot.close()


GAME_VARIANTS = ["nine-mens-morris", "twelve-mens-morris", "six-mens-morris", "three-mens-morris",
                 "lasker-morris", "nine-mens-morris-options", "nine-mens-morris-no-flying",
                 # marks and black moving twice; removal-only turns, the player's own men too
                 "da-san-qi", "el-filja"]


@pytest.mark.parametrize("name", _bot_params())
def test_example_bot_plays_legal_moves_in_every_kind_of_game(name: str, start_bot) -> None:  # type: ignore[no-untyped-def]
    """One process plays several games (the test picks random moves for the other side)."""
    bot = start_bot(name)
    hello = bot.handshake()
    assert P.Id("name", bot.name) in hello
    assert P.OptionDecl("Seed", "spin", "0", 0, 2147483647) in hello
    bot.send("setoption name Seed value 11")
    rng = random.Random(3)
    phases: set[str] = set()
    captures = 0
    for g, variant_name in enumerate(GAME_VARIANTS):
        variant = PRESETS[variant_name]
        bot.send(P.format_newgame(variant.name, variant.to_params()))
        bot.send("isready")
        assert bot.until("readyok") == ["readyok"]
        pos, moves, side = Position(variant), [], g % 2
        while pos.outcome() is None and len(moves) < 150:
            if pos.turn == side:
                phases.add(pos.phase(pos.turn))
                text, _ = bot.best_move(pos, moves, "go movetime 20")
                captures += "x" in text
            else:
                text = str(rng.choice(pos.legal_moves()))
            pos.push_text(text)
            moves.append(text)
        outcome = pos.outcome()
        bot.send(P.format_gameover(outcome.result if outcome else "1/2-1/2", "test"))
    assert phases >= {"placing", "moving"} and captures > 0
    assert bot.quit() == 0


def _position(variant: Variant, white: str, black: str, hands: tuple[int, int], ply: int) -> Position:
    """A position with white to move, men on the points named (space-separated)."""
    marks = {p: "W" for p in white.split()} | {p: "B" for p in black.split()}
    board = "".join(marks.get(p, ".") for p in variant.topology.points)
    return Position.from_text(variant, f"{board} w {hands[0]} {hands[1]} 0 - - {ply}")


TACTICS = [
    # white flies g4-a4 to close a1-a4-a7; the capture leaves black two men: a win
    ("nine-mens-morris", "a1 a7 g4", "c5 d1 e4", (0, 0), 40, "flying", 1, False),
    # white places a4, closing two mills at once; taking both men (allowed, not forced
    # here) leaves black two men with the two in hand: a win
    ("nine-mens-morris-options", "a1 a7 b4 c4", "c5 d1", (5, 2), 8, "placing", 2, False),
    # Dooz with double captures: a4 closes two mills and takes two men from black's hand
    # (a4x*x*), worth more than g7 closing one (g7x*): captures from the hand count each (for
    # the one-move greedy bots; alphabeta, searching deeper, may take g7 first and a4 next)
    (dataclasses.replace(get_variant("dooz"), name="dooz-double", multi_mill_captures=2),
     "a1 a7 b4 c4 g1 g4", "c5 d1 e3 f6", (5, 6), 8, "placing", 2, True),
]


@pytest.mark.parametrize("name", _bot_params())
def test_example_bot_takes_a_mill_from_a_position_text(name: str, start_bot) -> None:  # type: ignore[no-untyped-def]
    """Positions given as text alone: every bot answers legally, the others take and win."""
    bot = start_bot(name)
    bot.handshake()
    for variant_name, white, black, hands, ply, phase, taken, greedy_only in TACTICS:
        variant = get_variant(variant_name) if isinstance(variant_name, str) else variant_name
        pos = _position(variant, white, black, hands, ply)
        assert pos.phase(0) == phase
        bot.send(P.format_newgame(variant.name, variant.to_params()))
        best, _ = bot.best_move(pos, [], "go movetime 100")
        if name != "random" and not (greedy_only and name == "alphabeta"):
            assert Move.parse(best).dst == "a4" and len(Move.parse(best).captures) == taken, phase
    assert bot.quit() == 0


@pytest.mark.parametrize("name", _bot_params())
def test_seeded_bot_repeats_its_moves(name: str, start_bot) -> None:  # type: ignore[no-untyped-def]
    """Two processes with the same seed play the same moves; another seed plays others.

    alphabeta's moves also depend on how deep it gets in time, so it is held to depth 2.
    """
    variant = get_variant("nine-mens-morris")

    def moves_with(seed: int) -> list[str]:
        bot = start_bot(name)
        bot.handshake()
        if name == "alphabeta":
            bot.send("setoption name Depth value 2")
        bot.send(f"setoption name Seed value {seed}")
        bot.send(P.format_newgame(variant.name, variant.to_params()))
        pos, played = Position(variant), []
        for _ in range(8):
            text, _ = bot.best_move(pos, played, "go movetime 5000")
            pos.push_text(text)
            played.append(text)
        assert bot.quit() == 0
        return played

    first = moves_with(1234)
    assert moves_with(1234) == first
    assert moves_with(99) != first


def test_alphabeta_answers_within_its_movetime(start_bot) -> None:  # type: ignore[no-untyped-def]
    bot = start_bot("alphabeta")
    bot.handshake()
    variant = get_variant("nine-mens-morris")
    bot.send(P.format_newgame(variant.name, variant.to_params()))
    pos, moves = Position(variant), []
    rng = random.Random(1)
    for _ in range(20):
        moves.append(str(rng.choice(pos.legal_moves())))
        pos.push_text(moves[-1])
    worst = 0.0
    for go in ("go movetime 150", "go wtime 3000 btime 3000 winc 100 binc 100", "go movetime 150"):
        _, elapsed = bot.best_move(pos, moves, go)
        worst = max(worst, elapsed)
    assert worst < 0.15 + 0.5  # generous: this is not a timing benchmark
    assert bot.quit() == 0


@pytest.mark.parametrize("name", _bot_params())
def test_example_bot_tolerates_crlf_and_ignores_unknown_commands(name: str, start_bot) -> None:  # type: ignore[no-untyped-def]
    bot = start_bot(name)
    bot.send("morris 1\r")
    bot.until("morrisok", allowed=("id", "option"))
    bot.send("frobnicate the bot  \r")
    bot.send("newgame three-mens-morris board=three men=3 flying=false mill_wins=true\r")
    bot.send("isready \r")
    assert bot.read() == "readyok"
    pos = Position(get_variant("three-mens-morris"))
    bot.send(P.format_position(pos.to_text(), []) + "\r")
    bot.send("go movetime 50\r")
    reply = P.parse_bot_line(bot.until("bestmove")[-1])
    assert isinstance(reply, P.BestMove)
    pos.parse_move(reply.move)
    assert bot.quit() == 0


NODE_EXTRA_POSITIONS = [
    ("zhi-qi", "BWBWBWBWBBBWBWWBWWWW.WBB b 0 1 23 - - 23"),
    ("zhi-qi", "BWWBBWBBBB..BBW...B....B w 0 0 0 - - 60"),
    ("el-filja", "WWBBBWWBBBWBWWBBBWWW.BWW b 0 1 23 - - 23"),
    ("el-filja", "BWBBWWBWWBWBWBBBWBBWWWW. b 0 1 23 - - 23"),
]


def test_node_bot_generates_the_same_moves_as_the_engine(tmp_path: Path) -> None:
    """The JS bot's own move generation against arena.rules on random games of every preset."""
    if not HAS_NODE:
        pytest.skip("node is not installed")
    import json

    script = tmp_path / "moves.js"
    script.write_text(
        "const b = require(process.argv[2]);\n"
        "require('readline').createInterface({ input: process.stdin }).on('line', (line) => {\n"
        "  const [params, text] = line.split('\\t');\n"
        "  const rules = b.makeRules(JSON.parse(params));\n"
        "  const pos = b.parsePosition(rules, text);\n"
        "  console.log(b.generate(rules, pos).map((m) => b.moveText(rules, m)).sort().join(' '));\n"
        "});\n")
    rng = random.Random(7)
    lines, expected = [], []

    def add(pos: Position) -> None:
        lines.append(json.dumps(pos.variant.to_params()) + "\t" + pos.to_text())
        expected.append(" ".join(sorted(str(m) for m in pos.legal_moves())))

    for variant in PRESETS.values():
        for _ in range(4):
            pos = Position(variant)
            while pos.outcome() is None and pos.ply < 120:
                add(pos)
                pos.push(rng.choice(pos.legal_moves()))
    # removal turns random games rarely meet: a full board (zhi-qi), a blocked player, owed
    # removals of the player's own men (el-filja with no mill) and of more men than one
    for name, text in NODE_EXTRA_POSITIONS:
        pos = Position.from_text(name, text)
        while pos.outcome() is None and pos.ply < 30:
            add(pos)
            pos.push(rng.choice(pos.legal_moves()))
    done = subprocess.run(["node", str(script), str(BOTS_DIR / "js-greedy" / "bot.js")],
                          input="\n".join(lines) + "\n", capture_output=True, text=True, timeout=30)
    got = done.stdout.splitlines()
    assert len(got) == len(lines), done.stderr[-500:]
    wrong = [(line, e, g) for line, e, g in zip(lines, expected, got) if e != g]
    assert not wrong, wrong[:2]


DOCS = BOTS_DIR.parent / "docs"


def test_protocol_doc_shows_the_minimal_bot_verbatim() -> None:
    code = (DOCS / "examples" / "minimal" / "bot.py").read_text()
    assert f"```python\n{code}```" in (DOCS / "PROTOCOL.md").read_text()


@pytest.mark.parametrize("variant_name", ["nine-mens-morris", "lasker-morris"])
def test_minimal_bot_from_the_docs_plays_legal_moves(variant_name: str) -> None:
    bot = BotPipe(DOCS / "examples" / "minimal")
    try:
        bot.handshake()
        variant = get_variant(variant_name)
        bot.send(P.format_newgame(variant.name, variant.to_params()))
        pos, moves = Position(variant), []
        while pos.outcome() is None and len(moves) < 200:
            text, _ = bot.best_move(pos, moves, "go movetime 50")  # it plays both sides
            pos.push_text(text)
            moves.append(text)
        assert pos.outcome() is not None or len(moves) == 200
        assert bot.quit() == 0
    finally:
        bot.close()


STRAY_PRINT_BOT = '''
from arena.botkit import run, send_info, spin

def choose(position, clock):
    print("debugging output that must not reach the referee")
    send_info(f"budget {clock.budget_s:.3f} depth {clock.options['Depth']}")
    return position.legal_moves()[-1]

run(choose, name="printer", author="tests", options=[spin("Depth", 2, 1, 9)])
'''


def test_run_keeps_stray_prints_off_the_protocol(tmp_path: Path) -> None:
    """A function bot under ``run``: prints go to stderr, ``info`` and ``bestmove`` to stdout."""
    (tmp_path / "bot.py").write_text(STRAY_PRINT_BOT)
    transcript = ("morris 1\nsetoption name Depth value 5\nnewgame nine-mens-morris\nisready\n"
                  "position ........................ w 9 9 0 - - 0 moves\ngo movetime 200\nquit\n")
    done = subprocess.run([sys.executable, "bot.py"], cwd=tmp_path, input=transcript,
                          capture_output=True, text=True, timeout=20)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "id name printer", "id author tests", "option name Depth type spin default 2 min 1 max 9",
        "morrisok", "readyok", "info budget 0.170 depth 5", "bestmove g7"]
    assert "debugging output" in done.stderr


@pytest.mark.parametrize("behaviour, termination", [("illegal", "illegal-move"), ("raise", "crash")])
def test_kit_bot_bugs_show_in_the_game_record(tmp_path, behaviour: str, termination: str) -> None:
    """A kit bot's bug reaches the referee: an illegal move or a crash with its traceback."""
    from arena.bot import load_bot
    from arena.clock import TimeControl
    from arena.referee import play_game

    folder = tmp_path / "buggy"
    folder.mkdir()
    (folder / "bot.yaml").write_text("name: buggy\ncommand: '{python} bot.py'\n")
    (folder / "bot.py").write_text(
        "from arena.botkit import run\n"
        "def choose(position, clock):\n"
        f"    if {behaviour!r} == 'raise':\n"
        "        raise RuntimeError('student bug')\n"
        "    return 'a1-g7'\n"
        "run(choose, name='buggy')\n")
    random_bot = load_bot(Path(__file__).resolve().parents[1] / "bots" / "random")
    record = play_game(load_bot(folder), random_bot, get_variant("nine-mens-morris"),
                       TimeControl.parse("2000"))
    assert record.termination == termination and record.forfeit == "white" and record.result == "0-1"
    if behaviour == "raise":
        assert "student bug" in record.stderr["white"]
    else:
        assert record.offending_line is not None and "a1-g7" in record.offending_line
