"""Polish function words and number words, by role."""
NEGATE_BEFORE = ("nie", "zamiast")
NEGATE_AFTER = ("nie jest poprawne", "błędnie", "źle", "błędna", "błędne", "błędny")
NOT_NEGATION = ("nie tylko",)
NO = ("nie",)
OR = ("lub", "albo", "czy")
RANGE_START = ("między",)
RANGE_TO = ("do",)
AND = ("a", "i", "oraz")
BOUND_BEFORE = ("co najmniej", "najwyżej", "ponad", "więcej niż", "mniej niż", "prawie", "maksymalnie")
BOUND_AFTER = ("lub więcej",)
CONTRAST = ("ale", "lecz", "tylko", "jednak")
CORRECTION = ("zaraz", "przepraszam", "właściwie")
CONCLUDE = ("co daje", "więc", "zatem")
REASON = ("ponieważ",)
COMMENT = ("co", "czyli")
ADJUNCT_BEFORE = ("w", "po", "przez", "na")
COPULA = ("jest", "są", "je")
RIGHT = ("poprawna", "poprawny", "poprawne", "poprawnie")
SCALE = {"tys": 10**3, "tysięcy": 10**3, "mln": 10**6, "milion": 10**6, "milionów": 10**6}
PREPOSITION = ("z", "ze", "od", "u", "do")
PRONOUN = ("on", "ona", "oni", "my", "ja", "razem", "łącznie")
GRAMMAR = "generic"
NUMBERS = {
    **dict.fromkeys(("zero",), ("digit", 0)), **dict.fromkeys(("jeden", "jedna", "jedno"), ("digit", 1)),
    **dict.fromkeys(("dwa", "dwie"), ("digit", 2)), "trzy": ("digit", 3), "cztery": ("digit", 4), "pięć": ("digit", 5),
    "sześć": ("digit", 6), "siedem": ("digit", 7), "osiem": ("digit", 8), "dziewięć": ("digit", 9),
    **{w: ("fixed", 10 + i) for i, w in enumerate(("dziesięć", "jedenaście", "dwanaście", "trzynaście", "czternaście",
                                                 "piętnaście", "szesnaście", "siedemnaście", "osiemnaście", "dziewiętnaście"))},
    **{w: ("fixed", 20 + 10 * i) for i, w in enumerate(("dwadzieścia", "trzydzieści", "czterdzieści", "pięćdziesiąt",
                                                     "sześćdziesiąt", "siedemdziesiąt", "osiemdziesiąt", "dziewięćdziesiąt"))},
    **{w: ("fixed", 100 * (i + 1)) for i, w in enumerate(("sto", "dwieście", "trzysta", "czterysta", "pięćset", "sześćset",
                                                           "siedemset", "osiemset", "dziewięćset"))},
    **dict.fromkeys(("tysiąc", "tysiące", "tysięcy"), ("scale", 10**3)),
    **dict.fromkeys(("milion", "miliony", "milionów"), ("scale", 10**6)),
}
AMBIGUOUS = ("sto",)
