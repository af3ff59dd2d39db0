"""Fit the Whisper recogniser's calibration on the tuning split, and show its trade-off.

Run: ``./run bench recognition --game race65 --voices <tuning voices> --dump r65.json``,
the same for the other games, then
``./run bench calibrate r65.json:race65 stb.json:shut-the-box ...`` (every game);
with ``--table`` for dumps heard with the table's adapter (the weights of
:data:`~referee.speech.hearing.recognizers.TABLE_CALIBRATION`).

Only the tuning split is used: the six tuning voices, each game's commands and
table talk, and the ``pd`` paraphrases. A row's label is 1 when Whisper's best
sentence means what was said and it is a command; 0 when it means something
else, or the speech was table talk. The model is a logistic regression over
:func:`~referee.speech.hearing.recognizers.whisper_features` (plain gradient descent,
a small L2 penalty, deterministic); it prints the weights to copy into
:data:`~referee.speech.hearing.recognizers.CALIBRATION`, then, for a few probability
thresholds, the share of commands heard right per room and of table talk
taken for a command.
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from typing import Any

import numpy as np

from harness.fixtures import DEV_VOICES, GAMES
from referee.games import matcher_for
from referee.speech.hearing.recognizers import whisper_features
from referee.speech.understanding.intents import IntentMatcher

NAMES = ["margin", "total_margin", "similarity", "gap", "nothing", "best_length",
         "free_length", "primed_similarity", "base_margin", "sentence_confidence",
         "free_confidence"]
#: The sign each weight must have, where what it means fixes it: a sentence that
#: fits the sound better than Whisper's own transcript, is more like it, or is
#: further from one that means something else is never less likely heard; the
#: likelier Whisper found silence, the less. Without this, features that move
#: together (the margin per token and in total) take opposite signs in the fit,
#: and a sentence 16 nats worse than the transcript gained from it. 0: either.
SIGNS = {"margin": 1, "total_margin": 1, "similarity": 1, "gap": 1, "nothing": -1,
         "best_length": 0, "free_length": 0, "primed_similarity": 1, "base_margin": 1,
         "sentence_confidence": 1, "free_confidence": 0}
TUNING_KINDS = ("command", "talk", "paraphrase-dev")


def rows_of(path: str, game: str) -> list[dict[str, Any]]:
    """The tuning rows of one benchmark dump, with their label and features."""
    players = GAMES[game][1]
    matcher = matcher_for(game, players)
    out = []
    with open(path) as handle:
        dumped = json.load(handle)
    for row in dumped:
        if row["voice"] not in DEV_VOICES or row["kind"] not in TUNING_KINDS:
            continue
        extra = row["extra"]
        if "gap" not in extra:  # dumps made before the gap was recorded
            extra["gap"] = _gap(extra.get("nbest", []), matcher, players[0])
        features = whisper_features(extra)
        if not features:
            continue
        meant = matcher.match(row["extra"]["best"], players[0]).intent.to_json()
        row["features"] = [features[n] for n in NAMES]
        row["label"] = float(row["kind"] != "talk" and meant == row["expected"])
        row["meant"] = meant
        row["game"] = game
        out.append(row)
    return out


def _gap(nbest: list[list[Any]], matcher: IntentMatcher, speaker: str) -> float:
    if not nbest:
        return 0.0
    meaning = matcher.match(nbest[0][0], speaker).intent
    for words, score, *_ in nbest[1:]:
        if matcher.match(words, speaker).intent != meaning:
            return float(nbest[0][1] - score)
    return float("inf")


def fit(x: np.ndarray, y: np.ndarray, steps: int = 20000, rate: float = 0.5,
        penalty: float = 1e-4) -> np.ndarray:
    """Logistic regression by projected gradient descent: each step, a weight
    with the wrong sign for :data:`SIGNS` is set to 0."""
    xb = np.hstack([x, np.ones((len(x), 1))])
    w = np.zeros(xb.shape[1])
    low = np.array([0.0 if SIGNS[n] > 0 else -np.inf for n in NAMES] + [-np.inf])
    high = np.array([0.0 if SIGNS[n] < 0 else np.inf for n in NAMES] + [np.inf])
    for _ in range(steps):
        p = 1.0 / (1.0 + np.exp(-xb @ w))
        w -= rate * (xb.T @ (p - y) / len(y) + penalty * w)
        np.clip(w, low, high, out=w)
    return w


def main() -> None:
    parser = argparse.ArgumentParser(description="fit the Whisper calibration")
    parser.add_argument("dumps", nargs="+", help="FILE.json:GAME from bench recognition --dump")
    parser.add_argument("--table", action="store_true",
                        help="the dumps were heard with the table's adapter: print the "
                        "weights for TABLE_CALIBRATION")
    args = parser.parse_args()
    rows: list[dict[str, Any]] = []
    for spec in args.dumps:
        path, game = spec.rsplit(":", 1)
        rows += rows_of(path, game)
    x = np.array([r["features"] for r in rows])
    y = np.array([r["label"] for r in rows])
    w = fit(x, y)
    print(("TABLE_CALIBRATION" if args.table else "CALIBRATION") + " = {")
    print("    " + ", ".join(f'"{n}": {v:.3f}' for n, v in zip(NAMES, w, strict=False)) + ",")
    print(f'    "bias": {w[-1]:.3f},')
    print("}")
    p = 1.0 / (1.0 + np.exp(-(np.hstack([x, np.ones((len(x), 1))]) @ w)))
    print()
    games = tuple(dict.fromkeys(r["game"] for r in rows))
    rooms = ("clean", "babble10")
    print("| heard at | " + " | ".join(f"{g} talk taken" for g in games) + " | "
          + " | ".join(f"{g} {c}" for g in games for c in rooms) + " |")
    print("|---:|" + "---:|" * (len(games) * (1 + len(rooms))))
    for threshold in (0.4, 0.5, 0.6, 0.7, 0.8):
        right: dict[tuple[str, str], list[bool]] = defaultdict(list)
        talk: dict[str, list[bool]] = defaultdict(list)
        for row, chance in zip(rows, p, strict=True):
            heard = chance >= threshold
            if row["kind"] == "command":
                right[(row["game"], row["condition"])].append(heard and bool(row["label"]))
            elif row["kind"] == "talk":
                talk[row["game"]].append(heard and row["meant"].get("kind") != "none")
        cells = [_percent(right[(g, c)]) for g in games for c in rooms]
        print(f"| {threshold} | " + " | ".join(_percent(talk[g]) for g in games) + " | "
              + " | ".join(cells) + " |")


def _percent(values: list[bool]) -> str:
    return f"{100 * np.mean(values):.1f} %" if values else "-"


if __name__ == "__main__":
    main()
