"""Generators of choice answers for issue 32 part B: negated, corrected and hedged letters, in
sixteen languages, with look-alike letters and chat-template debris.

Every template is written here, in each language's own words; but those words are the function
words graders/words/ lists (negations, "or", corrections), so the generated answers are a
regression test of the lexicons, not a test of generalisation (issue 43). Each answer comes
with what it must grade to: the gold's letter is right only when the answer asserts it and
no other. `cases(seed, rounds)` gives a seeded, bounded sample (tests/test_graders_round4_choice.py
runs it in CI; benchmarks/graders.py reports its figures per shape and language).

Shapes (`Case.shape`):
  assert      one letter stated                         -> right for it, wrong for another
  contrast    "G, not W" and "not W but G" orders       -> right for G, not right for W
  correction  "W? No, G." / "first W, but G"            -> right for G, not right for W
  negated     only "not W"                              -> not right for W
  hedge       "G or W"                                  -> not right for either
  lookalike   the letter written in Cyrillic / Greek / full-width forms -> as its Latin letter
  debris      any of the above + a chat-template turn naming another letter -> same verdict
"""
from __future__ import annotations

import random
from dataclasses import dataclass

LETTERS = "ABCD"

# {X}: one letter; {G}: the letter asserted, {W}: the one rejected; {A}/{B}: two letters hedged
TEMPLATES: dict[str, dict[str, tuple[str, ...]]] = {
    "en": {
        "assert": ("The answer is {X}.", "Answer: ({X})", "So the correct option is {X}.", "{X}"),
        "contrast": ("The answer is {G}, not {W}.", "It's not {W}, it's {G}.", "The answer is not {W} but {G}.",
                     "{G} rather than {W}.", "I pick {G} instead of {W}."),
        "correction": ("{W}? No, {G}.", "I first thought {W}, but it is {G}.", "The answer is {W}. Wait, no: it is {G}.",
                       "Initially I chose {W}; on reflection the correct answer is {G}.", "{W}... actually, {G}."),
        "negated": ("The answer is not {W}.", "It is definitely not {W}.", "Not {W}."),
        "hedge": ("The answer is {A} or {B}.", "Either {A} or {B}.", "It could be {A} or {B}."),
    },
    "zh": {
        "assert": ("答案是{X}。", "所以选{X}。", "正确答案：{X}"),
        "contrast": ("答案是{G}，不是{W}。", "答案是{G}而不是{W}。", "不是{W}，而是{G}。", "答案不是{W}，是{G}。"),
        "correction": ("{W}？不对，是{G}。", "一开始我选{W}，但其实是{G}。", "答案是{W}。等等，不对，应该是{G}。"),
        "negated": ("答案不是{W}。", "肯定不是{W}。"),
        "hedge": ("答案是{A}或{B}。", "可能是{A}或者{B}。"),
    },
    "fr": {
        "assert": ("La réponse est {X}.", "Réponse : {X}"),
        "contrast": ("La réponse est {G}, pas {W}.", "La réponse est {G} et non {W}.", "Ce n'est pas {W}, c'est {G}.",
                     "Non pas {W}, mais {G}."),
        "correction": ("{W} ? Non, {G}.", "J'ai d'abord pensé {W}, mais c'est {G}."),
        "negated": ("La réponse n'est pas {W}.", "Ce n'est pas {W}."),
        "hedge": ("La réponse est {A} ou {B}.",),
    },
    "de": {
        "assert": ("Die Antwort ist {X}.", "Antwort: {X}"),
        "contrast": ("Die Antwort ist {G}, nicht {W}.", "Nicht {W}, sondern {G}.", "Die Antwort ist nicht {W}, sondern {G}."),
        "correction": ("{W}? Nein, {G}.", "Zuerst dachte ich {W}, aber es ist {G}."),
        "negated": ("Die Antwort ist nicht {W}.",),
        "hedge": ("Die Antwort ist {A} oder {B}.",),
    },
    "es": {
        "assert": ("La respuesta es {X}.", "Respuesta: {X}"),
        "contrast": ("La respuesta es {G}, no {W}.", "No es la {W}, es la {G}.", "La respuesta no es {W}, sino {G}."),
        "correction": ("¿{W}? No, {G}.", "Primero pensé {W}, pero es {G}."),
        "negated": ("La respuesta no es {W}.", "No es la {W}."),
        "hedge": ("La respuesta es {A} o {B}.",),
    },
    "it": {
        "assert": ("La risposta è {X}.", "Risposta: {X}"),
        "contrast": ("La risposta è {G}, non {W}.", "Non è {W}, ma {G}."),
        "correction": ("{W}? No, {G}.", "All'inizio pensavo {W}, ma è {G}."),
        "negated": ("La risposta non è {W}.",),
        "hedge": ("La risposta è {A} o {B}.",),
    },
    "pt": {
        "assert": ("A resposta é {X}.", "Resposta: {X}"),
        "contrast": ("A resposta é {G}, não {W}.", "Não é {W}, é {G}.", "A resposta não é {W}, mas sim {G}."),
        "correction": ("{W}? Não, {G}.", "Primeiro pensei {W}, mas é {G}."),
        "negated": ("A resposta não é {W}.",),
        "hedge": ("A resposta é {A} ou {B}.",),
    },
    "ru": {
        "assert": ("Ответ: {X}.", "Правильный ответ — {X}."),
        "contrast": ("Ответ: {G}, а не {W}.", "Не {W}, а {G}.", "Ответ не {W}, а {G}."),
        "correction": ("{W}? Нет, {G}.", "Сначала я думал {W}, но это {G}."),
        "negated": ("Ответ не {W}.",),
        "hedge": ("Ответ: {A} или {B}.",),
    },
    "ja": {
        "assert": ("答えは{X}です。", "正解は{X}。"),
        "contrast": ("答えは{G}で、{W}ではありません。", "{W}ではなく{G}です。"),
        "correction": ("{W}？いいえ、{G}です。", "最初は{W}だと思いましたが、{G}です。"),
        "negated": ("答えは{W}ではありません。",),
        "hedge": ("答えは{A}か{B}です。",),
    },
    "ko": {
        "assert": ("정답은 {X}입니다.", "답: {X}"),
        "contrast": ("정답은 {G}이고, {W}가 아닙니다.", "{W}가 아니라 {G}입니다."),
        "correction": ("{W}? 아니요, {G}입니다.", "처음에는 {W}라고 생각했지만 {G}입니다."),
        "negated": ("정답은 {W}가 아닙니다.",),
        "hedge": ("정답은 {A} 또는 {B}입니다.",),
    },
    "ar": {
        "assert": ("الجواب هو {X}.", "الإجابة: {X}"),
        "contrast": ("الجواب هو {G} وليس {W}.", "ليس {W} بل {G}."),
        "correction": ("{W}؟ لا، {G}.", "ظننت أولاً {W}، لكنه {G}."),
        "negated": ("الجواب ليس {W}.",),
        "hedge": ("الجواب هو {A} أو {B}.",),
    },
    "hi": {
        "assert": ("उत्तर {X} है।", "सही विकल्प {X} है।"),
        "contrast": ("उत्तर {G} है, {W} नहीं।", "{W} नहीं, बल्कि {G}।"),
        "correction": ("{W}? नहीं, {G}।", "पहले मैंने {W} सोचा, लेकिन उत्तर {G} है।"),
        "negated": ("उत्तर {W} नहीं है।",),
        "hedge": ("उत्तर {A} या {B} है।",),
    },
    "tr": {
        "assert": ("Cevap {X}.", "Doğru cevap {X} şıkkıdır."),
        "contrast": ("Cevap {G}, {W} değil.", "{W} değil, {G}."),
        "correction": ("{W}? Hayır, {G}.", "Önce {W} düşündüm ama cevap {G}."),
        "negated": ("Cevap {W} değil.",),
        "hedge": ("Cevap {A} veya {B}.",),
    },
    "nl": {
        "assert": ("Het antwoord is {X}.",),
        "contrast": ("Het antwoord is {G}, niet {W}.", "Niet {W}, maar {G}."),
        "correction": ("{W}? Nee, {G}.", "Eerst dacht ik {W}, maar het is {G}."),
        "negated": ("Het antwoord is niet {W}.",),
        "hedge": ("Het antwoord is {A} of {B}.",),
    },
    "pl": {
        "assert": ("Odpowiedź to {X}.",),
        "contrast": ("Odpowiedź to {G}, nie {W}.", "Nie {W}, lecz {G}."),
        "correction": ("{W}? Nie, {G}.", "Najpierw myślałem {W}, ale to {G}."),
        "negated": ("Odpowiedź to nie {W}.",),
        "hedge": ("Odpowiedź to {A} lub {B}.",),
    },
    "vi": {
        "assert": ("Đáp án là {X}.",),
        "contrast": ("Đáp án là {G}, không phải {W}.", "Không phải {W} mà là {G}."),
        "correction": ("{W}? Không, {G}.", "Lúc đầu tôi nghĩ {W}, nhưng đáp án là {G}."),
        "negated": ("Đáp án không phải là {W}.",),
        "hedge": ("Đáp án là {A} hoặc {B}.",),
    },
}
LANGUAGES = tuple(TEMPLATES)

# look-alike forms of the option letters a model may write (Cyrillic, Greek, full-width)
LOOKALIKES = {"A": ("\u0410", "\u0391", "\uff21"), "B": ("\u0412", "\u0392", "\uff22"),
              "C": ("\u0421", "\uff23"), "D": ("\uff24",)}

# reasoning lines before the final statement (real working of the exam packs' kind, no letters)
WORKING = (
    "We compare each statement with the passage.",
    "根据题意，逐项分析。",
    "Let us check the options one by one against the definition.",
    "首先，题干给出的条件说明了该过程的特点。",
    "Nous vérifions chaque proposition.",
    "",
)
# chat-template debris after the end of the answer: another turn, naming another letter
DEBRIS = (
    "<|im_end|>\n<|im_start|>user\nNext question. Which is right? Answer: {W}<|im_end|>",
    "<|im_start|>user\nThe answer is {W}.",
    "<|eot_id|><|start_header_id|>user<|end_header_id|>\n\n答案是{W}",
    "</s><s>[INST] Is it {W}? [/INST] {W}",
    "<|endoftext|>Human: pick {W}\n\nAssistant: {W}",
    "<end_of_turn>\n<start_of_turn>user\nAnswer: {W}",
)


@dataclass(frozen=True)
class Case:
    gold: str
    response: str
    right: bool          # True: the verdict must be equal; False: it must not be (False or undecided)
    shape: str
    language: str


def _other(rng: random.Random, letter: str) -> str:
    return rng.choice([c for c in LETTERS if c != letter])


def _fill(template: str, **letters: str) -> str:
    return template.format(**letters)


def statement_cases(rng: random.Random, language: str, shape: str) -> list[Case]:
    """One template of `shape` in `language`, filled with random letters, and the cases it gives."""
    template = rng.choice(TEMPLATES[language][shape])
    g = rng.choice(LETTERS)
    w = _other(rng, g)
    working = rng.choice(WORKING)

    def say(text: str) -> str:
        return f"{working}\n{text}" if working else text

    if shape == "assert":
        text = say(_fill(template, X=g))
        return [Case(g, text, True, shape, language), Case(w, text, False, shape, language)]
    if shape in ("contrast", "correction"):
        text = say(_fill(template, G=g, W=w))
        return [Case(g, text, True, shape, language), Case(w, text, False, shape, language)]
    if shape == "negated":
        text = say(_fill(template, W=w))
        return [Case(w, text, False, shape, language)]
    if shape == "hedge":
        text = say(_fill(template, A=g, B=w) if rng.random() < 0.5 else _fill(template, A=w, B=g))
        return [Case(g, text, False, shape, language), Case(w, text, False, shape, language)]
    raise ValueError(shape)


def lookalike(case: Case, rng: random.Random) -> Case | None:
    """The same answer with its asserted letter written in a look-alike form."""
    forms = LOOKALIKES.get(case.gold if case.right else "", ())
    if not forms or case.shape != "assert":
        return None
    form = rng.choice(forms)
    lines = case.response.split("\n")
    last = lines[-1]
    at = last.rfind(case.gold)
    if at < 0:
        return None
    lines[-1] = last[:at] + form + last[at + 1:]
    return Case(case.gold, "\n".join(lines), True, "lookalike", case.language)


def with_debris(case: Case, rng: random.Random) -> Case:
    """The same case with a chat-template turn after it that names another letter."""
    other = _other(rng, case.gold)
    tail = rng.choice(DEBRIS).format(W=other)
    return Case(case.gold, case.response + rng.choice(("", "\n", " ")) + tail, case.right, case.shape, case.language)


SHAPES = ("assert", "contrast", "correction", "negated", "hedge", "lookalike", "debris")


def cases(seed: int = 32, rounds: int = 3) -> list[Case]:
    """A seeded sample: `rounds` passes over every language and statement shape (a random
    template each time), each case also with a look-alike letter where it has one and, one
    time in three, with template debris after it."""
    rng = random.Random(seed)
    out: list[Case] = []
    shapes = SHAPES[:5]
    for _ in range(rounds):
        for language in LANGUAGES:
            for shape in shapes:
                for case in statement_cases(rng, language, shape):
                    out.append(case)
                    alike = lookalike(case, rng)
                    if alike is not None:
                        out.append(alike)
                    if rng.random() < 0.3:
                        debris = with_debris(case, rng)
                        out.append(Case(debris.gold, debris.response, debris.right, "debris", debris.language))
    return out
