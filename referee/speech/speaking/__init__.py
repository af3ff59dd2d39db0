"""Speaking: the referee's voices and outputs (sentence -> audio)."""
