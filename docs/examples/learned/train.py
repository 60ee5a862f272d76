# %% [markdown]
# # A learned bot, from an empty policy to a refereed tournament
#
# `python docs/examples/learned/train.py [--episodes N] [--out FOLDER]` trains the bot of
# this folder (`docs/examples/learned`, seconds on two cores), checks it against random
# play in the environment, and writes its weights to `FOLDER/policy.npz` (default: this
# folder; another folder gets a copy of the bot's files).  Then `arena run` enters it in a tournament like any bot (last cell).
#
# The environment is `arena.env.MorrisGym`: the learner's side of a game of six men's
# morris against an opponent (here random legal moves), with the observations, action mask
# and action numbers of `arena.encoding`.  The policy is linear in a dozen features of
# each legal action (`features.py`: does it close a mill, block one, take a man from a
# threatening line...), a softmax over the legal actions; REINFORCE with a running
# baseline learns the weights from the games' results alone: +1 a win, -1 a loss.

# %%
from __future__ import annotations

import argparse
import shutil
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from features import NAMES, SIZE, Features, probabilities  # noqa: E402

from arena.env import MorrisGym, RandomOpponent  # noqa: E402

VARIANT = "six-mens-morris"


# %% [markdown]
# ## Playing one game with the current policy
# The learner samples each action from its policy and remembers, for each, the gradient of
# its log-probability: the chosen action's features less their expectation.

# %%
def play(gym: MorrisGym, features: Features, theta: np.ndarray, rng: np.random.Generator,
         seed: int, greedy: bool = False) -> tuple[float, list[np.ndarray]]:
    obs, _ = gym.reset(seed=seed)
    grads: list[np.ndarray] = []
    reward, over = 0.0, False
    while not over:
        legal, rows = features.of(obs["observation"], obs["action_mask"])
        p = probabilities(theta, rows)
        k = int(np.argmax(p)) if greedy else int(rng.choice(len(legal), p=p))
        grads.append(rows[k] - p @ rows)
        obs, reward, terminated, truncated, _ = gym.step(int(legal[k]))
        over = terminated or truncated
    return reward, grads


# %% [markdown]
# ## Training: REINFORCE with a baseline

# %%
def train(episodes: int, seed: int = 0, lr: float = 0.1, log_every: int = 100) -> np.ndarray:
    rng = np.random.default_rng(seed)
    gym = MorrisGym(VARIANT, RandomOpponent(), max_turns=200)
    features = Features(VARIANT)
    theta = np.zeros(SIZE)
    baseline, recent = 0.0, []
    for episode in range(episodes):
        reward, grads = play(gym, features, theta, rng, seed=seed * 1_000_003 + episode)
        theta += lr * (reward - baseline) * np.sum(grads, axis=0) / max(1, len(grads)) ** 0.5
        baseline += 0.05 * (reward - baseline)
        recent.append(reward)
        if (episode + 1) % log_every == 0:
            print(f"episode {episode + 1:5d}: mean reward of the last {log_every} "
                  f"{np.mean(recent[-log_every:]):+.2f}", flush=True)
    return theta


def evaluate(theta: np.ndarray, games: int, seed: int = 10_000) -> float:
    """The greedy policy's score against random play (a win 1, a draw 1/2)."""
    gym = MorrisGym(VARIANT, RandomOpponent(), max_turns=200)
    features = Features(VARIANT)
    rng = np.random.default_rng(seed)
    rewards = [play(gym, features, theta, rng, seed=seed + g, greedy=True)[0]
               for g in range(games)]
    return float(np.mean([(r + 1) / 2 for r in rewards]))


# %%
def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--episodes", type=int, default=3000)
    parser.add_argument("--eval-games", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=HERE,
                        help="where the bot's weights go (a copy of the bot folder if not it)")
    args = parser.parse_args()
    if args.episodes < 1 or args.eval_games < 0:
        parser.error("--episodes must be at least 1 and --eval-games at least 0")

    start = time.monotonic()
    print(f"before training: score {evaluate(np.zeros(SIZE), args.eval_games):.0%} "
          f"against random play ({args.eval_games} games)")
    theta = train(args.episodes, args.seed)
    print(f"trained {args.episodes} games in {time.monotonic() - start:.0f} s")
    print("weights: " + ", ".join(f"{n} {w:+.2f}" for n, w in zip(NAMES, theta)))
    if args.eval_games:
        print(f"after training: score {evaluate(theta, args.eval_games):.0%} "
              f"against random play ({args.eval_games} games)")

    # %% [markdown]
    # ## The trained agent as a bot
    # The bot folder holds bot.yaml, bot.py (`arena.botkit.run_policy`), features.py and the
    # weights (this script rides along in it, unused by the bot): `arena check` and `arena run` take it like any other bot.
    out = args.out.resolve()
    if out != HERE:
        out.mkdir(parents=True, exist_ok=True)
        for name in ("bot.yaml", "bot.py", "features.py"):
            shutil.copy2(HERE / name, out / name)
    np.savez(out / "policy.npz", theta=theta, variant=VARIANT)
    print(f"wrote {out / 'policy.npz'}; now: arena run tournaments/learned.yaml")


if __name__ == "__main__":
    main()
