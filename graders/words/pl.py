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
GRAMMAR = "slavic"
NUMBERS = {
    **dict.fromkeys(("zero",), ("unit", 0)), **dict.fromkeys(("jeden", "jedna", "jedno"), ("unit", 1)),
    **dict.fromkeys(("dwa", "dwie"), ("unit", 2)), "trzy": ("unit", 3), "cztery": ("unit", 4), "pięć": ("unit", 5),
    "sześć": ("unit", 6), "siedem": ("unit", 7), "osiem": ("unit", 8), "dziewięć": ("unit", 9),
    **{w: ("teen", 10 + i) for i, w in enumerate(("dziesięć", "jedenaście", "dwanaście", "trzynaście", "czternaście",
                                                 "piętnaście", "szesnaście", "siedemnaście", "osiemnaście", "dziewiętnaście"))},
    **{w: ("ten", 20 + 10 * i) for i, w in enumerate(("dwadzieścia", "trzydzieści", "czterdzieści", "pięćdziesiąt",
                                                     "sześćdziesiąt", "siedemdziesiąt", "osiemdziesiąt", "dziewięćdziesiąt"))},
    **{w: ("hundred", 100 * (i + 1)) for i, w in enumerate(("sto", "dwieście", "trzysta", "czterysta", "pięćset", "sześćset",
                                                           "siedemset", "osiemset", "dziewięćset"))},
    **dict.fromkeys(("tysiąc", "tysiące", "tysięcy"), ("scale", 10**3)),
    **dict.fromkeys(("milion", "miliony", "milionów"), ("scale", 10**6)),
}
AMBIGUOUS = ("sto",)
