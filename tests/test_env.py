"""Learned bots (issue 41): arena.encoding's actions over the engine's moves, the PettingZoo
environment (api and seed tests, random play against the rules engine), the single-player
Gymnasium environment against a real bot process, and a trained policy entered as a bot
in a real tournament."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from arena.encoding import PLANES, Actions, Turn, move_of, observe, policy_move
from arena.rules import Position
from arena.variants import PRESETS

ROOT = Path(__file__).resolve().parent.parent
LEARNED = ROOT / "docs" / "examples" / "learned"
pettingzoo = pytest.importorskip("pettingzoo", reason="the rl extra (pettingzoo) is not installed")
gymnasium = pytest.importorskip("gymnasium", reason="the rl extra (gymnasium) is not installed")


def _reached(position: Position) -> dict[str, list[int]]:
    """Every turn the actions reach from ``position``'s start of turn, by move text: the
    mask's every branch followed to its end (no branch may end without a move)."""
    legal = position.generate_raw()
    found: dict[str, list[int]] = {}

    def walk(prefix: list[int]) -> None:
        turn = Turn(Turn.of(position).actions, legal)
        for a in prefix:
            assert turn.choose(a) is None
        allowed = turn.allowed()
        assert allowed, (position.to_text(), prefix)  # never a dead end
        for a in allowed:
            probe = Turn(turn.actions, legal)
            for b in prefix:
                probe.choose(b)
            done = probe.choose(a)
            if done is None:
                walk(prefix + [a])
            else:
                text = str(move_of(position, done))
                assert text not in found or len(prefix) + 1 == len(found[text]), text
                found.setdefault(text, prefix + [a])

    walk([])
    return found


@pytest.mark.parametrize("variant", sorted(PRESETS))
def test_the_actions_reach_every_legal_move_and_nothing_else(variant: str) -> None:
    """In positions of random games of every preset (placing, moving, flying, double and
    hand captures, removal-only turns), following every branch of the mask reaches exactly
    the engine's legal moves, each by one sequence of actions, and ``actions_of`` gives it."""
    rng = random.Random(variant)
    checked = 0
    for game in range(10):
        pos = Position(variant)
        while pos.outcome() is None and pos.ply < 80:
            if rng.random() < 0.3 or pos.pending[pos.turn]:
                reached = _reached(pos)
                assert sorted(reached) == sorted(str(m) for m in pos.legal_moves()), pos.to_text()
                turn = Turn.of(pos)
                for raw in pos.generate_raw():
                    assert str(move_of(pos, raw)) in reached
                    assert turn.actions_of(raw) == reached[str(move_of(pos, raw))]
                checked += 1
            pos.push(rng.choice(pos.legal_moves()))
    assert checked > 20


def test_an_action_the_mask_forbids_is_refused() -> None:
    pos = Position("nine-mens-morris")
    turn = Turn.of(pos)
    a = Actions(24)
    assert turn.mask().sum() == 24 and turn.mask()[a.move(0, 1)] == 0
    with pytest.raises(ValueError, match="not allowed"):
        turn.choose(a.move(0, 1))
    with pytest.raises(ValueError, match="not an action"):
        turn.choose(a.size)


def test_the_observation_is_from_the_players_side() -> None:
    pos = Position("six-mens-morris")
    pos.push_text("a1")
    white, black = observe(pos, 0), observe(pos, 1)
    i = pos.topology.index["a1"]
    assert white.shape == (16, PLANES) and white.dtype == np.float32
    assert white[i, 0] == 1 and white[i, 1] == 0 and black[i, 0] == 0 and black[i, 1] == 1
    assert white[0, 10] == 0 and black[0, 10] == 1  # black to move
    assert black[0, 6] == 1.0 and white[0, 6] == pytest.approx(5 / 6)  # men in hand


# a dict observation (observation + action mask), as PettingZoo's own classic games have
@pytest.mark.filterwarnings("ignore:Observation space for each agent probably")
@pytest.mark.filterwarnings("ignore:Observation is not a NumPy array")
@pytest.mark.parametrize("variant", ["nine-mens-morris", "lasker-morris", "twelve-mens-morris"])
def test_pettingzoo_api_and_seed_tests(variant: str) -> None:
    from pettingzoo.test import api_test, seed_test

    from arena.env import env

    api_test(env(variant), num_cycles=300)
    seed_test(lambda: env(variant), num_cycles=300)


def _random_games(variant: str, games: int, seed: int) -> list[tuple[list[str], dict]]:
    """Random legal play through the AEC environment: each game's moves (read off the
    engine's stack) and the environment's last infos."""
    from arena.env import MorrisEnv

    e = MorrisEnv(variant, max_turns=300)
    rng = np.random.default_rng(seed)
    out = []
    for g in range(games):
        e.reset(seed=seed + g)
        while not (e.terminations[e.agent_selection] or e.truncations[e.agent_selection]):
            mask = e.observe(e.agent_selection)["action_mask"]
            e.step(int(rng.choice(np.flatnonzero(mask))))
        out.append(([str(m) for m in e.position.move_stack], dict(e.infos["player_0"]),
                    dict(e.rewards)))
    return out


def test_random_play_never_leaves_the_rules_and_ends_as_the_engine_says() -> None:
    """2,000 random games through the environment, over every preset: each move is one the
    referee accepts (replayed with ``push_text``, which refuses an illegal one), and each
    game ends as replaying its moves through arena.rules ends it (result, termination,
    the rewards' signs; a game cut at 300 turns has no outcome there either)."""
    variants = sorted(PRESETS)
    per = -(-2000 // len(variants))
    total = 0
    for k, variant in enumerate(variants):
        for moves, info, rewards in _random_games(variant, per, seed=1000 * k):
            replay = Position(variant)
            for text in moves:
                replay.push_text(text)
            outcome = replay.outcome()
            if outcome is None:
                assert info == {} and len(moves) == 300 and rewards["player_0"] == 0
            else:
                assert info == {"result": outcome.result,
                                "termination": outcome.termination.value}, (variant, moves)
                won = {"1-0": 1, "0-1": -1, "1/2-1/2": 0}[outcome.result]
                assert (rewards["player_0"], rewards["player_1"]) == (won, -won)
            total += 1
    assert total >= 2000


def test_the_gymnasium_env_plays_a_real_bot_through_the_referee() -> None:
    from arena.env import BotOpponent, MorrisGym
    from arena.sandbox import Isolation, Level

    opponent = BotOpponent(ROOT / "bots" / "greedy", movetime_ms=200,
                           isolation=Isolation(Level.NONE))
    gym = MorrisGym("three-mens-morris", opponent, color="black")
    results = []
    try:
        for seed in range(2):
            obs, info = gym.reset(seed=seed)
            assert gym.position.move_stack, "the bot, white, moved first"
            over, reward = False, 0.0
            while not over:
                assert obs["action_mask"].any()
                obs, reward, terminated, truncated, info = gym.step(
                    int(np.flatnonzero(obs["action_mask"])[0]))
                over = terminated or truncated
            results.append((reward, info))
            pid = opponent.player.process.proc.pid
    finally:
        gym.close()
    assert all(info["result"] in ("1-0", "0-1", "1/2-1/2") for _, info in results)
    with pytest.raises(ProcessLookupError):  # closed: its process is gone
        import os
        os.kill(pid, 0)


def test_a_bot_that_fails_its_move_loses_the_learners_game(tmp_path: Path) -> None:
    from arena.env import BotOpponent, MorrisGym
    from arena.sandbox import Isolation, Level

    bot = tmp_path / "crash"
    bot.mkdir()
    (bot / "bot.yaml").write_text('name: crash\ncommand: "{python} bot.py"\n')
    (bot / "bot.py").write_text(
        "from arena.botkit import run\n\ndef choose(position, clock):\n    raise SystemExit(3)\n\n"
        "run(choose, name='crash')\n")
    gym = MorrisGym("six-mens-morris", BotOpponent(bot, isolation=Isolation(Level.NONE)),
                    color="white")
    try:
        obs, _ = gym.reset(seed=0)
        obs, reward, terminated, truncated, info = gym.step(
            int(np.flatnonzero(obs["action_mask"])[0]))
    finally:
        gym.close()
    assert (reward, terminated, info["result"], info["termination"]) == (1.0, True, "1-0", "crash")


def test_policy_move_asks_until_the_turn_is_complete() -> None:
    """A capture needs two actions (the head, then the man taken): the policy is asked twice,
    the second time with the head shown in its observation."""
    pos = Position("six-mens-morris")
    for text in ("a1", "b2", "a4", "b4"):
        pos.push_text(text)
    asked = []

    def policy(obs: np.ndarray, mask: np.ndarray) -> int:
        asked.append((obs[:, 14].max(), int(mask.sum())))
        a = Actions(16)
        mill = a.place(pos.topology.index["a7"])
        return mill if mask[mill] else int(np.flatnonzero(mask)[0])

    move = policy_move(pos, policy)
    assert str(move).startswith("a7x") and pos.is_legal(move)
    assert asked[0][0] == 0 and asked[1][0] == 1 and len(asked) == 2


@pytest.mark.slow
def test_the_worked_example_trains_a_bot_that_beats_random_in_a_tournament(
        tmp_path: Path) -> None:
    """The docs' worked example, shortened (300 training games): the trained policy is a bot
    folder that ``arena run`` enters against bots/random, and it scores at least 80 %."""
    bot = tmp_path / "learned"
    train = subprocess.run([sys.executable, str(LEARNED / "train.py"), "--episodes", "300",
                            "--eval-games", "0", "--out", str(bot)],
                           capture_output=True, text=True, timeout=600)
    assert train.returncode == 0, train.stderr[-2000:]
    assert (bot / "policy.npz").exists() and (bot / "bot.py").exists()
    out = tmp_path / "results"
    (tmp_path / "t.yaml").write_text(json.dumps({
        "name": "learned", "seed": 1, "bots": [str(bot), str(ROOT / "bots" / "random")],
        "variants": ["six-mens-morris"], "games_per_pairing": 20,
        "time": {"movetime": 1000, "handshake": 30000}, "report": False, "output": str(out)}))
    run = subprocess.run([sys.executable, "-m", "arena.cli", "run", str(tmp_path / "t.yaml")],
                         capture_output=True, text=True, timeout=900, cwd=ROOT)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    records = [json.loads(line) for line in (out / "games.jsonl").read_text().splitlines()]
    assert len(records) == 20
    score = 0.0
    for r in records:
        assert r["termination"] not in ("crash", "illegal-move", "timeout", "protocol-error"), r
        learned_white = r["white"]["name"] == "learned"
        score += {"1-0": 1.0, "0-1": 0.0}.get(r["result"], 0.5) if learned_white else \
            {"1-0": 0.0, "0-1": 1.0}.get(r["result"], 0.5)
    assert score / len(records) >= 0.8, (score, [r["result"] for r in records])


def test_a_policy_that_breaks_its_mask_crashes_its_bot_with_the_reason(tmp_path: Path) -> None:
    """An action the mask forbids is the bot's bug: the referee records a crash, and the
    bot's stderr (in the record's detail) says which action was refused."""
    from arena.clock import TimeControl
    from arena.manifest import load_bot
    from arena.referee import play_game
    from arena.sandbox import Isolation, Level

    bot = tmp_path / "stubborn"
    bot.mkdir()
    (bot / "bot.yaml").write_text('name: stubborn\ncommand: "{python} bot.py"\n')
    (bot / "bot.py").write_text("from arena.botkit import run_policy\n\n"
                                "run_policy(lambda observation, mask: 0, name='stubborn')\n")
    record = play_game(load_bot(bot), load_bot(ROOT / "bots" / "random"), "six-mens-morris",
                       TimeControl(movetime_ms=2000, handshake_ms=30000),
                       isolation=Isolation(Level.NONE), seed=1)
    assert (record.result, record.termination) == ("0-1", "crash"), record
    assert "action 0 (place a1) is not allowed here" in record.detail, record.detail
