"""``referee doctor``: which recogniser, model, adapter, devices and voice the
referee would use here, and whether each is usable."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def adapter_made(adapter: Any) -> str:
    """How an adapter was made, in a few words, from its report."""
    report = adapter.report
    if "stacked_on" in report:
        real = report.get("data", {}).get("real", {})
        inner = report["stacked_on"].get("report", {})
        parts = len(inner.get("averaged", ()))
        under = f"{parts} synthetic-voice adapters averaged" if parts else "a synthetic-voice one"
        return (f", trained on {real.get('recordings', 0):,} real recordings of "
                f"{len(real.get('speakers', ())):,} speakers over {under}")
    parts = len(report.get("averaged", ()))
    return f", {parts} adapters averaged" if parts else ""


def adapter_state(path: Path | None = None) -> str:
    """Which Whisper model the referee hears with, for ``doctor`` (``path``: an
    adapter being measured instead of the table's)."""
    from referee.speech.hearing.interface import RecognizerError
    from referee.speech.hearing.recognizers import table_adapter

    try:
        adapter = table_adapter(path)
    except RecognizerError as error:
        return f"tiny.en as shipped: the table's adapter is unusable ({error})"
    origin = (f"SHA-256 {adapter.sha256[:12]}... as pinned" if adapter.pinned
              else f"unpinned (SHA-256 {adapter.sha256[:12]}...)")
    return (f"tiny.en+table: Whisper tiny.en with the table's adapter, rank {adapter.rank}"
            f"{adapter_made(adapter)} ({adapter.path}, {origin}); --model base hears without it")


def encoder_state() -> str:
    """How the encoder computes on this CPU, and whether that is how the
    figures of docs/results.md were computed."""
    from referee.speech.hearing.whisper import int8_kernels

    kernels = int8_kernels()
    if kernels == "vnni":
        return ("int8 on this CPU's VNNI instructions: bit for bit as on the machines the "
                "figures in docs/results.md come from")
    if kernels == "avx2":
        return ("int8 without VNNI instructions (AVX2 only): close to, not the same as, the "
                "CPUs the figures in docs/results.md come from (about 3 decisions in 100 "
                "differ, between acting, asking and not hearing)")
    return "int8; this CPU's instructions are unknown here (see docs/results.md)"


def cmd_doctor() -> int:
    """Say what would be used, and why, without starting a game."""
    _doctor_ears()
    _doctor_devices()
    _doctor_voice()
    return 0


def _doctor_ears() -> None:
    from referee.speech.hearing.interface import MODELS_DIR, find_vosk_model, find_whisper_model
    from referee.speech.hearing.recognizers import default_engine
    from referee.speech.hearing.sphinx_vosk import pocketsphinx_model_dir
    from referee.speech.hearing.whisper_files import ModelError, check_model_files

    print(f"recogniser: {default_engine()} (the default; --ears chooses another)")
    whisper_model = find_whisper_model()
    if whisper_model is None:
        print("whisper: not installed (./run installs it; or 'referee models install "
              "whisper-tiny.en')")
    else:
        try:
            check_model_files(whisper_model)
            print(f"whisper: tiny.en in {whisper_model} (every file matches its SHA-256)")
        except ModelError as error:
            print(f"whisper: unusable: {error}")
        print(f"whisper model in use: {adapter_state()}")
        print(f"whisper encoder: {encoder_state()}")
    _doctor_moonshine()
    vosk_model = find_vosk_model()
    print(f"vosk: {f'model {vosk_model}' if vosk_model else f'no model in {MODELS_DIR}'}")
    print(f"pocketsphinx: US English model in {pocketsphinx_model_dir()}")


def _doctor_moonshine() -> None:
    from referee.speech.hearing.moonshine import MODELS, check_moonshine, find_moonshine_model
    from referee.speech.hearing.whisper_files import ModelError

    for name in MODELS:
        try:
            folder = check_moonshine(name)
            print(f"{name}: in {folder} (every file matches its SHA-256; --ears {name})")
        except ModelError as error:
            where = find_moonshine_model(name)
            state = "not installed" if not where.is_dir() else f"unusable: {error}"
            print(f"{name}: {state} ('referee models install {name}')")


def _doctor_devices() -> None:
    import shutil

    try:
        import sounddevice

        devices = list(sounddevice.query_devices())
        inputs = [d for d in devices if d["max_input_channels"] > 0]
        if inputs:
            print(f"microphones: {', '.join(str(d['name']) for d in inputs)}")
        else:
            print("microphones: none found; the referee falls back to typed input")
        # Numbered, as --device and --private-audio take them (a number or a name).
        for number, device in enumerate(devices):
            ways = [w for w, key in (("input", "max_input_channels"),
                                     ("output", "max_output_channels")) if device[key] > 0]
            print(f"  device {number}: {device['name']} ({' and '.join(ways) or 'no channels'})")
    except Exception as error:  # PortAudio missing or broken: say so, never crash
        print(f"microphones: cannot use audio devices ({error}); typed input only")
    espeak = shutil.which("espeak-ng")
    print(f"names: pronunciations for unknown names from {espeak or 'spelling (no espeak-ng)'}")


def _doctor_voice() -> None:
    from referee.speech.speaking.tts import VoiceError, make_voice, output_device_available

    voices = []
    for name in ("espeak", "piper"):
        try:
            make_voice(name)
            voices.append(name)
        except VoiceError as error:
            print(f"voice {name}: unavailable ({error})")
    speaker = output_device_available()
    where = "the speakers" if speaker else "print only: no output device found"
    print(f"voice: {voices[0] if voices else 'none'} (default espeak through pyttsx3; "
          f"available: {', '.join(voices) or 'none'}), to {where}")

