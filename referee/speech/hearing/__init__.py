"""Hearing: the microphone, voice activity, the recognisers (audio -> words)."""
