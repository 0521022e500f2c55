"""The reading of a final statement in prose: one structure in every language.

A final answer written as a sentence ("So Tom needs 14 jars, not 12.", "答案是15元，不是12元。",
"अतः उत्तर 14 है, 12 नहीं।", "Es sind entweder 6 oder 8.") is read into a `Reading`: its
candidate values -- numbers in any digit script and in the usual conventions (`1,234.5`,
`1.234,5`, `1 234`, `1'234`, `12,34,567`), number words (text2num for English, French, German,
Spanish, Italian, Portuguese and Dutch; the grammars below for Russian, Polish, Indonesian,
Arabic, Vietnamese, Thai and Chinese/Japanese numerals) -- each with the words around it: its
unit (the letters after it, by Unicode category, whatever they spell), whether a negation binds
it ("not 12", "12 नहीं", "12ではなく"), whether it is bounded ("at least 14"), whether it is one
of an "or" list or a range ("6 or 8", "between 6 and 8"), and whether it is working rather than
the answer (a term of an equation chain, a premise before "so", a reason after "because", a
circumstance "in 2.5 hours"). `decide` then says what the statement gives:

  one asserted value             -> that value
  a negated value                -> never counts
  two or more asserted values    -> several answers (wrong for a one-value gold, never either)
  alternatives or a range        -> a hedge (never right)
  only bounded values            -> a bound, not a value
  nothing readable               -> none

Where the structure is unclear -- maths beyond plain numbers (variables, LaTeX, an expression
without its value) -- `read_statement` declines (None) and the maths readers of extract.py decide.
`read_final` finds a response's final statement, `corrected_after` a later correction of it.
Sentences are split by Unicode punctuation (a character named FULL STOP, QUESTION MARK,
EXCLAMATION MARK, DANDA or ELLIPSIS), letters and digits are told by their Unicode category: no
list of scripts, no list of nouns. The lexicons below are function words (negations, "or",
bounds, conclusions, corrections) of the languages the packs serve. Pure string work, bounded:
statements of at most MAX_STATEMENT characters, at most MAX_VALUES values, every regex linear.
docs/graders.md ("The reading of a final statement") says what is read and what is not.
"""
from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, replace
from fractions import Fraction
from functools import lru_cache

MAX_STATEMENT = 600        # characters of one statement that are read
MAX_VALUES = 24            # candidate values of one statement (more: declined)
BIND_WORDS = 4             # a negation binds a value at most this many words away

# --- chat-template debris ----------------------------------------------------------------------
# A turn marker ends the response for grading: what follows is the next turn (a new question, a
# made-up answer), never the answer. Generic shapes: <|name|> and DeepSeek's <｜name｜>, </s>, and
# the plain-tag markers of Gemma, Mistral and older chat formats.
TURN_MARKER_RE = re.compile(r"<\|[^<>|\s]{1,40}\|>|<｜[^<>｜]{1,40}｜>|</s>|<s>|\[/?INST\]|"
                            r"<(?:eos|bos|eot|eoa|eom|end_of_turn|start_of_turn|end_of_text|endoftext)>")


def cut_at_turn_end(text: str) -> str:
    """The response up to its first chat-template marker after some content; markers before any
    content ('<|im_start|>assistant\\n…') are dropped with the role word after them."""
    if "<" not in text and "[" not in text:
        return text
    pos = 0
    while True:
        m = TURN_MARKER_RE.search(text, pos)
        if m is None:
            return text
        if text[:m.start()].strip():
            return text[:m.start()].rstrip()
        # a marker before any content: drop it (and a role name right after it)
        rest = text[m.end():]
        role = re.match(r"\s*(?:assistant|model|gpt|bot)\b\s*", rest, re.I)
        text = rest[role.end():] if role else rest
        pos = 0


# --- characters ---------------------------------------------------------------------------------

def ascii_digits(text: str) -> str:
    """Digits of any script (Unicode category Nd: ٤٧, ४७, ๔๗, ４７) as ASCII; the Arabic decimal
    and thousands separators and percent sign as '.', ',' and '%'. One character for one, so
    positions stay."""
    if text.isascii():
        return text
    out = []
    for ch in text:
        if ch.isdigit() and not ch.isascii():
            try:
                out.append(str(unicodedata.decimal(ch)))
                continue
            except ValueError:  # a digit that is no decimal digit (², ①): kept
                pass
        out.append(_ARABIC_SIGNS.get(ch, ch))
    return "".join(out)


_ARABIC_SIGNS = {"\u066b": ".", "\u066c": ",", "\u066a": "%", "\uff05": "%", "\uff0e": "."}


@lru_cache(maxsize=4096)
def _char_kind(ch: str) -> str:
    """'end' (a sentence ends), 'clause' (a comma, semicolon, colon or dash), 'letter', 'other'."""
    cat = unicodedata.category(ch)
    if cat[0] in "LM":
        return "letter"
    if ch == "\n":
        return "end"
    if cat == "Po":
        name = unicodedata.name(ch, "")
        if any(w in name for w in ("FULL STOP", "QUESTION MARK", "EXCLAMATION MARK", "DANDA", "ELLIPSIS")):
            return "end"
        if any(w in name for w in ("COMMA", "SEMICOLON", "COLON")):
            return "clause"
    if cat == "Pd" and ch != "-":
        return "clause"
    if ch in "()[]{}（）【】「」『』":
        return "clause"
    return "other"


def is_letter(ch: str) -> bool:
    return _char_kind(ch) == "letter"


def sentences(text: str) -> list[tuple[int, int]]:
    """(start, end) of each sentence: split after a character named FULL STOP, QUESTION MARK,
    EXCLAMATION MARK, DANDA or ELLIPSIS, at line ends, and after a semicolon followed by a space
    outside brackets and maths. A full stop between digits (2.5), inside an abbreviation (i.e.)
    or before a lower-case word, and LaTeX's '\\!', split nothing."""
    spans, start, n = [], 0, len(text)
    i = 0
    while i < n:
        ch = text[i]
        if ch in ";；؛" and i + 1 < len(text) and text[i + 1] in " \n" and not _inside_brackets(text[start:], i - start) \
                and text[start:i].count("$") % 2 == 0:
            if text[start:i + 1].strip():
                spans.append((start, i + 1))
            start = i + 1
        elif _char_kind(ch) == "end":
            if ch == "." and not _full_stop_ends(text, i) or ch == "!" and i and text[i - 1] == "\\":  # '\\!' spacing
                i += 1
                continue
            j = i + 1
            while j < n and (_char_kind(text[j]) == "end" or text[j] in "\"'”’»)）") and text[j] != "\n":
                j += 1  # '?!', '...', a closing quote
            if text[start:j].strip():
                spans.append((start, j))
            start = j
            i = j
            continue
        i += 1
    if text[start:].strip():
        spans.append((start, n))
    return spans


def _full_stop_ends(text: str, i: int) -> bool:
    before = text[i - 1] if i else ""
    after = text[i + 1] if i + 1 < len(text) else ""
    if before.isdigit() and after.isdigit():
        return False  # 2.5
    if not (after == "" or after.isspace() or after in "*_\"'”’»)）" or _char_kind(after) == "end"):
        return False  # 'e.g' inside a word, '3.x'
    if re.search(r"(?:^|[\s(])[^\W\d_]\.[^\W\d_]$", text[max(0, i - 4):i]):
        return False  # 'i.e.', 'e.g.', 'a.m.'
    if re.search(r"(?:^|[\s(])(?:Mrs|[A-Z][a-z])$", text[max(0, i - 4):i]) and re.match(r"\s+[A-Z]", text[i + 1:i + 3]):
        return False  # 'Mr. Sylas', 'Dr. Lee': a title before a name ('box B. Het …' ends a sentence)
    if re.search(r"(?:^|[^\w.])[A-Z][A-Za-z]{1,2}$", text[max(0, i - 4):i]) and re.match(r" [-−]?\d", text[i + 1:i + 3]):
        return False  # 'Rs. 18', 'Nr. 5', 'Vol. 2', 'USD. 18': a capitalised abbreviation before its number
    following = re.match(r"\s+(\S)", text[i + 1:i + 4])
    return not (following and following.group(1).islower())  # 'approx. as', 'etc. and': an abbreviation


# --- lexicons: function words, not nouns ---------------------------------------------------------
# Each entry is matched as a whole word; an entry marked '~' (the languages written without spaces
# between words: Chinese, Japanese, Thai; Korean particles glue to the word before) anywhere.

NEGATE_BEFORE = (  # a negation that binds the value after it ("not 12", "不是12", "ليس 47")
    "not", "isn't", "isnt", "aren't", "wasn't", "weren't", "won't", "can't", "cannot", "doesn't", "don't", "didn't",
    "never", "rather than", "instead of", "as opposed to", "other than", "no longer",
    "pas", "non", "jamais", "plutôt que", "au lieu de", "et non",
    "nicht", "kein", "keine", "keinen", "statt", "anstatt", "anstelle von", "anstelle",
    "no", "nunca", "en lugar de", "en vez de", "não", "nao", "em vez de", "ao invés de", "em lugar de",
    "invece di", "anziché", "anzichè", "piuttosto che", "niet", "geen", "nooit", "in plaats van",
    "не", "ни", "вместо", "nie", "zamiast", "όχι", "δεν", "αντί για", "αντί", "μη", "μην",
    "ليس", "ليست", "لا", "لم", "لن", "وليس", "وليست", "ولا", "بدلا من", "بدلًا من", "بدلاً من", "عوضا عن", "عوضًا عن",
    "न कि", "ना कि", "không phải", "chứ không phải", "thay vì", "chẳng phải", "bukan", "bukannya", "alih-alih",
    "~不是", "~并非", "~並非", "~并不是", "~並不是", "~而不是", "~而非", "~不等于", "~不等於", "~不会是", "~不會是",
    "~ไม่ใช่", "~แทนที่จะเป็น", "~แทนที่จะ", "~มิใช่",
)
NEGATE_AFTER = (  # a negation that follows the value it binds ("12 नहीं", "12ではなく", "12 değil")
    "is wrong", "is incorrect", "wrong", "incorrect", "is not correct", "is not right", "is not the answer", "isn't correct",
    "isn't right", "isn't the answer", "n'est pas correct", "n'est pas juste", "n'est pas la bonne réponse",
    "ist nicht richtig", "ist nicht korrekt", "ist nicht die antwort", "no es correcto", "no es correcta", "no es la respuesta",
    "não está certo", "não está correto", "não é a resposta", "non è corretto", "non è giusto", "non è la risposta",
    "is niet juist", "is niet correct", "не верно", "не правильно", "nie jest poprawne", "δεν είναι σωστό",
    "faux", "fausse", "erroné", "falsch", "incorrecto", "incorrecta",
    "equivocado", "errado", "errada", "incorreto", "sbagliato", "errato", "fout", "onjuist", "неверно", "неправильно",
    "błędnie", "źle", "değil", "yerine", "yanlış", "λάθος", "خطأ", "خاطئ", "خاطئة",
    "नहीं", "के बजाय", "की बजाय", "की जगह", "के स्थान पर", "गलत", "ग़लत", "sai", "salah",
    "~ではなく", "~ではなくて", "~じゃなく", "~じゃなくて", "~ではない", "~ではありません", "~じゃない", "~でなく", "~違います", "~間違い", "~誤り",
    "~아니라", "~아니고", "~아닙니다", "~아니에요", "~아닌", "~아니다", "~대신", "~틀렸", "~틀린", "~틀립니다", "~错", "~錯", "~错误", "~不对", "~不對", "~ผิด",
)
NOT_NEGATIONS = ("not only", "non seulement", "nicht nur", "no solo", "no sólo", "não só", "non solo", "niet alleen",
                 "не только", "nie tylko", "όχι μόνο", "ليس فقط", "~不仅", "~不僅", "~不只", "không chỉ", "bukan hanya", "tidak hanya")
OR_WORDS = ("or", "ou", "oder", "o", "u", "ó", "oppure", "или", "либо", "або", "lub", "albo", "czy", "veya", "ya da",
            "yahut", "ή", "أو", "या", "अथवा", "hoặc", "hay", "atau", "ataupun", "either", "soit", "entweder", "είτε", "إما",
            "~或", "~或者", "~还是", "~還是", "~或是", "~か", "~または", "~もしくは", "~あるいは", "~또는", "~혹은", "~หรือ", "~要么", "~要麼")
RANGE_START = ("between", "entre", "zwischen", "tra", "fra", "между", "między", "μεταξύ", "بين", "antara", "tussen", "~ระหว่าง")
RANGE_TO = ("to", "à", "au", "bis", "a", "al", "ao", "até", "hasta", "до", "do", "έως", "ως", "إلى", "से", "đến", "tới",
            "sampai", "hingga", "tot", "ile", "~到", "~至", "~から", "~부터", "~에서", "~ถึง", "~", "〜", "～", "–", "—", "…")
RANGE_AND = ("and", "et", "und", "y", "e", "и", "a", "i", "ve", "και", "و", "और", "dan", "en", "và", "~和", "~与", "~與", "~と")
BOUND_BEFORE = (
    "at least", "at most", "more than", "less than", "fewer than", "over", "under", "up to", "no more than", "no less than",
    "not more than", "not less than", "greater than", "smaller than", "above", "below", "almost", "nearly", "just over",
    "just under", "upwards of", "in excess of", "a minimum of", "a maximum of",
    "au moins", "au plus", "au maximum", "au minimum", "plus de", "moins de", "presque", "jusqu'à",
    "mindestens", "höchstens", "mehr als", "weniger als", "über", "unter", "fast", "knapp", "bis zu",
    "al menos", "como mínimo", "como máximo", "más de", "menos de", "casi", "pelo menos", "no mínimo", "no máximo",
    "mais de", "quase", "almeno", "al massimo", "al minimo", "più di", "meno di", "quasi", "fino a",
    "minstens", "ten minste", "hoogstens", "meer dan", "minder dan", "bijna",
    "не менее", "не более", "как минимум", "как максимум", "минимум", "максимум", "больше", "меньше", "более", "менее",
    "свыше", "почти", "co najmniej", "najwyżej", "ponad", "więcej niż", "mniej niż", "prawie", "maksymalnie",
    "en az", "en fazla", "neredeyse", "τουλάχιστον", "το πολύ", "περισσότερα από", "περισσότεροι από", "λιγότερα από",
    "σχεδόν", "πάνω από", "على الأقل", "على الأكثر", "أكثر من", "أقل من", "कम से कम", "अधिक से अधिक",
    "ít nhất", "tối thiểu", "tối đa", "nhiều hơn", "ít hơn", "gần", "setidaknya", "paling sedikit", "paling banyak",
    "minimal", "maksimal", "lebih dari", "kurang dari", "hampir",
    "~至少", "~最多", "~最少", "~超过", "~超過", "~多于", "~多於", "~少于", "~少於", "~不到", "~不少于", "~不少於", "~不超过", "~不超過", "~将近", "~將近",
    "~少なくとも", "~最低", "~最大", "~最高", "~적어도", "~최소", "~최대", "~최소한", "~อย่างน้อย", "~มากกว่า", "~น้อยกว่า", "~เกือบ", "~ไม่เกิน",
    "~ไม่ต่ำกว่า",
)
BOUND_AFTER = ("or more", "or less", "or fewer", "or over", "ou plus", "ou moins", "oder mehr", "oder weniger", "o más", "o menos",
               "ou mais", "o più", "o meno", "of meer", "или больше", "или более", "lub więcej", "veya daha fazla", "ή περισσότερα",
               "أو أكثر", "से अधिक", "से ज्यादा", "से ज़्यादा", "से कम", "trở lên", "atau lebih",
               "~以上", "~以下", "~未満", "~未满", "~이상", "~이하", "~미만", "~초과", "~多", "~余", "~餘")
CONTRAST = ("but", "mais", "aber", "sondern", "sino", "pero", "mas", "ma", "bensì", "maar", "а", "но", "ale", "lecz", "tylko",
            "ama", "fakat", "αλλά", "بل", "لكن", "ولكن", "बल्कि", "लेकिन", "mà", "nhưng", "melainkan", "tetapi", "tapi", "namun",
            "~而是", "~而", "~但是", "~但", "~可是", "~でも", "~しかし", "~けど", "~하지만", "~지만", "~แต่")
CORRECTION = ("wait", "no wait", "actually", "correction", "sorry", "oops", "i mean", "scratch that", "hmm",
              "attendez", "attends", "pardon", "en fait", "warte", "moment", "nein", "eigentlich", "korrektur", "espera",
              "perdón", "en realidad", "corrijo", "espere", "desculpe", "na verdade", "aspetta", "anzi", "scusa", "in realtà",
              "wacht", "nee", "eigenlijk", "подождите", "подожди", "простите", "на самом деле", "точнее", "zaraz", "przepraszam",
              "właściwie", "bekle", "hayır", "aslında", "περίμενε", "συγγνώμη", "انتظر", "عذرا", "عذرًا", "عذراً", "في الواقع",
              "रुकिए", "माफ़", "माफ", "दरअसल", "khoan", "xin lỗi", "thực ra", "tunggu", "maaf", "sebenarnya",
              "~不对", "~不對", "~等一下", "~等等", "~更正", "~应该是", "~應該是", "~其实", "~其實", "~いや", "~待って", "~訂正", "~実は", "~いえ",
              "~아니", "~잠깐", "~정정", "~사실은", "~아니요", "~เดี๋ยว", "~แก้ไข", "~ที่ถูก")


CONCLUDE = ("so", "therefore", "thus", "hence", "which means", "which makes", "that makes", "this means", "so that's",
            "thereby", "making", "giving", "leaving", "for a total of", "totaling", "totalling", "resulting in", "which gives",
            "bringing the total to", "soit", "ce qui fait", "ce qui donne", "lo que da", "lo que hace", "dando", "o que dá",
            "totalizando", "il che fa", "per un totale di", "что составляет", "co daje", "wat neerkomt op",
            "donc", "ainsi", "alors", "also", "daher", "deshalb", "somit", "folglich", "por lo tanto", "entonces", "así que",
            "portanto", "então", "logo", "quindi", "perciò", "dunque", "dus", "daarom", "так что", "поэтому", "значит", "итак",
            "więc", "zatem", "yani", "bu yüzden", "dolayısıyla", "άρα", "επομένως", "لذلك", "إذن", "وبالتالي", "इसलिए", "अतः",
            "vì vậy", "do đó", "vậy", "jadi", "maka", "sehingga",
            "~所以", "~因此", "~因而", "~于是", "~於是", "~だから", "~よって", "~したがって", "~つまり", "~따라서", "~그러므로", "~그래서",
            "~ดังนั้น", "~เพราะฉะนั้น")
# verbs that state a result ('5 boxes of 50 pencils make 250 pencils', 'After 3 hours she has walked 12 km'):
# the values of the subject before them are its terms (languages that put the verb between)
PREDICATE = ("is", "are", "was", "were", "will be", "would be", "equals", "equal", "makes", "make", "made", "gives", "give", "gave",
             "totals", "total", "comes to", "come to", "amounts to", "adds up to", "sums to", "has", "have", "had", "gets", "got",
             "needs", "costs", "cost", "earns", "earned", "pays", "paid", "spends", "spent", "weighs", "takes", "took",
             "holds", "hold", "contains", "contain", "uses", "used", "sells", "sold", "buys", "bought", "saves", "saved",
             "collects", "collected", "receives", "received", "eats", "ate", "bakes", "baked", "reads", "drives", "drove",
             "runs", "ran", "walks", "walked", "travels", "traveled", "travelled", "covers", "covered",
             "est", "sont", "était", "sera", "fait", "font", "donne", "donnent", "ont", "aura", "coûte", "faut",
             "ist", "sind", "war", "wird", "macht", "ergibt", "ergeben", "hat", "haben", "kostet", "braucht", "beträgt", "gibt",
             "es", "son", "era", "será", "hace", "hacen", "da", "dan", "tiene", "tienen", "cuesta", "necesita", "suma", "quedan",
             "hay", "é", "são", "faz", "fazem", "dá", "tem", "têm", "custa", "precisa", "há", "è", "sono", "fa", "fanno", "ha",
             "hanno", "costa", "servono", "zijn", "maakt", "geeft", "heeft", "hebben", "kost", "wordt", "равно", "равна",
             "составляет", "составляют", "будет", "получается", "стоит", "jest", "są", "wynosi", "daje", "ma", "mają",
             "kosztuje", "είναι", "κάνει", "κάνουν", "δίνει", "έχει", "έχουν", "κοστίζει", "adalah", "ialah", "menjadi",
             "memiliki", "berjumlah", "là", "bằng", "يساوي", "لديه", "لديها", "~等于", "~等於", "~一共", "~总共", "~總共", "~共有")
# a preposition of time, extent or rate before a value ('covers 150 km in 2.5 hours', 'pays $64 for
# 16 glasses', 'After 5 days, she has 35'), or a postposition after its unit ('2.5 घंटे में'):
# beside one other value, the value it governs is a circumstance, not the answer
ADJUNCT_BEFORE = ("in", "for", "after", "within", "per", "every", "each", "during", "en", "pour", "après", "pendant", "par",
                  "dans", "für", "nach", "innerhalb", "pro", "je", "während", "por", "para", "después de", "durante", "cada",
                  "em", "após", "depois de", "dopo", "ogni", "voor", "na", "binnen", "tijdens", "за", "через", "на",
                  "в течение", "после", "w", "po", "przez", "σε", "για", "μετά από", "ανά", "في", "خلال", "بعد", "لكل",
                  "प्रति", "trong", "sau", "cho", "mỗi", "dalam", "selama", "setelah", "untuk", "setiap",
                  "~在", "~用", "~每", "~ใน", "~สำหรับ", "~หลังจาก", "~ต่อ")
ADJUNCT_AFTER = ("में", "के लिए", "के बाद", "~内", "~以内", "~之内", "~后", "~後", "~동안", "~후에", "~만에")
COMMENT = ("which", "which is", "that is", "i.e.", "namely", "ce qui", "c'est-à-dire", "was", "das heißt", "d.h.", "lo que",
           "es decir", "o que", "ou seja", "il che", "cioè", "wat", "dat wil zeggen", "что", "то есть", "co", "czyli",
           "yani", "δηλαδή", "το οποίο", "وهو", "أي", "जो", "यानी", "tức là", "yaitu", "yakni",
           "~即", "~也就是", "~这比", "~つまり", "~すなわち", "~이는", "~즉", "~ซึ่ง")
REASON = ("because", "since", "given that", "due to", "parce que", "puisque", "weil", "denn", "porque", "ya que", "pois",
          "perché", "poiché", "omdat", "потому что", "так как", "ponieważ", "çünkü", "επειδή", "لأن", "क्योंकि", "vì", "karena",
          "~因为", "~因為", "~왜냐하면", "~เพราะ")


@lru_cache(maxsize=None)
def _lexicon_re(words: tuple[str, ...]) -> re.Pattern:
    """One pattern for a lexicon, longest entries first (boundaries: see _find)."""
    # ('~' alone is the tilde of '6~8', not the mark of a glued entry: no entry is empty)
    ordered = sorted({w[1:] if w.startswith("~") and len(w) > 1 else w for w in words},
                     key=lambda w: (-len(w), w))  # the same under any hash seed
    return re.compile("|".join(re.escape(w).replace("\\ ", r"\s+") for w in ordered), re.I)


@lru_cache(maxsize=None)
def _glued(words: tuple[str, ...]) -> frozenset[str]:
    return frozenset(w[1:].lower() for w in words if w.startswith("~") and len(w) > 1)


def _bounded(text: str, m: re.Match, glued: frozenset[str]) -> bool:
    """A lexicon match is a whole word: no letter (or mark: Devanagari vowel signs, Thai tone
    marks) right before or after it, unless its entry is marked '~' (glued)."""
    if m.group().lower() in glued or not is_letter(m.group()[0]):
        return True
    before = text[m.start() - 1] if m.start() else " "
    after = text[m.end()] if m.end() < len(text) else " "
    return not is_letter(before) and not is_letter(after)


def _find(words: tuple[str, ...], text: str) -> list[re.Match]:
    glued = _glued(words)
    return [m for m in _lexicon_re(words).finditer(text) if _bounded(text, m, glued)]


def _whole(words: tuple[str, ...], text: str) -> bool:
    """`text` is one entry of the lexicon."""
    return _lexicon_re(words).fullmatch(text) is not None


def _opens(words: tuple[str, ...], text: str, pos: int = 0) -> re.Match | None:
    """An entry of the lexicon at `pos`, as a whole word."""
    m = _lexicon_re(words).match(text, pos)
    return m if m is not None and _bounded(text, m, _glued(words)) else None


# --- numbers in digits -------------------------------------------------------------------------

NUMBER_RE = re.compile(
    r"(?<![\d.,'’])(?P<sign>(?<![\d)])[-−](?=\d))?(?P<num>"
    r"(?!0[,.]\d)\d{1,2}(?:,\d{2})+,\d{3}(?![\d,])"               # 12,34,567 (Indian grouping)
    r"|(?!0,)\d{1,3}(?:,\d{3})+(?:\.\d+)?(?![\d,]|\.\d)"         # 1,234,567.5
    r"|(?!0\.)\d{1,3}(?:\.\d{3}){2,}(?:,\d+)?(?![\d.]|,\d)"       # 1.234.567,5
    r"|(?!0\.)\d{1,3}\.\d{3},\d+(?![\d.,])"                       # 1.234,5
    r"|\d{1,3}(?:['’]\d{3})+(?:\.\d+)?(?!\d)"                     # 1'234 (Swiss)
    r"|\d{1,3}(?:[\u00a0\u202f\u2009 ]\d{3})+(?:,\d+)?(?![\d]|[.,]\d)"  # 1 234 567 (spaces)
    r"|\d+/\d+(?!\d)"                                             # 3/4
    r"|\d+(?:[.,]\d+)?"                                           # 14, 2.5, 2,5
    r"|(?<!\d)\.\d+"                                              # .5
    r")(?P<pct>\s?\\?%)?")
# a multiplier word right after a number: '3万' is 30000, '2 millions' 2000000 (never just 3 or 2)
SCALE_WORDS = {
    "万": 10**4, "萬": 10**4, "亿": 10**8, "億": 10**8, "千": 10**3, "百": 100,
    "hundred": 100, "thousand": 10**3, "mille": 10**3, "milliers": 10**3, "tausend": 10**3, "mil": 10**3, "mila": 10**3,
    "тыс": 10**3, "тысяч": 10**3, "тысячи": 10**3, "тысяча": 10**3, "tys": 10**3, "tysięcy": 10**3, "ribu": 10**3,
    "million": 10**6, "millions": 10**6, "millionen": 10**6, "mio": 10**6, "millones": 10**6, "millón": 10**6,
    "milioni": 10**6, "milione": 10**6, "milhões": 10**6, "milhão": 10**6, "miljoen": 10**6, "miljoenen": 10**6,
    "миллион": 10**6, "миллиона": 10**6, "миллионов": 10**6, "млн": 10**6, "mln": 10**6, "milion": 10**6,
    "milionów": 10**6, "juta": 10**6, "triệu": 10**6,
    "billion": 10**9, "billions": 10**9, "milliard": 10**9, "milliards": 10**9, "milliarde": 10**9, "milliarden": 10**9,
    "mrd": 10**9, "миллиард": 10**9, "миллиарда": 10**9, "миллиардов": 10**9, "млрд": 10**9, "trillion": 10**12,
    "lakh": 10**5, "lakhs": 10**5, "लाख": 10**5, "crore": 10**7, "crores": 10**7, "करोड़": 10**7,
}
SCALE_WORD_RE = re.compile(r"\s?(万|萬|亿|億|千(?![克米瓦帕卡])|百(?!分)|[^\W\d_]+)\.?")


def number_value(text: str) -> Fraction | None:
    """'1,234.5' -> 2469/2, '1.234,5' -> 2469/2, '2,5' -> 5/2, '1 234' -> 1234, '3/4' -> 3/4: the
    value of a number as written in any of the usual conventions. A single comma followed by
    exactly three digits is a thousands separator ('1,234'), otherwise a decimal comma ('2,5')."""
    t = text.replace("\u00a0", " ").replace("\u202f", " ").replace("\u2009", " ").replace("’", "'")
    try:
        if "/" in t:
            a, b = t.split("/")
            return Fraction(int(a), int(b)) if int(b) else None
        if " " in t or "'" in t:
            whole, _, frac = t.replace(" ", "").replace("'", "").partition(",")
            return Fraction(whole + ("." + frac if frac else ""))
        if "," in t and "." in t:
            if t.rfind(",") > t.rfind("."):   # 1.234,5
                return Fraction(t.replace(".", "").replace(",", "."))
            return Fraction(t.replace(",", ""))  # 1,234.5
        if t.count(",") > 1 or re.fullmatch(r"[1-9]\d{0,2},\d{3}", t):
            return Fraction(t.replace(",", ""))  # 1,234 and 12,34,567
        if t.count(".") > 1:
            return Fraction(t.replace(".", ""))  # 1.234.567
        return Fraction(t.replace(",", "."))
    except (ValueError, ZeroDivisionError):
        return None


def show(value: Fraction) -> str:
    """A Fraction as the answer text the graders parse: '14', '-3', '1234.5', '1/3'."""
    if value.denominator == 1:
        return str(value.numerator)
    d = value.denominator
    for p in (2, 5):
        while d % p == 0:
            d //= p
    if d == 1:  # a terminating decimal
        digits = 0
        while (value * 10 ** digits).denominator != 1:
            digits += 1
        scaled = abs(value * 10 ** digits).numerator
        whole, frac = divmod(scaled, 10 ** digits)
        return f"{'-' if value < 0 else ''}{whole}.{frac:0{digits}d}"
    return f"{value.numerator}/{value.denominator}"


# --- the structure ------------------------------------------------------------------------------

@dataclass(frozen=True)
class Value:
    """One candidate value of a statement and the words around it."""

    value: Fraction
    start: int
    end: int
    written: str              # as written ('1.234,5', 'thirty-four')
    words: bool = False       # written in words
    unit: str = ""            # the letters right after it (a unit, in any language)
    percent: bool = False
    negated: bool = False
    bound: bool = False       # 'at least 14', '14 or more'
    alternative: bool = False  # one of an 'or' list or a range
    working: bool = False     # a term of an equation chain, not its value
    weak: bool = False        # a number word beside digits, or a lone 'one': counts only in a hedge
    thousands: Fraction | None = None  # '10.066': also 10066 where a dot separates thousands (de, es, it …)

    @property
    def text(self) -> str:
        return show(self.value) + ("%" if self.percent else "")


@dataclass(frozen=True)
class Reading:
    """What a statement gives: kind is one of 'one', 'several', 'hedge', 'bound', 'negated',
    'question' (a final sentence that asks: 'Is the answer 14?'), 'none'."""

    kind: str
    values: tuple[Value, ...]
    statement: str

    @property
    def asserted(self) -> tuple[Value, ...]:
        return tuple(v for v in self.values if not (v.negated or v.bound or v.alternative or v.working or v.weak))

    @property
    def answer(self) -> str | None:
        """The answer text: the value ('14'), or the distinct values of several or of a hedge
        ('14, 12'); None for a bound, a negation alone or nothing."""
        if self.kind == "one":
            return self.asserted[0].text
        if self.kind in ("several", "hedge"):
            pool = self.asserted if self.kind == "several" else [v for v in self.values if v.alternative]
            return ", ".join(dict.fromkeys(v.text for v in pool))
        return None

    @property
    def second(self) -> str | None:
        """The other reading of a one-value answer written '10.066' (10066 where a dot separates
        thousands), tried when the first reading is not the gold."""
        if self.kind != "one" or self.asserted[0].thousands is None:
            return None
        one = self.asserted[0]
        return show(one.thousands) + ("%" if one.percent else "")

    @property
    def note(self) -> str:
        """What the reading found, for the verdict's reason."""
        parts = []
        one = self.asserted[0] if self.kind == "one" else None
        if one is not None and (one.unit or one.words):
            parts.append(f"{one.written!r}" + (f" (unit {one.unit!r})" if one.unit else ""))
        negated = sorted({v.text for v in self.values if v.negated})
        if negated:
            parts.append("negated " + ", ".join(negated))
        if self.kind == "hedge":
            parts.append("a hedge between " + " and ".join(dict.fromkeys(v.text for v in self.values if v.alternative)))
        if self.kind == "bound":
            parts.append("a bound, not a value: " + ", ".join(v.written for v in self.values if v.bound))
        if self.kind == "several":
            parts.append(f"{len({v.value for v in self.asserted})} values asserted")
        return "; ".join(parts)


# --- reading one statement ----------------------------------------------------------------------

# maths that the structure does not read: a LaTeX command, a variable beside an operator, a power
MATHS_RE = re.compile(r"\\(?!text\b|textbf\b|mathrm\b|,|!|;|%|\$|quad\b|qquad\b)[a-zA-Z]+|\^|"
                      r"(?<![^\W\d_])[a-zA-Z](?![^\W\d_])\s*[=+*/<>]|[=+*/<>]\s*[a-zA-Z](?![^\W\d_])|\d[a-zA-Z](?![^\W\d_])\s*[=+*/^]")
MATH_SPAN_RE = re.compile(r"\$\$([^$]{1,400}?)\$\$|\$([^$]{1,400}?)\$|\\\((.{1,400}?)\\\)|\\\[(.{1,400}?)\\\]", re.S)


def plain_maths(text: str) -> str | None:
    """The statement with its maths spans holding only a number written as that number
    ('$14$ jars' -> '14 jars', '$1{,}234$' -> '1,234', '$\\frac{3}{4}$' -> '3/4'); None when a span
    holds more (a formula: the maths readers decide)."""
    if "$" not in text and "\\(" not in text and "\\[" not in text:
        return text
    out, pos = [], 0
    for m in MATH_SPAN_RE.finditer(text):
        inner = re.sub(r",\\!\s*", ",", next(g for g in m.groups() if g is not None)).replace("{,}", ",").replace("\\,", "")
        inner = re.sub(r"\\text\{\s*([^{}]*)\}", r" \1", inner).strip()
        frac = re.fullmatch(r"\\[dt]?frac\{(\d+)\}\{(\d+)\}", inner)
        if frac:
            inner = f"{frac.group(1)}/{frac.group(2)}"
        elif not re.fullmatch(r"[-−]?\d[\d,.]*(?:\\?%)?(?:\s+[^\W\d_][^\W\d_\s]*)?", inner):
            return None
        out.append(text[pos:m.start()] + inner.replace("\\%", "%"))
        pos = m.end()
    out.append(text[pos:])
    return "".join(out)


HTML_TAG_RE = re.compile(r"</?[A-Za-z][A-Za-z0-9]{0,10}(?:\s[^<>\n]{0,60})?/?>")


def clean(text: str) -> str:
    """Markdown emphasis and code marks as spaces ('**14**'), digits of any script as ASCII,
    full-width forms as ASCII (not '＄', money marked so by extract.py, nor '，', which is never a
    decimal comma): same length, so the positions of the values stay."""
    text = ascii_digits(text)
    text = "".join(_narrow(c) for c in text)
    # LaTeX thousands written on purpose: 12{,}480, 10,\!080, 8\,076
    text = re.sub(r"(?<=\d)(?:\{,\}|,\\!\s*)(?=\d{3})", ",", text)
    text = re.sub(r"(?<=\d)\\,(?=\d{3})", " ", text)

    def emphasis(m: re.Match) -> str:
        before = text[: m.start()].rstrip()[-1:]
        after = text[m.end():].lstrip()[:1]
        spaced = text[m.start() - 1: m.start()] == " " and text[m.end(): m.end() + 1] == " "
        operator = m.group()[0] == "*" and len(m.group()) <= 2 and (
            spaced or (before.isdigit() or before == ")") and (after.isdigit() or after == "("))
        return m.group() if operator else " " * len(m.group())  # ' * ' and '3*4' multiply; '*14*' is emphasis
    text = re.sub(r"\*+|(?<![^\W_])_+|_+(?![^\W_])|`+|^[ \t]*[#>]+|(?<=\n)[ \t]*[#>]+", emphasis, text)
    # markup tags ('<b>18</b>', '<span class="x">'): marks like '**', not words
    text = HTML_TAG_RE.sub(lambda m: " " * len(m.group()), text)
    return text


@lru_cache(maxsize=4096)
def _narrow(ch: str) -> str:
    """A full-width form as its ASCII character (its Unicode decomposition is '<wide> …'), but
    '＄' (money, marked so by extract.py) and '，' (never a decimal comma)."""
    if ch in "\uff04\uff0c" or ch.isascii() or not unicodedata.decomposition(ch).startswith("<wide>"):
        return ch
    narrow = unicodedata.normalize("NFKC", ch)
    return narrow if len(narrow) == 1 else ch


def _words_between(text: str) -> int:
    """Words in a gap: runs of letters, marks or digits between spaces and punctuation."""
    return sum(1 for token in re.split(r"[\s,.;:!?、，。：；]+", text) if any(c.isalnum() or is_letter(c) for c in token))


def scan_digits(text: str) -> list[Value]:
    """The numbers written in digits, each with its unit (the letters glued to or right after it,
    by Unicode category) and a multiplier word folded in ('3万' -> 30000, '2.5 million')."""
    out: list[Value] = []
    for m in NUMBER_RE.finditer(text):
        before = text[m.start() - 1] if m.start() else ""
        if before and unicodedata.category(before) in ("Lu", "Ll", "Lt"):
            # the cased letters glued to it: in '赚USD14' the name is 'USD' (letters of a script
            # without case, Unicode Lo, are the words of the sentence around it)
            word = re.search(r"[^\W\d_]+$", text[: m.start()]).group()
            k = len(word)
            while k and unicodedata.category(word[k - 1]) in ("Lu", "Ll", "Lt"):
                k -= 1
            word = word[k:]
            if not re.fullmatch(r"[A-Z][a-z]|[A-Z]{3}", word):
                continue  # 'x2', 'B12', 'CO2': a name ('Rp9', 'Rs14', 'USD14': money)
        if "," in m.group("num") and _inside_brackets(text, m.start()):
            raise _Declined  # '(7,300)': a pair, never seven thousand three hundred
        value = number_value(m.group("num"))
        if value is None:
            continue
        if out and "/" in m.group("num") and 0 < value < 1 and out[-1].value.denominator == 1 and out[-1].value > 0 \
                and text[out[-1].end:m.start()] in (" ", "  ") and not out[-1].unit:
            whole = out.pop()  # '2 1/2': a mixed number
            value += whole.value
            m_start = whole.start
        else:
            m_start = m.start()
        end = m.end()
        percent = bool(m.group("pct"))
        scale = SCALE_WORD_RE.match(text, end) if not percent else None
        if scale and scale.group(1).lower() in SCALE_WORDS:
            value *= SCALE_WORDS[scale.group(1).lower()]
            end = scale.end()
        elif not percent and re.match(r"[kK](?![^\W\d_])", text[end:end + 2]):
            value *= 1000  # '$70k'
            end += 1
        spaced_sign = not m.group("sign") and re.search(r"(?:^|[^\d)\s])\s*[-−]\s$", text[max(0, m_start - 4):m_start]) \
            and not re.search(r"[\d)]\s*[-−]\s$", text[:m_start])
        if m.group("sign") or spaced_sign:
            value = -value
        unit = _unit_after(text, end)
        if not percent and re.match(r"\s*(?:percent|per\s?cent|pct|percentage)\b", text[end:end + 14], re.I):
            percent = True
        dotted = re.fullmatch(r"[1-9]\d{0,2}\.\d{3}", m.group("num"))
        alt = (-1 if m.group("sign") else 1) * int(m.group("num").replace(".", "")) if dotted and end == m.end() else None
        out.append(Value(value, m_start, end, text[m_start:end].strip(), unit=unit, percent=percent,
                         thousands=Fraction(alt) if alt is not None else None))
        if len(out) > MAX_VALUES:
            break
    return out


class _Declined(Exception):
    """The statement holds maths the structure does not read."""


def _inside_brackets(text: str, pos: int) -> bool:
    before = text[:pos]
    return before.count("(") > before.count(")") or before.count("[") > before.count("]") or \
        before.count("{") > before.count("}")


def _unit_after(text: str, end: int) -> str:
    """The word right after a value (letters and marks of any script, a unit however spelt):
    '14 jars' -> 'jars', '15个苹果' -> '个苹果', '20 किताबें' -> 'किताबें'."""
    i = end
    if i < len(text) and text[i] in " \u00a0\u202f":
        i += 1
    j = i
    while j < len(text) and (is_letter(text[j]) or (text[j] in "'’-." and j + 1 < len(text) and is_letter(text[j + 1]))):
        j += 1
    return text[i:j]


# --- number words --------------------------------------------------------------------------------

TEXT2NUM_LANGUAGES = ("en", "fr", "de", "es", "it", "pt", "nl")
# Russian and Polish: units, teens, tens and hundreds are words of their own; тысяча/tysiąc and
# миллион/milion multiply the section before them
SLAVIC_WORDS = {
    **dict.fromkeys(("ноль", "zero"), ("unit", 0)),
    **dict.fromkeys(("один", "одна", "одно", "одну", "jeden", "jedna", "jedno"), ("unit", 1)),
    **dict.fromkeys(("два", "две", "dwa", "dwie"), ("unit", 2)), **dict.fromkeys(("три", "trzy"), ("unit", 3)),
    **dict.fromkeys(("четыре", "cztery"), ("unit", 4)), **dict.fromkeys(("пять", "pięć"), ("unit", 5)),
    **dict.fromkeys(("шесть", "sześć"), ("unit", 6)), **dict.fromkeys(("семь", "siedem"), ("unit", 7)),
    **dict.fromkeys(("восемь", "osiem"), ("unit", 8)), **dict.fromkeys(("девять", "dziewięć"), ("unit", 9)),
    **{w: ("teen", 10 + i) for i, ws in enumerate((
        ("десять", "dziesięć"), ("одиннадцать", "jedenaście"), ("двенадцать", "dwanaście"), ("тринадцать", "trzynaście"),
        ("четырнадцать", "czternaście"), ("пятнадцать", "piętnaście"), ("шестнадцать", "szesnaście"),
        ("семнадцать", "siedemnaście"), ("восемнадцать", "osiemnaście"), ("девятнадцать", "dziewiętnaście"))) for w in ws},
    **{w: ("ten", 20 + 10 * i) for i, ws in enumerate((
        ("двадцать", "dwadzieścia"), ("тридцать", "trzydzieści"), ("сорок", "czterdzieści"), ("пятьдесят", "pięćdziesiąt"),
        ("шестьдесят", "sześćdziesiąt"), ("семьдесят", "siedemdziesiąt"), ("восемьдесят", "osiemdziesiąt"),
        ("девяносто", "dziewięćdziesiąt"))) for w in ws},
    **{w: ("hundred", 100 * (i + 1)) for i, ws in enumerate((
        ("сто", "sto"), ("двести", "dwieście"), ("триста", "trzysta"), ("четыреста", "czterysta"), ("пятьсот", "pięćset"),
        ("шестьсот", "sześćset"), ("семьсот", "siedemset"), ("восемьсот", "osiemset"), ("девятьсот", "dziewięćset"))) for w in ws},
    **dict.fromkeys(("тысяча", "тысячи", "тысяч", "тысячу", "tysiąc", "tysiące", "tysięcy"), ("scale", 10**3)),
    **dict.fromkeys(("миллион", "миллиона", "миллионов", "milion", "miliony", "milionów"), ("scale", 10**6)),
}
# Indonesian: satu..sembilan, 'belas' (+10), 'puluh' (x10), 'ratus' (x100), 'ribu' (x1000), 'juta'
MALAY_WORDS = {
    "nol": ("unit", 0), "satu": ("unit", 1), "dua": ("unit", 2), "tiga": ("unit", 3), "empat": ("unit", 4), "lima": ("unit", 5),
    "enam": ("unit", 6), "tujuh": ("unit", 7), "delapan": ("unit", 8), "sembilan": ("unit", 9), "sepuluh": ("fixed", 10),
    "sebelas": ("fixed", 11), "seratus": ("fixed", 100), "seribu": ("scale1", 1000), "belas": ("plus", 10),
    "puluh": ("times", 10), "ratus": ("times", 100), "ribu": ("scale", 1000), "juta": ("scale", 10**6),
}


def _slavic_value(words: list[str]) -> int | None:
    """A run of Russian or Polish number words ('две тысячи триста сорок пять'), in order."""
    total, section, last = 0, 0, None
    order = ("hundred", "ten", "teen", "unit")
    for w in words:
        kind, value = SLAVIC_WORDS[w]
        if kind == "scale":
            total += (section or 1) * value
            section, last = 0, "scale"
            continue
        if last in order and (order.index(kind) <= order.index(last) or last == "teen" or (last == "ten" and kind == "teen")):
            return None  # 'пять три': two numbers, not one
        section += value
        last = kind
    return total + section


def _malay_value(words: list[str]) -> int | None:
    total, section, digit = 0, 0, None
    for w in words:
        kind, value = MALAY_WORDS[w]
        if kind == "unit":
            if digit is not None:
                return None
            digit = value
        elif kind == "fixed":
            section += value
        elif kind == "plus":
            if digit is None:
                return None
            section += digit + value
            digit = None
        elif kind == "times":
            if digit is None:
                return None
            section += digit * value
            digit = None
        else:  # scale, scale1 ('seribu' = one thousand)
            total += ((section + (digit or 0)) or 1) * value
            section, digit = 0, None
    return total + section + (digit or 0)


# Arabic, Vietnamese and Thai: digit words, words of a fixed value (Arabic tens and teens' عشر,
# Vietnamese mười), multipliers of the digit before them (mươi, trăm; สิบ, ร้อย, พัน, หมื่น, แสน;
# مائة) and multipliers of the whole section (ألف, nghìn, ล้าน); fillers (و, linh, lẻ) join them
def _vocab(digits: dict[str, int], fixed: dict[str, int] = {}, times: dict[str, int] = {},  # noqa: B006 - read only
           scale: dict[str, int] = {}, filler: tuple[str, ...] = ()) -> dict[str, tuple[str, int]]:
    out = {w: ("digit", v) for w, v in digits.items()}
    out.update({w: ("fixed", v) for w, v in fixed.items()})
    out.update({w: ("times", v) for w, v in times.items()})
    out.update({w: ("scale", v) for w, v in scale.items()})
    out.update({w: ("filler", 0) for w in filler})
    return out


ARABIC_WORDS = _vocab(
    {**dict.fromkeys(("واحد", "واحدة", "أحد", "إحدى"), 1), **dict.fromkeys(("اثنان", "اثنين", "اثنتان", "اثنتين", "اثنا", "اثنتا"), 2),
     **dict.fromkeys(("ثلاثة", "ثلاث"), 3), **dict.fromkeys(("أربعة", "أربع"), 4), **dict.fromkeys(("خمسة", "خمس"), 5),
     **dict.fromkeys(("ستة", "ست"), 6), **dict.fromkeys(("سبعة", "سبع"), 7), **dict.fromkeys(("ثمانية", "ثماني", "ثمان"), 8),
     **dict.fromkeys(("تسعة", "تسع"), 9)},
    {**dict.fromkeys(("عشرة", "عشر"), 10), **dict.fromkeys(("عشرون", "عشرين"), 20), **dict.fromkeys(("ثلاثون", "ثلاثين"), 30),
     **dict.fromkeys(("أربعون", "أربعين"), 40), **dict.fromkeys(("خمسون", "خمسين"), 50), **dict.fromkeys(("ستون", "ستين"), 60),
     **dict.fromkeys(("سبعون", "سبعين"), 70), **dict.fromkeys(("ثمانون", "ثمانين"), 80), **dict.fromkeys(("تسعون", "تسعين"), 90),
     **dict.fromkeys(("مئتان", "مائتان", "مئتين", "مائتين", "مئتا", "مائتا"), 200),
     **{f"{d}{h}": 100 * v for d, v in (("ثلاث", 3), ("أربع", 4), ("خمس", 5), ("ست", 6), ("سبع", 7), ("ثمان", 8), ("ثماني", 8),
                                         ("تسع", 9)) for h in ("مائة", "مئة")}},
    dict.fromkeys(("مائة", "مئة"), 100),
    {**dict.fromkeys(("ألف", "آلاف"), 1000), **dict.fromkeys(("ألفان", "ألفين", "ألفا"), 2000),
     **dict.fromkeys(("مليون", "ملايين"), 10**6)},
    ("و",))
VIETNAMESE_WORDS = _vocab(
    {"một": 1, "mốt": 1, "hai": 2, "ba": 3, "bốn": 4, "tư": 4, "năm": 5, "lăm": 5, "nhăm": 5, "sáu": 6, "bảy": 7, "bẩy": 7,
     "tám": 8, "chín": 9},
    {"mười": 10}, {"mươi": 10, "trăm": 100}, {"nghìn": 1000, "ngàn": 1000, "triệu": 10**6, "tỷ": 10**9, "tỉ": 10**9},
    ("linh", "lẻ"))
THAI_WORDS = _vocab(
    {"หนึ่ง": 1, "เอ็ด": 1, "สอง": 2, "ยี่": 2, "สาม": 3, "สี่": 4, "ห้า": 5, "หก": 6, "เจ็ด": 7, "แปด": 8, "เก้า": 9},
    {}, {"สิบ": 10, "ร้อย": 100, "พัน": 1000, "หมื่น": 10**4, "แสน": 10**5}, {"ล้าน": 10**6})


# number words that are as often common words of other languages: Vietnamese 'hai' and 'ba' (Italian
# 'hai' = you have), Polish 'sto' (Italian 'sto' = I am), Indonesian 'lima' (the city); alone they
# count only in a hedge or beside other values of the same run
AMBIGUOUS_NUMBER_WORDS = frozenset(("hai", "ba", "sto", "lima"))


def _common_word(words: list[str]) -> bool:
    return len(words) == 1 and words[0].lower() in AMBIGUOUS_NUMBER_WORDS


def _generic_value(tokens: list[tuple[str, int]]) -> int | None:
    """The value of number-word tokens: digits add into a section or are multiplied by the word
    after them, sections are multiplied by a scale word; two digits in a row are two numbers."""
    total, section, digit, seen = 0, 0, None, False
    for kind, value in tokens:
        if kind == "filler":
            continue
        seen = True
        if kind == "digit":
            if digit is not None:
                return None
            digit = value
        elif kind == "fixed":
            section += (digit or 0) + value
            digit = None
        elif kind == "times":
            section += (digit if digit is not None else 1) * value
            digit = None
        else:
            total += ((section + (digit or 0)) or 1) * value
            section, digit = 0, None
    return total + section + (digit or 0) if seen else None


def _generic_runs(text: str, vocabulary: dict) -> list[tuple[int, int, int, int]]:
    """(start, end, value, words) of each run of number words in `text`: words separated by
    spaces, a word of the vocabulary or 'و' + one (Arabic writes 'وعشرون'), or a run of letters
    made of vocabulary words only (Thai writes no spaces: 'หนึ่งร้อยสามสิบห้า')."""
    runs, current = [], []
    pos = 0
    for m in re.finditer(r"\S+", text):
        token = m.group().strip(".,;:!?()\"'،؛“”«»")
        offset = m.start() + m.group().find(token) if token else m.start()
        parts = _split_glued(token, vocabulary)
        if parts is not None and (not current or not text[pos:offset].strip()):
            current.append((offset, offset + len(token), parts))
            pos = offset + len(token)
            continue
        if current:
            runs.append(current)
        current = [(offset, offset + len(token), parts)] if parts is not None else []
        pos = offset + len(token)
    if current:
        runs.append(current)
    out = []
    for run in runs:
        tokens = [t for _, _, parts in run for t in parts]
        value = _generic_value(tokens)
        if value is not None:
            out.append((run[0][0], run[-1][1], value, sum(kind != "filler" for kind, _ in tokens)))
    return out


def _split_glued(token: str, vocabulary: dict) -> list[tuple[str, int]] | None:
    """The vocabulary words a token is made of, longest first ('وعشرون' -> و + عشرون,
    'สามสิบห้า' -> สาม + สิบ + ห้า); None when any part is not one."""
    word = token.lower()
    if word in vocabulary:
        return [vocabulary[word]]
    out, i = [], 0
    longest = max(map(len, vocabulary))
    while i < len(word):
        for n in range(min(longest, len(word) - i), 0, -1):
            if word[i:i + n] in vocabulary:
                out.append(vocabulary[word[i:i + n]])
                i += n
                break
        else:
            return None
    return out if out and any(kind != "filler" for kind, _ in out) else None


def _word_runs(text: str, vocabulary: dict) -> list[tuple[int, int, list[str]]]:
    runs, current = [], []
    for m in re.finditer(r"[^\W\d_]+", text):
        word = m.group().lower()
        if word in vocabulary and (not current or not text[current[-1][1]:m.start()].strip()):
            current.append((m.start(), m.end(), word))
            continue
        if current:
            runs.append(current)
        current = [(m.start(), m.end(), word)] if word in vocabulary else []
    if current:
        runs.append(current)
    return [(r[0][0], r[-1][1], [w for _, _, w in r]) for r in runs]


CJK_DIGIT = {"〇": 0, "零": 0, "一": 1, "壹": 1, "二": 2, "贰": 2, "貳": 2, "两": 2, "兩": 2, "三": 3, "叁": 3, "參": 3,
             "四": 4, "肆": 4, "五": 5, "伍": 5, "六": 6, "陆": 6, "陸": 6, "七": 7, "柒": 7, "八": 8, "捌": 8, "九": 9, "玖": 9}
CJK_SMALL = {"十": 10, "拾": 10, "百": 100, "佰": 100, "千": 1000, "仟": 1000}
CJK_BIG = {"万": 10**4, "萬": 10**4, "亿": 10**8, "億": 10**8, "兆": 10**12}
_CJK_NUMERAL = "[" + "".join(CJK_DIGIT) + "".join(CJK_SMALL) + "".join(CJK_BIG) + "]"
CJK_RUN_RE = re.compile(f"(?<!第){_CJK_NUMERAL}+(?:[点點]{_CJK_NUMERAL}+)?(?:分之{_CJK_NUMERAL}+(?:[点點]{_CJK_NUMERAL}+)?)?")


def cjk_value(run: str) -> tuple[Fraction, bool] | None:
    """Chinese and Japanese numerals: '十五' -> 15, '一百二十' -> 120, '两千' -> 2000, '三万五千'
    -> 35000, '二〇二四' -> 2024, '三分之一' -> 1/3, '百分之二十' -> 20 (percent: True)."""
    if "分之" in run:
        den, _, num = run.partition("分之")
        if den == "百":
            inner = cjk_value(num)
            return (inner[0], True) if inner else None
        d, n = cjk_value(den), cjk_value(num)
        return (n[0] / d[0], False) if d and n and d[0] else None
    whole, _, frac = re.split("[点點]", run, maxsplit=1)[0], None, None
    if re.search("[点點]", run):
        whole, frac = re.split("[点點]", run, maxsplit=1)
    if whole and all(c in CJK_DIGIT for c in whole) and len(whole) > 1:
        if not any(c in "〇零" for c in whole):
            return None  # '三四个': three or four, a hedge
        value = Fraction(int("".join(str(CJK_DIGIT[c]) for c in whole)))
    else:
        total, section, number, last_big = 0, 0, None, 0
        for c in whole:
            if c in CJK_DIGIT:
                if number is not None and CJK_DIGIT[c] != 0:
                    return None
                number = CJK_DIGIT[c] if CJK_DIGIT[c] else None
            elif c in CJK_SMALL:
                section += (number if number is not None else 1) * CJK_SMALL[c]
                number = None
            else:
                big = CJK_BIG[c]
                if not (section or number or total):
                    return None  # '万一': no number before the multiplier
                if last_big and big > last_big:
                    total = (total + section + (number or 0)) * big
                else:
                    total += (section + (number or 0)) * big
                section, number, last_big = 0, None, big
        value = Fraction(total + section + (number or 0))
    if frac:
        if not all(c in CJK_DIGIT for c in frac):
            return None
        value += Fraction(int("".join(str(CJK_DIGIT[c]) for c in frac)), 10 ** len(frac))
    return value, False


def scan_words(text: str, taken: list[tuple[int, int]], threshold_one: bool) -> list[Value]:
    """The numbers written in words: text2num for English, French, German, Spanish, Italian,
    Portuguese and Dutch (the reading that converts the most words wins; two readings that
    disagree give none), the grammars above for Russian, Polish and Indonesian, and CJK numerals.
    Ordinals ('fourth', '4.') are not values. A lone 'one' / 'un' / 'ein' is weak (an article as
    often as a number) unless `threshold_one`."""
    def free(a: int, b: int) -> bool:
        return all(b <= s or a >= e for s, e in taken)

    found: list[Value] = []
    if re.search(r"[^\W\d_]", text):
        found += _text2num_values(text, free, threshold_one)
        for vocabulary, reader in ((SLAVIC_WORDS, _slavic_value), (MALAY_WORDS, _malay_value)):
            for start, end, words in _word_runs(text, vocabulary):
                value = reader(words)
                if value is not None and free(start, end):
                    lone_one = len(words) == 1 and value == 1
                    found.append(Value(Fraction(value), start, end, text[start:end], words=True,
                                       unit=_unit_after(text, end), weak=lone_one and not threshold_one
                                       or _common_word(words)))
        for vocabulary in (ARABIC_WORDS, VIETNAMESE_WORDS, THAI_WORDS):
            for start, end, value, count in _generic_runs(text, vocabulary):
                if free(start, end) and all(not (v.start < end and start < v.end) for v in found):
                    found.append(Value(Fraction(value), start, end, text[start:end], words=True, unit=_unit_after(text, end),
                                       weak=count == 1 and (value == 1 and not threshold_one or _common_word([text[start:end]]))))
    cjk = [m for m in CJK_RUN_RE.finditer(text) if free(m.start(), m.end())]
    for m in cjk:
        run, end = m.group(), m.end()
        if run[-1] == "千" and text[end:end + 1] in "克米瓦帕卡" or run[-1] == "百" and text[end:end + 2] == "分之":
            run, end = run[:-1], end - 1  # '千克', '千米': a metric prefix of the unit, not a multiplier
        read = cjk_value(run) if run else None
        if read is None:
            continue
        lone = len(run) == 1 and run in "一两兩"
        found.append(Value(read[0], m.start(), end, run, words=True, unit=_unit_after(text, end), percent=read[1],
                           weak=lone and (len(cjk) > 1 or not threshold_one)))
    return found


def _text2num_values(text: str, free, threshold_one: bool) -> list[Value]:
    try:
        from text_to_num import alpha2digit
    except ImportError:  # pragma: no cover - a declared dependency
        return []
    readings = {}
    for lang in TEXT2NUM_LANGUAGES:
        try:
            out = alpha2digit(text, lang, threshold=0)
        except Exception:  # noqa: BLE001 - a library error on odd text reads no words
            continue
        if out != text:
            values = _aligned(text, out)
            if values:
                readings[lang] = values
    if not readings:
        return []
    best = max(readings.values(), key=lambda vs: sum(e - s for s, e, _, _ in vs))
    for other in readings.values():
        if {(v, s) for s, _, v, _ in other} != {(v, s) for s, _, v, _ in best} and \
                sum(e - s for s, e, _, _ in other) == sum(e - s for s, e, _, _ in best):
            return []  # two languages read the words differently: none is trusted
    merged: list[tuple[int, int, Fraction, bool]] = []
    for item in best:  # 'one thousand, one hundred and twenty-eight': one number across the comma
        if merged and not item[3] and not merged[-1][3] and re.fullmatch(r",?\s*(?:and\s+)?", text[merged[-1][1]:item[0]]) \
                and merged[-1][2] % 1000 == 0 and 0 < item[2] < merged[-1][2] and merged[-1][2] >= 1000:
            merged[-1] = (merged[-1][0], item[1], merged[-1][2] + item[2], False)
        else:
            merged.append(item)
    out = []
    for start, end, value, ordinal in merged:
        if ordinal or not free(start, end):
            continue
        words = re.findall(r"[^\W\d_]+", text[start:end])
        out.append(Value(value, start, end, text[start:end], words=True, unit=_unit_after(text, end),
                         weak=len(words) == 1 and value == 1 and not threshold_one))
    return out


def _aligned(src: str, out: str) -> list[tuple[int, int, Fraction, bool]]:
    """(start, end, value, ordinal) of each number text2num wrote in `out`, mapped to the words of
    `src` it replaced."""
    from difflib import SequenceMatcher

    found = []
    matcher = SequenceMatcher(None, src, out, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag not in ("replace", "insert") or not re.search(r"\d", out[j1:j2]):
            continue
        written = out[j1:j2]
        m = re.search(r"\d+(?:[.,]\d+)?", written)
        if m is None or not re.search(r"[^\W\d_]", src[i1:i2]):
            continue
        after = out[j1 + m.end(): j1 + m.end() + 1]
        ordinal = bool(re.match(r"[^\W\d_]", written[m.end():] or after)) or \
            (written[m.end():].startswith(".") and not src[i1:i2].rstrip().endswith("."))
        value = number_value(m.group())
        if value is not None:
            found.append((i1, i2, value, ordinal))
    return found


# --- relations ---------------------------------------------------------------------------------

def _clauses(text: str) -> list[tuple[int, int]]:
    """(start, end) of the clauses of a sentence: split at commas, semicolons, colons, dashes,
    brackets and contrast words ('but', 'sondern', 'а', '而是', 'بل', 'แต่')."""
    cuts = {0, len(text)}
    for i, ch in enumerate(text):
        if _char_kind(ch) == "clause" and not (ch in ",." and 0 < i < len(text) - 1 and text[i - 1].isdigit()
                                                and text[i + 1].isdigit()):
            cuts.update((i, i + 1))
    for m in _find(CONTRAST, text):
        cuts.add(m.start())
    points = sorted(cuts)
    return [(a, b) for a, b in zip(points, points[1:]) if b > a]


def _clause_of(clauses: list[tuple[int, int]], pos: int) -> tuple[int, int]:
    for a, b in clauses:
        if a <= pos < b:
            return a, b
    return 0, 0


def _mark_negations(text: str, values: list[Value]) -> list[Value]:
    skip = [(m.start(), m.end()) for m in _find(NOT_NEGATIONS, text)]
    bounds = [(m.start(), m.end()) for m in _find(BOUND_BEFORE, text)]
    clauses = _clauses(text)
    negated = set()
    for words, forward in ((NEGATE_BEFORE, True), (NEGATE_AFTER, False)):
        for m in _find(words, text):
            if any(a <= m.start() < b for a, b in skip + bounds):
                continue  # 'not only', 'no more than': not a negation of the value
            a, b = _clause_of(clauses, m.start())
            if forward:  # the first value after it in its clause
                pick = [i for i, v in enumerate(values) if m.end() <= v.start < b
                        and _words_between(text[m.end():v.start]) <= BIND_WORDS][:1]
                rest = re.sub(r"[^\w\s]", " ", text[m.end():b]).strip()
                if not pick and (not rest or _whole(PREDICATE, rest)):
                    # a negation that ends its clause, or has only its verb after it, is said of what
                    # came before it ('14 ist es nicht', '14 is het niet', '14, c'est pas', '17 no
                    # es', '17 non è'; not '14 apples and no pears'): the last value before it,
                    # across at most one clause mark
                    # ... when that value opens its clause, the thing the sentence is about ('há 40 no
                    # total' is no rejection: 'no' there is a preposition)
                    before = [i for i, v in enumerate(values) if v.end <= m.start()
                              and _words_between(text[v.end:m.start()]) <= BIND_WORDS
                              and sum(_char_kind(c) == "clause" for c in text[v.end:m.start()]) <= 1
                              and not re.search(r"[^\W_]", text[_clause_of(clauses, v.start)[0]:v.start])]
                    pick = before[-1:]
            else:  # the last value before it in its clause
                pick = [i for i, v in enumerate(values) if a <= v.start and v.end <= m.start()
                        and _words_between(text[v.end:m.start()]) <= BIND_WORDS][-1:]
            negated.update(pick)
    for i in sorted(negated):  # 'not 5 × 10 = 50': the negation takes the whole chain
        j = i
        while values[j].working and j + 1 < len(values) and not any(_char_kind(c) == "clause" for c in text[values[j].end:values[j + 1].start]):
            j += 1
            negated.add(j)
    return [replace(v, negated=True) if i in negated else v for i, v in enumerate(values)]


def _mark_bounds(text: str, values: list[Value]) -> list[Value]:
    out = []
    starts = _find(BOUND_BEFORE, text)
    ends = _find(BOUND_AFTER, text)
    clauses = _clauses(text)
    for k, v in enumerate(values):
        lo = max(_clause_of(clauses, v.start)[0], values[k - 1].end if k else 0)
        # 'at least 14', 'على الأقل إلى 14', '至少需要14': a bound phrase at most two words before, a single
        # word right before ('over 14'; '12 left over after giving 2 away' bounds nothing)
        before = any(lo <= m.start() and m.end() <= v.start and _words_between(text[m.end():v.start]) <= (
            2 if " " in m.group().strip() or not m.group()[:1].isascii() else 0) for m in starts)
        tail_from = v.end + len(v.unit) + (1 if text[v.end:v.end + 1] == " " else 0)
        after = any(v.end <= m.start() <= tail_from + 1 and not text[tail_from:m.start()].strip(" ")
                    or (m.start() == v.end and m.group() in "多余餘") for m in ends)
        if re.match(r"\+(?!\s*\d)", text[v.end:v.end + 2]):
            after = True  # '14+'
        out.append(replace(v, bound=True) if before or after else v)
    return out


# an operator between two values, with the unit of the first before it ('$1500/month * 12',
# '200 hours * $50/hour = $10000')
_UNIT_WORDS = r"(?:\s*/?\s*[^\W\d_]+){0,2}"
OPERATOR_GAP_RE = re.compile(_UNIT_WORDS + r"[\s(（\[]*(?:\*\*|[+*/×÷·=^<>≤≥]|\s-\s|-(?=\s*\()|[xX]|\\times|\\cdot)"
                             r"[\s)）\]]*[$＄€£¥₹]?\s*[(（\[]*")
DASH_GAP_RE = re.compile(r"\s?[-‐–—−]\s?[$＄€£¥₹]?")
EQUALS_GAP_RE = re.compile(_UNIT_WORDS + r"\s*[)）\]]*\s*=\s*[$＄€£¥₹]?\s*")


def _mark_alternatives(text: str, values: list[Value]) -> tuple[list[Value], bool]:
    """Values joined by 'or', or by a range ('between A and B', 'A to B', 'A–B'), are
    alternatives. Values joined by operators form an expression: with '=', the value after its
    last '=' is the chain's value and the terms before it are working; without one (or with an
    operation after the last '='), the statement is maths that is not read here (False)."""
    out = list(values)
    links = []
    for a, b in zip(values, values[1:]):
        gap = text[a.end:b.start]
        if DASH_GAP_RE.fullmatch(gap):
            links.append("dash")   # '6-8', '6 – 8': a range, or a subtraction in a chain ('22 – 7 = 15')
        elif "=" in gap and (EQUALS_GAP_RE.fullmatch(gap) or not re.search(r"[^\W\d_]{2,}", gap)):
            links.append("eq")
        elif OPERATOR_GAP_RE.fullmatch(gap):
            links.append("op")
        else:
            links.append(None)
    i = 0
    while i < len(links):  # a dash inside an equation chain subtracts
        j = i
        while j < len(links) and links[j] in ("eq", "op", "dash"):
            j += 1
        if "eq" in links[i:j]:
            links[i:j] = ["op" if link == "dash" else link for link in links[i:j]]
        i = max(j, i + 1)
    i = 0
    chains: list[tuple[int, int]] = []  # (first term, value) of each equation chain
    while i < len(links):  # groups of values joined by operators
        if links[i] not in ("eq", "op"):
            i += 1
            continue
        j = i
        while j < len(links) and links[j] in ("eq", "op"):
            j += 1
        group = links[i:j]
        if "eq" not in group or "op" in group[len(group) - 1 - group[::-1].index("eq"):]:
            return out, False  # '12 + 2' or '= 12 + 2': an expression without its value
        last_eq = i + len(group) - 1 - group[::-1].index("eq")
        for k in range(i, last_eq + 1):
            out[k] = replace(out[k], working=True)
        chains.append((i, last_eq + 1))
        i = j
    # 'Janet sells 16 - 3 - 4 = 9 eggs, and she makes 9 × $2 = $18', 'There are 12 eggs in 1 dozen
    # and she'll eat 84 eggs so that's 84/12 = 7': the last chain's value is what the statement
    # computes; the values before that chain (an earlier chain's value too) are its premises
    if chains:
        first = chains[-1][0]
        # not across a reason, a comment or a negation ('The answer is 60, not 5 × 10 = 50.')
        asides = [m.end() for words in (REASON, COMMENT, NEGATE_BEFORE) for m in _find(words, text) if m.end() <= values[first].start]
        floor = max(asides, default=-1)
        for k in range(first):
            if not out[k].negated and out[k].start > floor:
                out[k] = replace(out[k], working=True)
    for i, link in enumerate(links):
        a, b = values[i], values[i + 1]
        joined = link == "dash"
        if link is None:
            gap = text[a.end:b.start]
            bare = gap.lstrip(" ")
            if a.unit and bare.startswith(a.unit):
                bare = bare[len(a.unit):]  # '14 jars or 16 jars': the gap without the first unit
            if _find(NEGATE_BEFORE, gap) or _find(NEGATE_AFTER, gap):
                continue  # '14 instead of 12', '14, not 12': a contrast, not alternatives
            for words in dict.fromkeys((gap.strip(" ,、，"), bare.strip(" ,、，"))):
                if not words:
                    continue
                joined = joined or _whole(OR_WORDS, words) or _whole(RANGE_TO, words)
                if not joined and _whole(RANGE_AND, words):
                    lead = text[max(0, a.start - 40):a.start]
                    joined = any(len(lead) - m.end() <= 12 for m in _find(RANGE_START, lead))
                opening = _opens(OR_WORDS, words)
                if not joined and opening and len(opening.group()) > 1 and _words_between(words) <= 2:
                    joined = True  # 'or maybe', 'ou bien', 'oder vielleicht'
        if joined:
            out[i], out[i + 1] = replace(out[i], alternative=True), replace(out[i + 1], alternative=True)
    return out, True


PAREN_RE = re.compile(r"\(([^()]{1,200})\)|（([^（）]{1,200})）")


def _aside(text: str) -> str:
    """'She makes $18 (that's 9 eggs × $2).', '540 meters (3 sprints × 3 times × 60 meters)': a
    bracketed computation after a value is its working; blanked (same length) when a value
    stands before it outside brackets and it holds an operator but no 'or' and no negation."""
    def blank(m: re.Match) -> str:
        inner = m.group(1) or m.group(2)
        before = text[: m.start()]
        if not re.search(r"\d", before) or not re.search(r"\d\s*[^\W\d_]*\s*[×x*+/=÷·]\s*[$＄€£]?\s*\d|[×*÷=]", inner):
            return m.group()
        if _find(OR_WORDS, inner) or _find(NEGATE_BEFORE, inner) or _find(NEGATE_AFTER, inner):
            return m.group()
        return " " * len(m.group())
    return PAREN_RE.sub(blank, text) if "(" in text or "（" in text else text


def read_statement(text: str, threshold_one: bool = True) -> Reading | None:
    """The reading of one statement (a sentence, or the words after an answer cue); None where
    it holds maths this structure does not read (the maths readers decide then)."""
    text = text[:MAX_STATEMENT]
    plain = plain_maths(text)
    if plain is None:
        return None
    plain = _aside(clean(plain))
    if MATHS_RE.search(plain) or re.search(r"\d[eE][+-]?\d|\d\s*:\s*\d|\|\s*[-−]?\d|\d\s*\||(?<![^\W\d_])\d+[a-jl-zA-JL-Z](?![^\W\d_])", plain):
        return None  # variables, powers, LaTeX, '6.02e23', a ratio '6 : 7', '|-5|', '3x'
    if re.search(r"\d!", plain) and not re.search(r"[^\W\d_]{2,}", plain):
        return None  # '5!': a factorial, not an exclamation
    if "\\" in plain and not re.search(r"\d", plain):
        return None  # '\\text{five}': a word in maths mode is the maths readers' to read
    try:
        values = scan_digits(plain)
    except _Declined:
        return None
    if len(values) > MAX_VALUES:
        return None
    taken = [(v.start, v.end) for v in values]
    words = scan_words(plain, taken, threshold_one or not values)
    if values:  # beside digits, number words count in a hedge or a contrast, not as an answer
        words = [replace(w, weak=True) for w in words]
    values = sorted(values + words, key=lambda v: v.start)
    values, readable = _mark_alternatives(plain, values)
    if not readable:
        return None
    values = _mark_bounds(plain, values)
    values = _mark_negations(plain, values)
    values = _mark_corrected(plain, values)
    values = _mark_premises(plain, values)
    values = _mark_adjuncts(plain, values)
    return Reading(decide(values), tuple(values), text)


def _mark_adjuncts(text: str, values: list[Value]) -> list[Value]:
    """Two or more values asserted, all but one governed by a preposition of time, extent or rate
    ('The train covers 150 km in 2.5 hours.'): those are circumstances (working). Otherwise the
    values stay as they are: several values with no such word are several answers."""
    strong = [i for i, v in enumerate(values) if not (v.negated or v.bound or v.alternative or v.working or v.weak)]
    if len({values[i].value for i in strong}) < 2:
        return values
    befores, afters = _find(ADJUNCT_BEFORE, text), _find(ADJUNCT_AFTER, text)
    governed = set()
    for i in strong:
        v = values[i]
        if any(m.end() <= v.start and not re.sub(r"[\s$＄€£¥₹]", "", text[m.end():v.start]) for m in befores[-8:]):
            governed.add(i)
            continue
        tail_from = v.end + len(v.unit) + (1 if text[v.end:v.end + 1] == " " else 0)
        if any(v.end <= m.start() <= tail_from + 1 and not text[tail_from:m.start()].strip() for m in afters):
            governed.add(i)
    rest = {values[i].value for i in strong if i not in governed}
    if len(rest) != 1 or not governed:
        return values
    return [replace(v, working=True) if i in governed else v for i, v in enumerate(values)]


NO_WORDS = ("no", "non", "nein", "nee", "não", "нет", "nie", "όχι", "hayır", "لا", "नहीं", "không", "bukan", "tidak",
            "~不", "~いいえ", "~いや", "~아니", "~아니요", "~ไม่")


def _correction_at(text: str, pos: int = 0) -> re.Match | None:
    """A correction word ('wait', 'actually', 'attendez', 'не', '不对', 'แก้ไข') at `pos`,
    followed by punctuation or a space: the words after it replace what came before."""
    for words in (CORRECTION, NO_WORDS):
        m = _opens(words, text, pos)
        if m is not None:
            after = text[m.end(): m.end() + 3].lstrip(" ")
            if not after or _char_kind(after[0]) in ("clause", "end"):
                return m
            # 'wait no', 'no wait': two of them; 'Wait times are 5 minutes' is no correction
            nxt = len(text[m.end():]) - len(text[m.end():].lstrip(" "))
            if nxt and (_opens(CORRECTION, text, m.end() + nxt) or _opens(NO_WORDS, text, m.end() + nxt)):
                return m
    return None


def _opens_clause(text: str, m: re.Match, loose: bool = False) -> bool:
    """A word opens a clause: at the start, after punctuation or 'and' ('…, so she spent $9',
    'and so'); `loose`: after any space too."""
    before = text[: m.start()].rstrip(" ")
    return not before or _char_kind(before[-1]) in ("clause", "end") or unicodedata.category(m.group()[0]) == "Lo" \
        or bool(re.search(r"(?:^|\s)(?:and|et|und|y|e|и|i|ve|و)$", before, re.I)) or loose and text[m.start() - 1:m.start()] == " "


def _mark_premises(text: str, values: list[Value]) -> list[Value]:
    """'She pays $12 and gets $3 back, so she spent $9': values before the last conclusion word
    ('so', 'donc', 'daher', 'поэтому', '所以') that opens a clause, with values after it, are
    its premises (working). 'The answer is 9 because 8 × 9 + 19 = 91': values after a reason
    word ('because', 'parce que', 'weil', '因为') that follows a value are its reasons."""
    out = list(values)
    last = None
    for m in _find(CONCLUDE, text):
        loose = not m.group().lower().endswith(("ing", "ndo", "resulting in"))  # 'after giving 2 away' concludes nothing
        if _opens_clause(text, m, loose=loose) and any(v.start >= m.end() for v in values) \
                and any(v.end <= m.start() for v in values):
            last = m
    if last is not None:
        out = [replace(v, working=True) if v.end <= last.start() and not v.negated else v for v in out]
    predicates = _find(PREDICATE, text)
    for m in reversed(predicates):  # the last verb with the subject's values before it and one value after it
        before = [v for v in out if v.end <= m.start() and not v.working]
        after = {v.value for v in out if v.start >= m.end() and not (v.working or v.negated or v.bound or v.weak)}
        first_verb = next((p for p in predicates if p.start() < (before[0].start if before else 0)), None)
        if before and len(after) == 1 and first_verb is None and not any(v.alternative for v in out):
            out = [replace(v, working=True) if v.end <= m.start() and not v.negated else v for v in out]
            break
    for m in re.finditer(r"\s[—–]\s|\s-\s(?=[^\d])", text):  # 'There are 60 crayons in total — 5 boxes of 12.'
        head = [v for v in out if v.end <= m.start() and not (v.working or v.negated or v.bound or v.alternative or v.weak)]
        tail = [v for v in out if v.start >= m.end()]
        if head and tail and not any(v.alternative or v.negated for v in tail) and not _find(CORRECTION, text[m.end():]):
            out = [replace(v, working=True) if v.start >= m.end() else v for v in out]
            break
    concluding = [(m.start(), m.end()) for m in _find(CONCLUDE, text)]
    for words in (REASON, COMMENT):  # 'The answer is $12$, which is 3 more than 9.'
        for m in _find(words, text):
            if any(a <= m.start() < b for a, b in concluding) or not any(v.end <= m.start() and not v.working for v in out):
                continue
            if words is COMMENT and not _opens_clause(text, m, loose=True):
                continue
            out = [replace(v, working=True) if v.start >= m.end() else v for v in out]
            break
    return out


def _mark_corrected(text: str, values: list[Value]) -> list[Value]:
    """'14, wait, 16', 'คำตอบคือ 120 แก้ไข: ที่ถูกคือ 12': values before a correction word that
    opens a clause, with a value after it, are superseded (working, not an answer)."""
    last = None
    for m in _find(CORRECTION, text):
        opens = m.start() == 0 or _char_kind(text[m.start() - 1]) in ("clause", "end") or text[m.start() - 1] == " "
        if opens and _correction_at(text, m.start()) is not None and any(v.start >= m.end() for v in values) \
                and any(v.end <= m.start() for v in values):
            last = m
    if last is None:
        return values
    return [replace(v, working=True) if v.end <= last.start() else v for v in values]


def decide(values: list[Value]) -> str:
    """The kind of reading: see the module's docstring."""
    alternatives = {v.value for v in values if v.alternative and not v.negated}
    strong = [v for v in values if not (v.negated or v.bound or v.alternative or v.working or v.weak)]
    if len(alternatives) > 1:
        return "hedge"
    distinct = {v.value for v in strong}
    plain = {v.value for v in strong if not v.percent}
    if len(distinct) == 2 and any(v.percent and v.value / 100 in plain for v in strong):
        distinct = plain  # '$\\frac{1}{2}$, i.e. 50%': one value twice
    if len(alternatives) == 1 and not distinct - alternatives:
        return "one" if distinct else "hedge"
    if len(distinct) == 1:
        return "one"
    if len(distinct) > 1:
        return "several"
    if any(v.bound for v in values):
        return "bound"
    if any(v.negated for v in values):
        return "negated"
    return "none"


# --- the final statement of a response ----------------------------------------------------------

def read_final(text: str, threshold_one: bool = False) -> Reading | None:
    """The reading of a response's final statement: its last sentence that holds a value.

    Passed over on the way back: up to two closing sentences without a value ("I hope this
    helps!"), and one sentence that only rejects a value ("合計は45頭です。4頭ではありません。",
    "The answer is 14. Not 12.") when the sentence before it is on the same line; the rejected
    values never count. A value-less sentence that reads like an answer ('Đáp số: bảy trang', a
    label and its words: number words not read) is the final statement: it gives none (kind
    'none'). None where the final sentence holds maths this structure does not read."""
    tail = text[-4 * MAX_STATEMENT:]
    listed = OPTION_LINE_RE.findall(tail.rstrip().split("\n")[-1]) and _option_lines(tail)
    if listed:
        return listed
    spans = sentences(tail)
    rejected: set[Fraction] = set()
    skipped = 0
    after_rejection = None
    last_closing = ""
    skipped_weak = False
    for index in range(len(spans) - 1, max(-1, len(spans) - 5), -1):
        start, end = spans[index]
        sentence = tail[start:end]
        reading = read_statement(sentence, threshold_one)
        if reading is None:
            # maths after a closing sentence is the maths readers' ('x = 9. I hope this helps!'),
            # not after a sentence whose only number words are ambiguous ('… có ba viên bi.')
            return Reading("none", (), last_closing) if skipped_weak else None
        if after_rejection is not None and "\n" in tail[start:after_rejection]:
            return Reading("negated", (), tail[after_rejection:])  # the rejection opened its own line
        if reading.kind == "none" and not any(is_letter(c) or c.isdigit() for c in sentence):
            continue  # '**', '😊', '---': marks, no sentence
        if reading.kind == "none":
            # a label and words ('Đáp số: …') or a conclusion ('따라서 모두 열네 개입니다.') is an answer in
            # words not read, not a closing: the working before it is not taken for it
            if skipped >= 2 or re.search(r"[:：]\s*[^\W\d_]", sentence) or after_rejection is not None \
                    or _find(CONCLUDE, sentence):
                return Reading("none", (), sentence)
            skipped += 1
            last_closing = sentence
            skipped_weak = skipped_weak or any(v.weak for v in reading.values)
            continue
        if skipped and (not _answer_like(reading) or skipped_weak and len(reading.values) > 1):
            # a value-less last sentence after working: perhaps a closing, perhaps an answer in words
            # that are not read ('Đáp án là năm mươi bốn.'); the working's value is not taken for it
            return Reading("none", (), last_closing)
        if reading.kind == "negated" and after_rejection is None:
            rejected |= {v.value for v in reading.values if v.negated}
            after_rejection = start
            continue
        if rejected and reading.kind == "one" and reading.asserted[0].value in rejected:
            return Reading("negated", reading.values, sentence)
        if reading.kind == "negated":
            return reading
        if reading.kind == "one" and _asks(sentence):
            return Reading("question", reading.values, sentence)  # 'Is the answer 14?' asserts nothing
        return reading
    if rejected:
        return Reading("negated", (), tail[after_rejection or 0:])
    return None


OPTION_LINE_RE = re.compile(r"^[ \t*>-]*\(?([A-Za-z])[).:：]\s*\S")


def _option_lines(text: str) -> Reading | None:
    """'A: 12\nB: 15\nC: 18\nD: 21': the last lines are options labelled by consecutive letters,
    a list, not a statement of one value (several)."""
    lines = [line for line in text.rstrip().split("\n") if line.strip()][-6:]
    labels = [OPTION_LINE_RE.match(line) for line in lines]
    run = []
    for line, label in zip(reversed(lines), reversed(labels)):
        if label is None or run and ord(label.group(1).upper()) != ord(run[-1][0]) - 1:
            break
        run.append((label.group(1).upper(), line))
    if len(run) < 2:
        return None
    values = [v for _, line in run for v in (read_statement(line[OPTION_LINE_RE.match(line).end() - 1:]) or
                                              Reading("none", (), "")).values]
    return Reading("several", tuple(values), "\n".join(line for _, line in reversed(run)))


def _asks(sentence: str) -> bool:
    """The sentence ends with a question mark (a character so named, in any script)."""
    end = sentence.rstrip(" \t\n\"'”’»)）*_")[-1:]
    return bool(end) and "QUESTION MARK" in unicodedata.name(end, "")


def _answer_like(reading: Reading) -> bool:
    """A statement of one value in prose (no equation chain, no other value): what an answer
    before a closing sentence looks like, not a line of working."""
    return reading.kind == "one" and not any(v.working for v in reading.values) and len(reading.values) <= 2


def corrected_after(text: str, reading: Reading) -> Reading | None:
    """A later sentence that corrects a stated answer ("The answer is 14. Wait, no: it's 16.",
    "الجواب هو 40. لا، عذرًا: 140."): its reading when a sentence after the statement opens with
    a correction word and states a value of its own; None otherwise (the statement stands)."""
    for start, end in sentences(text[:2 * MAX_STATEMENT]):
        sentence = text[start:end]
        lead = sentence.lstrip(" \t\n*_>#-–—.…")
        if _correction_at(lead) is None:
            continue
        later = read_statement(sentence)
        if later is not None and later.kind in ("one", "several", "hedge", "bound"):
            if later.kind == "one" and reading.kind == "one" and later.asserted[0].value == reading.asserted[0].value:
                return None
            return later
    return None


# a line that opens with a label: a few words and a colon ('In short:', 'Also nochmal:', '**Result:**')
LABEL_LINE_RE = re.compile(r"^[ \t*_>#-]*[^\W\d_][^\n:：\d]{0,40}?[:：]")


def restated_after(text: str, reading: Reading) -> Reading | None:
    """A later line that states the answer again under a label of its own ('Antwort: 14.' then
    'Also nochmal: 16 kg.', 'In short: 16'): two final answers. The reading of both ('several')
    when the later line asserts one other value in prose; None when it repeats the value, holds
    working (a check: 'Check: 7 × 2 = 14'), a percent beside a plain answer (a confidence, a
    share) or no value. A later answer never replaces the first here: it only makes two."""
    if reading.kind != "one":
        return None
    first = reading.asserted[0]
    for line in text[:2 * MAX_STATEMENT].split("\n"):
        label = LABEL_LINE_RE.match(line)
        if label is None:
            continue
        later = read_statement(line[label.end():])
        if later is None or later.kind != "one" or len(later.values) != 1 or later.values[0].working:
            continue
        other = later.asserted[0]
        if other.value != first.value and other.percent == first.percent:
            return Reading("several", reading.values + later.values, reading.statement + "\n" + line.strip())
    return None

