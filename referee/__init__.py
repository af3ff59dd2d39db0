"""referee: an offline, voice-driven referee for tabletop games."""

__version__ = "0.1.0"
