"""English function words, by role (graders/words/__init__.py says what each role is)."""
NEGATE_BEFORE = ("not", "isn't", "isnt", "aren't", "wasn't", "weren't", "won't", "can't", "cannot", "doesn't", "don't", "didn't", "never", "neither", "nor",
                 "rather than", "instead of", "as opposed to", "other than", "no longer")
NEGATE_AFTER = ("is wrong", "is incorrect", "wrong", "incorrect", "is not correct", "is not right", "is not the answer", "isn't correct", "isn't right",
                "isn't the answer", "is false", "are false", "are wrong", "are incorrect")
NOT_NEGATION = ("not only",)
NO = ("no",)
EXCLUDE = ("except", "excluding", "eliminate", "eliminated", "rule out", "ruled out", "exclude", "excluded")
OR = ("or", "either", "vs")
RANGE_START = ("between",)
RANGE_TO = ("to",)
AND = ("and",)
BOUND_BEFORE = ("at least", "at most", "more than", "less than", "fewer than", "over", "under", "up to", "no more than", "no less than", "not more than",
                "not less than", "greater than", "smaller than", "above", "below", "almost", "nearly", "just over", "just under", "upwards of",
                "in excess of", "a minimum of", "a maximum of")
BOUND_AFTER = ("or more", "or less", "or fewer", "or over")
CONTRAST = ("but", "however")
CORRECTION = ("wait", "no wait", "actually", "correction", "sorry", "oops", "i mean", "scratch that", "hmm", "on reflection", "on second thought")
CONCLUDE = ("so", "therefore", "thus", "hence", "which means", "which makes", "that makes", "this means", "so that's", "thereby", "making", "giving",
            "leaving", "then", "for a total of", "totaling", "totalling", "resulting in", "which gives", "bringing the total to")
REASON = ("because", "since", "given that", "due to", "as", "whereas", "using", "as shown", "as we", "so that", "when we")
COMMENT = ("which", "which is", "that is", "i.e.", "i.e", "namely", "where")
ADJUNCT_BEFORE = ("in", "for", "after", "within", "per", "every", "each", "during")
COPULA = ("is", "are", "was", "were", "be", "will be", "would be", "equals", "equal", "equal to", "seems", "seem", "looks", "has", "had")
MODAL = ("could", "would", "might", "may", "can", "also", "does", "doesn't", "do", "let's", "lets", "let us", "to")
OPTION = ("option", "options", "choice", "choices", "letter")
CHECK = ("check", "checking", "verify", "verifying", "verification", "consider", "look at", "examine", "evaluate", "start with", "sanity check",
         "double-check", "double-checking", "probe")
APPROX = ("about", "approximately", "approx", "approx.", "roughly", "around", "or about")
CONDITION = ("when", "where", "if", "whenever")
QUESTION = ("Q", "Question", "Problem")
RIGHT = ("correct", "right", "true", "answer", "best", "one")
ARTICLE = ("the", "a", "an")
PREPOSITION = ("of", "with", "from", "by", "at", "on", "into", "out", "off", "about", "than")
PRONOUN = ("i", "you", "he", "she", "it", "we", "they", "this", "that", "these", "those", "there", "his", "her", "its", "their", "our", "my", "your", "here",
           "all", "each", "both", "in all", "in total", "total", "altogether")
SCALE = {"hundred": 100, "thousand": 10**3, "million": 10**6, "millions": 10**6, "billion": 10**9, "billions": 10**9,
         "trillion": 10**12}
ANSWER = ("answer", "answers")
FINAL = ("final", "correct", "right", "best", "true", "most likely", "only correct")
CHOOSE = ("i choose", "i pick", "i select", "i go with", "i would choose", "i would pick", "i would select", "i would go with", "i will choose",
          "i will go with", "i'd choose", "i'd pick", "i'd go with", "i'll choose", "i'll pick", "i'll go with")
CERTAIN = ("definitely", "clearly", "certainly", "obviously", "surely", "indeed")
TURN = ("Human", "User", "USER", "Instruction", "assistant", "model", "gpt", "bot")
GRAMMAR = "text2num"  # numbers.py reads this language's number words with text2num
