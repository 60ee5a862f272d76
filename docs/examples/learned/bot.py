"""learned: a linear softmax policy over a few features of each action, its weights
(policy.npz, next to this file) trained by REINFORCE against random play
(train.py).  It plays the action its policy likes best."""

from pathlib import Path

import numpy as np

from arena.botkit import run_policy
from features import Features

HERE = Path(__file__).resolve().parent
saved = np.load(HERE / "policy.npz")
theta = saved["theta"]
features = Features(str(saved["variant"]))


def policy(observation, mask):
    legal, rows = features.of(observation, mask)
    return int(legal[np.argmax(rows @ theta)])


run_policy(policy, name="learned", author="Morris Arena (docs/examples/learned)")
