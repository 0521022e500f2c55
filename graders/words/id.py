"""Indonesian function words and number words, by role."""
NEGATE_BEFORE = ("bukan", "bukannya", "alih-alih")
NEGATE_AFTER = ("salah",)
NOT_NEGATION = ("bukan hanya", "tidak hanya")
NO = ("bukan", "tidak")
OR = ("atau", "ataupun")
RANGE_START = ("antara",)
RANGE_TO = ("sampai", "hingga")
AND = ("dan",)
BOUND_BEFORE = ("setidaknya", "paling sedikit", "paling banyak", "minimal", "maksimal", "lebih dari", "kurang dari", "hampir")
BOUND_AFTER = ("atau lebih",)
CONTRAST = ("melainkan", "tetapi", "tapi", "namun")
CORRECTION = ("tunggu", "maaf", "sebenarnya")
CONCLUDE = ("jadi", "maka", "sehingga")
REASON = ("karena",)
COMMENT = ("yaitu", "yakni")
ADJUNCT_BEFORE = ("dalam", "selama", "setelah", "untuk", "setiap")
COPULA = ("adalah", "ialah", "menjadi")
SCALE = {"ribu": 10**3, "juta": 10**6}
GRAMMAR = "generic"  # numbers.py: 'belas' (+10), 'puluh' (x10), 'ratus' (x100), 'ribu' and 'juta' multiply the section
NUMBERS = {"nol": ("digit", 0), "satu": ("digit", 1), "dua": ("digit", 2), "tiga": ("digit", 3), "empat": ("digit", 4),
           "lima": ("digit", 5), "enam": ("digit", 6), "tujuh": ("digit", 7), "delapan": ("digit", 8), "sembilan": ("digit", 9),
           "sepuluh": ("fixed", 10), "sebelas": ("fixed", 11), "seratus": ("fixed", 100), "seribu": ("scale", 1000),
           "belas": ("fixed", 10), "puluh": ("times", 10), "ratus": ("times", 100), "ribu": ("scale", 1000), "juta": ("scale", 10**6)}
AMBIGUOUS = ("lima",)  # the city: alone it counts only in a hedge
