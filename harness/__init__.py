"""What the tests and the benchmarks share: the speech fixtures (voices, rooms,
the utterance lists and their held-out split), a real audio server, and
drivers that play a game by typed lines or by voice.

Neither the referee nor its wheel uses it; both ``tests/`` and ``benchmarks/``
import it, and neither imports the other's helpers.
"""
