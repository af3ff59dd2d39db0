"""The grammar engine at any size: phrase files compiled into networks, matched
without listing their sentences, with values of several words (#37)."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

from harness.games import listened_for
from referee.games import SetupError, find_game, matcher_for
from referee.speech.hearing.confidence import (
    CALIBRATION,
    LENGTH_CAP,
    TABLE_CALIBRATION,
    probability,
    whisper_features,
)
from referee.speech.hearing.measures import Measures
from referee.speech.understanding import network
from referee.speech.understanding.check import check_phrases, draw
from referee.speech.understanding.intents import IntentMatcher
from referee.speech.understanding.meaning import Intent
from referee.speech.understanding.network import compile_phrases, sentence_count
from referee.speech.understanding.phrase_files import load_phrases
from referee.speech.understanding.templates import SlotRef, TemplateError, Word, expand_phrases

ROOT = Path(__file__).resolve().parent.parent
CAFE = ROOT / "benchmarks" / "phrases" / "cafe.toml"


def write(tmp_path: Path, text: str, name: str = "phrases.toml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


# --- the compiled network ---------------------------------------------------------------


@pytest.mark.parametrize("game", ["race65", "turn7"])
def test_the_network_holds_exactly_the_sentences_the_templates_stand_for(game):
    phrases = matcher_for(game, ["Ann", "Bob"]).phrases
    listed = {words for words, _, _ in expand_phrases(phrases)}
    assert sentence_count(compile_phrases(phrases), phrases.slots) == len(listed)


def test_a_grammar_of_10_to_the_11_sentences_compiles_to_a_few_hundred_nodes():
    phrases = load_phrases(CAFE, ["Mary Ann", "Bob"])
    whole = compile_phrases(phrases)
    assert sentence_count(whole, phrases.slots) > 10**11
    assert len(whole.nodes) < 1000
    assert whole.arcs < 2000
    matcher = IntentMatcher(phrases, ["Mary Ann", "Bob"])
    heard = matcher.match("hi could I get a large oat milk latte with an extra shot and "
                          "some vanilla syrup please", "Bob")
    assert heard.intent.to_json() == {"kind": "order", "drink": "latte", "size": "large",
                                      "milk": "oat", "syrup": "vanilla", "shots": 1,
                                      "temperature": None}
    # Nothing was listed: no template was ever expanded into its sentences.
    assert not any("expansions" in vars(intent) for intent in phrases.intents)


def test_a_phrase_file_too_big_to_compile_is_refused_with_its_name(tmp_path, monkeypatch):
    monkeypatch.setattr(network, "MOST_NODES", 20)
    path = write(tmp_path, '[[intents]]\nkind = "a"\n'
                 'sentences = ["(a | b) (c | d) (e | f) (g | h) (i | j) (k | l) (m | n)"]\n')
    with pytest.raises(TemplateError, match=r"phrases\.toml.*more than 20 nodes"):
        IntentMatcher(load_phrases(path, []), [])


# --- the same scores as aligning with every sentence -----------------------------------------


def reference_score(matcher: IntentMatcher, text: str) -> float:
    """The best score over every unrolled sentence of the phrase file, each
    aligned with the transcript by the plain word-level edit distance the
    matcher used before it compiled networks (a joiner word after a list's
    value free; no slot left unsaid)."""
    phrases = matcher.phrases
    toks = matcher.tokenise(text)
    tok_weights = [matcher._token_weight(t) for t in toks]
    total_u = sum(tok_weights)
    joiners = {name: {t.text for e in slot.joiner for t in e if isinstance(t, Word)}
               for name, slot in phrases.slots.items()}
    best = 0.0
    for intent in phrases.intents:
        for expansion in intent.expansions:
            for unrolled in phrases.unroll(expansion, joiners=False):
                weights = [matcher._template_weight(t) for t in unrolled]
                n, m = len(unrolled), len(toks)
                inf = float("inf")
                cost = [[inf] * (m + 1) for _ in range(n + 1)]
                cost[0][0] = 0.0
                for i in range(n + 1):
                    for j in range(m + 1):
                        here = cost[i][j]
                        if here == inf:
                            continue
                        token = unrolled[i] if i < n else None
                        if j < m:  # a word put in
                            last = unrolled[i - 1] if i > 0 else None
                            free = (isinstance(last, SlotRef) and last.many
                                    and toks[j].text in joiners[last.name])
                            extra = 0.0 if free else tok_weights[j]
                            cost[i][j + 1] = min(cost[i][j + 1], here + extra)
                        if token is None:
                            continue
                        if isinstance(token, Word):  # left out
                            cost[i + 1][j] = min(cost[i + 1][j], here + weights[i])
                        if j < m:
                            said, _value, near = matcher.substitute(token, toks[j], weights[i])
                            if not near:
                                cost[i + 1][j + 1] = min(cost[i + 1][j + 1], here + said)
                if cost[n][m] < inf:
                    best = max(best, 1.0 - cost[n][m] / max(sum(weights), total_u))
    return best


@pytest.mark.slow
@pytest.mark.parametrize("game", ["race65", "shut-the-box"])
def test_the_network_scores_as_aligning_with_every_sentence_would(game):
    """Sentences of the game with a word left out, put in or swapped: the
    network's best score is the best over every sentence."""
    matcher = matcher_for(game, ["Ann", "Bob"])
    rng = random.Random(37)
    words = [*sorted(matcher.phrases.vocabulary() - {"and"}), "um", "please", "banana"]
    templates = [t for i in matcher.phrases.intents for t in i.trees]
    checked = 0
    for _ in range(60):
        tree = rng.choice(templates)
        said = draw(matcher.phrases, tree, rng).split()
        edit = rng.randrange(3)
        at = rng.randrange(len(said))
        if edit == 0 and len(said) > 1:
            del said[at]
        elif edit == 1:
            said.insert(at, rng.choice(words))
        else:
            said[at] = rng.choice(words)
        text = " ".join(said)
        heard = matcher.match(text, "Ann")
        if heard.message is not None and heard.kind == "none":
            continue  # a near miss ("flip 13"): reported, not scored
        best = reference_score(matcher, text)
        assert heard.score == (round(best, 3) if best >= matcher.floor else 0.0), text
        checked += 1
    assert checked > 40


# --- values of several words ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "intent"),
    [
        ("I got a life saver", Intent.of("card", special="lifesaver")),
        ("lifesaver", Intent.of("card", special="lifesaver")),  # a synonym, one value
        ("times two", Intent.of("card", special="x2")),
        ("double", Intent.of("card", special="x2")),
        ("it's a turn three", Intent.of("card", special="turn3")),
        ("give the life saver to Bob", Intent.of("target", card="lifesaver", player="Bob")),
        ("put the turn three on Bob", Intent.of("target", card="turn3", player="Bob")),
        # Misheard as a template's own words would be: a word off, one left out.
        ("Give the life savor to Bob.", Intent.of("target", card="lifesaver", player="Bob")),
        ("give the life to Bob", Intent.of("target", card="lifesaver", player="Bob")),
        ("Time's 2.", Intent.of("card", special="x2")),
    ],
)
def test_turn_sevens_special_cards_are_values_of_several_words(text, intent):
    matcher = matcher_for("turn7", ["Ann", "Bob"])
    assert matcher.match(text, "Ann").intent == intent


def test_a_value_of_one_word_is_never_taken_for_a_misheard_one():
    matcher = matcher_for("turn7", ["Ann", "Bob"])
    assert matcher.match("I got a lick", "Ann").kind == "none"


def test_multi_word_values_synonyms_and_a_two_word_name(tmp_path):
    phrases = load_phrases(CAFE, ["Mary Ann", "Bob"])
    matcher = IntentMatcher(phrases, ["Mary Ann", "Bob"])
    assert matcher.match("a twelve ounce flat white", "Bob").intent.to_json() == {
        "kind": "order", "drink": "flat white", "size": "12 oz", "milk": None,
        "syrup": None, "shots": None, "temperature": None}
    assert matcher.match("a filter coffee", "Bob").intent["drink"] == "drip coffee"
    assert matcher.match("can I get two lattes please", "Bob").intent["count"] == 2
    assert matcher.match("it's for Mary Ann", "Bob").intent == Intent.of("for", name="Mary Ann")
    assert matcher.match("swap the milk for almond milk", "Bob").intent == Intent.of(
        "change", milk="almond")


# --- ambiguity: a tie, whatever the sentence's length ---------------------------------------------

LONG = ("please could you kindly switch on all of the {old}lamps in the living room and in "
        "the kitchen and in the hall right now before the guests arrive tonight")


def test_a_long_command_does_not_tie_with_itself_less_one_word(tmp_path):
    path = write(tmp_path, f'[[intents]]\nkind = "all"\nsentences = ["{LONG.format(old="")}"]\n'
                 f'[[intents]]\nkind = "old"\nsentences = ["{LONG.format(old="old ")}"]\n')
    matcher = IntentMatcher(load_phrases(path, []), [])
    assert matcher.match(LONG.format(old=""), "Ann").kind == "all"
    assert matcher.match(LONG.format(old="old "), "Ann").kind == "old"


def test_a_short_reading_that_ties_is_still_asked_about():
    matcher = matcher_for("race65", ["Ann", "Bob"])
    assert matcher.match("Bob's", "Ann").kind == "ambiguous"


# --- names that are words of the phrases ------------------------------------------------------


def test_a_name_that_is_a_word_of_the_games_commands_is_refused():
    """The issue's player "A": a word of Phase 10 Twist's read-outs ("a wild")."""
    with pytest.raises(SetupError, match=r"'A' is a word of Phase 10 Twist's commands"):
        find_game("phase10-twist")(["A", "Ann"])
    with pytest.raises(SetupError, match=r"'Skip' is also something players say"):
        find_game("phase10-twist")(["Skip", "Ann"])
    find_game("phase10-twist")(["Skipper", "Ann"])  # a longer form is fine


# --- referee phrases check / referee hear --phrases ---------------------------------------------


def referee(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "referee", *args], capture_output=True,
                          text=True, timeout=300, cwd=ROOT)


@pytest.mark.slow
def test_phrases_check_reports_the_size_of_a_big_grammar():
    done = referee("phrases", "check", str(CAFE), "--players", "Mary Ann", "Bob")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "cafe.toml: 10 intents" in done.stdout
    sentences = next(line for line in done.stdout.splitlines() if "sentences:" in line)
    assert int(sentences.split()[1].replace(",", "")) > 10**11
    assert "sentences two intents share: none" in done.stdout
    assert "all heard right" in done.stdout


def test_phrases_check_finds_a_sentence_two_intents_share(tmp_path):
    path = write(tmp_path, '[[intents]]\nkind = "on"\nsentences = ["lights on"]\n'
                 '[[intents]]\nkind = "off"\nsentences = ["lights (off | on)"]\n',
                 "lights.toml")
    done = referee("phrases", "check", str(path))
    assert done.returncode == 1
    assert "sentences two intents share: 1\n    'lights on' (lights.toml, line 3 and line 6)" in (
        done.stdout)
    assert "'lights on' (lights.toml, line 3) is heard as 2 intents at once" in done.stdout


def test_a_shared_sentence_is_found_however_rarely_it_would_be_drawn(tmp_path):
    """Two intents of 10^6 sentences each that share exactly one."""
    values = ", ".join(f'"w{n}"' for n in range(100))
    path = write(tmp_path, f'[slots.a]\nwords = [{values}]\n[slots.b]\nwords = [{values}]\n'
                 '[[intents]]\nkind = "one"\nsentences = ["{a} {a} {a} x"]\n'
                 '[[intents]]\nkind = "two"\nsentences = ["w7 {b} w9 (x | y)"]\n')
    report = check_phrases(path, [], samples=3)
    assert len(report.shared) == 1
    assert report.shared[0].startswith("'w7 w")
    assert report.shared[0].split("'")[1].endswith(" w9 x")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[[intents]]\nkind = "a"\nsentences = ["turn on {room"]\n',
         "x.toml, line 3: cannot read template 'turn on {room'"),
        ('[[intents]]\nkind = "a"\nsentences = ["turn on {room}"]\n',
         "x.toml, line 3: unknown slot {room}"),
        ('[[intents]\nkind = "a"\n', "x.toml: not a phrase file: Expected ']]'"),
        ('[slots.room]\nweight = 2\n[[intents]]\nkind = "a"\nsentences = ["{room}"]\n',
         "x.toml, line 1: slot 'room': it has no values"),
        ('[slots.room]\nwords = ["", "x"]\n[[intents]]\nkind = "a"\nsentences = ["{room}"]\n',
         "x.toml, line 1: slot 'room': the value '' has no words"),
        ('[slots.c]\nwords = ["x"]\n[slots.c.said]\nparts = ["x"]\n'
         '[[intents]]\nkind = "a"\nsentences = ["{c}"]\n',
         "x.toml, line 1: slot 'c': said is for a list (give it most = 2 or more)"),
        ('[slots.c]\nwords = ["x"]\nmost = 3\n[slots.c.said]\nmost = 2\n'
         '[[intents]]\nkind = "a"\nsentences = ["{c...}"]\n',
         "x.toml, line 1: slot 'c': said needs parts"),
        ('[slots.c]\nwords = ["x"]\nmost = 3\n[slots.c.said]\nparts = ["{d} x"]\n'
         '[[intents]]\nkind = "a"\nsentences = ["{c...}"]\n',
         "x.toml, line 5: slot 'c': unknown slot {d} in its said part"),
        ('[slots.c]\nwords = ["x"]\nmost = 3\n[slots.c.said]\nparts = ["{c} x"]\n'
         '[[intents]]\nkind = "a"\nsentences = ["{c...}"]\n',
         "x.toml, line 5: slot 'c': {c} in a said part: a part names other slots"),
    ],
)
@pytest.mark.slow
def test_a_bad_phrase_file_is_named_with_its_line_and_problem(tmp_path, text, message):
    path = write(tmp_path, text, "x.toml")
    for args in (("phrases", "check", str(path)), ("hear", "--phrases", str(path), "--text", "hi")):
        done = referee(*args)
        assert done.returncode == 2
        assert message in done.stderr, done.stderr
        assert "Traceback" not in done.stderr


@pytest.mark.slow
def test_hear_phrases_hears_any_phrase_file_without_a_game(tmp_path):
    done = referee("hear", "--phrases", str(CAFE), "--players", "Mary Ann", "Bob",
                   "--text", "could I have a medium iced cold brew please", "--json")
    assert done.returncode == 0, done.stderr
    intent = json.loads(done.stdout)["intent"]
    assert (intent["kind"], intent["drink"], intent["size"], intent["temperature"]) == (
        "order", "cold brew", "medium", "iced")
    refused = referee("hear", "--phrases", str(CAFE), "--players", "Chai", "Bob",
                      "--text", "hi")  # a word of "chai latte"
    assert refused.returncode == 2
    assert "'Chai' is a word of cafe.toml" in refused.stderr


@pytest.mark.parametrize("name", ["Never Mind", "Latte"])
def test_hear_phrases_refuses_a_name_that_is_a_command(name):
    done = referee("hear", "--phrases", str(CAFE), "--players", name, "Bob", "--text", "hi")
    assert done.returncode == 2
    assert f"'{name}' is also a command of cafe.toml" in done.stderr


@pytest.mark.slow
def test_hear_phrases_hears_a_recording_with_a_big_grammar(tmp_path):
    """The real recogniser on a real WAV: eSpeak NG says a long order (18
    tokens), heard word for word and acted on, not merely asked about: the
    calibration no longer holds a length it never saw against a sentence."""
    from referee.speech.speaking.tts import EspeakVoice

    path = tmp_path / "order.wav"
    EspeakVoice().render("can I get a large oat milk latte with an extra shot please"
                         ).write_wav(path)
    done = referee("hear", str(path), "--phrases", str(CAFE), "--players", "Mary Ann", "Bob",
                   "--json")
    assert done.returncode == 0, done.stderr
    heard = json.loads(done.stdout)
    assert heard["intent"]["kind"] == "order", heard
    assert (heard["intent"]["drink"], heard["intent"]["size"], heard["intent"]["milk"]) == (
        "latte", "large", "oat")
    assert heard["score"] == 1.0


@pytest.mark.parametrize("calibration", [CALIBRATION, TABLE_CALIBRATION])
def test_the_calibration_weighs_no_length_beyond_what_it_was_fitted_on(calibration):
    def heard(tokens: int) -> float:
        heard = Measures(margin=0.0, similarity=95.0, gap=10.0, nothing=-5.0,
                         best_logprob=-0.3 * tokens, best_length=tokens,
                         free_logprob=-0.3 * tokens, free_length=tokens)
        return probability(whisper_features(heard), calibration)

    assert heard(LENGTH_CAP + 8) == heard(LENGTH_CAP)
    assert heard(LENGTH_CAP) < heard(LENGTH_CAP - 4)  # within its range, as fitted


# --- a list listened for in parts (Phase 10 Twist's read-outs) -----------------------------


@pytest.mark.parametrize(
    ("text", "listened"),
    [
        ("i lay down my phase three fives and three sevens", True),
        ("i lay down my phase a run of four from six to nine and three eights", True),
        ("my phase is two fives and a wild", True),
        ("a wild a skip and a seven", True),
        ("i lay down my phase seven greens", True),
        ("i lay down my phase seven green cards", True),
        ("i hit a red four on bob's run", True),
        # One plural away from a read-out, and other cards: not listened for.
        ("i lay down my phase three fives and three seven", False),
        ("i lay down my phase three five and three sevens", False),
        ("i lay down my phase seven green", False),
        ("two fives and wilds", False),
        # More than four parts, or a part repeated past where anyone stops.
        ("a one and a two and a three and a four and a five", False),
    ],
)
@pytest.mark.slow
def test_a_read_out_is_listened_for_in_its_parts(text, listened):
    phrases = matcher_for("phase10-twist", ["Ann", "Bob"]).phrases
    assert phrases.slots["cards"].said_most == 4
    assert listened_for(phrases, text) is listened


def test_a_typed_read_out_is_read_word_by_word_as_ever():
    """The parts are how the recognisers listen; the matcher reads any words of
    the list, so a typed read-out (or another recogniser's) is taken as before."""
    matcher = matcher_for("phase10-twist", ["Ann", "Bob"])
    heard = matcher.match("I lay down my phase three five and three seven", "Ann")
    assert heard.intent.to_json() == {"kind": "laid", "cards": [3, 5, 3, 7], "player": "Ann"}


@pytest.mark.slow
def test_the_read_outs_parts_are_pocketsphinxs_grammar_too():
    from referee.speech.hearing.grammar import to_jsgf
    from referee.speech.hearing.sphinx_vosk import PocketSphinxRecognizer

    phrases = matcher_for("phase10-twist", ["Ann", "Bob"]).phrases
    jsgf = to_jsgf(phrases)
    assert "<cards_list> = <cards_part> [ [ and ] <cards_part> [ [ and ] <cards_part> " in jsgf
    assert "( <count> <numbers> )" in jsgf
    sphinx = PocketSphinxRecognizer(phrases)
    assert sphinx.decoder.current_search() == "referee"
    assert sphinx.missing_words == []


@pytest.mark.slow
def test_phrases_check_draws_read_outs_from_their_parts():
    phrases = matcher_for("phase10-twist", ["Ann", "Bob"]).phrases
    said = "[i] (lay | put | laid) down my phase {cards...}"
    (laid,) = [i for i in phrases.intents if said in i.sentences]
    tree = laid.trees[laid.sentences.index(said)]
    rng = random.Random(3)
    drawn = [draw(phrases, tree, rng) for _ in range(40)]
    assert all(listened_for(phrases, text) for text in drawn), drawn


def test_a_new_game_s_phrase_file_gets_the_player_slot_from_common(tmp_path):
    """#73 item 15: common.toml's sentences name {player} ("Bob says yes");
    a game that includes it needs no [slots.player] of its own."""
    path = write(tmp_path, 'include = ["common"]\n[slots.pile]\nnumbers = [1, 21]\n'
                           '[[intents]]\nkind = "take"\ncount = "{pile}"\n'
                           'sentences = ["take {pile}"]\n')
    phrases = load_phrases(path, ["Ann", "Bob"])
    assert "Bob" in phrases.slots["player"].values.values()
    matcher = IntentMatcher(phrases, ["Ann", "Bob"])
    yes = matcher.match("Bob says yes", "Ann").intent
    assert (yes.kind, yes["value"], yes["player"]) == ("answer", "yes", "Bob")
    assert matcher.match("take three", "Ann").intent["count"] == 3


def test_a_mistake_in_an_included_file_is_named_in_that_file(tmp_path):
    """#73 item 15: a bad sentence of an included file is named with that
    file and line, and the game's file that includes it."""
    write(tmp_path, '[[intents]]\nkind = "a"\n\nsentences = ["turn on {room}"]\n', "shared.toml")
    path = write(tmp_path, 'include = ["shared"]\n[[intents]]\nkind = "b"\nsentences = ["b"]\n')
    with pytest.raises(TemplateError) as raised:
        load_phrases(path, ["Ann", "Bob"])
    assert str(raised.value) == (f"shared.toml, line 4: unknown slot {{room}} in "
                                 f"'turn on {{room}}' (used by {tmp_path.name}/phrases.toml)")


def test_an_intents_network_is_compiled_once_whoever_sits_at_the_table(tmp_path):
    """A new table's matcher takes its intents' networks from those compiled
    already when only the players differ; a list said another way (more
    values, other joiners) is compiled anew, and matched as it now reads."""
    cards = """
[slots.card]
numbers = [1, 9]
most = {most}
joiner = "and"

[[intents]]
kind = "play"
sentences = ["play {{card...}}"]
"""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    path = write(tmp_path / "a", cards.format(most=2), "cards.toml")
    two = network.compile_intent(*_play(load_phrases(path, ["Ann", "Bob"])))
    assert network.compile_intent(*_play(load_phrases(path, ["Cy", "Dee", "Eve"]))) is two
    two_said = IntentMatcher.for_phrases(path, ["Ann", "Bob"]).match(
        "play two and three and four", "Ann")
    path = write(tmp_path / "b", cards.format(most=3), "cards.toml")  # (its list wider)
    wider = network.compile_intent(*_play(load_phrases(path, ["Ann", "Bob"])))
    assert wider is not two
    assert wider.arcs > two.arcs
    three_said = IntentMatcher.for_phrases(path, ["Ann", "Bob"]).match(
        "play two and three and four", "Ann")
    assert (two_said.intent.kind, three_said.intent.kind) == ("none", "play")


def _play(phrases):
    return phrases, next(i for i in phrases.intents if i.fields["kind"] == "play")
