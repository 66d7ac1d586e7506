"""What the simulated models know: a small bundled table of facts and of phrases in French, Spanish, German and
Italian, so a short factual question or a translation gets a believable answer offline. Small on purpose: a demo
and test model, not an encyclopedia; a question outside the table gets the ordinary simulated prose."""

from __future__ import annotations

import random
import re

CAPITALS = {
    "france": "Paris",
    "germany": "Berlin",
    "spain": "Madrid",
    "italy": "Rome",
    "portugal": "Lisbon",
    "united kingdom": "London",
    "uk": "London",
    "england": "London",
    "ireland": "Dublin",
    "netherlands": "Amsterdam",
    "belgium": "Brussels",
    "switzerland": "Bern",
    "austria": "Vienna",
    "poland": "Warsaw",
    "sweden": "Stockholm",
    "norway": "Oslo",
    "denmark": "Copenhagen",
    "finland": "Helsinki",
    "greece": "Athens",
    "japan": "Tokyo",
    "china": "Beijing",
    "india": "New Delhi",
    "canada": "Ottawa",
    "united states": "Washington, D.C.",
    "usa": "Washington, D.C.",
    "mexico": "Mexico City",
    "brazil": "Brasília",
    "argentina": "Buenos Aires",
    "australia": "Canberra",
    "egypt": "Cairo",
    "kenya": "Nairobi",
}

# (a pattern of the question, the subject as a sentence would name it, the answer). Patterns are matched against
# the question lower-cased; the subject reads in "The <subject> is <answer>." and "<Answer> is the <subject>."
FACTS: tuple[tuple[str, str, str], ...] = (
    (r"\blargest planet\b", "largest planet in the solar system", "Jupiter"),
    (r"\bsmallest planet\b", "smallest planet in the solar system", "Mercury"),
    (r"\bclosest (planet )?to the sun\b", "planet closest to the Sun", "Mercury"),
    (r"\bred planet\b", "planet called the Red Planet", "Mars"),
    (r"\btallest mountain\b|\bhighest mountain\b", "tallest mountain on Earth", "Mount Everest"),
    (r"\blargest ocean\b", "largest ocean", "the Pacific Ocean"),
    (r"\blongest river\b", "longest river in the world", "the Nile, by most measurements"),
    (r"\bboiling point of water\b|\bwater boil\b", "boiling point of water at sea level", "100 °C (212 °F)"),
    (r"\bfreezing point of water\b|\bwater freeze\b", "freezing point of water", "0 °C (32 °F)"),
    (r"\bspeed of light\b", "speed of light in a vacuum", "about 299,792 kilometres per second"),
    (r"\bhow many continents\b", "number of continents", "seven"),
    (r"\bhow many days (are there )?in a (leap )?year\b", "number of days in a year", "365, or 366 in a leap year"),
    (r"\bwrote hamlet\b|\bauthor of hamlet\b", "author of Hamlet", "William Shakespeare"),
    (r"\bwrote romeo and juliet\b", "author of Romeo and Juliet", "William Shakespeare"),
    (r"\bwrote pride and prejudice\b", "author of Pride and Prejudice", "Jane Austen"),
    (r"\bwrote 1984\b|\bauthor of 1984\b", "author of 1984", "George Orwell"),
    (r"\bpainted the mona lisa\b", "painter of the Mona Lisa", "Leonardo da Vinci"),
    (r"\bchemical symbol (for|of) gold\b", "chemical symbol for gold", "Au"),
    (r"\bchemical symbol (for|of) iron\b", "chemical symbol for iron", "Fe"),
    (r"\bchemical symbol (for|of) sodium\b", "chemical symbol for sodium", "Na"),
    (r"\bchemical (formula|symbol) (for|of) water\b", "chemical formula for water", "H₂O"),
    (r"\bfirst (person|man) on the moon\b|\bfirst to walk on the moon\b", "first person on the Moon", "Neil Armstrong"),
    (r"\binvented the telephone\b", "inventor usually credited with the telephone", "Alexander Graham Bell"),
    (r"\bpython\b.*\bcreated\b|\bcreated python\b", "creator of Python", "Guido van Rossum"),
)

# Whole phrases first (a translation reads naturally), then single words for anything else.
PHRASES: dict[str, dict[str, str]] = {
    "fr": {
        "hello": "Bonjour",
        "hi": "Salut",
        "good morning": "Bonjour",
        "good evening": "Bonsoir",
        "good night": "Bonne nuit",
        "goodbye": "Au revoir",
        "thank you": "Merci",
        "thank you very much": "Merci beaucoup",
        "please": "S'il vous plaît",
        "how are you": "Comment allez-vous ?",
        "i love you": "Je t'aime",
        "see you tomorrow": "À demain",
        "where is the station": "Où est la gare ?",
        "i don't understand": "Je ne comprends pas",
        "the meeting is tomorrow": "La réunion est demain",
        "welcome": "Bienvenue",
    },
    "es": {
        "hello": "Hola",
        "hi": "Hola",
        "good morning": "Buenos días",
        "good evening": "Buenas tardes",
        "good night": "Buenas noches",
        "goodbye": "Adiós",
        "thank you": "Gracias",
        "thank you very much": "Muchas gracias",
        "please": "Por favor",
        "how are you": "¿Cómo estás?",
        "i love you": "Te quiero",
        "see you tomorrow": "Hasta mañana",
        "where is the station": "¿Dónde está la estación?",
        "i don't understand": "No entiendo",
        "the meeting is tomorrow": "La reunión es mañana",
        "welcome": "Bienvenido",
    },
    "de": {
        "hello": "Hallo",
        "hi": "Hallo",
        "good morning": "Guten Morgen",
        "good evening": "Guten Abend",
        "good night": "Gute Nacht",
        "goodbye": "Auf Wiedersehen",
        "thank you": "Danke",
        "thank you very much": "Vielen Dank",
        "please": "Bitte",
        "how are you": "Wie geht es Ihnen?",
        "i love you": "Ich liebe dich",
        "see you tomorrow": "Bis morgen",
        "where is the station": "Wo ist der Bahnhof?",
        "i don't understand": "Ich verstehe nicht",
        "the meeting is tomorrow": "Das Treffen ist morgen",
        "welcome": "Willkommen",
    },
    "it": {
        "hello": "Ciao",
        "hi": "Ciao",
        "good morning": "Buongiorno",
        "good evening": "Buonasera",
        "good night": "Buonanotte",
        "goodbye": "Arrivederci",
        "thank you": "Grazie",
        "thank you very much": "Grazie mille",
        "please": "Per favore",
        "how are you": "Come stai?",
        "i love you": "Ti amo",
        "see you tomorrow": "A domani",
        "where is the station": "Dov'è la stazione?",
        "i don't understand": "Non capisco",
        "the meeting is tomorrow": "La riunione è domani",
        "welcome": "Benvenuto",
    },
}

WORDS: dict[str, dict[str, str]] = {
    "fr": {
        "the": "le", "a": "un", "and": "et", "is": "est", "i": "je", "you": "vous", "we": "nous", "it": "il",
        "cat": "chat", "dog": "chien", "house": "maison", "water": "eau", "coffee": "café", "tea": "thé",
        "friend": "ami", "book": "livre", "today": "aujourd'hui", "tomorrow": "demain", "yes": "oui", "no": "non",
        "good": "bon", "big": "grand", "small": "petit", "love": "aime", "have": "ai", "like": "aime",
        "my": "mon", "your": "votre", "order": "commande", "price": "prix", "thanks": "merci", "world": "monde",
    },
    "es": {
        "the": "el", "a": "un", "and": "y", "is": "es", "i": "yo", "you": "usted", "we": "nosotros", "it": "eso",
        "cat": "gato", "dog": "perro", "house": "casa", "water": "agua", "coffee": "café", "tea": "té",
        "friend": "amigo", "book": "libro", "today": "hoy", "tomorrow": "mañana", "yes": "sí", "no": "no",
        "good": "bueno", "big": "grande", "small": "pequeño", "love": "amo", "have": "tengo", "like": "gusta",
        "my": "mi", "your": "su", "order": "pedido", "price": "precio", "thanks": "gracias", "world": "mundo",
    },
    "de": {
        "the": "der", "a": "ein", "and": "und", "is": "ist", "i": "ich", "you": "Sie", "we": "wir", "it": "es",
        "cat": "Katze", "dog": "Hund", "house": "Haus", "water": "Wasser", "coffee": "Kaffee", "tea": "Tee",
        "friend": "Freund", "book": "Buch", "today": "heute", "tomorrow": "morgen", "yes": "ja", "no": "nein",
        "good": "gut", "big": "groß", "small": "klein", "love": "liebe", "have": "habe", "like": "mag",
        "my": "mein", "your": "Ihr", "order": "Bestellung", "price": "Preis", "thanks": "danke", "world": "Welt",
    },
    "it": {
        "the": "il", "a": "un", "and": "e", "is": "è", "i": "io", "you": "lei", "we": "noi", "it": "esso",
        "cat": "gatto", "dog": "cane", "house": "casa", "water": "acqua", "coffee": "caffè", "tea": "tè",
        "friend": "amico", "book": "libro", "today": "oggi", "tomorrow": "domani", "yes": "sì", "no": "no",
        "good": "buono", "big": "grande", "small": "piccolo", "love": "amo", "have": "ho", "like": "piace",
        "my": "mio", "your": "suo", "order": "ordine", "price": "prezzo", "thanks": "grazie", "world": "mondo",
    },
}  # fmt: skip

LANGUAGE_NAMES = {"french": "fr", "spanish": "es", "german": "de", "italian": "it"}
TRANSLATE = re.compile(
    r"\btranslate\b(?P<before>.*?)\b(?:into|to|in)\s+(?P<language>french|spanish|german|italian)\b\s*[:\-]?\s*"
    r"(?P<after>.*)",
    re.IGNORECASE | re.DOTALL,
)
QUOTED = re.compile(r"[\"“'‘]([^\"”'’]+)[\"”'’]")


def translation(prompt: str) -> str | None:
    """The translation a "Translate into French: Hello" asks for (a whole phrase from the table, else word by
    word, unknown words kept), or None when the prompt asks for no translation."""
    found = TRANSLATE.search(prompt)
    if not found:
        return None
    language = LANGUAGE_NAMES[found.group("language").lower()]
    source = found.group("after").strip() or found.group("before").strip()
    quoted = QUOTED.search(source)
    source = quoted.group(1) if quoted else re.sub(r"^(the following|this)( text| sentence)?\s*:?\s*", "", source)
    return _translated(source.strip(), language) if source.strip() else None


def _translated(source: str, language: str) -> str:
    key = re.sub(r"[^\w' ]+", "", source.lower()).strip()
    phrase = PHRASES[language].get(key)
    if phrase is None:
        words = WORDS[language]
        phrase = " ".join(words.get(word, word) for word in key.split())
        phrase = phrase[:1].upper() + phrase[1:]
    if phrase.endswith(("?", "!", ".")):
        return phrase
    return phrase + ("?" if source.rstrip().endswith("?") else "!" if source.rstrip().endswith("!") else ".")


def fact(question: str, rng: random.Random) -> str | None:
    """A one-sentence answer to a short factual question the table knows, worded one of two ways; else None."""
    lowered = question.lower()
    capital = re.search(r"\bcapital (?:city )?of (?:the )?([a-z .]+?)\s*(?:\?|$|\.|,)", lowered)
    if capital and capital.group(1).strip() in CAPITALS:
        return _sentence(rng, f"capital of {_country(capital.group(1).strip())}", CAPITALS[capital.group(1).strip()])
    arithmetic = re.search(r"(-?\d+(?:\.\d+)?)\s*([-+*/x×])\s*(-?\d+(?:\.\d+)?)", lowered)
    if arithmetic and re.search(r"\b(what|how much|calculate|compute)\b", lowered):
        return _arithmetic(*arithmetic.groups())
    for pattern, subject, answer in FACTS:
        if re.search(pattern, lowered):
            return _sentence(rng, subject, answer)
    return None


def _country(name: str) -> str:
    """ "france" → "France", "uk" → "the UK", "united states" → "the United States"."""
    if len(name) <= 3:
        return f"the {name.upper()}"
    return f"the {name.title()}" if " " in name else name.title()


def _sentence(rng: random.Random, subject: str, answer: str) -> str:
    if rng.random() < 0.5 or not answer[:1].isupper():
        return f"The {subject} is {answer}."
    return f"{answer} is the {subject}."


def _arithmetic(left: str, operator: str, right: str) -> str | None:
    a, b = float(left), float(right)
    if operator == "/" and b == 0:
        return "Division by zero is undefined, so there is no answer."
    value = {"+": a + b, "-": a - b, "*": a * b, "x": a * b, "×": a * b, "/": a / b if b else 0}[operator]
    shown = f"{value:g}" if value != int(value) else str(int(value))
    return f"{left} {operator} {right} = {shown}."
