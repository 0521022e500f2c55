"""Arabic function words and number words, by role."""
NEGATE_BEFORE = ("ليس", "ليست", "لا", "لم", "لن", "وليس", "وليست", "ولا", "بدلا من", "بدلًا من", "بدلاً من", "عوضا عن", "عوضًا عن", "غير")
NEGATE_AFTER = ("خطأ", "خاطئ", "خاطئة")
NOT_NEGATION = ("ليس فقط",)
NO = ("لا",)
OR = ("أو", "إما")
RANGE_START = ("بين",)
RANGE_TO = ("إلى",)
AND = ("و",)
BOUND_BEFORE = ("على الأقل", "على الأكثر", "أكثر من", "أقل من")
BOUND_AFTER = ("أو أكثر",)
CONTRAST = ("بل", "لكن", "ولكن", "لكنه", "لكنها")
CORRECTION = ("انتظر", "عذرا", "عذرًا", "عذراً", "في الواقع")
CONCLUDE = ("لذلك", "إذن", "وبالتالي")
REASON = ("لأن",)
COMMENT = ("وهو", "أي")
ADJUNCT_BEFORE = ("في", "خلال", "بعد", "لكل")
COPULA = ("يساوي", "هو", "هي")
RIGHT = ("صحيح", "صحيحة", "صحيحا")
ANSWER = ("الجواب", "الإجابة", "النتيجة")
FINAL = ("الصحيح", "الصحيحة", "النهائية")
GRAMMAR = "generic"  # numbers.py: digits, fixed values, multipliers of the digit before and of the section
_UNITS = {**dict.fromkeys(("واحد", "واحدة", "أحد", "إحدى"), 1), **dict.fromkeys(("اثنان", "اثنين", "اثنتان", "اثنتين", "اثنا", "اثنتا"), 2),
          **dict.fromkeys(("ثلاثة", "ثلاث"), 3), **dict.fromkeys(("أربعة", "أربع"), 4), **dict.fromkeys(("خمسة", "خمس"), 5),
          **dict.fromkeys(("ستة", "ست"), 6), **dict.fromkeys(("سبعة", "سبع"), 7), **dict.fromkeys(("ثمانية", "ثماني", "ثمان"), 8),
          **dict.fromkeys(("تسعة", "تسع"), 9)}
_FIXED = {**dict.fromkeys(("عشرة", "عشر"), 10), **dict.fromkeys(("عشرون", "عشرين"), 20), **dict.fromkeys(("ثلاثون", "ثلاثين"), 30),
          **dict.fromkeys(("أربعون", "أربعين"), 40), **dict.fromkeys(("خمسون", "خمسين"), 50), **dict.fromkeys(("ستون", "ستين"), 60),
          **dict.fromkeys(("سبعون", "سبعين"), 70), **dict.fromkeys(("ثمانون", "ثمانين"), 80), **dict.fromkeys(("تسعون", "تسعين"), 90),
          **dict.fromkeys(("مئتان", "مائتان", "مئتين", "مائتين", "مئتا", "مائتا"), 200),
          **{f"{d}{h}": 100 * v for d, v in (("ثلاث", 3), ("أربع", 4), ("خمس", 5), ("ست", 6), ("سبع", 7), ("ثمان", 8),
                                              ("ثماني", 8), ("تسع", 9)) for h in ("مائة", "مئة")}}
NUMBERS = {**{w: ("digit", v) for w, v in _UNITS.items()}, **{w: ("fixed", v) for w, v in _FIXED.items()},
           **dict.fromkeys(("مائة", "مئة"), ("times", 100)), "و": ("filler", 0),
           **{w: ("scale", v) for w, v in {**dict.fromkeys(("ألف", "آلاف"), 1000), **dict.fromkeys(("ألفان", "ألفين", "ألفا"), 2000),
                                            **dict.fromkeys(("مليون", "ملايين"), 10**6)}.items()}}
