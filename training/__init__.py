"""Ears trained for the table: Whisper tiny.en's decoder adapted to the games' own sentences.

``./run train ears`` (:mod:`training.cli`) does it end to end,
reproducibly from a seed, on this machine's CPU:

1. :mod:`~training.sentences`: what players say, drawn from all
   four games' phrase files (every intent, every slot value, the moment-bound
   sentences, read-outs of cards, numbers written both ways Whisper writes
   them), with players' names from a wide list, and what the referee must not
   take for a command: table talk, single words, near misses ("free" for
   "three", "hint" for "hit") and the referee's own sentences leaking back.
2. :mod:`~training.voices`: who says it. eSpeak NG's accents and
   variants, Piper's joe at many speeds and noise scales, and the Kokoro-82M
   int8 model's five voices and mixes of them (fed eSpeak's English phonemes);
   never flite or Festival voices, never the real-voice recordings, never a
   voice of the benchmarks' held-out split (checked:
   :func:`~training.voices.check_not_held_out`).
3. :mod:`~training.rooms`: where it is said. Synthetic rooms,
   babble built from training voices, pink and household noise, gain,
   cheap-microphone band limits, and the referee's voice as the echo
   canceller leaves it.
4. :mod:`~training.data`: each utterance prepared as the product
   prepares it (:func:`~referee.speech.audio.trailing_cut`,
   :func:`~referee.speech.hearing.features.log_mel`) and encoded once by the
   product's own int8 CTranslate2 encoder; the encodings are cached.
5. :mod:`~training.model` and :mod:`~training.train`:
   low-rank adapters on every projection of the decoder, trained in PyTorch
   with teacher forcing after the product's own prompts, the loss normalised
   over the product's decoder vocabulary; written as a small ``.npz`` the
   product applies over the pinned base weights
   (:mod:`referee.speech.hearing.adapter`).

PyTorch is needed only here (``pip install -e '.[train]'``; the set-up installs
it); the referee itself never imports this package.
"""
