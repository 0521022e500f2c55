"""CMMLU: Chinese multiple-choice questions in 67 subjects, the `test` split (11,582 items).

Data: cmmlu/{test,dev}/<subject>.csv with header ",Question,A,B,C,D,Answer": an unnamed
index column (not read) and capitalised names. Every cell is read as text.
Item ids are "<subject>/<row index in file>" (0-based; equal to the index column).
`--fewshot K` (K <= 5) puts the first K dev rows of the same subject before the question, as
earlier chat turns.

Categories follow CMMLU's src/categories.py: each subject has a subject group that belongs to
STEM, Humanities, Social Science or Other; 15 subjects are also "China specific". A subset has
one category here, so those 15 are in "China specific" (their other group is in
CHINA_SPECIFIC_ALSO, for readers who want CMMLU's overlapping five-way table).
"""
from __future__ import annotations

from pathlib import Path

from ._exam import SubjectExam, grade_choice
from .pack import LoadOptions, Pack

VERSION = "1"
COMMIT = "d6e7b716d8ac694f38969a6c0407437d1fded799"  # haonan-li/CMMLU
ONLINE_URL = "https://raw.githubusercontent.com/haonan-li/CMMLU/{commit}/data/{split}/{subject}.csv"
DEV_PER_SUBJECT = 5

# subject -> (Chinese name, category). "China specific" subjects name their other category
# in CHINA_SPECIFIC_ALSO.
SUBJECTS: dict[str, tuple[str, str]] = {
    "agronomy": ("农学", "Other"),
    "anatomy": ("解剖学", "STEM"),
    "ancient_chinese": ("古汉语", "China specific"),
    "arts": ("艺术学", "Humanities"),
    "astronomy": ("天文学", "STEM"),
    "business_ethics": ("商业伦理", "Social Science"),
    "chinese_civil_service_exam": ("中国公务员考试", "China specific"),
    "chinese_driving_rule": ("中国驾驶规则", "China specific"),
    "chinese_food_culture": ("中国饮食文化", "China specific"),
    "chinese_foreign_policy": ("中国外交政策", "China specific"),
    "chinese_history": ("中国历史", "China specific"),
    "chinese_literature": ("中国文学", "China specific"),
    "chinese_teacher_qualification": ("中国教师资格", "China specific"),
    "clinical_knowledge": ("临床知识", "Other"),
    "college_actuarial_science": ("大学精算学", "STEM"),
    "college_education": ("大学教育学", "Social Science"),
    "college_engineering_hydrology": ("大学工程水文学", "STEM"),
    "college_law": ("大学法律", "Humanities"),
    "college_mathematics": ("大学数学", "STEM"),
    "college_medical_statistics": ("大学医学统计", "STEM"),
    "college_medicine": ("大学医学", "Other"),
    "computer_science": ("计算机科学", "STEM"),
    "computer_security": ("计算机安全", "Other"),
    "conceptual_physics": ("概念物理学", "STEM"),
    "construction_project_management": ("建设工程管理", "China specific"),
    "economics": ("经济学", "Social Science"),
    "education": ("教育学", "Social Science"),
    "electrical_engineering": ("电气工程", "STEM"),
    "elementary_chinese": ("小学语文", "China specific"),
    "elementary_commonsense": ("小学常识", "China specific"),
    "elementary_information_and_technology": ("小学信息技术", "Other"),
    "elementary_mathematics": ("初等数学", "STEM"),
    "ethnology": ("民族学", "China specific"),
    "food_science": ("食品科学", "Other"),
    "genetics": ("遗传学", "STEM"),
    "global_facts": ("全球事实", "Humanities"),
    "high_school_biology": ("高中生物", "STEM"),
    "high_school_chemistry": ("高中化学", "STEM"),
    "high_school_geography": ("高中地理", "Social Science"),
    "high_school_mathematics": ("高中数学", "STEM"),
    "high_school_physics": ("高中物理学", "STEM"),
    "high_school_politics": ("高中政治", "China specific"),
    "human_sexuality": ("人类性行为", "Other"),
    "international_law": ("国际法学", "Humanities"),
    "journalism": ("新闻学", "Social Science"),
    "jurisprudence": ("法理学", "Humanities"),
    "legal_and_moral_basis": ("法律与道德基础", "Other"),
    "logical": ("逻辑学", "Humanities"),
    "machine_learning": ("机器学习", "STEM"),
    "management": ("管理学", "Social Science"),
    "marketing": ("市场营销", "Social Science"),
    "marxist_theory": ("马克思主义理论", "Humanities"),
    "modern_chinese": ("现代汉语", "China specific"),
    "nutrition": ("营养学", "Other"),
    "philosophy": ("哲学", "Humanities"),
    "professional_accounting": ("专业会计", "Social Science"),
    "professional_law": ("专业法学", "Humanities"),
    "professional_medicine": ("专业医学", "Other"),
    "professional_psychology": ("专业心理学", "Social Science"),
    "public_relations": ("公共关系", "Social Science"),
    "security_study": ("安全研究", "Social Science"),
    "sociology": ("社会学", "Social Science"),
    "sports_science": ("体育学", "Other"),
    "traditional_chinese_medicine": ("中医中药", "China specific"),
    "virology": ("病毒学", "STEM"),
    "world_history": ("世界历史", "Humanities"),
    "world_religions": ("世界宗教", "Humanities"),
}
# the other CMMLU category of each "China specific" subject
CHINA_SPECIFIC_ALSO = {
    "ancient_chinese": "Social Science", "chinese_civil_service_exam": "Social Science",
    "chinese_driving_rule": "Other", "chinese_food_culture": "Social Science",
    "chinese_foreign_policy": "Social Science", "chinese_history": "Humanities",
    "chinese_literature": "Humanities", "chinese_teacher_qualification": "Social Science",
    "construction_project_management": "Other", "elementary_chinese": "Social Science",
    "elementary_commonsense": "Other", "ethnology": "Social Science",
    "high_school_politics": "Social Science", "modern_chinese": "Social Science",
    "traditional_chinese_medicine": "Other",
}
SUBSETS = sorted(SUBJECTS)
CATEGORIES = {subject: category for subject, (_, category) in SUBJECTS.items()}
COUNT = 11582  # test rows (MANIFEST.md)

# --- the prompt (0-shot; CMMLU's own wording, asking for the letter on the last line) -------

PROMPT = ("以下是关于{subject}的单项选择题，请选出正确答案。\n\n"
          "{question}\n{options}\n\n"
          "最后一行只写“答案：<选项字母>”。")
ANSWER_LINE = "答案：{letter}"  # the assistant turn of a few-shot example
TEMPLATE = PROMPT + "\n---\n" + ANSWER_LINE

# --- loading: test rows, dev rows as few-shot examples (tasks/_exam.SubjectExam) -------------

def _location(opts: LoadOptions, split: str, subject: str) -> str:
    if opts.data_dir is None:
        return ONLINE_URL.format(commit=COMMIT, split=split, subject=subject)
    return str(Path(opts.data_dir) / "cmmlu" / split / f"{subject}.csv")


EXAM = SubjectExam(name="cmmlu", subjects=SUBJECTS, prompt_text=PROMPT, answer_line=ANSWER_LINE,
                   question_column="Question", answer_column="Answer", split="test", location=_location,
                   dev_per_subject=DEV_PER_SUBJECT)
prompt = EXAM.prompt
load = EXAM.load
grade = grade_choice


PACK = Pack(
    name="cmmlu",
    version=VERSION,
    description="CMMLU test: Chinese multiple-choice questions in 67 subjects "
                "(STEM, Humanities, Social Science, Other, China specific)",
    template=TEMPLATE,
    load=load,
    prompt=prompt,
    grade=grade,
    subsets=SUBSETS,
    categories=CATEGORIES,
    source=f"haonan-li/CMMLU@{COMMIT[:7]} data/test/*.csv (offline: <data-dir>/cmmlu/test/)",
    data_paths=("cmmlu/test",),
    count=COUNT,
)
