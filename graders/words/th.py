"""Thai function words and number words, by role ('~': written without spaces, matched anywhere)."""
NEGATE_BEFORE = ("~ไม่ใช่", "~แทนที่จะเป็น", "~แทนที่จะ", "~มิใช่")
NEGATE_AFTER = ("~ผิด",)
NO = ("~ไม่",)
OR = ("~หรือ",)
RANGE_START = ("~ระหว่าง",)
RANGE_TO = ("~ถึง",)
BOUND_BEFORE = ("~อย่างน้อย", "~มากกว่า", "~น้อยกว่า", "~เกือบ", "~ไม่เกิน", "~ไม่ต่ำกว่า")
CONTRAST = ("~แต่",)
CORRECTION = ("~เดี๋ยว", "~แก้ไข", "~ที่ถูก")
CONCLUDE = ("~ดังนั้น", "~เพราะฉะนั้น")
REASON = ("~เพราะ",)
COMMENT = ("~ซึ่ง",)
ADJUNCT_BEFORE = ("~ใน", "~สำหรับ", "~หลังจาก", "~ต่อ")
GRAMMAR = "generic"
NUMBERS = {**{w: ("digit", v) for w, v in {"หนึ่ง": 1, "เอ็ด": 1, "สอง": 2, "ยี่": 2, "สาม": 3, "สี่": 4, "ห้า": 5, "หก": 6,
                                            "เจ็ด": 7, "แปด": 8, "เก้า": 9}.items()},
           **{w: ("times", v) for w, v in {"สิบ": 10, "ร้อย": 100, "พัน": 1000, "หมื่น": 10**4, "แสน": 10**5}.items()},
           "ล้าน": ("scale", 10**6)}
