"""Vietnamese function words and number words, by role."""
NEGATE_BEFORE = ("không phải", "chứ không phải", "thay vì", "chẳng phải", "không")
NEGATE_AFTER = ("sai",)
NOT_NEGATION = ("không chỉ",)
NO = ("không",)
OR = ("hoặc", "hay")
RANGE_TO = ("đến", "tới")
AND = ("và",)
BOUND_BEFORE = ("ít nhất", "tối thiểu", "tối đa", "nhiều hơn", "ít hơn", "gần")
BOUND_AFTER = ("trở lên",)
CONTRAST = ("mà", "nhưng", "mà là")
CORRECTION = ("khoan", "xin lỗi", "thực ra")
CONCLUDE = ("vì vậy", "do đó", "vậy")
REASON = ("vì",)
COMMENT = ("tức là",)
ADJUNCT_BEFORE = ("trong", "sau", "cho", "mỗi")
COPULA = ("là", "bằng")
RIGHT = ("đúng",)
SCALE = {"triệu": 10**6}
GRAMMAR = "generic"
NUMBERS = {**{w: ("digit", v) for w, v in {"một": 1, "mốt": 1, "hai": 2, "ba": 3, "bốn": 4, "tư": 4, "năm": 5, "lăm": 5,
                                            "nhăm": 5, "sáu": 6, "bảy": 7, "bẩy": 7, "tám": 8, "chín": 9}.items()},
           "mười": ("fixed", 10), "mươi": ("times", 10), "trăm": ("times", 100),
           **{w: ("scale", v) for w, v in {"nghìn": 1000, "ngàn": 1000, "triệu": 10**6, "tỷ": 10**9, "tỉ": 10**9}.items()},
           "linh": ("filler", 0), "lẻ": ("filler", 0)}
AMBIGUOUS = ("hai", "ba")
