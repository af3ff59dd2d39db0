"""``referee check``: is a laid-down phase of Phase 10 Twist valid (a tool on
the command line, beside the game)."""

from __future__ import annotations

import argparse
import json

from referee.engine.phase10_phases import BOARD_PHASES, TWIST_PHASES, check_phase, parse_card
from referee.games.base import SetupError, sentence


def check_arguments(parser: argparse.ArgumentParser) -> None:
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument("--phase", type=int, metavar="N", help="a phase of the board, 1 to 10")
    which.add_argument("--twist", type=int, metavar="N", help="a Twist card, 1 to 10")
    parser.add_argument("--cards", nargs="+", required=True, metavar="CARD",
                        help="the cards laid down: 7, 7:red (colours only for colour "
                             "phases), wild or skip")


def check(args: argparse.Namespace) -> int:
    """``{"valid": true}`` or ``{"valid": false, "reason": "..."}``."""
    table, number = (TWIST_PHASES, args.twist) if args.twist is not None else (
        BOARD_PHASES, args.phase)
    if number not in table:
        kind = "Twist cards" if args.twist is not None else "Phases"
        raise SetupError(f"{kind} go from 1 to 10, not {number}.")
    try:
        cards = [parse_card(c) for c in args.cards]
    except ValueError as error:
        raise SetupError(sentence(str(error)) + ".") from error
    print(json.dumps(check_phase(table[number], cards).to_json()))
    return 0
