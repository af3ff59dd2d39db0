"""What players say at the table, and what the referee must not take for a command.

Every line has two forms: what a voice reads (``said``: words, numbers
spelled out) and what Whisper should write for it (``target``: capitals,
punctuation, numbers as digits or words as Whisper writes them: "Bob, flip
your 10 down." or "Bob, flip your ten down."). The decoder is trained to
write the target after the product's own prompt for that table
(:func:`~referee.speech.hearing.whisper_recognizer.whisper_context`).

Commands come from the games' phrase files, so the training covers exactly
what the grammar search listens for: every intent of every game (moments
included: Turn 7's bare names and card reports, Phase 10 Twist's hand points),
each slot filled at random, list slots of one to a few values with their
joiners, Phase 10 Twist's read-outs of cards as players say them ("three
fives and three sevens", "a run of four from six to nine"), fillers before
and after ("okay", "please").

Negatives keep the referee honest: the decoder learns to write table talk,
single words and near misses as themselves ("Free.", "Hint."), so that the
grammar's sentences do not become the only thing it can write. The words of
the real-voice benchmark (``../shared/real-voices``: bed, bird, cat, dog,
happy, house, marvin, sheila, tree, wow) are left out of every list here:
that benchmark must stay a measurement, not a target.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache

from referee.games import GAMES as REGISTRY
from referee.speech.understanding.check import draw as draw_sentence
from referee.speech.understanding.numbers import join_numbers, number_to_words
from referee.speech.understanding.phrase_files import load_phrases, shared_kinds
from referee.speech.understanding.templates import (
    Expansion,
    PhraseSet,
    SlotRef,
    Word,
    normalise_words,
    slot_values,
    spoken_word,
)


def training_games() -> tuple[str, ...]:
    """The games whose phrase files the training covers: every game of the
    registry (:data:`referee.games.GAMES`) as it is now, so a game added
    there is trained on with no other change (and the adapter's report
    names it: the referee hears it with the adapter then)."""
    return tuple(REGISTRY)

#: Players' names, from many languages; none a command word or a number.
NAMES = (
    "Ann", "Bob", "Cy", "Dee", "Eve", "Ada", "Ben", "Carl", "Dana", "Eli", "Fay", "Gus", "Hana",
    "Ivan", "Jo", "Kim", "Leo", "Mia", "Ned", "Olga", "Pam", "Quinn", "Raj", "Sam", "Tom", "Uma",
    "Vic", "Walt", "Xena", "Yuki", "Zoe", "Priya", "Mohammed", "Aisha", "Chen", "Mei", "Kenji",
    "Sofia", "Mateo", "Lucia", "Diego", "Fatima", "Omar", "Noah", "Emma", "Liam", "Olivia",
    "Lucas", "Amara", "Kwame", "Nia", "Tariq", "Ingrid", "Sven", "Anya", "Dmitri", "Rosa",
    "Pablo", "Grace", "Henry", "Isla", "Jack", "Kate", "Luke", "Maya", "Nora", "Owen", "Paul",
    "Rita", "Sean", "Tara", "Vera", "Will", "Amir", "Bea", "Cleo", "Dev", "Elsa", "Finn",
    "Gita", "Hugo", "Ines", "Jonas", "Kai", "Lena", "Marco", "Nadia", "Oscar", "Petra", "Ravi",
    "Sara", "Theo", "Ulla", "Vikram", "Wen", "Yara", "Zain", "Maria", "John", "Linda", "Mike",
    "Susan", "David", "Karen", "James", "Laura", "Peter", "Helen", "Alex", "Chris", "Jamie",
    "Robin", "Taylor", "Jordan", "Morgan", "Riley", "Ahmed", "Leila", "Hiro", "Sakura", "Arjun",
    "Deepa", "Tomas", "Eva", "Lars", "Freya", "Niamh", "Ciaran", "Siobhan", "Rhys", "Megan",
    "Kofi", "Ama", "Chidi", "Ngozi", "Mary Ann", "Jean Luc", "Anna Maria",
)

#: How many different tables (a game and its players) the lines are said at.
TABLES = 400
#: Kinds of line and how often each is drawn.
MIX = {"command": 0.72, "talk": 0.12, "word": 0.06, "near": 0.05, "referee": 0.05}
#: The mix of the one-word set (``./run train ears --short``): moves said in
#: one word ("seven", "hit", "stop"), which the main mix draws rarely (15
#: bare numbers in 12,000 lines), with the single words and near misses that
#: must stay table talk beside them.
SHORT_MIX = {"short": 0.75, "word": 0.15, "near": 0.10}
#: The mix of the negatives set (``./run train ears --negatives``): lone
#: words that are no move, for an adapter taught many one-word moves.
NEGATIVE_MIX = {"word": 0.6, "near": 0.4}

#: Sentences that open with one of these are questions: Whisper ends them with "?".
_QUESTION_WORDS = frozenset({
    "what", "what's", "whats", "who", "who's", "whose", "how", "how's", "where", "where's",
    "which", "is", "are", "do", "does", "did", "can", "could", "would", "will", "when", "am",
    "should", "shall", "have", "has", "was", "were", "why",
})
#: Fillers a player pauses after (Whisper writes a comma): "Okay, roll." but "Can you roll?"
PAUSING_FILLERS = frozenset({
    "okay", "ok", "alright", "all right", "so", "um", "uh", "well", "oh", "now", "right",
    "sorry", "hey", "referee", "hey referee"})
#: Words after a name that tell what the player did (no comma: "Bob went out.").
_TOLD = frozenset({
    "calls", "called", "made", "went", "laid", "put", "has", "had", "didn't", "did", "rolled",
    "stays", "agrees", "missed", "is", "was", "gets", "hit", "lays", "wins", "won", "says",
    "flipped", "busted", "drew", "'s"})
#: Words Whisper writes with a capital wherever they are.
_CAPITALS = {"i": "I", "i'm": "I'm", "i'll": "I'll", "i'd": "I'd", "i've": "I've", "ok": "OK"}


@dataclass(frozen=True)
class Line:
    """One utterance to synthesise and the transcript the decoder should write."""

    said: str
    target: str
    #: "command", "short" (a move in one word), "talk", "word", "near" or "referee".
    kind: str
    game: str
    players: tuple[str, ...]


@cache
def phrases_for(game: str, players: tuple[str, ...]) -> PhraseSet:
    """A game's phrase file filled for these players."""
    from referee.games import find_game

    return load_phrases(find_game(game).phrase_file, players)


# --- writing as Whisper writes -------------------------------------------------------------


def written(words: Sequence[str], players: Iterable[str], digits: bool,
            fillers: int = 0) -> str:
    """The words as Whisper would write them: a capital first, names and "I"
    capitalised, a comma after a name that is addressed and after an opening
    filler (the first ``fillers`` words), numbers as digits (``digits``) or
    as words (hyphenated), a full stop or a question mark.

    >>> written("bob flip your sixty five down".split(), ["Ann", "Bob"], True)
    'Bob, flip your 65 down.'
    >>> written("okay what's my score".split(), ["Ann"], False, fillers=1)
    "Okay, what's my score?"
    >>> written("i call sixty five".split(), ["Ann"], False)
    'I call sixty-five.'
    """
    names = {" ".join(normalise_words(p)): p for p in players}
    said = list(words)
    words = [w.casefold() for w in said]
    out: list[str] = []
    i = 0
    while i < len(words):
        word = words[i]
        pair = " ".join(words[i:i + 2])
        if pair in names:  # a two-word name ("Mary Ann")
            out.append(names[pair])
            i += 2
            continue
        number = join_numbers(list(words[i:i + 2]))
        if number[0].isdigit() and len(number) == 1 and i + 1 < len(words):
            taken = 2  # "sixty five" read as one number
        elif number[0].isdigit():
            taken = 1
        else:
            taken = 0
        if taken:
            spelled = words[i:i + taken]
            out.append(number[0] if digits else "-".join(spelled))
            i += taken
            continue
        if word.endswith("'s") and word[:-2] in names:
            out.append(names[word[:-2]] + "'s")
        else:
            out.append(names.get(word, _CAPITALS.get(word, said[i])))
        i += 1
    question = bool(words) and (words[0] in _QUESTION_WORDS or (
        fillers < len(words) and words[fillers] in _QUESTION_WORDS))
    if fillers and len(out) > fillers:
        if " ".join(words[:fillers]) in PAUSING_FILLERS:
            out[fillers - 1] += ","
    elif len(out) > 1 and words[0] in names and words[1] not in _TOLD:
        out[0] += ","  # "Bob, flip your four", but "Bob calls 65."
    text = " ".join(out)
    text = text[:1].upper() + text[1:]
    return text + ("?" if question else ".")


# --- commands from the phrase files --------------------------------------------------------


def _intent_weight(kind: str) -> float:
    """A game's own moves are drawn about twice as often as everything the
    games share, together (common.toml has many small intents)."""
    return 0.25 if kind in shared_kinds() else 2.0


def _fill(phrases: PhraseSet, expansion: Expansion, rng: random.Random) -> list[str]:
    """One sentence of an expansion: every slot filled at random."""
    words: list[str] = []
    for token in expansion:
        if isinstance(token, Word):
            words.append(spoken_word(token.text))
            continue
        slot = phrases.slots[token.name]
        if token.many and slot.said:  # a read-out: in the parts it is listened for in
            # (a joiner before a part that starts with it is said once: "and a wild")
            drawn = draw_sentence(phrases, (token,), rng).split()
            joiners = {w.text for e in slot.said_joiner for w in e if isinstance(w, Word)}
            words += [w for w, before in zip(drawn, ["", *drawn], strict=False)
                      if not (w == before and w in joiners)]
            continue
        count = 1
        if token.many:
            count = min(slot.most, 1 + int(rng.expovariate(0.9)))
        values = list(slot_values(slot, for_grammar=True))
        for n in range(count):
            if n:
                joiner = rng.choice(slot.joiner)
                words += [spoken_word(w.text) for w in joiner if isinstance(w, Word)]
            said = slot.words_for(rng.choice(values))
            words += said.split()
            if token.possessive:
                words[-1] += "'s"
    return words


def command(game: str, players: tuple[str, ...], rng: random.Random) -> Line:
    """A sentence of the game's grammar, with a filler now and then."""
    phrases = phrases_for(game, players)
    intents = phrases.intents
    intent = rng.choices(intents, [_intent_weight(str(i.fields["kind"])) for i in intents])[0]
    words = _fill(phrases, rng.choice(intent.expansions), rng)
    fillers = 0
    if rng.random() < 0.1:
        before = rng.choice(sorted(PAUSING_FILLERS | {"please"})).split()
        words, fillers = [*before, *words], len(before)
    if phrases.fillers_after and rng.random() < 0.08:
        words += rng.choice(phrases.fillers_after).casefold().split()
    return Line(spoken(words, players), written(words, players, rng.random() < 0.6, fillers),
                "command", game, players)


@cache
def _one_word_moves(game: str, players: tuple[str, ...]) -> tuple[tuple[Expansion, ...], ...]:
    """The game's sentences of one word or one slot, in three groups (see
    :data:`SHORT_GROUPS`): numbers and lists said bare ("seven", "five and
    six"), the game's own moves in a word ("hit", "roll", "twist"), and what
    every game shares ("yes", "stop", "rules"). A group may be empty; Phase
    10's read-outs are left to the main set."""
    phrases = phrases_for(game, players)
    groups: tuple[list[Expansion], ...] = ([], [], [])
    for intent in phrases.intents:
        for expansion in intent.expansions:
            if len(expansion) != 1:
                continue
            if isinstance(expansion[0], SlotRef):
                if expansion[0].name != "cards":
                    groups[0].append(expansion)
            else:
                shared = str(intent.fields["kind"]) in shared_kinds()
                groups[2 if shared else 1].append(expansion)
    return tuple(tuple(g) for g in groups)


#: How often each group of :func:`_one_word_moves` is drawn (among those a
#: game has); a game's own words less often when it has only a few (Phase 10's
#: "twist" and "next" would otherwise be a tenth of the set).
SHORT_GROUPS = (0.6, 0.2, 0.2)


def short(game: str, players: tuple[str, ...], rng: random.Random) -> Line:
    """A move said in one word, as players say them when the game is under way:
    a bare number as often as any other value of its slot ("seven" as often as
    each call), a game's own word or a shared one."""
    phrases = phrases_for(game, players)
    groups = _one_word_moves(game, players)
    shares = [0.0 if not group else weight * (min(1.0, len(group) / 6) if i == 1 else 1.0)
              for i, (group, weight) in enumerate(zip(groups, SHORT_GROUPS, strict=True))]
    chosen = groups[rng.choices(range(3), shares)[0]]
    sizes = [1 if isinstance(e[0], Word) else
             len(list(slot_values(phrases.slots[e[0].name], for_grammar=True))) for e in chosen]
    words = _fill(phrases, rng.choices(chosen, sizes)[0], rng)
    return Line(spoken(words, players), written(words, players, rng.random() < 0.6),
                "short", game, players)


def spoken(words: Sequence[str], players: Iterable[str]) -> str:
    """The words as a voice should read them (names as written, a comma after
    an addressed name so that the voice pauses as players do)."""
    return written(words, players, digits=False).rstrip(".?")


# --- what is not a command -------------------------------------------------------------------

_TALK = (
    "did you see {thing} last night", "I think {name} is winning", "my {relative} is {n}",
    "we have {n} {animals} at home", "can you pass the {food}", "the {food} is really good",
    "I'll get more {food}", "{name}, do you want some {food}", "that was a great {event}",
    "it's {time} already", "I need to leave at {time}", "let's order {food}",
"there were {n} people at the {event}", "my {relative} lives in {place}",
    "we went to {place} last {period}", "{name} told me about the {event}",
    "I can't find my {item}", "where did I put my {item}", "has anyone seen my {item}",
    "the {item} is on the table", "turn the {item} off", "it's so {weather} outside",
    "I hope it's {weather} tomorrow", "who wants {food}", "I'm {feeling}", "you look {feeling}",
    "that's {opinion}", "this game is {opinion}", "{name} is always {feeling}",
    "I read {n} books this {period}", "the bus comes at {time}", "my {relative} is coming over",
    "we should play {thing} next time", "I learned this game from my {relative}",
    "give me {n} minutes", "remember the {event} in {place}", "I have {n} {animals}",
    "my number is {n} {n}", "the shop closes at {time}", "put the {item} over there",
    "is it {time} yet", "I'm going to {place} next {period}", "{name} won last {period}",
    "pass me a {item}", "it cost {n} dollars", "I scored {n} at bowling",
)
_FILL = {
    "thing": ("the match", "the news", "that film", "the concert", "the parade", "cards",
              "chess", "the quiz", "the fireworks", "the show"),
    "name": NAMES[:60],
    "relative": ("brother", "sister", "cousin", "uncle", "aunt", "grandma", "grandpa", "son",
                 "daughter", "neighbour", "friend", "boss"),
    "animals": ("cats", "goats", "hens", "fish", "rabbits", "horses", "parrots"),
    "food": ("pretzels", "salad", "soup", "cake", "lemonade", "popcorn", "noodles", "cookies",
             "tea", "coffee", "crisps", "olives", "cheese", "bread"),
    "event": ("wedding", "concert", "match", "party", "lecture", "picnic", "festival",
              "meeting", "race", "show"),
    "time": ("six", "seven thirty", "half past nine", "noon", "midnight", "ten o'clock",
             "quarter to eight", "five fifteen"),
    "place": ("Paris", "the lake", "the mountains", "Boston", "the coast", "Lisbon", "Leeds",
              "the market", "the museum", "the station", "Toronto", "the zoo"),
    "period": ("week", "month", "year", "summer", "weekend", "winter"),
    "item": ("phone", "keys", "glasses", "wallet", "charger", "jacket", "pen", "notebook",
             "lamp", "radio", "cup", "napkin", "remote"),
    "weather": ("cold", "windy", "sunny", "rainy", "foggy", "warm", "humid"),
    "feeling": ("tired", "hungry", "excited", "bored", "nervous", "happy today", "sleepy",
                "lucky", "grumpy"),
    "opinion": ("amazing", "ridiculous", "so unfair", "brilliant", "too easy", "hilarious",
                "strange", "a bit slow"),
}
#: Everyday single words said at a table; none a real-voice benchmark word, and
#: none a command when the list was made ("goodbye" became one with the leave
#: intent; it stays, so that the same seed draws the same lines: what is taught
#: is the transcript, whatever it means).
WORDS = (
    "nice", "really", "maybe", "whatever", "cool", "sure", "wait", "hmm", "oops", "seriously",
    "awesome", "great", "lovely", "right", "wow-wee", "ouch", "honestly", "again", "exactly",
    "totally", "cheers", "coffee", "water", "pizza", "chips", "table", "chair", "window",
    "music", "phone", "kitchen", "garden", "sunday", "monday", "morning", "evening", "later",
    "tomorrow", "yesterday", "brilliant", "terrible", "funny", "perfect", "lucky", "unlucky",
    "cheater", "seventeen", "forty", "hundred", "thousand", "fifteen", "twenty", "million",
    "zero", "first", "second", "third", "twice", "double", "nothing", "something", "everyone",
    "nobody", "listen", "look", "careful", "quiet", "sorry", "thanks", "bless you", "hello",
    "goodbye", "dinner", "dessert", "bedtime", "homework", "weekend", "holiday", "birthday",
    "football", "tennis", "pencil", "paper", "candle", "blanket", "pillow", "lemon", "orange",
    "apple", "banana", "carrot", "butter", "sugar", "salt", "pepper", "coat", "shoes", "boots",
)
#: Near misses: words and phrases that sound like the games' commands and are not.
NEAR = (
    "free", "tee", "twenty-two", "heaven", "fine", "ate", "won", "tin", "sticks", "fix", "hint",
    "hid", "lit", "his", "stray", "stain", "steak", "flipper", "slip", "trip my seven",
    "flip my number nine", "lip", "lock the door", "look", "rock", "knock", "lost", "nine lives",
    "mine", "line", "sign", "shoot", "shout", "shirt", "role", "rolling pin", "bowl", "goal",
    "fold", "phase out", "face", "race", "faze", "hit the road", "stay tuned", "stop it",
    "the score is fine", "I called my mum", "call me later", "free throw", "three cheers",
    "seventh heaven", "for sure", "twelve o'clock", "eleventh hour", "a fiver", "six pack",
    "two peas", "to be honest", "for real", "won't you", "a tenner", "sick", "six feet",
    "forty winks", "eighty six", "sixty something", "the seventies", "a couple", "a dozen",
    "time flies", "help yourself", "board games", "the tile guy", "down the road", "up north",
    "turn the page", "my turn to cook", "skip breakfast", "a wild guess", "run along",
    "the red one", "green tea", "blue sky", "yellow cab", "next door", "pass the bread",
)
#: What the referee says, as it may leak back through the room (names and
#: numbers filled at random).
REFEREE = (
    "{name}, flip your {n} down.", "Time! {name} loses the turn.", "{name}: hit or stay?",
    "{name}, did you say: flip {name}'s {n}?", "Sorry, I was talking: say it again.",
    "{name} wins the game!", "{name}: a {n}, for {m}.", "{name} stays with {m}.",
    "{name}, it's your turn.", "Ten seconds left.", "{name} calls {m}.",
    "That tile is already down.", "{name}'s score is {m}.", "Roll the dice, {name}.",
    "{name} rolled {n} and {k}.", "Shut {n} and {k}, or {m}.", "{name}, who gets the Lock?",
    "{name} made the phase: two spaces.", "Did you make your phase, {name}?",
    "Sorry, was that a yes or a no?", "Start a new game?", "Paused. Say resume to go on.",
    "{name}'s board: {n} up, {k} down.", "{name} is out of the round.", "Five, four, three.",
    "Round {n}: {name} deals.", "{name}, what did you draw?", "There is no tile {m}.",
)


def _talk(rng: random.Random) -> str:
    template = rng.choice(_TALK)
    out = template
    while "{" in out:
        start = out.index("{")
        key = out[start + 1:out.index("}", start)]
        value = (number_to_words(rng.choice((2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 14, 20, 30)))
                 if key == "n" else rng.choice(_FILL[key]))
        out = out[:start] + value + out[start + len(key) + 2:]
    return out


def _referee(rng: random.Random, players: Sequence[str]) -> str:
    out = rng.choice(REFEREE)
    out = out.replace("{m}", str(rng.randint(13, 70)))
    for key, high in (("{n}", 12), ("{k}", 6)):
        while key in out:
            out = out.replace(key, str(rng.randint(1, high)), 1)
    while "{name}" in out:
        out = out.replace("{name}", rng.choice(players), 1)
    return out


def negative(kind: str, game: str, players: tuple[str, ...], rng: random.Random) -> Line:
    """A line that is no command: its target is itself, as Whisper writes it."""
    if kind == "referee":
        text = _referee(rng, players)
        return Line(text, text, kind, game, players)
    said = _talk(rng) if kind == "talk" else rng.choice(WORDS if kind == "word" else NEAR)
    words = re.findall(r"[\w']+", said.replace("-", " "))  # as written: "Paris" keeps its capital
    return Line(spoken(words, players), written(words, players, rng.random() < 0.5),
                kind, game, players)


def draw(count: int, seed: int, exclude: Iterable[str] = (),
         mix: dict[str, float] | None = None) -> list[Line]:
    """``count`` lines, the same for the same seed: each at one of
    :data:`TABLES` tables (a game and two to four players), a command or a
    negative of :data:`MIX`. A line
    whose words are in ``exclude`` (the benchmarks' sentences: they measure,
    they are not taught) is drawn again."""
    rng = random.Random(seed)
    banned = {" ".join(normalise_words(text)) for text in exclude}
    weights = mix or MIX
    kinds, shares = list(weights), list(weights.values())
    # A few hundred tables, each a game and two to four players: every name
    # plays, and each table's phrase file is filled once.
    games = training_games()
    tables = [(rng.choice(games), tuple(rng.sample(NAMES, rng.choice((2, 2, 3, 3, 4)))))
              for _ in range(TABLES)]
    lines: list[Line] = []
    while len(lines) < count:
        game, players = rng.choice(tables)
        kind = rng.choices(kinds, shares)[0]
        line = (command(game, players, rng) if kind == "command"
                else short(game, players, rng) if kind == "short"
                else negative(kind, game, players, rng))
        if " ".join(normalise_words(line.said)) in banned:
            continue
        lines.append(line)
    return lines
