"""Metamorphic answer shapes: real GSM8K working with a generated final sentence.

The working is GSM8K's own reference solutions (shared/data/gsm8k/test.jsonl, else the sample
in tests/data/gsm8k_working.jsonl); only the final sentence is generated, from parts the graders
do not list: units drawn from the nouns of GSM8K's own questions and from the per-language
nouns below (and from random words in each language's script), random wrong values, both orders
of a contrast, hedges, number words written by num2words / cn2an (test-only dependencies),
nineteen languages with sentences written for this file, other digit scripts, and chat-template
debris. Each case is labelled by construction: its sentence states the gold (equal) or states
another value, hedges between two, or only bounds it (not equal).

243 of the 256 contrast, hedge, bound and correction templates use a function word that
graders/words/ lists: the shapes are a regression test of the lexicons, not of generalisation
(issue 43; tests/test_graders_answer_shapes.py is marked `lexicon_regression`).

Used by tests/test_graders_answer_shapes.py (hypothesis, seeded and bounded) and by
benchmarks/graders.py (`--shapes`: the table per shape and per language).

    cases = generate(seed=0, per_cell=4)        # every shape x language, 4 workings each
    case = make_case(rng, working, "de", "contrast-gold-first")
"""
from __future__ import annotations

import json
import os
import random
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Callable, Sequence

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "tests" / "data" / "gsm8k_working.jsonl"


# --- the working ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Working:
    """One GSM8K item: its question, its reference working (without the '#### N' line), its gold."""

    question: str
    working: str
    gold: str


def gsm8k_path() -> Path:
    env = os.environ.get("EVALSUITE_DATA_DIR")
    base = Path(env) if env else REPO.parent / "shared" / "data"
    return base / "gsm8k" / "test.jsonl"


@lru_cache(maxsize=2)
def load_workings(source: str | None = None) -> tuple[Working, ...]:
    """GSM8K test items (shared data), else the sample kept in tests/data (same format)."""
    path = Path(source) if source else (gsm8k_path() if gsm8k_path().exists() else SAMPLE)
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        working, _, gold = row["answer"].rpartition("####")
        gold = gold.strip().replace(",", "")
        if working.strip() and re.fullmatch(r"-?\d+(?:\.\d+)?", gold):
            out.append(Working(row["question"], working.strip(), gold))
    return tuple(out)


# words that follow a number in GSM8K's questions but are not things counted
NOT_NOUNS = {"comes", "costs", "likes", "makes", "takes", "goes", "gets", "times", "less", "has", "was", "does",
             "gives", "needs", "sells", "buys", "uses", "weighs", "pays", "earns", "eats", "runs", "works"}


@lru_cache(maxsize=2)
def question_nouns(source: str | None = None) -> tuple[str, ...]:
    """Plural nouns written after a number in GSM8K's questions ('16 eggs', '2 bolts'): hundreds of
    English units that come from the data, not from the graders."""
    seen: dict[str, None] = {}
    for w in load_workings(source):
        for m in re.finditer(r"\b\d[\d,]*\s+([a-z]{3,})\b", w.question):
            word = m.group(1)
            if word.endswith("s") and not word.endswith(("ss", "us", "is")) and word not in NOT_NOUNS:
                seen[word] = None
    return tuple(seen)


# --- the languages ---------------------------------------------------------------------------
# Templates: {v} a quantity (number and unit), {g}/{w} the stated and the rejected quantity,
# {a}/{b} two quantities of a hedge; {vn}/{gn}/{wn}/{an}/{bn} the bare numbers (where a
# preposition would change the noun's case). {V} etc.: the same, first letter upper case.

@dataclass(frozen=True)
class Lang:
    code: str
    plain: tuple[str, ...]
    contrast_after: tuple[str, ...]    # the stated value, then the rejected one
    contrast_before: tuple[str, ...]   # the rejected value, then the stated one
    hedge: tuple[str, ...]
    approx: tuple[str, ...]
    bound: tuple[str, ...]
    correction: tuple[str, ...]        # {w} first, then corrected to {g}
    closing: tuple[str, ...]           # a closing line without a number
    nouns: tuple[tuple[str, ...], ...]  # (singular, plural) or (one, few, many) or (word,) or (counter, noun)
    money: tuple[str, ...]             # '{n}' inside a price
    words: str | None = None           # num2words language (None: no number words)
    digits: str | None = None          # the language's own digits 0-9, if it has them
    decimal: str = "."                 # the decimal mark
    thousands: tuple[str, ...] = (",",)  # thousands separators in use
    joiner: str = " "                  # between number and unit
    plural_rule: str = "en"            # en (1 vs other), slavic-ru, slavic-pl, none, ar


def _ko_particle(text: str) -> str:
    """'이' after a final consonant, '가' after a vowel (Korean subject particle), digits read aloud."""
    last = text.rstrip()[-1:]
    if "가" <= last <= "힣":
        return "이" if (ord(last) - 0xAC00) % 28 else "가"
    if last.isdigit():
        return "가" if last in "2459" else "이"
    return "이"


LANGS: dict[str, Lang] = {}


def _lang(**kw) -> None:
    LANGS[kw["code"]] = Lang(**{k: tuple(v) if isinstance(v, list) else v for k, v in kw.items()})


_lang(code="en",
      plain=["The answer is {v}.", "So the answer is {v}.", "Therefore, the total is {v}.", "So, in total, there are {v}.",
             "That makes {v} altogether.", "{V} is the answer.", "The final answer is {v}.", "Answer: {v}",
             "In the end, she has {v}.", "This gives a total of {v}.", "So he needs {v}.", "The total comes to {v}.",
             "**Final answer:** {v}", "So the final count is {v}.", "Tom needs {v} for the whole week.",
             "She will have {v} left at the end of the day."],
      contrast_after=["The answer is {g}, not {w}.", "So the total is {g}, not {w}.", "It's {g} rather than {w}.",
                      "The correct answer is {g} instead of {w}.", "That gives {g} — not {w}."],
      contrast_before=["Not {w}, but {g}.", "The answer is not {w} but {g}.", "Rather than {w}, the total is {g}.",
                       "Instead of {w}, the answer is {g}.", "It isn't {w}; it's {g}.", "{W} is wrong; the answer is {g}."],
      hedge=["The answer is {a} or {b}.", "It is either {a} or {b}.", "The answer is somewhere between {a} and {b}.",
             "It could be {a} or {b}, I'm not sure.", "So the total is {a} or maybe {b}.", "The answer is from {a} to {b}."],
      approx=["The answer is about {v}.", "That's approximately {v}.", "So roughly {v} in total."],
      bound=["So she needs at least {v}.", "The answer is more than {v}."],
      correction=["{W}? No wait — {g}.", "The answer is {w}. Wait, no: it's {g}.", "So {w}... actually, {g}."],
      closing=["I hope this helps!", "Let me know if you have any other questions.", "Hope that helps!"],
      nouns=[("jar", "jars"), ("apple", "apples"), ("book", "books"), ("cookie", "cookies"), ("dollar", "dollars")],
      money=["${n}", "{n} dollars", "${n}.00", "USD {n}"], words="en", thousands=[","])
_lang(code="fr",
      plain=["La réponse est {v}.", "Donc, il y a {v} au total.", "Au total, cela fait {v}.", "Réponse : {v}",
             "Elle a donc {v}.", "Le total est de {v}.", "On obtient donc {v}.", "Il faut donc {v}.",
             "Il lui faudra {v} pour toute la semaine."],
      contrast_after=["La réponse est {g}, et non {w}.", "Le total est {g}, pas {w}.", "Cela fait {g} et non pas {w}.",
                      "On obtient {g} plutôt que {w}."],
      contrast_before=["Ce n'est pas {w}, mais {g}.", "La réponse n'est pas {w} mais {g}.", "Au lieu de {w}, on obtient {g}.",
                       "Plutôt que {w}, le total est {g}."],
      hedge=["La réponse est {a} ou {b}.", "C'est soit {a}, soit {b}.", "Le total est entre {a} et {b}.", "Cela fait de {a} à {b}."],
      approx=["La réponse est environ {v}.", "Cela fait à peu près {v}."],
      bound=["Il faut au moins {v}.", "Le total est de plus de {v}."],
      correction=["{W} ? Non, attendez : {g}.", "La réponse est {w}. Non, pardon : {g}."],
      closing=["J'espère que cela vous aide !", "N'hésitez pas si vous avez d'autres questions."],
      nouns=[("livre", "livres"), ("pomme", "pommes"), ("bonbon", "bonbons"), ("billet", "billets"), ("œuf", "œufs"),
             ("crayon", "crayons"), ("gâteau", "gâteaux"), ("bouteille", "bouteilles"), ("chaise", "chaises"), ("page", "pages"),
             ("fleur", "fleurs"), ("voiture", "voitures"), ("élève", "élèves"), ("minute", "minutes"), ("heure", "heures"),
             ("jour", "jours"), ("kilomètre", "kilomètres"), ("mètre", "mètres"), ("litre", "litres"), ("euro", "euros"),
             ("biscuit", "biscuits"), ("carte", "cartes"), ("boîte", "boîtes"), ("oiseau", "oiseaux"), ("chien", "chiens"),
             ("poisson", "poissons"), ("tasse", "tasses"), ("sac", "sacs"), ("bille", "billes"), ("timbre", "timbres")],
      money=["{n} €", "{n} euros", "{n} $"], words="fr", decimal=",", thousands=["\u202f", "\u00a0", " "])
_lang(code="de",
      plain=["Die Antwort ist {v}.", "Die Antwort lautet {v}.", "Also sind es insgesamt {v}.", "Insgesamt ergibt das {v}.",
             "Antwort: {v}", "Sie hat also {v}.", "Das Ergebnis sind {v}.", "Er braucht also {v}.",
             "Am Ende des Tages bleiben ihr {v} übrig."],
      contrast_after=["Die Antwort ist {g}, nicht {w}.", "Es sind {g} und nicht {w}.", "Das ergibt {g} statt {w}.",
                      "Insgesamt sind es {g}, nicht {w}."],
      contrast_before=["Nicht {w}, sondern {g}.", "Die Antwort ist nicht {w}, sondern {g}.", "Statt {w} sind es {g}.",
                       "Anstatt {w} ergeben sich {g}."],
      hedge=["Die Antwort ist {a} oder {b}.", "Es sind entweder {a} oder {b}.", "Es sind zwischen {a} und {b}.",
             "Das ergibt {a} bis {b}."],
      approx=["Die Antwort ist ungefähr {v}.", "Es sind etwa {v}."],
      bound=["Es sind mindestens {v}.", "Es sind mehr als {v}."],
      correction=["{W}? Nein, Moment – {g}.", "Die Antwort ist {w}. Nein, warte: {g}."],
      closing=["Ich hoffe, das hilft!", "Bei weiteren Fragen melde dich gern."],
      nouns=[("Apfel", "Äpfel"), ("Buch", "Bücher"), ("Ei", "Eier"), ("Flasche", "Flaschen"), ("Glas", "Gläser"),
             ("Keks", "Kekse"), ("Stift", "Stifte"), ("Kuchen", "Kuchen"), ("Stuhl", "Stühle"), ("Seite", "Seiten"),
             ("Blume", "Blumen"), ("Auto", "Autos"), ("Schüler", "Schüler"), ("Minute", "Minuten"), ("Stunde", "Stunden"),
             ("Tag", "Tage"), ("Kilometer", "Kilometer"), ("Meter", "Meter"), ("Liter", "Liter"), ("Euro", "Euro"),
             ("Dollar", "Dollar"), ("Karte", "Karten"), ("Kiste", "Kisten"), ("Vogel", "Vögel"), ("Hund", "Hunde"),
             ("Fisch", "Fische"), ("Tasse", "Tassen"), ("Tüte", "Tüten"), ("Murmel", "Murmeln"), ("Bonbon", "Bonbons")],
      money=["{n} €", "{n} Euro", "€{n}"], words="de", decimal=",", thousands=[".", "'"])
_lang(code="es",
      plain=["La respuesta es {v}.", "Por lo tanto, hay {v} en total.", "En total son {v}.", "Respuesta: {v}",
             "Entonces, ella tiene {v}.", "El total es de {v}.", "Así que necesita {v}.", "Obtenemos {v}.",
             "Al final del día le quedan {v} en la tienda."],
      contrast_after=["La respuesta es {g}, no {w}.", "Son {g} y no {w}.", "El total es {g} en lugar de {w}.", "Da {g}, no {w}."],
      contrast_before=["No son {w}, sino {g}.", "La respuesta no es {w}, sino {g}.", "En vez de {w}, son {g}.",
                       "En lugar de {w}, obtenemos {g}."],
      hedge=["La respuesta es {a} o {b}.", "Son {a} o {b}.", "Está entre {a} y {b}.", "Son o bien {a} o bien {b}.",
             "De {a} a {b}."],
      approx=["La respuesta es aproximadamente {v}.", "Son unos {v}."],
      bound=["Necesita al menos {v}.", "Son más de {v}."],
      correction=["¿{W}? No, espera: {g}.", "La respuesta es {w}. No, perdón: {g}."],
      closing=["¡Espero que esto ayude!", "Si tienes más preguntas, dímelo."],
      nouns=[("libro", "libros"), ("manzana", "manzanas"), ("huevo", "huevos"), ("botella", "botellas"), ("vaso", "vasos"),
             ("galleta", "galletas"), ("lápiz", "lápices"), ("pastel", "pasteles"), ("silla", "sillas"), ("página", "páginas"),
             ("flor", "flores"), ("coche", "coches"), ("estudiante", "estudiantes"), ("minuto", "minutos"), ("hora", "horas"),
             ("día", "días"), ("kilómetro", "kilómetros"), ("metro", "metros"), ("litro", "litros"), ("euro", "euros"),
             ("dólar", "dólares"), ("caramelo", "caramelos"), ("tarjeta", "tarjetas"), ("caja", "cajas"), ("pájaro", "pájaros"),
             ("perro", "perros"), ("pez", "peces"), ("taza", "tazas"), ("bolsa", "bolsas"), ("canica", "canicas")],
      money=["{n} €", "{n} dólares", "${n}"], words="es", decimal=",", thousands=["."])
_lang(code="pt",
      plain=["A resposta é {v}.", "Portanto, há {v} no total.", "No total, são {v}.", "Resposta: {v}", "Então ela tem {v}.",
             "O total é de {v}.", "Logo, ele precisa de {v}."],
      contrast_after=["A resposta é {g}, não {w}.", "São {g} e não {w}.", "O total é {g} em vez de {w}."],
      contrast_before=["Não são {w}, mas sim {g}.", "A resposta não é {w}, e sim {g}.", "Em vez de {w}, são {g}.",
                       "Ao invés de {w}, o total é {g}."],
      hedge=["A resposta é {a} ou {b}.", "São {a} ou {b}.", "O total fica entre {a} e {b}.", "Ou {a} ou {b}."],
      approx=["A resposta é aproximadamente {v}.", "São cerca de {v}."],
      bound=["São pelo menos {v}.", "São mais de {v}."],
      correction=["{W}? Não, espere: {g}.", "A resposta é {w}. Não, desculpe: {g}."],
      closing=["Espero ter ajudado!", "Se tiver outras dúvidas, é só perguntar."],
      nouns=[("livro", "livros"), ("maçã", "maçãs"), ("ovo", "ovos"), ("garrafa", "garrafas"), ("copo", "copos"),
             ("biscoito", "biscoitos"), ("lápis", "lápis"), ("bolo", "bolos"), ("cadeira", "cadeiras"), ("página", "páginas"),
             ("flor", "flores"), ("carro", "carros"), ("aluno", "alunos"), ("minuto", "minutos"), ("hora", "horas"),
             ("dia", "dias"), ("quilômetro", "quilômetros"), ("metro", "metros"), ("litro", "litros"), ("real", "reais"),
             ("dólar", "dólares"), ("bala", "balas"), ("cartão", "cartões"), ("caixa", "caixas"), ("pássaro", "pássaros"),
             ("cachorro", "cachorros"), ("peixe", "peixes"), ("xícara", "xícaras"), ("sacola", "sacolas"), ("bolinha", "bolinhas")],
      money=["R$ {n}", "{n} reais", "{n} €"], words="pt", decimal=",", thousands=["."])
_lang(code="it",
      plain=["La risposta è {v}.", "Quindi ci sono {v} in totale.", "In totale sono {v}.", "Risposta: {v}", "Quindi lei ha {v}.",
             "Il totale è di {v}.", "Gli servono quindi {v}."],
      contrast_after=["La risposta è {g}, non {w}.", "Sono {g} e non {w}.", "Il totale è {g} invece di {w}.", "Fa {g}, non {w}."],
      contrast_before=["Non sono {w}, ma {g}.", "La risposta non è {w}, bensì {g}.", "Invece di {w}, sono {g}.",
                       "Anziché {w}, il totale è {g}."],
      hedge=["La risposta è {a} o {b}.", "Sono {a} oppure {b}.", "Sono tra {a} e {b}.", "O {a} o {b}."],
      approx=["La risposta è circa {v}.", "Sono più o meno {v}."],
      bound=["Sono almeno {v}.", "Sono più di {v}."],
      correction=["{W}? No, aspetta: {g}.", "La risposta è {w}. Anzi no: {g}."],
      closing=["Spero di esserti stato d'aiuto!", "Fammi sapere se hai altre domande."],
      nouns=[("libro", "libri"), ("mela", "mele"), ("uovo", "uova"), ("bottiglia", "bottiglie"), ("bicchiere", "bicchieri"),
             ("biscotto", "biscotti"), ("matita", "matite"), ("torta", "torte"), ("sedia", "sedie"), ("pagina", "pagine"),
             ("fiore", "fiori"), ("macchina", "macchine"), ("studente", "studenti"), ("minuto", "minuti"), ("ora", "ore"),
             ("giorno", "giorni"), ("chilometro", "chilometri"), ("metro", "metri"), ("litro", "litri"), ("euro", "euro"),
             ("dollaro", "dollari"), ("caramella", "caramelle"), ("carta", "carte"), ("scatola", "scatole"), ("uccello", "uccelli"),
             ("cane", "cani"), ("pesce", "pesci"), ("tazza", "tazze"), ("borsa", "borse"), ("biglia", "biglie")],
      money=["{n} €", "{n} euro", "€ {n}"], words="it", decimal=",", thousands=["."])
_lang(code="nl",
      plain=["Het antwoord is {v}.", "Dus zijn er in totaal {v}.", "In totaal is dat {v}.", "Antwoord: {v}", "Ze heeft dus {v}.",
             "Het totaal is {v}.", "Hij heeft dus {v} nodig."],
      contrast_after=["Het antwoord is {g}, niet {w}.", "Het zijn er {g} en niet {w}.", "Het totaal is {g} in plaats van {w}."],
      contrast_before=["Niet {w}, maar {g}.", "Het antwoord is niet {w}, maar {g}.", "In plaats van {w} zijn het er {g}."],
      hedge=["Het antwoord is {a} of {b}.", "Het zijn er {a} of {b}.", "Het zijn er tussen {a} en {b}.", "Het is ofwel {a} ofwel {b}."],
      approx=["Het antwoord is ongeveer {v}.", "Dat is zo'n {v}."],
      bound=["Het zijn er minstens {v}.", "Het zijn er meer dan {v}."],
      correction=["{W}? Nee, wacht: {g}.", "Het antwoord is {w}. Nee, sorry: {g}."],
      closing=["Ik hoop dat dit helpt!", "Laat het weten als je nog vragen hebt."],
      nouns=[("boek", "boeken"), ("appel", "appels"), ("ei", "eieren"), ("fles", "flessen"), ("glas", "glazen"),
             ("koekje", "koekjes"), ("potlood", "potloden"), ("taart", "taarten"), ("stoel", "stoelen"), ("pagina", "pagina's"),
             ("bloem", "bloemen"), ("auto", "auto's"), ("leerling", "leerlingen"), ("minuut", "minuten"), ("uur", "uur"),
             ("dag", "dagen"), ("kilometer", "kilometer"), ("meter", "meter"), ("liter", "liter"), ("euro", "euro"),
             ("dollar", "dollar"), ("snoepje", "snoepjes"), ("kaart", "kaarten"), ("doos", "dozen"), ("vogel", "vogels"),
             ("hond", "honden"), ("vis", "vissen"), ("kopje", "kopjes"), ("tas", "tassen"), ("knikker", "knikkers")],
      money=["€ {n}", "{n} euro", "${n}"], words="nl", decimal=",", thousands=["."])
_lang(code="ru",
      plain=["Ответ: {v}.", "Итак, всего {v}.", "Таким образом, получается {v}.", "Значит, у неё {v}.", "Всего получается {v}.",
             "Ответ — {v}.", "Итого: {v}."],
      contrast_after=["Ответ: {g}, а не {w}.", "Получается {g}, не {w}.", "Всего {g}, а вовсе не {w}."],
      contrast_before=["Не {w}, а {g}.", "Ответ не {wn}, а {gn}.", "Вместо {wn} получается {g}."],
      hedge=["Ответ: {a} или {b}.", "Либо {a}, либо {b}.", "От {an} до {bn}.", "Где-то между {an} и {bn}."],
      approx=["Ответ: примерно {v}.", "Получается около {vn}."],
      bound=["Нужно не менее {vn}.", "Всего больше {vn}."],
      correction=["{W}? Нет, подождите: {g}.", "Ответ: {w}. Нет, простите, {g}."],
      closing=["Надеюсь, это поможет!", "Если остались вопросы, спрашивайте."],
      nouns=[("книга", "книги", "книг"), ("яблоко", "яблока", "яблок"), ("яйцо", "яйца", "яиц"), ("бутылка", "бутылки", "бутылок"),
             ("стакан", "стакана", "стаканов"), ("карандаш", "карандаша", "карандашей"), ("торт", "торта", "тортов"),
             ("стул", "стула", "стульев"), ("страница", "страницы", "страниц"), ("цветок", "цветка", "цветов"),
             ("машина", "машины", "машин"), ("ученик", "ученика", "учеников"), ("минута", "минуты", "минут"),
             ("час", "часа", "часов"), ("день", "дня", "дней"), ("километр", "километра", "километров"),
             ("метр", "метра", "метров"), ("литр", "литра", "литров"), ("рубль", "рубля", "рублей"),
             ("доллар", "доллара", "долларов"), ("конфета", "конфеты", "конфет"), ("открытка", "открытки", "открыток"),
             ("коробка", "коробки", "коробок"), ("птица", "птицы", "птиц"), ("собака", "собаки", "собак"),
             ("рыба", "рыбы", "рыб"), ("чашка", "чашки", "чашек"), ("сумка", "сумки", "сумок"), ("шарик", "шарика", "шариков"),
             ("печенье", "печенья", "печений")],
      money=["{n} руб.", "{n} рублей", "${n}"], words="ru", decimal=",", thousands=["\u00a0", " "], plural_rule="slavic-ru")
_lang(code="pl",
      plain=["Odpowiedź: {v}.", "Odpowiedź to {v}.", "W sumie jest {v}.", "Zatem łącznie {v}.", "Razem daje to {v}."],
      contrast_after=["Odpowiedź to {g}, a nie {w}.", "W sumie {g}, nie {w}."],
      contrast_before=["Nie {w}, lecz {g}.", "Odpowiedź to nie {wn}, tylko {gn}.", "Zamiast {wn} wychodzi {g}."],
      hedge=["Odpowiedź to {a} lub {b}.", "Albo {a}, albo {b}.", "Między {an} a {bn}.", "Od {an} do {bn}."],
      approx=["Odpowiedź: około {vn}.", "W sumie mniej więcej {v}."],
      bound=["Co najmniej {v}.", "Ponad {v}."],
      correction=["{W}? Nie, zaraz: {g}.", "Odpowiedź to {w}. Nie, przepraszam: {g}."],
      closing=["Mam nadzieję, że to pomoże!", "W razie pytań chętnie pomogę."],
      nouns=[("książka", "książki", "książek"), ("jabłko", "jabłka", "jabłek"), ("jajko", "jajka", "jajek"),
             ("butelka", "butelki", "butelek"), ("szklanka", "szklanki", "szklanek"), ("ciastko", "ciastka", "ciastek"),
             ("ołówek", "ołówki", "ołówków"), ("tort", "torty", "tortów"), ("krzesło", "krzesła", "krzeseł"),
             ("strona", "strony", "stron"), ("kwiat", "kwiaty", "kwiatów"), ("samochód", "samochody", "samochodów"),
             ("minuta", "minuty", "minut"), ("godzina", "godziny", "godzin"), ("dzień", "dni", "dni"),
             ("kilometr", "kilometry", "kilometrów"), ("metr", "metry", "metrów"), ("litr", "litry", "litrów"),
             ("złoty", "złote", "złotych"), ("dolar", "dolary", "dolarów"), ("cukierek", "cukierki", "cukierków"),
             ("kartka", "kartki", "kartek"), ("pudełko", "pudełka", "pudełek"), ("ptak", "ptaki", "ptaków"),
             ("pies", "psy", "psów"), ("ryba", "ryby", "ryb"), ("kubek", "kubki", "kubków"), ("torba", "torby", "toreb"),
             ("kulka", "kulki", "kulek")],
      money=["{n} zł", "{n} złotych", "${n}"], words="pl", decimal=",", thousands=["\u00a0", " "], plural_rule="slavic-pl")
_lang(code="tr",
      plain=["Cevap {v}.", "Cevap: {v}", "Yani toplam {v}.", "Toplamda {v} var.", "Sonuç olarak {v} gerekiyor.", "Doğru cevap {v}."],
      contrast_after=["Cevap {g}, {w} değil.", "Toplam {g}; {w} değil."],
      contrast_before=["Cevap {w} değil, {g}.", "{W} yerine {g}.", "Sonuç {wn} değil, {gn}."],
      hedge=["Cevap {a} ya da {b}.", "{A} veya {b}.", "{An} ile {bn} arasında.", "Ya {a} ya da {b}."],
      approx=["Cevap yaklaşık {v}.", "Yaklaşık olarak {v}."],
      bound=["En az {v} gerekiyor.", "En az {v}."],
      correction=["{W}? Hayır, bekle: {g}.", "Cevap {w}. Hayır, pardon: {g}."],
      closing=["Umarım yardımcı olur!", "Başka sorunuz varsa sorabilirsiniz."],
      nouns=[("elma",), ("kitap",), ("yumurta",), ("şişe",), ("bardak",), ("kurabiye",), ("kalem",), ("pasta",), ("sandalye",),
             ("sayfa",), ("çiçek",), ("araba",), ("öğrenci",), ("dakika",), ("saat",), ("gün",), ("kilometre",), ("metre",),
             ("litre",), ("lira",), ("dolar",), ("şeker",), ("kart",), ("kutu",), ("kuş",), ("köpek",), ("balık",), ("fincan",),
             ("çanta",), ("bilye",)],
      money=["{n} TL", "{n} lira", "${n}"], words=None, decimal=",", thousands=["."], plural_rule="none")
_lang(code="el",
      plain=["Η απάντηση είναι {v}.", "Άρα, συνολικά υπάρχουν {v}.", "Επομένως, το σύνολο είναι {v}.", "Απάντηση: {v}",
             "Συνολικά, {v}.", "Άρα χρειάζεται {v}."],
      contrast_after=["Η απάντηση είναι {g}, όχι {w}.", "Είναι {g} και όχι {w}.", "Το σύνολο είναι {g} αντί για {w}."],
      contrast_before=["Όχι {w}, αλλά {g}.", "Η απάντηση δεν είναι {w}, αλλά {g}.", "Αντί για {w}, είναι {g}."],
      hedge=["Η απάντηση είναι {a} ή {b}.", "Είναι είτε {a} είτε {b}.", "Είναι μεταξύ {an} και {bn}.", "Από {an} έως {bn}."],
      approx=["Η απάντηση είναι περίπου {v}.", "Είναι γύρω στα {vn}."],
      bound=["Χρειάζονται τουλάχιστον {v}.", "Είναι περισσότερα από {vn}."],
      correction=["{W}\u037e Όχι, περίμενε: {g}.", "Η απάντηση είναι {w}. Όχι, συγγνώμη: {g}."],
      closing=["Ελπίζω να βοήθησα!", "Αν έχεις άλλες ερωτήσεις, ρώτα με."],
      nouns=[("βιβλίο", "βιβλία"), ("μήλο", "μήλα"), ("αυγό", "αυγά"), ("μπουκάλι", "μπουκάλια"), ("ποτήρι", "ποτήρια"),
             ("μπισκότο", "μπισκότα"), ("μολύβι", "μολύβια"), ("κέικ", "κέικ"), ("καρέκλα", "καρέκλες"), ("σελίδα", "σελίδες"),
             ("λουλούδι", "λουλούδια"), ("αυτοκίνητο", "αυτοκίνητα"), ("μαθητής", "μαθητές"), ("λεπτό", "λεπτά"), ("ώρα", "ώρες"),
             ("μέρα", "μέρες"), ("χιλιόμετρο", "χιλιόμετρα"), ("μέτρο", "μέτρα"), ("λίτρο", "λίτρα"), ("ευρώ", "ευρώ"),
             ("δολάριο", "δολάρια"), ("καραμέλα", "καραμέλες"), ("κάρτα", "κάρτες"), ("κουτί", "κουτιά"), ("πουλί", "πουλιά"),
             ("σκύλος", "σκύλοι"), ("ψάρι", "ψάρια"), ("φλιτζάνι", "φλιτζάνια"), ("τσάντα", "τσάντες"), ("βόλος", "βόλοι")],
      money=["{n} €", "{n} ευρώ", "€{n}"], words=None, decimal=",", thousands=["."])
_lang(code="ar",
      plain=["الجواب هو {v}.", "إذن، المجموع هو {v}.", "الإجابة: {v}", "لذلك لديها {v}.", "إذًا، يحتاج إلى {v}.", "المجموع الكلي {v}."],
      contrast_after=["الجواب هو {g}، وليس {w}.", "المجموع {g} لا {w}.", "الإجابة {g} بدلًا من {w}."],
      contrast_before=["ليس {w}، بل {g}.", "الجواب ليس {w} بل {g}.", "بدلًا من {w}، المجموع هو {g}."],
      hedge=["الجواب هو {a} أو {b}.", "إما {a} أو {b}.", "المجموع بين {an} و{bn}.", "من {an} إلى {bn}."],
      approx=["الجواب حوالي {v}.", "المجموع تقريبًا {v}."],
      bound=["يحتاج على الأقل إلى {v}.", "المجموع أكثر من {vn}."],
      correction=["{W}؟ لا، انتظر: {g}.", "الجواب هو {w}. لا، عذرًا: {g}."],
      closing=["آمل أن يكون هذا مفيدًا!", "إذا كان لديك أي سؤال آخر فأخبرني."],
      nouns=[("كتاب", "كتب"), ("تفاحة", "تفاحات"), ("بيضة", "بيضات"), ("زجاجة", "زجاجات"), ("كوب", "أكواب"),
             ("بسكويتة", "بسكويتات"), ("قلم", "أقلام"), ("كعكة", "كعكات"), ("كرسي", "كراسي"), ("صفحة", "صفحات"),
             ("وردة", "ورود"), ("سيارة", "سيارات"), ("طالب", "طلاب"), ("دقيقة", "دقائق"), ("ساعة", "ساعات"), ("يوم", "أيام"),
             ("كيلومتر", "كيلومترات"), ("متر", "أمتار"), ("لتر", "لترات"), ("دولار", "دولارات"), ("ريال", "ريالات"),
             ("حلوى", "حلويات"), ("بطاقة", "بطاقات"), ("صندوق", "صناديق"), ("طائر", "طيور"), ("كلب", "كلاب"),
             ("سمكة", "أسماك"), ("فنجان", "فناجين"), ("حقيبة", "حقائب"), ("كرة", "كرات")],
      money=["{n} دولار", "{n} ريال", "${n}"], words="ar", digits="٠١٢٣٤٥٦٧٨٩", thousands=["٬", ","],
      plural_rule="ar")
_lang(code="hi",
      plain=["उत्तर {v} है।", "अतः कुल {v} हैं।", "इसलिए कुल {v} हैं।", "उत्तर: {v}", "तो उसके पास {v} हैं।", "कुल मिलाकर {v} हुए।"],
      contrast_after=["उत्तर {g} है, {w} नहीं।", "कुल {g} हैं, न कि {w}।"],
      contrast_before=["उत्तर {w} नहीं, बल्कि {g} है।", "{W} नहीं, {g}।", "{Wn} के बजाय {g} हैं।"],
      hedge=["उत्तर {a} या {b} है।", "या तो {a} या {b}।", "उत्तर {an} और {bn} के बीच है।", "{An} से {bn} तक।"],
      approx=["उत्तर लगभग {v} है।", "करीब {v} हैं।"],
      bound=["कम से कम {v} चाहिए।", "{Vn} से अधिक हैं।"],
      correction=["{W}? नहीं, रुकिए: {g}।", "उत्तर {w} है। नहीं, माफ़ कीजिए: {g}।"],
      closing=["आशा है कि इससे मदद मिलेगी!", "कोई और सवाल हो तो पूछिए।"],
      nouns=[("किताब", "किताबें"), ("सेब", "सेब"), ("अंडा", "अंडे"), ("बोतल", "बोतलें"), ("गिलास", "गिलास"), ("बिस्कुट", "बिस्कुट"),
             ("पेंसिल", "पेंसिलें"), ("केक", "केक"), ("कुर्सी", "कुर्सियाँ"), ("पन्ना", "पन्ने"), ("फूल", "फूल"), ("गाड़ी", "गाड़ियाँ"),
             ("छात्र", "छात्र"), ("मिनट", "मिनट"), ("घंटा", "घंटे"), ("दिन", "दिन"), ("किलोमीटर", "किलोमीटर"), ("मीटर", "मीटर"),
             ("लीटर", "लीटर"), ("रुपया", "रुपये"), ("डॉलर", "डॉलर"), ("टॉफ़ी", "टॉफ़ियाँ"), ("कार्ड", "कार्ड"), ("डिब्बा", "डिब्बे"),
             ("चिड़िया", "चिड़ियाँ"), ("कुत्ता", "कुत्ते"), ("मछली", "मछलियाँ"), ("कप", "कप"), ("थैला", "थैले"), ("कंचा", "कंचे")],
      money=["₹{n}", "{n} रुपये", "${n}"], words=None, digits="०१२३४५६७८९", thousands=[","])
_lang(code="zh",
      plain=["答案是{v}。", "所以一共有{v}。", "因此，总共需要{v}。", "答：{v}", "她最后有{v}。", "总数是{v}。", "最终答案：{v}"],
      contrast_after=["所以小明还剩{g}，不是{w}。", "答案是{g}，而不是{w}。", "一共是{g}，并非{w}。"],
      contrast_before=["不是{w}，而是{g}。", "答案不是{w}，是{g}。", "总数不是{w}而是{g}。"],
      hedge=["答案是{a}或{b}。", "大概是{a}或者{b}。", "要么{a}，要么{b}。", "在{an}到{bn}之间。"],
      approx=["答案大约是{v}。", "一共约{v}。"],
      bound=["至少需要{v}。", "超过{v}。"],
      correction=["{W}？不对，等一下：{g}。", "答案是{w}。不对，应该是{g}。"],
      closing=["希望这对你有帮助！", "如果还有问题，欢迎继续提问。"],
      nouns=[("个", "苹果"), ("本", "书"), ("元", ""), ("支", "铅笔"), ("块", "蛋糕"), ("把", "椅子"), ("页", ""), ("朵", "花"),
             ("辆", "汽车"), ("名", "学生"), ("分钟", ""), ("小时", ""), ("天", ""), ("公里", ""), ("米", ""), ("升", ""),
             ("美元", ""), ("颗", "糖果"), ("张", "卡片"), ("盒", "饼干"), ("只", "鸟"), ("条", "狗"), ("条", "鱼"), ("杯", "咖啡"),
             ("袋", "大米"), ("瓶", "水"), ("个", "鸡蛋"), ("箱", "橙子"), ("颗", "弹珠"), ("件", "衬衫")],
      money=["{n}元", "¥{n}", "{n}美元"], words="zh", digits="０１２３４５６７８９", joiner="", plural_rule="none")
_lang(code="ja",
      plain=["答えは{v}です。", "したがって、合計{v}です。", "よって、全部で{v}になります。", "答え：{v}", "合計は{v}です。",
             "つまり、{v}必要です。"],
      contrast_after=["答えは{g}で、{w}ではありません。", "合計は{g}です。{w}ではありません。", "答えは{g}であって、{w}ではない。"],
      contrast_before=["答えは{w}ではなく{g}です。", "{W}ではなく、{g}です。", "{W}じゃなくて{g}です。"],
      hedge=["答えは{a}か{b}です。", "{A}または{b}です。", "{An}から{bn}の間です。", "{A}か、あるいは{b}です。"],
      approx=["答えは約{v}です。", "だいたい{v}です。"],
      bound=["少なくとも{v}必要です。", "{V}以上です。"],
      correction=["{W}？いや、待って、{g}です。", "答えは{w}です。いえ、訂正します：{g}です。"],
      closing=["お役に立てれば幸いです。", "ほかに質問があれば聞いてください。"],
      nouns=[("個",), ("冊",), ("本",), ("枚",), ("人",), ("円",), ("匹",), ("台",), ("杯",), ("箱",), ("分",), ("時間",), ("日",),
             ("回",), ("ページ",), ("キロ",), ("メートル",), ("リットル",), ("ドル",), ("袋",), ("羽",), ("脚",), ("点",), ("歳",),
             ("粒",), ("着",), ("足",), ("軒",), ("頭",), ("件",)],
      money=["{n}円", "{n}ドル", "¥{n}"], words="ja", digits="０１２３４５６７８９", joiner="", plural_rule="none")
_lang(code="ko",
      plain=["정답은 {v}입니다.", "따라서 모두 {v}입니다.", "그러므로 필요한 것은 총 {v}입니다.", "답: {v}", "합계는 {v}입니다.",
             "결국 그녀가 가진 것은 {v}입니다."],
      contrast_after=["정답은 {g}이고, {w}{wp} 아닙니다.", "{G}입니다. {w}{wp} 아니에요."],
      contrast_before=["정답은 {w}{wp} 아니라 {g}입니다.", "{W}{wp} 아니고 {g}입니다.", "{Wn} 대신 {g}입니다."],
      hedge=["정답은 {a} 또는 {b}입니다.", "{A}이거나 {b}입니다.", "{An}에서 {bn} 사이입니다."],
      approx=["정답은 약 {v}입니다.", "대략 {v}입니다."],
      bound=["최소 {v} 필요합니다.", "{V} 이상입니다."],
      correction=["{W}? 아니, 잠깐만요. {g}입니다.", "정답은 {w}입니다. 아니요, 정정합니다: {g}입니다."],
      closing=["도움이 되셨길 바랍니다!", "더 궁금한 점이 있으면 물어보세요."],
      nouns=[("개",), ("명",), ("권",), ("마리",), ("원",), ("달러",), ("장",), ("대",), ("병",), ("잔",), ("시간",), ("분",), ("일",),
             ("번",), ("킬로그램",), ("미터",), ("페이지",), ("상자",), ("송이",), ("켤레",), ("봉지",), ("자루",), ("그릇",), ("살",),
             ("점",), ("통",), ("벌",), ("채",), ("포기",), ("알",)],
      money=["{n}원", "{n}달러", "${n}"], words=None, joiner="", plural_rule="none")
_lang(code="th",
      plain=["คำตอบคือ {v}", "ดังนั้น ทั้งหมดมี {v}", "เพราะฉะนั้น รวมเป็น {v}", "คำตอบ: {v}", "สรุปว่าเธอมี {v}", "รวมทั้งหมด {v}"],
      contrast_after=["คำตอบคือ {g} ไม่ใช่ {w}", "รวมเป็น {g} ไม่ใช่ {w}", "ได้ {g} แทนที่จะเป็น {w}"],
      contrast_before=["ไม่ใช่ {w} แต่เป็น {g}", "คำตอบไม่ใช่ {w} แต่คือ {g}"],
      hedge=["คำตอบคือ {a} หรือ {b}", "อาจจะเป็น {a} หรือ {b}", "อยู่ระหว่าง {an} ถึง {bn}"],
      approx=["คำตอบคือประมาณ {v}", "ราว ๆ {v}"],
      bound=["อย่างน้อย {v}", "มากกว่า {v}"],
      correction=["{W}? เดี๋ยวก่อน คำตอบที่ถูกคือ {g}", "คำตอบคือ {w} แก้ไข: ที่ถูกคือ {g}"],
      closing=["หวังว่าจะเป็นประโยชน์นะคะ", "ถ้ามีคำถามเพิ่มเติม ถามได้เลยครับ"],
      nouns=[("บาท",), ("คน",), ("ชิ้น",), ("เล่ม",), ("กิโลกรัม",), ("นาที",), ("ชั่วโมง",), ("วัน",), ("ใบ",), ("ตัว",), ("ลูก",),
             ("แก้ว",), ("กล่อง",), ("ดอลลาร์",), ("เมตร",), ("ลิตร",), ("คัน",), ("หน้า",), ("ดอก",), ("ขวด",), ("ถุง",), ("ฟอง",),
             ("แผ่น",), ("ด้าม",), ("เม็ด",), ("ครั้ง",), ("กิโลเมตร",), ("จาน",), ("ต้น",), ("คู่",)],
      money=["{n} บาท", "฿{n}", "${n}"], words="th", digits="๐๑๒๓๔๕๖๗๘๙", plural_rule="none")
_lang(code="vi",
      plain=["Đáp án là {v}.", "Vậy tổng cộng có {v}.", "Do đó, cần {v}.", "Đáp số: {v}", "Cuối cùng cô ấy có {v}.", "Tổng số là {v}."],
      contrast_after=["Đáp án là {g}, không phải {w}.", "Tổng cộng là {g} chứ không phải {w}.", "Kết quả là {g} thay vì {w}."],
      contrast_before=["Không phải {w}, mà là {g}.", "Đáp án không phải là {w} mà là {g}.", "Thay vì {w}, kết quả là {g}."],
      hedge=["Đáp án là {a} hoặc {b}.", "Có thể là {a} hay {b}.", "Khoảng từ {an} đến {bn}.", "Hoặc {a} hoặc {b}."],
      approx=["Đáp án là khoảng {v}.", "Xấp xỉ {v}."],
      bound=["Cần ít nhất {v}.", "Nhiều hơn {v}."],
      correction=["{W}? Không, khoan đã: {g}.", "Đáp án là {w}. À không, xin lỗi: {g}."],
      closing=["Hy vọng điều này giúp ích cho bạn!", "Nếu còn thắc mắc, bạn cứ hỏi nhé."],
      nouns=[("quả táo",), ("cuốn sách",), ("quả trứng",), ("chai nước",), ("cái cốc",), ("cái bánh quy",), ("cây bút chì",),
             ("cái bánh",), ("cái ghế",), ("trang",), ("bông hoa",), ("chiếc xe",), ("học sinh",), ("phút",), ("giờ",), ("ngày",),
             ("ki-lô-mét",), ("mét",), ("lít",), ("đô la",), ("đồng",), ("viên kẹo",), ("tấm thiệp",), ("hộp",), ("con chim",),
             ("con chó",), ("con cá",), ("tách trà",), ("cái túi",), ("viên bi",)],
      money=["{n} đồng", "{n} đô la", "${n}"], words="vi", decimal=",", thousands=["."], plural_rule="none")
_lang(code="id",
      plain=["Jawabannya adalah {v}.", "Jadi, totalnya {v}.", "Dengan demikian, semuanya ada {v}.", "Jawaban: {v}",
             "Jadi dia memiliki {v}.", "Total keseluruhan adalah {v}."],
      contrast_after=["Jawabannya {g}, bukan {w}.", "Totalnya {g}, bukannya {w}."],
      contrast_before=["Bukan {w}, melainkan {g}.", "Jawabannya bukan {w}, tetapi {g}.", "Alih-alih {w}, hasilnya {g}."],
      hedge=["Jawabannya {a} atau {b}.", "Mungkin {a} atau {b}.", "Antara {an} dan {bn}.", "Sekitar {an} sampai {bn}."],
      approx=["Jawabannya sekitar {v}.", "Kira-kira {v}."],
      bound=["Setidaknya {v}.", "Lebih dari {v}."],
      correction=["{W}? Bukan, tunggu: {g}.", "Jawabannya {w}. Eh, bukan, maaf: {g}."],
      closing=["Semoga membantu!", "Kalau ada pertanyaan lain, silakan tanya."],
      nouns=[("apel",), ("buku",), ("telur",), ("botol",), ("gelas",), ("kue",), ("pensil",), ("kursi",), ("halaman",), ("bunga",),
             ("mobil",), ("siswa",), ("menit",), ("jam",), ("hari",), ("kilometer",), ("meter",), ("liter",), ("rupiah",), ("dolar",),
             ("permen",), ("kartu",), ("kotak",), ("burung",), ("anjing",), ("ikan",), ("cangkir",), ("tas",), ("kelereng",), ("bungkus",)],
      money=["Rp{n}", "{n} rupiah", "${n}"], words="id", decimal=",", thousands=["."], plural_rule="none")

# letters of each language's script for made-up units ('14 zorvels' in any script): the graders
# must read letters after a number as a unit by their Unicode category, whatever they spell
SCRIPT_LETTERS = {
    "latin": "abcdefghijklmnoprstuvwyzäöüéèàçñ", "cyrillic": "абвгдежзиклмнопрстуфхцчшыэюя",
    "greek": "αβγδεζηθικλμνξοπρστυφχψω", "arabic": "ابتثجحخدذرزسشصضطظعغفقكلمنهوي",
    "devanagari": "कखगघचछजझटठडढणतथदधनपफबभमयरलवशसह", "cjk": "书本饼糖盒瓶杯碗桶筐袋罐箱壶盘串",
    "kana": "あいうえおかきくけこさしすせそたちつてと", "hangul": "가나다라마바사아자차카타파하",
    "thai": "กขคงจฉชซญดตถทนบปผพฟมยรลวสหอฮ",
}
DEVANAGARI_SIGNS = "ािीुूेैोौ"
LANG_SCRIPT = {"ru": "cyrillic", "el": "greek", "ar": "arabic", "hi": "devanagari", "zh": "cjk", "ja": "kana",
               "ko": "hangul", "th": "thai"}


def made_up_word(rng: random.Random, lang: str) -> str:
    """A word of 3-7 letters in the language's script (Devanagari with its vowel signs)."""
    letters = SCRIPT_LETTERS[LANG_SCRIPT.get(lang, "latin")]
    n = rng.randint(1, 3) if lang in ("zh", "ja", "ko") else rng.randint(3, 7)
    out = []
    for _ in range(n):
        out.append(rng.choice(letters))
        if lang == "hi" and rng.random() < 0.6:
            out.append(rng.choice(DEVANAGARI_SIGNS))
    word = "".join(out)
    return word.capitalize() if lang == "de" else word


# --- chat-template debris ------------------------------------------------------------------

DEBRIS = (
    "<|im_end|>\n<|im_start|>user\n{q}", "<|im_start|>user\n{q}", "<|eot_id|><|start_header_id|>user<|end_header_id|>\n\n{q}",
    "</s>\n<s>[INST] {q} [/INST]", "</s>{q}", "<|end|>\n<|user|>\n{q}", "<end_of_turn>\n<start_of_turn>user\n{q}",
    "<|endoftext|>{q}", "<｜end▁of▁sentence｜><｜User｜>{q}", "<|END_OF_TURN_TOKEN|><|START_OF_TURN_TOKEN|><|USER_TOKEN|>{q}",
    "<|eot_id|>", "<|im_end|>", "<|end|><|assistant|>The answer is {n}.", "<|return|>", "<|eom_id|>\n{q}",
)


# --- numbers as written ----------------------------------------------------------------------

def plural_form(lang: Lang, noun: tuple[str, ...], n: float) -> str:
    """The noun form that agrees with n in the language."""
    if len(noun) == 1 or lang.plural_rule == "none":
        return noun[0]
    whole = n == int(n)
    k = abs(int(n))
    if lang.plural_rule == "slavic-ru":
        if not whole:
            return noun[1]
        return noun[0] if k % 10 == 1 and k % 100 != 11 else noun[1] if 2 <= k % 10 <= 4 and not 12 <= k % 100 <= 14 else noun[2]
    if lang.plural_rule == "slavic-pl":
        if not whole:
            return noun[1]
        return noun[0] if k == 1 else noun[1] if 2 <= k % 10 <= 4 and not 12 <= k % 100 <= 14 else noun[2]
    if lang.plural_rule == "ar":
        return noun[1] if whole and 3 <= k <= 10 else noun[0]
    return noun[0] if whole and k == 1 else noun[1]


def with_digits(text: str, digits: str | None) -> str:
    return text if not digits else text.translate(str.maketrans("0123456789", digits))


def write_number(value: str, lang: Lang, *, thousands: str | None = None, digits: str | None = None,
                 decimal: str | None = None) -> str:
    """'1234.5' as the language writes it: its decimal mark, a thousands separator, its digits."""
    neg = value.startswith("-")
    whole, _, frac = value.lstrip("-").partition(".")
    if thousands is not None and len(whole) > 3:
        if thousands == "indian":
            head, tail = whole[:-3], whole[-3:]
            groups = []
            while len(head) > 2:
                groups.insert(0, head[-2:])
                head = head[:-2]
            whole = ",".join([head, *groups, tail] if head else [*groups, tail])
        else:
            groups = []
            while len(whole) > 3:
                groups.insert(0, whole[-3:])
                whole = whole[:-3]
            whole = thousands.join([whole, *groups])
    text = whole + ((decimal or lang.decimal) + frac if frac else "")
    return ("-" if neg else "") + with_digits(text, digits)


def number_words(value: str, lang: Lang) -> str | None:
    """The value in words (num2words; cn2an for Chinese), or None where no writer is at hand."""
    if lang.words is None:
        return None
    n = float(value)
    number = int(n) if n == int(n) else n
    if lang.words == "zh":
        import cn2an
        return cn2an.an2cn(str(number), "low")
    from num2words import num2words
    try:
        return num2words(number, lang=lang.words)
    except (NotImplementedError, OverflowError, ValueError):
        return None


def quantity(lang: Lang, number_text: str, value: float, noun: tuple[str, ...] | str | None) -> str:
    """'14 jars', '14个苹果', '14 книг', '14개': the number with a unit in the language."""
    if noun is None:
        return number_text
    if isinstance(noun, str):
        return f"{number_text}{lang.joiner}{noun}"
    if lang.code == "zh":
        return f"{number_text}{noun[0]}{noun[1]}"
    return f"{number_text}{lang.joiner}{plural_form(lang, noun, value)}"


# --- the cases --------------------------------------------------------------------------------

@dataclass(frozen=True)
class ShapeCase:
    shape: str
    language: str
    gold: str
    response: str
    equal: bool
    sentence: str = ""      # the generated final sentence (for a person reading a failure)
    detail: dict = field(default_factory=dict, compare=False, hash=False)


SHAPES = (
    "unit", "unit-made-up", "bare", "money", "markdown", "closing", "contrast-gold-first", "contrast-wrong-first",
    "contrast-gold-last", "contrast-wrong-last", "hedge", "correction", "correction-wrong", "approx", "bound",
    "number-words", "number-and-words", "own-digits", "thousands", "decimal", "percent", "negative", "debris",
)
# shapes whose right verdict is a convention (documented in docs/graders.md), reported apart
CONVENTION_SHAPES = ("bound",)


def wrong_value(rng: random.Random, gold: str, working: str) -> str:
    """A near miss a model makes: off by one or ten, doubled, halved, ten times, or a number of the
    working (an intermediate result)."""
    g = float(gold)
    numbers = {m.replace(",", "") for m in re.findall(r"(?<![\d.])\d[\d,]*(?:\.\d+)?", working)}
    options = [g + 1, g + 10, g * 2, g * 10]
    if g > 1:
        options += [g - 1]
    if g > 4 and g % 2 == 0:
        options.append(g / 2)
    options += [float(x) for x in sorted(numbers) if x and float(x) != g] * 2  # sorted: the same cases under any hash seed
    for _ in range(20):
        w = rng.choice(options)
        if w != g and w >= 0:
            return _plain(w)
    return _plain(g + 1)


def _plain(x: float) -> str:
    return str(int(x)) if x == int(x) else f"{x:.10g}"


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def fill(template: str, lang: Lang, **parts: str) -> str:
    """Fill a template; {X} is {x} with its first letter upper case; Korean {wp} is w's particle."""
    values = dict(parts)
    for key, value in parts.items():
        values[_cap(key)] = _cap(value)
    if "{wp}" in template:
        values["wp"] = _ko_particle(parts["w"])
    return template.format(**values)


def pick_noun(rng: random.Random, lang: Lang, source: str | None = None) -> tuple[str, ...] | str:
    if lang.code == "en" and rng.random() < 0.85:
        return rng.choice(question_nouns(source))   # plural: GSM8K golds are rarely 1
    return rng.choice(lang.nouns)


def working_text(rng: random.Random, w: Working) -> str:
    """The reference working as a chat model might leave it: annotations kept or not, the last
    line (the final computation) kept or not."""
    text = w.working
    if rng.random() < 0.7:
        text = re.sub(r"<<[^<>]*>>", "", text)
    lines = text.splitlines()
    if len(lines) > 1 and rng.random() < 0.3:
        lines = lines[:-1]
    return "\n".join(lines)


def make_case(rng: random.Random, w: Working, code: str, shape: str, source: str | None = None,
              unit: tuple[str, ...] | str | None = None) -> ShapeCase | None:
    """One labelled case of `shape` in language `code` over working `w`; None where the shape has
    nothing to write in that language (no number words, no digits of its own). `unit` replaces the
    unit drawn (the other draws stay the same: the same rng state gives the same case but for it)."""
    lang = LANGS[code]
    gold = w.gold
    wrong = wrong_value(rng, gold, w.working)
    noun = pick_noun(rng, lang, source)
    noun = noun if unit is None else unit
    equal = True

    def q(value: str, *, number_text: str | None = None, unit=noun) -> str:
        return quantity(lang, number_text or write_number(value, lang), float(value), unit)

    def bare_or_unit(value: str) -> str:
        return q(value) if rng.random() < 0.7 else write_number(value, lang)

    template_set = lang.plain
    parts: dict[str, str] = {}
    if shape in ("unit", "bare", "markdown", "closing", "own-digits", "thousands", "decimal", "percent", "negative",
                 "money", "unit-made-up", "number-words", "debris"):
        stated, equal = (gold, True) if rng.random() < 0.5 else (wrong, False)
        if shape == "decimal":
            gold = _plain(float(gold) + rng.choice([0.5, 0.25, 0.75, 0.2]))
            stated = gold if equal else _plain(float(gold) + rng.choice([1, 0.1, -0.25]))
        if shape == "negative":
            gold = "-" + gold.lstrip("-")
            stated = gold if equal else stated.lstrip("-")   # the sign dropped, or another value
        if shape == "thousands":
            gold = _plain(float(gold) * 1000 + rng.randint(1, 999)) if float(gold) < 1000 else gold
            stated = gold if equal else _plain(float(gold) + rng.choice([1, 10, 100, 1000]))
        if shape == "bare":
            v = write_number(stated, lang)
        elif shape == "unit-made-up":
            made_up = made_up_word(rng, code)
            v = q(stated, unit=made_up if unit is None else unit)
        elif shape == "money":
            v = rng.choice(lang.money).format(n=write_number(stated, lang))
        elif shape == "own-digits":
            if lang.digits is None:
                return None
            v = q(stated, number_text=write_number(stated, lang, digits=lang.digits, decimal="٫" if code == "ar" else None))
        elif shape == "thousands":
            sep = rng.choice(list(lang.thousands) + (["indian"] if code == "hi" else []))
            v = q(stated, number_text=write_number(stated, lang, thousands=sep, digits=lang.digits if sep == "٬" else None))
        elif shape == "percent":
            number = write_number(stated, lang)
            v = {"tr": f"%{number}", "ar": f"{number}٪", "fr": f"{number}\u202f%", "de": f"{number} %"}.get(code, f"{number}%")
        elif shape == "negative":
            v = write_number(stated, lang).replace("-", rng.choice(["-", "\u2212"]))
        elif shape == "number-words":
            words = number_words(stated, lang)
            if words is None:
                return None
            v = q(stated, number_text=words)
        else:
            v = bare_or_unit(stated)
        if shape == "markdown":
            v = rng.choice(["**{}**", "*{}*", "__{}__", "`{}`"]).format(v)
        parts = {"v": v, "vn": write_number(stated, lang)}
    elif shape == "number-and-words":
        words = number_words(gold, lang)
        if words is None:
            return None
        stated, equal = (gold, True) if rng.random() < 0.5 else (wrong, False)
        words = number_words(stated, lang) or ""
        digits = write_number(stated, lang)
        v = rng.choice([f"{digits} ({words})", f"{words} ({digits})"])
        parts = {"v": q(stated, number_text=v) if lang.joiner == " " else v, "vn": digits}
    elif shape.startswith("contrast-"):
        # *-first: the stated value, then the rejected one ('G, not W'); *-last: the rejected one,
        # then the stated one ('not W but G'); gold-* states the gold, wrong-* states the near miss
        template_set = lang.contrast_after if shape.endswith("-first") else lang.contrast_before
        asserted, rejected = (gold, wrong) if shape.startswith("contrast-gold") else (wrong, gold)
        equal = asserted == gold
        unit_both = rng.random() < 0.6
        parts = {"g": q(asserted), "w": q(rejected) if unit_both else write_number(rejected, lang),
                 "gn": write_number(asserted, lang), "wn": write_number(rejected, lang)}
    elif shape == "hedge":
        template_set = lang.hedge
        a, b = (gold, wrong) if rng.random() < 0.5 else (wrong, gold)
        equal = False
        unit_both = rng.random() < 0.5
        parts = {"a": q(a) if unit_both else write_number(a, lang), "b": q(b), "an": write_number(a, lang),
                 "bn": write_number(b, lang)}
    elif shape in ("correction", "correction-wrong"):
        template_set = lang.correction
        first, last = (wrong, gold) if shape == "correction" else (gold, wrong)
        equal = shape == "correction"
        parts = {"w": bare_or_unit(first), "g": bare_or_unit(last)}
    elif shape == "approx":
        template_set = lang.approx
        stated, equal = (gold, True) if rng.random() < 0.5 else (wrong, False)
        parts = {"v": bare_or_unit(stated), "vn": write_number(stated, lang)}
    elif shape == "bound":
        template_set = lang.bound
        equal = False
        parts = {"v": bare_or_unit(gold), "vn": write_number(gold, lang)}
    else:
        raise ValueError(f"unknown shape {shape!r}")
    template = rng.choice(template_set)
    sentence = fill(template, lang, **parts)
    if shape == "closing":  # on the same line only after a full stop (Thai separates sentences by a space)
        same_line = code == "th" or re.search(r"[.!?。।]$", sentence)
        sentence += rng.choice([" ", "\n\n"] if same_line else ["\n", "\n\n"]) + rng.choice(lang.closing)
    working = working_text(rng, w)
    # the sentence starts a line, or follows the working in its paragraph after a full stop (a line
    # of GSM8K working often has none: a sentence glued to it would be one run-on sentence)
    joiners = ["\n", "\n\n", "\n\n"] + ([" "] if re.search(r"[.!?。]\s*$", working) else [])
    response = working + rng.choice(joiners) + sentence
    if shape == "debris":
        other = rng.choice(load_workings(source))
        response += rng.choice(["", "\n"]) + rng.choice(DEBRIS).format(q=other.question, n=wrong)
    return ShapeCase(shape, code, gold, response, equal, sentence, {"template": template})


def generate(seed: int = 0, per_cell: int = 4, shapes: Sequence[str] = SHAPES, languages: Sequence[str] | None = None,
             source: str | None = None) -> list[ShapeCase]:
    """`per_cell` cases of every shape in every language (fewer where a shape has nothing to write),
    over workings drawn with `seed`: the same list for the same arguments."""
    rng = random.Random(seed)
    workings = load_workings(source)
    out = []
    for shape in shapes:
        for code in languages or LANGS:
            made = 0
            for _ in range(per_cell * 3):
                case = make_case(rng, rng.choice(workings), code, shape, source)
                if case is None:
                    break
                out.append(case)
                made += 1
                if made >= per_cell:
                    break
    return out


def score(cases: Sequence[ShapeCase], said: Sequence[bool], key: Callable[[ShapeCase], str]) -> dict[str, dict]:
    """Per key (shape, language): pairs, equal / unequal, false negatives, false positives."""
    rows: dict[str, dict] = {}
    for case, s in zip(cases, said):
        for name in (key(case), "all"):
            row = rows.setdefault(name, {"cases": 0, "equal": 0, "unequal": 0, "false_negatives": 0, "false_positives": 0})
            row["cases"] += 1
            row["equal" if case.equal else "unequal"] += 1
            row["false_negatives"] += case.equal and not s
            row["false_positives"] += s and not case.equal
    for row in rows.values():
        row["accuracy"] = 1 - (row["false_negatives"] + row["false_positives"]) / max(row["cases"], 1)
        row["false_negative_rate"] = row["false_negatives"] / max(row["equal"], 1)
        row["false_positive_rate"] = row["false_positives"] / max(row["unequal"], 1)
    return rows
