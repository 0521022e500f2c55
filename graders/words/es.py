"""Spanish function words, by role."""
NEGATE_BEFORE = ("no", "nunca", "en lugar de", "en vez de")
NEGATE_AFTER = ("no es correcto", "no es correcta", "no es la respuesta", "incorrecto", "incorrecta", "equivocado", "falsa",
                "falso")
NOT_NEGATION = ("no solo", "no sólo")
OR = ("o", "u", "ó")
RANGE_START = ("entre",)
RANGE_TO = ("a", "al", "hasta")
AND = ("y", "e")
BOUND_BEFORE = ("al menos", "como mínimo", "como máximo", "más de", "menos de", "casi")
BOUND_AFTER = ("o más", "o menos")
CONTRAST = ("sino", "pero")
CORRECTION = ("espera", "perdón", "en realidad", "corrijo")
CONCLUDE = ("lo que da", "lo que hace", "dando", "por lo tanto", "entonces", "así que")
REASON = ("porque", "ya que")
COMMENT = ("lo que", "es decir")
ADJUNCT_BEFORE = ("por", "para", "después de", "durante", "cada", "en")
COPULA = ("es", "son", "era", "será")
RIGHT = ("correcta", "correcto")
SCALE = {"mil": 10**3, "millones": 10**6, "millón": 10**6}
ARTICLE = ("el", "la", "los", "las", "un", "una")
PREPOSITION = ("de", "del", "con")
PRONOUN = ("él", "ella", "ellos", "nosotros", "yo", "se", "en total")
GRAMMAR = "text2num"  # numbers.py reads this language's number words with text2num
