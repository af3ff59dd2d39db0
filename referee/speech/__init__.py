"""Everything between the players' voices and the rules: intents now,
recognition and text to speech next."""
