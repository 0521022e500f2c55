"""Ukrainian function words, by role."""
OR = ("або", "чи")
AND = ("і", "та")
