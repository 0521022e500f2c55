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
GRAMMAR = "malay"  # numbers.py: 'belas' (+10), 'puluh' (x10), 'ratus' (x100), 'ribu' and 'juta' multiply the section
NUMBERS = {"nol": ("unit", 0), "satu": ("unit", 1), "dua": ("unit", 2), "tiga": ("unit", 3), "empat": ("unit", 4),
           "lima": ("unit", 5), "enam": ("unit", 6), "tujuh": ("unit", 7), "delapan": ("unit", 8), "sembilan": ("unit", 9),
           "sepuluh": ("fixed", 10), "sebelas": ("fixed", 11), "seratus": ("fixed", 100), "seribu": ("scale1", 1000),
           "belas": ("plus", 10), "puluh": ("times", 10), "ratus": ("times", 100), "ribu": ("scale", 1000), "juta": ("scale", 10**6)}
AMBIGUOUS = ("lima",)  # the city: alone it counts only in a hedge
