"""Fit the Whisper recogniser's calibration on the tuning split, and show its trade-off.

Run: ``./run bench recognition --game race65 --voices <tuning voices> --dump r65.json``,
the same for the other games, then
``./run bench calibrate r65.json:race65 stb.json:shut-the-box ...`` (every game);
with ``--table`` for dumps heard with the table's adapter (the weights of
:data:`~referee.speech.hearing.confidence.TABLE_CALIBRATION`), ``--model
moonshine-tiny`` for dumps heard by Moonshine tiny
(:data:`~referee.speech.hearing.confidence.MOONSHINE_TINY_CALIBRATION`; it
has no adapter and no primer, so the base margin and the primed similarity
are not weighed).

Only the tuning split is used: the six tuning voices, each game's commands and
table talk, and the ``pd`` paraphrases (``--unmet``: and the tuning voices no
training line was said in, :data:`~harness.fixtures.UNMET_VOICES`). A row's
label is 1 when Whisper's best sentence means what was said and it is a
command; 0 when it means something else, or the speech was table talk. The
model is a logistic regression over
:func:`~referee.speech.hearing.confidence.whisper_features` (plain gradient
descent, a small L2 penalty, deterministic); it prints the weights to copy into
:data:`~referee.speech.hearing.confidence.CALIBRATION`, then, for a few probability
thresholds, the share of commands heard right per room and of table talk
taken for a command.

With ``--real FILE.json`` (``./run bench realvoices --sets tuning --dump``:
the real training speakers' recordings the adapter never trained on) the
fit learns from real speech too: a digit, yes, no or stop heard as itself
is 1, any other word or a wrong meaning 0; ``--real-held FILE.json:SET``
judges the fit on a real measurement set's dump beside ``--held``.

With ``--held FILE.json:GAME ...`` (dumps of the held-out voices, judged once
the fit is fixed) it also picks the fit's threshold by the project's rule (the
lowest of :data:`THRESHOLDS` at which every game's tuning table-talk sentences
taken stay under :data:`TALK_LIMIT`, the whole decision judged again from the
dumps) and prints the held-out figures of the shipped calibration at its
threshold and of the fit at the rule's, side by side.
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

from harness.fixtures import DEV_VOICES, GAMES, HELD_OUT_VOICES, UNMET_VOICES
from referee.games import matcher_for
from referee.speech.hearing.confidence import (
    CALIBRATIONS,
    Calibration,
    whisper_features,
)
from referee.speech.hearing.measures import measures_of
from referee.speech.understanding.intents import IntentMatcher

from .realvoices import COMMANDS, DIGITS
from .recognition import Row, load_rows, rejudge

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
#: The probabilities a sentence may be heard at, tried lowest first by the rule.
THRESHOLDS = (0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95)
#: The share of a game's tuning table-talk sentences the rule lets be taken.
TALK_LIMIT = 0.015


def rows_of(path: str, game: str, voices: tuple[str, ...] = DEV_VOICES
            ) -> list[dict[str, Any]]:
    """The tuning rows of one benchmark dump (of ``voices``), with their label
    and features."""
    players = GAMES[game][1]
    matcher = matcher_for(game, players)
    out = []
    with open(path) as handle:
        dumped = json.load(handle)
    for row in dumped:
        if row["voice"] not in voices or row["kind"] not in TUNING_KINDS:
            continue
        extra = row["extra"]
        if "gap" not in extra:  # dumps made before the gap was recorded
            extra["gap"] = _gap(extra.get("options", extra.get("nbest", [])), matcher, players[0])
        measures = measures_of(extra)
        features = whisper_features(measures) if measures is not None else {}
        if not features or measures is None:
            continue
        meant = matcher.match(measures.best, players[0]).intent.to_json()
        row["features"] = [features[n] for n in NAMES]
        row["label"] = float(row["kind"] != "talk" and meant == row["expected"])
        row["meant"] = meant
        row["game"] = game
        out.append(row)
    return out


def real_rows(path: str) -> list[dict[str, Any]]:
    """The tuning rows of real recordings (``./run bench realvoices --sets
    tuning --dump FILE``), as :func:`rows_of` gives them: a digit, yes, no or
    stop heard as itself is 1; any other word, or a wrong meaning, 0."""
    from benchmarks.realvoices import dump_rows

    out = []
    for row in dump_rows(Path(path), "tuning"):
        measures = measures_of(row.extra)
        features = whisper_features(measures) if measures is not None else {}
        if not features:
            continue
        out.append({"features": [features[n] for n in NAMES], "kind": row.kind,
                    "label": float(row.kind == "command" and row.best == row.expected),
                    "meant": row.best, "game": "real", "condition": row.condition})
    return out


def real_line(name: str, threshold: float, rows: list[Row]) -> str:
    """One row of the real measurement table: digits and yes / no / stop acted
    on at once / heard right, other words taken (acted on), wrong acted on."""
    cells = ["real", name, f"{threshold:g}"]
    for words in (DIGITS, list(COMMANDS)):
        mine = [r for r in rows if r.text in words]
        cells.append(f"{sum(r.right and not r.asked for r in mine)} / "
                     f"{sum(r.right for r in mine)} of {len(mine)}")
    talk = [r for r in rows if r.kind == "talk"]
    cells.append(f"{sum(r.taken for r in talk)} ({sum(r.taken and not r.asked for r in talk)})"
                 f" of {len(talk)}")
    commands = [r for r in rows if r.kind == "command"]
    cells.append(str(sum(r.taken and not r.right and not r.asked for r in commands)))
    return "| " + " | ".join(cells) + " |"


def _gap(nbest: list[list[Any]], matcher: IntentMatcher, speaker: str) -> float:
    if not nbest:
        return 0.0
    meaning = matcher.match(nbest[0][0], speaker).intent
    for words, score, *_ in nbest[1:]:
        if matcher.match(words, speaker).intent != meaning:
            return float(nbest[0][1] - score)
    return float("inf")


#: The measures that mean nothing of their own for a model: without an
#: adapter the base margin is the margin, and without a primer the primed
#: transcript is the plain one (Moonshine has neither). Their weights stay 0.
SAME_AS_OTHERS = {"moonshine-tiny": ("base_margin", "primed_similarity"),
                  "moonshine-base": ("base_margin", "primed_similarity")}


def names_for(model: str) -> list[str]:
    """The measures a model's calibration weighs."""
    return [n for n in NAMES if n not in SAME_AS_OTHERS.get(model, ())]


def fit(x: np.ndarray, y: np.ndarray, used: list[bool] | None = None, steps: int = 20000,
        rate: float = 0.5, penalty: float = 1e-4) -> np.ndarray:
    """Logistic regression by projected gradient descent: each step, a weight
    with the wrong sign for :data:`SIGNS` is set to 0 (and one not ``used``
    stays 0)."""
    xb = np.hstack([x, np.ones((len(x), 1))])
    w = np.zeros(xb.shape[1])
    used = used or [True] * len(NAMES)
    low = np.array([0.0 if SIGNS[n] > 0 or not u else -np.inf
                    for n, u in zip(NAMES, used, strict=True)] + [-np.inf])
    high = np.array([0.0 if SIGNS[n] < 0 or not u else np.inf
                     for n, u in zip(NAMES, used, strict=True)] + [np.inf])
    for _ in range(steps):
        p = 1.0 / (1.0 + np.exp(-xb @ w))
        w -= rate * (xb.T @ (p - y) / len(y) + penalty * w)
        np.clip(w, low, high, out=w)
    return w


def dump_rows(specs: list[str], voices: tuple[str, ...]) -> dict[str, list[Row]]:
    """Each game's rows of ``voices`` in the dumps ``FILE.json:GAME`` (an
    utterance heard in two dumps counted once, from the first)."""
    out: dict[str, list[Row]] = {}
    seen: set[tuple[str, str, str, str]] = set()
    for spec in specs:
        path, game = spec.rsplit(":", 1)
        for row in load_rows(path, game):
            key = (game, row.voice, row.condition, row.id)
            if row.voice in voices and key not in seen:
                seen.add(key)
                out.setdefault(game, []).append(row)
    return out


def talk_taken(rows: list[Row]) -> float:
    """The share of the tuning table-talk sentences taken for a command."""
    talk = [r for r in rows if r.kind == "talk"]
    return sum(r.taken for r in talk) / len(talk) if talk else 0.0


def rule_threshold(tuning: dict[str, list[Row]], weights: dict[str, float]) -> float:
    """The lowest of :data:`THRESHOLDS` at which every game's tuning table-talk
    sentences taken stay under :data:`TALK_LIMIT` (the highest if none)."""
    for threshold in THRESHOLDS:
        calibration = Calibration(weights, heard=threshold)
        if all(talk_taken(rejudge(rows, game, calibration)) < TALK_LIMIT
               for game, rows in tuning.items()):
            return threshold
    return THRESHOLDS[-1]


def held_out_line(game: str, name: str, threshold: float, rows: list[Row]) -> str:
    """One row of the held-out table: commands heard / acted on at once by room,
    paraphrases, table talk taken (acted on at once), wrong moves acted on."""
    cells = [game, name, f"{threshold:g}"]
    for room in ("clean", "babble20", "babble10"):
        mine = [r for r in rows if r.kind == "command" and r.condition == room]
        heard = sum(r.right for r in mine)
        acted = sum(r.right and not r.asked for r in mine)
        cells.append(f"{100 * heard / len(mine):.1f} / {100 * acted / len(mine):.1f} %"
                     if mine else "-")
    para = [r for r in rows if r.kind == "paraphrase-test"]
    cells.append(f"{sum(r.right for r in para)} of {len(para)}" if para else "-")
    talk = [r for r in rows if r.kind in ("talk", "talk-test")]
    sure = sum(r.taken and not r.asked for r in talk)
    cells.append(f"{sum(r.taken for r in talk)} ({sure}) of {len(talk)}")
    commands = [r for r in rows if r.kind == "command"]
    cells.append(str(sum(r.taken and not r.right and not r.asked for r in commands)))
    return "| " + " | ".join(cells) + " |"


def judge_held_out(tuning: dict[str, list[Row]], held: dict[str, list[Row]],
                   weights: dict[str, float], model: str,
                   real: dict[str, list[Row]] | None = None) -> None:
    """The shipped calibration at its threshold against the fit at the rule's."""
    shipped = CALIBRATIONS[model]
    fitted = Calibration(weights, heard=rule_threshold(tuning, weights))
    print()
    print(f"The fit is heard from {fitted.heard:g} (the rule over the tuning voices in the "
          f"dumps); held out, heard / acted on at once:")
    print()
    print("| game | calibration | heard at | clean | babble 20 dB | babble 10 dB | "
          "paraphrases | talk taken (at once) | wrong moves acted on |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for game, rows in held.items():
        for name, calibration in (("shipped", shipped), ("fitted", fitted)):
            print(held_out_line(game, name, calibration.heard,
                                rejudge(rows, game, calibration)))
    if real:
        print()
        print("Real voices (``--real-held``: measurement sets, never fitted on), at once / "
              "heard right:")
        print()
        print("| | calibration | heard at | digits | yes, no, stop | other words taken "
              "(at once) | wrong acted on |")
        print("|---|---|---:|---:|---:|---:|---:|")
        for label, rows in real.items():
            print(f"| {label} | | | | | | |")
            for name, calibration in (("shipped", shipped), ("fitted", fitted)):
                print(real_line(name, calibration.heard, rejudge(rows, "race65", calibration)))


def main() -> None:
    parser = argparse.ArgumentParser(description="fit the Whisper calibration")
    parser.add_argument("dumps", nargs="+", help="FILE.json:GAME from bench recognition --dump")
    parser.add_argument("--table", action="store_true",
                        help="the dumps were heard with the table's adapter: print the "
                        "weights for TABLE_CALIBRATION (as --model table)")
    parser.add_argument("--model", choices=sorted(CALIBRATIONS), default=None,
                        help="the model the dumps were heard with (its shipped calibration "
                        "is the one compared): base (default), table, moonshine-tiny, ...")
    parser.add_argument("--unmet", action="store_true",
                        help="fit on the unmet tuning voices too (harness.fixtures.UNMET_VOICES)")
    parser.add_argument("--held", nargs="+", default=[], metavar="FILE.json:GAME",
                        help="held-out dumps to judge the fit on, against the shipped "
                        "calibration")
    parser.add_argument("--real", nargs="+", default=[], metavar="FILE.json",
                        help="fit on real recordings too: dumps of ./run bench realvoices "
                        "--sets tuning (the training speakers' other recordings)")
    parser.add_argument("--real-held", nargs="+", default=[], metavar="FILE.json:SET",
                        help="real measurement dumps (./run bench realvoices --dump) to judge "
                        "the fit on, with --held")
    args = parser.parse_args()
    voices = (*DEV_VOICES, *UNMET_VOICES) if args.unmet else DEV_VOICES
    model = args.model or ("table" if args.table else "base")
    names = names_for(model)
    rows: list[dict[str, Any]] = []
    for spec in args.dumps:
        path, game = spec.rsplit(":", 1)
        rows += rows_of(path, game, voices)
    for path in args.real:
        rows += real_rows(path)
    x = np.array([r["features"] for r in rows])
    y = np.array([r["label"] for r in rows])
    w = fit(x, y, [n in names for n in NAMES])
    print(f"{model}: " + "{")
    print("    " + ", ".join(f'"{n}": {v:.3f}' for n, v in zip(NAMES, w, strict=False)
                             if n in names) + ",")
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
    if args.held:
        weights = {n: float(v) for n, v in zip(NAMES, w, strict=False) if n in names
                   } | {"bias": float(w[-1])}
        from benchmarks.realvoices import dump_rows as real_dump

        real = {spec: real_dump(Path(spec.rsplit(":", 1)[0]), spec.rsplit(":", 1)[1])
                for spec in args.real_held}
        judge_held_out(dump_rows(args.dumps, voices), dump_rows(args.held, HELD_OUT_VOICES),
                       weights, model, real)


def _percent(values: list[bool]) -> str:
    return f"{100 * np.mean(values):.1f} %" if values else "-"


if __name__ == "__main__":
    main()
