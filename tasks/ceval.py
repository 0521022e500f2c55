"""C-Eval: Chinese exam questions in 52 subjects, the `val` split (1,346 items with answers).

Data: ceval/{val,dev}/<subject>_{val,dev}.csv with header id,question,A,B,C,D,answer
(dev adds explanation). The files have CRLF line ends and CRLF inside quoted fields: a real
CSV parser reads them (Python's csv module) and text is stored with LF line ends.
The test split has no answers and is not used.
Item ids are "<subject>/<row index in file>" (0-based; equal to the file's `id` column).
`--fewshot K` (K <= 5) puts the first K dev rows of the same subject before the question, as
earlier chat turns.
"""
from __future__ import annotations

from pathlib import Path

from ._exam import SubjectExam, grade_choice
from .pack import LoadOptions, Pack

VERSION = "1"
HUB_ZIP = "https://huggingface.co/datasets/ceval/ceval-exam/resolve/main/ceval-exam.zip"
DEV_PER_SUBJECT = 5

# subject -> (Chinese name, category), as in C-Eval's subject_mapping.json
SUBJECTS: dict[str, tuple[str, str]] = {
    # STEM (20)
    "computer_network": ("计算机网络", "STEM"),
    "operating_system": ("操作系统", "STEM"),
    "computer_architecture": ("计算机组成", "STEM"),
    "college_programming": ("大学编程", "STEM"),
    "college_physics": ("大学物理", "STEM"),
    "college_chemistry": ("大学化学", "STEM"),
    "advanced_mathematics": ("高等数学", "STEM"),
    "probability_and_statistics": ("概率统计", "STEM"),
    "discrete_mathematics": ("离散数学", "STEM"),
    "electrical_engineer": ("注册电气工程师", "STEM"),
    "metrology_engineer": ("注册计量师", "STEM"),
    "high_school_mathematics": ("高中数学", "STEM"),
    "high_school_physics": ("高中物理", "STEM"),
    "high_school_chemistry": ("高中化学", "STEM"),
    "high_school_biology": ("高中生物", "STEM"),
    "middle_school_mathematics": ("初中数学", "STEM"),
    "middle_school_biology": ("初中生物", "STEM"),
    "middle_school_physics": ("初中物理", "STEM"),
    "middle_school_chemistry": ("初中化学", "STEM"),
    "veterinary_medicine": ("兽医学", "STEM"),
    # Social Science (10)
    "college_economics": ("大学经济学", "Social Science"),
    "business_administration": ("工商管理", "Social Science"),
    "marxism": ("马克思主义基本原理", "Social Science"),
    "mao_zedong_thought": ("毛泽东思想和中国特色社会主义理论体系概论", "Social Science"),
    "education_science": ("教育学", "Social Science"),
    "teacher_qualification": ("教师资格", "Social Science"),
    "high_school_politics": ("高中政治", "Social Science"),
    "high_school_geography": ("高中地理", "Social Science"),
    "middle_school_politics": ("初中政治", "Social Science"),
    "middle_school_geography": ("初中地理", "Social Science"),
    # Humanities (11)
    "modern_chinese_history": ("近代史纲要", "Humanities"),
    "ideological_and_moral_cultivation": ("思想道德修养与法律基础", "Humanities"),
    "logic": ("逻辑学", "Humanities"),
    "law": ("法学", "Humanities"),
    "chinese_language_and_literature": ("中国语言文学", "Humanities"),
    "art_studies": ("艺术学", "Humanities"),
    "professional_tour_guide": ("导游资格", "Humanities"),
    "legal_professional": ("法律职业资格", "Humanities"),
    "high_school_chinese": ("高中语文", "Humanities"),
    "high_school_history": ("高中历史", "Humanities"),
    "middle_school_history": ("初中历史", "Humanities"),
    # Other (11)
    "civil_servant": ("公务员", "Other"),
    "sports_science": ("体育学", "Other"),
    "plant_protection": ("植物保护", "Other"),
    "basic_medicine": ("基础医学", "Other"),
    "clinical_medicine": ("临床医学", "Other"),
    "urban_and_rural_planner": ("注册城乡规划师", "Other"),
    "accountant": ("注册会计师", "Other"),
    "fire_engineer": ("注册消防工程师", "Other"),
    "environmental_impact_assessment_engineer": ("环境影响评价工程师", "Other"),
    "tax_accountant": ("税务师", "Other"),
    "physician": ("医师资格", "Other"),
}
SUBSETS = sorted(SUBJECTS)
CATEGORIES = {subject: category for subject, (_, category) in SUBJECTS.items()}
COUNT = 1346  # val rows (MANIFEST.md)

# --- the prompt (0-shot; C-Eval's own wording, asking for the letter on the last line) ------

PROMPT = ("以下是中国关于{subject}考试的单项选择题，请选出其中的正确答案。\n\n"
          "{question}\n{options}\n\n"
          "最后一行只写“答案：<选项字母>”。")
ANSWER_LINE = "答案：{letter}"  # the assistant turn of a few-shot example
TEMPLATE = PROMPT + "\n---\n" + ANSWER_LINE

# --- loading: val rows, dev rows as few-shot examples (tasks/_exam.SubjectExam) -------------

def _location(opts: LoadOptions, split: str, subject: str) -> str:
    name = f"{subject}_{split}.csv"
    if opts.data_dir is None:
        return f"zip://{split}/{name}::{HUB_ZIP}"
    return str(Path(opts.data_dir) / "ceval" / split / name)


EXAM = SubjectExam(name="ceval", subjects=SUBJECTS, prompt_text=PROMPT, answer_line=ANSWER_LINE,
                   question_column="question", answer_column="answer", split="val", location=_location,
                   dev_per_subject=DEV_PER_SUBJECT)
prompt = EXAM.prompt
load = EXAM.load
grade = grade_choice


PACK = Pack(
    name="ceval",
    version=VERSION,
    description="C-Eval val: Chinese exam questions in 52 subjects (STEM, Social Science, Humanities, Other)",
    template=TEMPLATE,
    load=load,
    prompt=prompt,
    grade=grade,
    subsets=SUBSETS,
    categories=CATEGORIES,
    source="hub ceval/ceval-exam (ceval-exam.zip), val split (offline: <data-dir>/ceval/val/)",
    data_paths=("ceval/val",),
    count=COUNT,
)
