"""A room between the referee's loudspeaker and a microphone, for tests and
benchmarks of the echo canceller: an impulse response."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from referee.speech.audio import RATE


def room(rng: np.random.Generator) -> npt.NDArray[np.float64]:
    """An impulse response: the speaker 50 ms away in time, a 0.3 s tail."""
    n, delay = int(0.3 * RATE), int(0.05 * RATE)
    t = np.arange(n)
    response = rng.standard_normal(n) * np.exp(-t / (0.3 * RATE / 6.9)) * 0.3
    response[:delay] = 0.0
    response[delay] = 1.0
    return response
