"""The best move in Shut the Box, computed exactly.

A turn's future depends only on which tiles are open, so the game is a small
Markov decision process over the 2^n sets of open tiles (4,096 for 12 tiles).
For every set ``S``, before the roll, the value with best play is

* goal ``shut``: the probability of shutting the box,
  ``P(∅) = 1``; ``P(S) = max over the dice allowed in S of
  Σ_r p(r) · max over the subsets T ⊆ S with sum r of P(S \\ T)``
  (0 for a roll no subset makes);
* goal ``score``: the expected final score (the sum of the open tiles when
  the turn ends), ``E(∅) = 0``;
  ``E(S) = min over dice of Σ_r p(r) · (min over T of E(S \\ T), or sum(S)
  when no T makes r)``.

``p`` is the distribution of two dice (2..12), or of one die (1..6), which
the player may choose when the open tiles add up to 6 or less. Removing tiles
only makes sets smaller, so the values are computed from the empty set
upwards, each set once: exact, no sampling. The hint for an open set and a
roll is the subset ``T`` with the best value of ``S \\ T``.

Tests check the values against a brute-force search of the game tree over
individual dice faces on small trays (``tests/test_shutbox_strategy.py``).
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache
from typing import Literal

Goal = Literal["shut", "score"]

TWO_DICE = {t: sum(1 for a in range(1, 7) for b in range(1, 7) if a + b == t) / 36
            for t in range(2, 13)}
ONE_DIE = {t: 1 / 6 for t in range(1, 7)}


def mask_of(tiles: Iterable[int]) -> int:
    mask = 0
    for t in tiles:
        mask |= 1 << (t - 1)
    return mask


def tiles_of(mask: int) -> tuple[int, ...]:
    return tuple(t + 1 for t in range(mask.bit_length()) if mask >> t & 1)


def _sum(mask: int) -> int:
    return sum(tiles_of(mask))


@cache
def _subsets_by_sum(mask: int) -> dict[int, tuple[int, ...]]:
    """Every non-empty subset of ``mask``, grouped by the sum of its tiles."""
    found: dict[int, list[int]] = {}
    sub = mask
    while sub:
        found.setdefault(_sum(sub), []).append(sub)
        sub = (sub - 1) & mask
    return {total: tuple(subs) for total, subs in found.items()}


def dice_choices(mask: int) -> list[dict[int, float]]:
    """The roll distributions the player may choose from with these tiles open."""
    return [TWO_DICE, ONE_DIE] if _sum(mask) <= 6 else [TWO_DICE]


@cache
def value(mask: int, goal: Goal) -> float:
    """The value of ``mask`` open before a roll, with best play (see the module)."""
    if mask == 0:
        return 1.0 if goal == "shut" else 0.0
    best: float | None = None
    for dist in dice_choices(mask):
        total = 0.0
        for roll, p in dist.items():
            after = _best_after(mask, roll, goal)
            if after is None:
                total += p * (0.0 if goal == "shut" else _sum(mask))
            else:
                total += p * after[1]
        if best is None or (total > best if goal == "shut" else total < best):
            best = total
    assert best is not None
    return best


def _best_after(mask: int, roll: int, goal: Goal) -> tuple[int, float] | None:
    """(the subset to shut, the value after it) for a roll, or None if none makes it."""
    choices = _subsets_by_sum(mask).get(roll, ())
    best: tuple[int, float] | None = None
    # deterministic: among equal values, the fewest tiles, then the highest tiles
    for sub in sorted(choices, key=lambda s: (bin(s).count("1"), [-t for t in tiles_of(s)])):
        v = value(mask & ~sub, goal)
        if best is None or (v > best[1] + 1e-12 if goal == "shut" else v < best[1] - 1e-12):
            best = (sub, v)
    return best


def hint(
    open_tiles: Iterable[int], roll: int, goal: Goal = "shut"
) -> tuple[tuple[int, ...] | None, float]:
    """(tiles to shut, value after shutting them); (None, value now) when no set makes it.

    For ``shut`` the value is the probability of going on to shut the box;
    for ``score`` the expected final score. With no set, the turn is over:
    the value is 0 (no chance) or the score, the sum of the open tiles.

    >>> hint([1, 2, 3], 6)
    ((1, 2, 3), 1.0)
    >>> hint([9], 7, "score")
    (None, 9.0)
    """
    mask = mask_of(open_tiles)
    best = _best_after(mask, roll, goal)
    if best is None:
        return None, 0.0 if goal == "shut" else float(_sum(mask))
    return tiles_of(best[0]), best[1]


def dice_hint(open_tiles: Iterable[int], goal: Goal = "shut") -> tuple[int, float]:
    """How many dice to roll (1 or 2) and the value of that choice, before a roll."""
    mask = mask_of(open_tiles)
    results = []
    for dist in dice_choices(mask):
        total = 0.0
        for roll, p in dist.items():
            after = _best_after(mask, roll, goal)
            total += p * ((0.0 if goal == "shut" else _sum(mask)) if after is None else after[1])
        results.append((2 if dist is TWO_DICE else 1, total))
    pick = max if goal == "shut" else min
    return pick(results, key=lambda r: r[1])
