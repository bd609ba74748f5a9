#!/usr/bin/env python3
"""Deterministic generator of synthetic ChatGPT data exports (stdlib only).

Produces exports shaped like the real "Export data" archives so memport can be
tested and benchmarked without anybody's private chats:

* ``--layout single`` (default; the 2023-2025 shape): ``OUT/conversations.json``,
  one line, written exactly like Python's ``json.dumps`` defaults (separators
  ``", "`` / ``": "``, ``ensure_ascii=True`` so every non-ASCII character is a
  ``\\uXXXX`` escape, astral characters such as emoji as surrogate pairs).
* ``--layout sharded`` (the 2026 shape): ``OUT/conversations-000.json``,
  ``-001``, ... of about ``--shard-size`` (64 MiB) each, 2-space indent, sorted
  keys, no ``children`` arrays on mapping nodes, messages often lacking
  ``status``/``weight``/``recipient``/``end_turn``, plus
  ``OUT/export_manifest.json`` = ``{"export_files": [{"path", "size_bytes"}]}``.
* ``--zip`` additionally writes ``OUT.zip`` (deflate, level 6, fixed
  timestamps) with the same files at the archive root plus a few tiny but valid
  PNG assets ``file-<id>-image.png``: every other image pointer (up to 40
  files) resolves, the rest are missing on purpose.

Content mix (random mode): hidden system message at the start of ~85% of
conversations; hidden custom instructions (``user_editable_context``) in ~20%;
markdown answers with code blocks; ~10% conversations branch (regenerated
answer or edited prompt; ``current_node`` is the leaf of one branch, usually
the newest); python tool turns (``code`` -> ``execution_output``); image
uploads (``multimodal_text`` with ``image_asset_pointer`` parts); ``thoughts``
and ``reasoning_recap`` for reasoning models; rare ``in_progress`` answers with
``parts: [""]``; unicode (CJK, RTL, emoji, combining marks, U+2028) and
escape-heavy text (backslashes, quotes, tabs, ANSI escapes, CRLF); private-use
citation markers (``\\ue200cite\\ue202turn0search1\\ue201``); duplicate messages
across conversations ("thanks!", popular prompts and their canned answers);
null ``create_time``/``update_time``; and about 1 in 200 conversations is a
deep linear thread of 2,000-5,000 short messages.

Determinism: everything derives from ``--seed`` (no clock, no hash-order
dependence), so a given (--size, --seed, --layout) always yields the same
bytes.  The conversation stream is independent of the layout: a smaller
``--size`` yields a prefix of a bigger one, and both layouts carry the same
conversations (the sharded one just drops fields and is bigger per
conversation, so it holds fewer of them for the same size).

``--small`` writes a tiny hand-scripted export with one conversation per edge
case (see ``small_conversations``), used as the README quick-start example
and in tests.

Usage:
    python3 benches/gen_chatgpt.py --size 256M --out DIR [--seed 1]
                                   [--layout single|sharded] [--zip]
    python3 benches/gen_chatgpt.py --small --out examples/chatgpt-small [--zip]

Sizes accept K/M/G suffixes (binary: 1M = 2**20 bytes).  Generation stops as
soon as the written conversation bytes reach the target, so outputs overshoot
by at most one conversation.  Files are written under a ``.partial`` name and
renamed when complete, so an interrupted run never leaves a plausible-looking
truncated export behind.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import shutil
import struct
import sys
import zipfile
import zlib

from self_statements import SelfStatements

# --------------------------------------------------------------------------
# Constants
# --------------------------------------------------------------------------

KIB = 1024
MIB = 1024 * KIB
GIB = 1024 * MIB

# Conversation start times are drawn from [T_START, T_END).
T_START = 1672531200.0  # 2023-01-01T00:00:00Z
T_2023_05 = 1682899200.0  # 2023-05-01
T_2024 = 1704067200.0  # 2024-01-01
T_2024_05 = 1715558400.0  # 2024-05-13 (gpt-4o era)
T_2024_09 = 1726099200.0  # 2024-09-12 (o1 era)
T_2025 = 1735689600.0  # 2025-01-01
T_END = 1764547200.0  # 2025-12-01

# Fixed timestamp for zip members, so archives are reproducible byte-for-byte.
ZIP_DATE_TIME = (2025, 12, 1, 0, 0, 0)
ZIP_COMPRESSLEVEL = 6
MAX_ZIP_ASSETS = 40  # assets for image pointers 0, 2, 4, ... up to this many

BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
REASONING_MODELS = {"o1-preview", "o1-mini", "o1", "o3", "o4-mini", "gpt-5-thinking"}

# Citation marker as emitted by the web tool: U+E200 "cite" U+E202 ref U+E201.
CITE_OPEN, CITE_SEP, CITE_CLOSE = "\ue200", "\ue202", "\ue201"

WORDS = """
the of and to in is that for it as with was on be by this are or from at an
not have has can will which you your we they their there when what how why
more most some any each every other such only also just very than then
data value function error file code system model user memory process stream
buffer parser record field table query index cache thread async await task
request response server client network socket packet header body token
string integer float boolean array object vector matrix tensor schema type
trait struct enum module crate package library framework compiler runtime
build test deploy release version config option flag argument parameter
result output input format encode decode serialize parse validate transform
load store read write open close flush sync lock mutex channel queue worker
pipeline batch chunk window offset length size limit timeout retry backoff
simple quick efficient robust careful correct safe stable fast slow large
small better worse common typical specific general important useful clear
first second next last new old same different possible likely usually often
example approach solution problem issue question answer step idea reason
note case way part point time place work result change update design pattern
use make take give find show keep try need want know think see look help
run call return handle check compare measure improve avoid ensure allow
""".split()

TITLE_WORDS = """
Rust Python JSON Parser Error Fix Async Streaming Memory Leak Docker Setup
Kubernetes Deploy SQL Query Optimization Regex Help Recipe Ideas Travel Plan
Budget Spreadsheet Essay Outline Resume Review Cover Letter Workout Plan
Birthday Gift Email Draft Meeting Notes Summary Translation Math Proof
Linear Algebra Statistics Homework Git Rebase Merge Conflict CSS Layout
React Hooks TypeScript Types Bash Script Linux Permissions Nginx Config
Pandas DataFrame Plot Chart Garden Tips Dog Training Sleep Schedule Poem
Story Idea Product Name Marketing Copy Interview Prep Physics Question
""".split()

UNICODE_TITLES = [
    "日本語の質問 🍣",
    "机器学习入门",
    "Résumé en français — révision",
    "Привет, мир: настройка сервера",
    "مساعدة في قاعدة البيانات",
    "שאלה על פייתון",
    "한국어 번역 요청",
    "🚀 Launch plan ✨",
    "Ångström & naïve café notes",
    "数学: ∑ and 𝔼[X] 🤔",
]

# Multilingual / emoji / tricky-codepoint snippets.  Several contain astral
# characters (emoji, math alphanumerics) that become surrogate pairs.
UNICODE_SNIPPETS = [
    "你好，我想了解一下机器学习的基本原理，尤其是梯度下降是怎么工作的。",
    "这个函数在处理大文件时内存占用太高了，有没有流式处理的办法？",
    "この関数の戻り値の型を教えてください。エラーが出ます。",
    "東京で美味しいラーメン屋さんを教えてください 🍜",
    "한국어로 번역해 주세요: 좋은 아침입니다. 오늘 회의는 몇 시인가요?",
    "Привет! Как настроить nginx как обратный прокси для приложения?",
    "Γεια σου κόσμε — αυτή είναι μια δοκιμή με ελληνικά γράμματα.",
    "مرحبا، كيف يمكنني تحسين أداء قاعدة البيانات؟ شكرا جزيلا!",
    "שלום, מה שלומך? אני צריך עזרה עם הקוד הזה בבקשה.",
    "नमस्ते, क्या आप मेरी मदद कर सकते हैं? मुझे यह समझ नहीं आया।",
    "สวัสดีครับ ช่วยอธิบายเรื่องนี้หน่อยได้ไหมครับ",
    "Xin chào, bạn khỏe không? Tiếng Việt có rất nhiều dấu thanh.",
    "Crème brûlée, naïve café, façade, Ångström, Ærø, Straße, über, niño, São Paulo.",
    "Emoji time 🎉🚀🔥 ✅ ❤️ 👍🏽 👩‍💻 👨‍👩‍👧‍👦 🏳️‍🌈 🇯🇵 🇫🇷 😂🤖🧠",
    "Math: ∀x ∈ ℝ: x² ≥ 0, ∑ᵢ aᵢ = 1, 𝔼[X] = μ, runtime 𝒪(n log n), ½ ≈ 0.5 ± ε.",
    "Combining marks: e\u0301 vs \u00e9, Z\u0324\u0354\u0367\u0311a\u0308\u0356\u032dlg\u030c\u0317o\u0319 text.",
    "Invisible: zero\u200bwidth, no\u00a0break, rtl\u200fmark, bom\ufeffinside, soft\u00adhyphen.",
    "JS-hostile separators: line\u2028separator and paragraph\u2029separator.",
    "Arrows and boxes: → ← ↑ ↓ ⇒ ┌─┐ │ │ └─┘ ★ ☆ ♠ ♥ ♦ ♣ ✓ ✗",
    "Currency: € 12,50 · £9.99 · ¥1200 · ₹499 · ₩5000 · ₿0.001",
]

# Escape-heavy snippets: backslashes, quotes, tabs, CRLF, control characters.
ESCAPE_SNIPPETS = [
    "The log is at C:\\Users\\dev\\AppData\\Local\\Temp\\build.log and it says \"access denied\".",
    'Here is the payload: {"key": "value with \\"quotes\\"", "n": [1, 2, 3], "ok": true}',
    "Regex: ^\\d{3}-\\d{4}$ and \\bword\\b, plus a literal backslash \\\\ at the end.",
    "Columns:\tname\tage\tcity\nrow:\tAda\t36\tLondon",
    "Windows line endings:\r\nfirst line\r\nsecond line\r\n",
    "Terminal output: \x1b[31merror\x1b[0m: could not compile `memport` (bin \"memport\")",
    'HTML: <script>alert("hi")</script> & </script> inside a string',
    "Bell \x07 and form feed \x0c and vertical tab \x0b in pasted text.",
]

# Short follow-ups that recur across many conversations (dedup fodder).
COMMON_FOLLOWUPS = [
    "thanks!", "Thanks!", "thank you", "Thank you so much!", "continue",
    "go on", "ok", "Can you make it shorter?", "Explain like I'm five.",
    "Can you give an example?", "Why?", "Perfect, thanks.", "try again",
    "Translate that to French.", "Summarize this in 3 bullet points.",
]

# Canned answers to short follow-ups, also repeated across conversations.
COMMON_REPLIES = [
    "You're welcome! Let me know if you have any other questions.",
    "Glad I could help! 😊",
    "Sure — here's a shorter version:",
    "Of course. Let me continue from where I left off.",
]

CODE_TEMPLATES = {
    "python": [
        "import json\n\n\ndef {fn}(path):\n    \"\"\"Load {var} from a JSON file.\"\"\"\n"
        "    with open(path, encoding=\"utf-8\") as f:\n        data = json.load(f)\n"
        "    return [item for item in data if item.get(\"{var}\") is not None]\n\n\n"
        "if __name__ == \"__main__\":\n    print(len({fn}(\"data_{n}.json\")))",
        "from collections import Counter\n\n{var} = [{n}, {n2}, {n}, 7, {n2}]\n"
        "counts = Counter({var})\nfor key, value in counts.most_common({k}):\n"
        "    print(f\"{{key}}: {{value}}\")",
        "class {cls}:\n    def __init__(self, {var}):\n        self.{var} = {var}\n\n"
        "    def {fn}(self):\n        return sum(x * x for x in self.{var}) / max(len(self.{var}), 1)",
        "import pandas as pd\n\ndf = pd.read_csv(\"{var}.csv\")\n"
        "summary = df.groupby(\"{col}\").agg({{\"value\": [\"mean\", \"max\"]}})\nprint(summary.head({k}))",
    ],
    "rust": [
        "use std::collections::HashMap;\n\nfn {fn}(input: &str) -> HashMap<&str, usize> {{\n"
        "    let mut counts = HashMap::new();\n    for word in input.split_whitespace() {{\n"
        "        *counts.entry(word).or_insert(0) += 1;\n    }}\n    counts\n}}",
        "#[derive(Debug, Clone)]\npub struct {cls} {{\n    pub {var}: Vec<u{bits}>,\n}}\n\n"
        "impl {cls} {{\n    pub fn {fn}(&self) -> Option<&u{bits}> {{\n        self.{var}.iter().max()\n    }}\n}}",
        "fn main() -> anyhow::Result<()> {{\n    let file = std::fs::File::open(\"{var}.json\")?;\n"
        "    let reader = std::io::BufReader::new(file);\n"
        "    let value: serde_json::Value = serde_json::from_reader(reader)?;\n"
        "    println!(\"{{}}\", value[\"{col}\"]);\n    Ok(())\n}}",
    ],
    "javascript": [
        "async function {fn}(url) {{\n  const res = await fetch(url);\n"
        "  if (!res.ok) throw new Error(`HTTP ${{res.status}}`);\n  const {var} = await res.json();\n"
        "  return {var}.filter((x) => x.{col} > {n});\n}}",
        "const {var} = [{n}, {n2}, {k}];\nconst total = {var}.reduce((a, b) => a + b, 0);\n"
        "console.log(`total = ${{total}}`);",
    ],
    "bash": [
        "#!/usr/bin/env bash\nset -euo pipefail\n\nfor f in ./{var}/*.json; do\n"
        "  echo \"processing $f\"\n  jq '.[] | .{col}' \"$f\" > \"${{f%.json}}.out\"\ndone",
        "docker run --rm -it -v \"$PWD\":/app -p {port}:{port} {var}:latest",
    ],
    "sql": [
        "SELECT {col}, COUNT(*) AS n\nFROM {var}\nWHERE created_at >= '2024-01-01'\n"
        "GROUP BY {col}\nORDER BY n DESC\nLIMIT {k};",
        "CREATE INDEX idx_{var}_{col} ON {var} ({col});",
    ],
    "json": [
        "{{\n  \"name\": \"{var}\",\n  \"version\": \"{k}.{n}.0\",\n  \"enabled\": true,\n"
        "  \"limits\": {{\"max\": {n2}, \"timeout_ms\": {port}}}\n}}",
    ],
    "go": [
        "func {fn}(xs []int) int {{\n\tbest := xs[0]\n\tfor _, x := range xs[1:] {{\n"
        "\t\tif x > best {{\n\t\t\tbest = x\n\t\t}}\n\t}}\n\treturn best\n}}",
    ],
}

IDENTS = """data items users records rows cfg config state buf payload events orders
scores values matrix cache results tokens messages entries nodes edges""".split()
FN_NAMES = """load_data parse_items process compute_mean handle_request normalize
flatten merge_dicts fetch_json count_words find_max build_index run_job""".split()
CLASS_NAMES = """Tracker Stats Pipeline Reader Buffer Inventory Scheduler Ledger""".split()

QUESTION_TEMPLATES = [
    "How do I {verb} a {noun} in {lang}?",
    "What's the difference between {noun} and {noun2} in {lang}?",
    "Can you explain how {noun} works?",
    "Write a {lang} function that {verb}s a {noun}.",
    "Why does my {noun} {verb} so slowly?",
    "Give me {k} ideas for {topic}.",
    "Help me write an email about {topic}.",
    "What is the best way to {verb} {noun} when {noun2} is large?",
    "I'm getting an error when I {verb} the {noun}. What am I doing wrong?",
    "Summarize the main points of {topic}.",
]
LANGS = ["Python", "Rust", "JavaScript", "TypeScript", "Go", "SQL", "bash", "C++", "Java"]
VERBS = ["parse", "sort", "stream", "cache", "serialize", "validate", "merge", "deploy",
         "debug", "optimize", "refactor", "test", "compress", "index", "split"]
NOUNS = ["list", "dictionary", "JSON file", "CSV", "HashMap", "iterator", "database",
         "API response", "string", "thread pool", "config file", "vector", "tree"]
TOPICS = ["a birthday party", "learning Spanish", "my garden", "a job interview",
          "a trip to Japan", "saving money", "a team offsite", "a short story",
          "healthy breakfasts", "the French Revolution", "quantum computing"]

# Prompts that many users send verbatim; each has a canned answer that is
# sometimes reused, so dedup sees identical user *and* assistant messages.
POPULAR_PROMPTS = [
    "How do I flatten a list of lists in Python?",
    "Write a haiku about autumn.",
    "What is the capital of Australia?",
    "Explain the difference between TCP and UDP.",
    "Give me a recipe for banana bread.",
    "How do I center a div in CSS?",
    "What does `git rebase` do?",
    "Tell me a joke about programmers.",
    "How many liters are in a gallon?",
    "Explain recursion with an example.",
    "What's a good name for a golden retriever?",
    "Convert 72 Fahrenheit to Celsius.",
]


# --------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------

def parse_size(text: str) -> int:
    """Parse '256M', '1G', '500K', '4096' (binary units) into bytes."""
    t = text.strip().upper().removesuffix("B").removesuffix("I")
    mult = 1
    if t and t[-1] in "KMGT":
        mult = {"K": KIB, "M": MIB, "G": GIB, "T": GIB * 1024}[t[-1]]
        t = t[:-1]
    try:
        value = float(t)
    except ValueError:
        raise argparse.ArgumentTypeError(f"bad size {text!r} (use e.g. 256M, 1G)")
    if value <= 0:
        raise argparse.ArgumentTypeError(f"size must be positive: {text!r}")
    return int(value * mult)


def tiny_png(width: int, height: int, rgb: tuple[int, int, int]) -> bytes:
    """A valid solid-colour RGB PNG (used as fake image assets)."""
    row = b"\x00" + bytes(rgb) * width
    raw = row * height

    def chunk(kind: bytes, data: bytes) -> bytes:
        crc = zlib.crc32(kind + data) & 0xFFFFFFFF
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", crc)

    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr)
            + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))


# --------------------------------------------------------------------------
# Text pool: precomputed markdown blocks, picked at random per message
# --------------------------------------------------------------------------

class TextPool:
    """Precomputed snippets so per-message text assembly is just list picks.

    Every generated message still starts with a freshly drawn sentence, so
    messages are unique unless duplication is intended.
    """

    def __init__(self, rng: random.Random, n_blocks: int = 6000):
        self.rng = rng
        self.code = [self._code_block() for _ in range(800)]
        self.blocks = [self._block() for _ in range(n_blocks)]
        # Unicode-flavoured blocks mix a multilingual snippet with English.
        self.ublocks = [self._unicode_block() for _ in range(600)]
        self.escapes = ESCAPE_SNIPPETS

    # -- primitives --------------------------------------------------------
    def sentence(self, lo: int = 6, hi: int = 18) -> str:
        rng = self.rng
        words = rng.choices(WORDS, k=rng.randint(lo, hi))
        r = rng.random()
        if r < 0.12:  # inline code
            i = rng.randrange(len(words))
            words[i] = f"`{words[i]}()`"
        elif r < 0.22:  # bold
            i = rng.randrange(len(words))
            words[i] = f"**{words[i]}**"
        elif r < 0.26:  # link
            words.append(f"([docs](https://example.com/{rng.choice(WORDS)}/{rng.randint(1, 999)}))")
        s = " ".join(words)
        return s[0].upper() + s[1:] + rng.choice(".....?!:")

    def paragraph(self, lo: int = 2, hi: int = 6) -> str:
        return " ".join(self.sentence() for _ in range(self.rng.randint(lo, hi)))

    def _fill(self, template: str) -> str:
        rng = self.rng
        return template.format(
            fn=rng.choice(FN_NAMES), var=rng.choice(IDENTS), cls=rng.choice(CLASS_NAMES),
            col=rng.choice(IDENTS), n=rng.randint(0, 500), n2=rng.randint(0, 99999),
            k=rng.randint(2, 12), bits=rng.choice((8, 16, 32, 64)), port=rng.choice((3000, 8080, 5432, 6379)),
        )

    def _code_block(self) -> str:
        rng = self.rng
        lang = rng.choice(list(CODE_TEMPLATES))
        body = self._fill(rng.choice(CODE_TEMPLATES[lang]))
        if rng.random() < 0.3:  # longer listings: two snippets of the same language
            body += "\n\n" + self._fill(rng.choice(CODE_TEMPLATES[lang]))
        return f"```{lang}\n{body}\n```"

    def _block(self) -> str:
        rng = self.rng
        r = rng.random()
        if r < 0.45:
            return self.paragraph()
        if r < 0.60:
            items = [f"- {self.sentence(4, 12)}" for _ in range(rng.randint(3, 6))]
            if rng.random() < 0.3:
                items.insert(1, f"  - {self.sentence(3, 8)}")
            return "\n".join(items)
        if r < 0.70:
            return "\n".join(f"{i}. **{rng.choice(WORDS).title()}**: {self.sentence(4, 12)}"
                             for i in range(1, rng.randint(3, 7)))
        if r < 0.78:
            return f"### {' '.join(rng.choices(TITLE_WORDS, k=rng.randint(2, 4)))}\n\n{self.paragraph(1, 3)}"
        if r < 0.93:
            return rng.choice(self.code)
        if r < 0.97:
            cols = rng.sample(IDENTS, 3)
            rows = [f"| {' | '.join(cols)} |", "|---|---|---|"]
            for _ in range(rng.randint(2, 5)):
                rows.append(f"| {rng.randint(0, 999)} | {rng.choice(WORDS)} | {rng.random():.3f} |")
            return "\n".join(rows)
        if r < 0.985:
            return "> " + self.sentence()
        return rng.choice(ESCAPE_SNIPPETS)

    def _unicode_block(self) -> str:
        rng = self.rng
        parts = [rng.choice(UNICODE_SNIPPETS)]
        if rng.random() < 0.5:
            parts.append(self.sentence())
        if rng.random() < 0.3:
            parts.append(rng.choice(UNICODE_SNIPPETS))
        rng.shuffle(parts)
        return " ".join(parts)

    # -- message texts -----------------------------------------------------
    def text(self, target: int, unicode: bool = False) -> str:
        """Markdown text of roughly `target` characters (at least one sentence)."""
        rng = self.rng
        first = self.sentence()
        parts = [first]
        n = len(first)
        pool = self.ublocks if unicode else self.blocks
        npool = len(pool)
        while n < target:
            b = pool[rng.randrange(npool)] if (not unicode or rng.random() < 0.5) \
                else self.blocks[rng.randrange(len(self.blocks))]
            parts.append(b)
            n += len(b) + 2
        return "\n\n".join(parts)

    def question(self) -> str:
        rng = self.rng
        return rng.choice(QUESTION_TEMPLATES).format(
            verb=rng.choice(VERBS), noun=rng.choice(NOUNS), noun2=rng.choice(NOUNS),
            lang=rng.choice(LANGS), topic=rng.choice(TOPICS), k=rng.randint(3, 10))


# --------------------------------------------------------------------------
# Conversation builder
# --------------------------------------------------------------------------

class Conv:
    """Builds one conversation's mapping tree with a monotonic clock."""

    def __init__(self, gen: "Generator", t0: float, model: str, root_id: str):
        self.gen = gen
        self.rng = gen.rng
        self.clock = t0
        self.t0 = t0
        self.model = model
        self.root_id = root_id
        self.mapping: dict = {root_id: {"id": root_id, "message": None, "parent": None, "children": []}}
        self.new_meta = t0 >= T_2024  # richer metadata after 2024

    def tick(self, lo: float = 2.0, hi: float = 90.0) -> float:
        self.clock += self.rng.uniform(lo, hi)
        return round(self.clock, 6)

    def add(self, parent: str, msg: dict) -> str:
        nid = msg["id"]
        self.mapping[nid] = {"id": nid, "message": msg, "parent": parent, "children": []}
        self.mapping[parent]["children"].append(nid)
        return nid

    # -- message constructors (key order matches real exports) --------------
    def message(self, role, content, *, name=None, create_time=None, status="finished_successfully",
                end_turn=None, weight=1.0, metadata=None, recipient="all", channel=None, mid=None):
        return {
            "id": mid or self.gen.uuid(),
            "author": {"role": role, "name": name, "metadata": {}},
            "create_time": create_time,
            "update_time": None,
            "content": content,
            "status": status,
            "end_turn": end_turn,
            "weight": weight,
            "metadata": {} if metadata is None else metadata,
            "recipient": recipient,
            "channel": channel,
        }

    def user_meta(self, extra=None) -> dict:
        if self.new_meta:
            meta = {"selected_github_repos": [], "serialization_metadata": {"custom_symbol_offsets": []},
                    "request_id": self.gen.request_id(), "message_source": None,
                    "timestamp_": "absolute", "message_type": None}
        else:
            meta = {"timestamp_": "absolute", "message_type": None}
        if extra:
            meta.update(extra)
        return meta

    def assistant_meta(self, parent: str, extra=None, stop=True) -> dict:
        meta = {
            "finish_details": {"type": "stop", "stop_tokens": [200002]} if stop else {"type": "interrupted"},
            "is_complete": stop,
            "citations": [],
            "content_references": [],
            "message_type": None,
            "model_slug": self.model,
            "default_model_slug": self.model,
            "parent_id": parent,
            "request_id": self.gen.request_id(),
            "timestamp_": "absolute",
        }
        if extra:
            meta.update(extra)
        return meta

    def system_hidden(self, parent: str) -> str:
        msg = self.message("system", {"content_type": "text", "parts": [""]}, end_turn=True, weight=0.0,
                           metadata={"is_visually_hidden_from_conversation": True})
        return self.add(parent, msg)

    def user_context(self, parent: str, profile: str, instructions: str) -> str:
        content = {"content_type": "user_editable_context",
                   "user_profile": "The user provided the following information about themselves. "
                                   "This user profile is shown to you in all conversations they have "
                                   f"-- this means it is not relevant to 99% of requests.\nBefore answering, "
                                   f"quietly think about whether the user's request is \"directly related\", "
                                   f"\"related\", \"tangentially related\", or \"not related\" to the user "
                                   f"profile provided.\n```{profile}```",
                   "user_instructions": "The user provided the additional info about how they would like "
                                        f"you to respond:\n```{instructions}```"}
        meta = {"is_visually_hidden_from_conversation": True, "user_context_message_data":
                {"about_user_message": profile, "about_model_message": instructions},
                "is_user_system_message": True}
        return self.add(parent, self.message("user", content, weight=1.0, metadata=meta))

    def model_context(self, parent: str, memories: str) -> str:
        content = {"content_type": "model_editable_context", "model_set_context": memories,
                   "repository": None, "repo_summary": None, "structured_context": None}
        return self.add(parent, self.message("assistant", content, weight=1.0, end_turn=None,
                                             metadata={"is_visually_hidden_from_conversation": True}))

    def user_text(self, parent: str, text: str, create_time="tick") -> str:
        ct = self.tick(10, 600) if create_time == "tick" else create_time
        msg = self.message("user", {"content_type": "text", "parts": [text]}, create_time=ct,
                           metadata=self.user_meta())
        if self.rng.random() < 0.5:  # client-generated ids look like aaa2xxxx-...
            msg["id"] = "aaa2" + msg["id"][4:]
        return self.add(parent, msg)

    def user_images(self, parent: str, text: str, n_images: int = 1) -> str:
        parts, attachments = [], []
        for _ in range(n_images):
            fid = self.gen.file_id()
            w, h = self.rng.choice(((1024, 768), (1536, 1024), (828, 1792), (512, 512), (1920, 1080)))
            size = self.rng.randint(40_000, 2_500_000)
            parts.append({
                "content_type": "image_asset_pointer",
                "asset_pointer": f"file-service://{fid}",
                "size_bytes": size, "width": w, "height": h, "fovea": None,
                "metadata": {"dalle": None, "gizmo": None, "generation": None,
                             "container_pixel_height": None, "container_pixel_width": None,
                             "emu_omit_glimpse_image": None, "emu_patches_override": None,
                             "sanitized": True, "asset_pointer_link": None,
                             "watermarked_asset_pointer": None},
            })
            attachments.append({"id": fid, "size": size, "name": "image.png", "mime_type": "image/png",
                                "width": w, "height": h})
        parts.append(text)
        msg = self.message("user", {"content_type": "multimodal_text", "parts": parts},
                           create_time=self.tick(10, 600), metadata=self.user_meta({"attachments": attachments}))
        return self.add(parent, msg)

    def assistant_text(self, parent: str, text: str, *, citations=None, create_time="tick",
                       end_turn=True) -> str:
        ct = self.tick(3, 40) if create_time == "tick" else create_time
        extra = {"content_references": citations} if citations else None
        msg = self.message("assistant", {"content_type": "text", "parts": [text]}, create_time=ct,
                           end_turn=end_turn, metadata=self.assistant_meta(parent, extra))
        return self.add(parent, msg)

    def assistant_in_progress(self, parent: str) -> str:
        msg = self.message("assistant", {"content_type": "text", "parts": [""]}, create_time=self.tick(1, 5),
                           status="in_progress", end_turn=None,
                           metadata=self.assistant_meta(parent, stop=False))
        return self.add(parent, msg)

    def thoughts(self, parent: str, items: list[tuple[str, str]]) -> str:
        content = {"content_type": "thoughts",
                   "thoughts": [{"summary": s, "content": c, "chunks": [], "finished": True} for s, c in items],
                   "source_analysis_msg_id": self.gen.uuid()}
        msg = self.message("assistant", content, create_time=self.tick(1, 5), end_turn=None,
                           metadata=self.assistant_meta(parent, {"reasoning_status": "is_reasoning"}))
        return self.add(parent, msg)

    def reasoning_recap(self, parent: str, seconds: int) -> str:
        content = {"content_type": "reasoning_recap",
                   "content": f"Thought for {seconds} second{'s' if seconds != 1 else ''}"}
        msg = self.message("assistant", content, create_time=self.tick(seconds, seconds + 1), end_turn=None,
                           metadata=self.assistant_meta(parent, {"reasoning_status": "reasoning_ended",
                                                                 "finished_duration_sec": seconds}))
        return self.add(parent, msg)

    def tool_call(self, parent: str, code: str, output: str) -> str:
        """Assistant `code` message addressed to python + the tool's execution_output."""
        t = self.tick(2, 20)
        code_msg = self.message("assistant", {"content_type": "code", "language": "unknown",
                                              "response_format_name": None, "text": code},
                                create_time=t, end_turn=False,
                                metadata=self.assistant_meta(parent, {"finish_details": {
                                    "type": "stop", "stop_tokens": [200007]}}),
                                recipient="python")
        cid = self.add(parent, code_msg)
        t2 = self.tick(0.5, 8)
        agg = {"status": "success", "run_id": self.gen.uuid(), "start_time": t, "update_time": t2,
               "code": code, "end_time": t2, "final_expression_output": output.splitlines()[-1] if output else None,
               "in_kernel_exception": None, "system_exception": None, "messages": [],
               "jupyter_messages": [], "timeout_triggered": None}
        out_msg = self.message("tool", {"content_type": "execution_output", "text": output}, name="python",
                               create_time=t2, metadata={"is_complete": True, "aggregate_result": agg,
                                                         "model_slug": self.model, "parent_id": cid,
                                                         "timestamp_": "absolute"})
        return self.add(cid, out_msg)

    def finish(self, title: str, current_node: str, *, update_time="auto", gizmo_id=None,
               is_archived=False) -> dict:
        rng = self.rng
        conv_id = self.gen.uuid()
        ut = round(self.clock + rng.uniform(0.1, 3.0), 6) if update_time == "auto" else update_time
        conv = {
            "title": title,
            "create_time": round(self.t0, 6),
            "update_time": ut,
            "mapping": self.mapping,
            "moderation_results": [],
            "current_node": current_node,
            "plugin_ids": None,
            "conversation_id": conv_id,
            "conversation_template_id": gizmo_id,
            "gizmo_id": gizmo_id,
            "gizmo_type": "gpt" if gizmo_id else None,
            "is_archived": is_archived,
            "is_starred": None,
            "safe_urls": [],
            "blocked_urls": [],
            "default_model_slug": self.model,
            "conversation_origin": None,
            "voice": None,
            "async_status": None,
            "disabled_tool_ids": [],
        }
        if self.new_meta:  # keys that only newer conversations carry
            conv["is_do_not_remember"] = False
            conv["memory_scope"] = "global_enabled"
            conv["sugar_item_id"] = None
        conv["id"] = conv_id
        return conv


# --------------------------------------------------------------------------
# Generator
# --------------------------------------------------------------------------

class Generator:
    """Seeded source of conversations (random mode and the small scripted set)."""

    def __init__(self, seed: int):
        self.rng = random.Random(seed)
        # The snippet pool and the canned answers to popular prompts come from their
        # own stream (string seeds hash via SHA-512, so they are stable across runs).
        self.pool = TextPool(random.Random(f"pool-{seed}"))
        # What the user says about themselves, from its own stream (benches/self_statements.py).
        self.self_statements = SelfStatements(seed)
        self.popular_answers = [self.pool.text(self.pool.rng.randint(80, 900)) for _ in POPULAR_PROMPTS]
        self.pool.rng = self.rng  # from here on, all text draws come from the main stream
        self.image_ids: list[str] = []  # first image file ids, in emission order

    # -- ids -----------------------------------------------------------------
    def uuid(self) -> str:
        """Random UUIDv4 string from the seeded stream (no uuid module overhead)."""
        h = "%032x" % self.rng.getrandbits(128)
        return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{'89ab'[int(h[16], 16) & 3]}{h[17:20]}-{h[20:]}"

    def request_id(self) -> str:
        return "%016x-%s" % (self.rng.getrandbits(64), self.rng.choice(("IAD", "SJC", "DFW", "LHR", "AMS")))

    def file_id(self) -> str:
        fid = "file-" + "".join(self.rng.choices(BASE62, k=22))
        if len(self.image_ids) < 2 * MAX_ZIP_ASSETS:  # only these can get asset files
            self.image_ids.append(fid)
        return fid

    def gizmo_id(self) -> str:
        return "g-" + "".join(self.rng.choices(BASE62, k=9))

    # -- random mode ---------------------------------------------------------
    def pick_model(self, t: float) -> str:
        rng = self.rng
        if t < T_2023_05:
            return rng.choice(("text-davinci-002-render-sha",) * 3 + ("gpt-4",))
        if t < T_2024:
            return rng.choice(("text-davinci-002-render-sha", "gpt-4", "gpt-4", "gpt-4-plugins"))
        if t < T_2024_05:
            return rng.choice(("gpt-4", "gpt-4", "text-davinci-002-render-sha", "gpt-4-gizmo"))
        if t < T_2024_09:
            return rng.choice(("gpt-4o", "gpt-4o", "gpt-4o", "gpt-4o-mini"))
        if t < T_2025:
            return rng.choice(("gpt-4o", "gpt-4o", "gpt-4o-mini", "o1-preview", "o1-mini"))
        return rng.choice(("gpt-4o", "gpt-4o", "o3", "o4-mini", "gpt-4-5", "gpt-5", "gpt-5", "gpt-5-thinking"))

    def title(self) -> str:
        rng = self.rng
        r = rng.random()
        if r < 0.05:
            return "New chat"
        if r < 0.11:
            return rng.choice(UNICODE_TITLES)
        if r < 0.12:
            return 'Fix "path\\to\\file" error'
        return " ".join(rng.choices(TITLE_WORDS, k=rng.randint(2, 5)))

    def random_user_text(self, first: bool) -> str:
        text = self.plain_user_text(first)
        # Prompts many users send verbatim stay verbatim: dedup is measured on them.
        if text in COMMON_FOLLOWUPS or text in POPULAR_PROMPTS:
            return text
        return self.self_statements.maybe_prefix(text)

    def plain_user_text(self, first: bool) -> str:
        rng, pool = self.rng, self.pool
        r = rng.random()
        if not first and r < 0.12:
            return rng.choice(COMMON_FOLLOWUPS)
        if first and r < 0.05:
            return rng.choice(POPULAR_PROMPTS)
        r = rng.random()
        if r < 0.05:
            return pool.text(rng.randint(20, 300), unicode=True)
        if r < 0.55:
            return pool.question() + ("" if rng.random() < 0.5 else " " + pool.sentence())
        if r < 0.75:
            return pool.question() + "\n\n" + rng.choice(pool.code)
        if r < 0.82:
            return pool.question() + "\n\n" + rng.choice(ESCAPE_SNIPPETS)
        if r < 0.95:
            return pool.paragraph(1, 4)
        return pool.question() + "\n\n" + pool.text(rng.randint(500, 4000))  # long paste

    def assistant_answer_text(self, user_text: str) -> tuple[str, list | None]:
        rng, pool = self.rng, self.pool
        if user_text in COMMON_FOLLOWUPS and rng.random() < 0.4:
            return rng.choice(COMMON_REPLIES), None
        if user_text in POPULAR_PROMPTS and rng.random() < 0.5:
            return self.popular_answers[POPULAR_PROMPTS.index(user_text)], None
        target = int(min(6000, max(50, rng.lognormvariate(math.log(700), 0.9))))
        text = pool.text(target, unicode=rng.random() < 0.06)
        cites = None
        if rng.random() < 0.05:
            text, cites = self.add_citations(text)
        return text, cites

    def add_citations(self, text: str) -> tuple[str, list]:
        """Insert 1-3 private-use citation markers and matching content_references."""
        rng = self.rng
        refs = []
        out = text
        for i in range(rng.randint(1, 3)):
            marker = f"{CITE_OPEN}cite{CITE_SEP}turn0search{i}{CITE_CLOSE}"
            cut = out.find(". ", rng.randrange(max(1, len(out) // 2)))
            if cut < 0:
                cut = len(out) - 1
            out = out[:cut + 1] + " " + marker + out[cut + 1:]
            site = rng.choice(("example.com", "docs.rs", "wikipedia.org", "stackoverflow.com"))
            refs.append({"matched_text": marker, "start_idx": cut + 2, "end_idx": cut + 2 + len(marker),
                         "alt": f"([{site}](https://{site}/page/{rng.randint(1, 9999)}))",
                         "type": "grouped_webpages",
                         "items": [{"title": " ".join(rng.choices(TITLE_WORDS, k=3)),
                                    "url": f"https://{site}/page/{rng.randint(1, 9999)}",
                                    "attribution": site}],
                         "refs": [{"turn_index": 0, "ref_type": "search", "ref_index": i}]})
        return out, refs

    def assistant_turn(self, c: Conv, parent: str, user_text: str) -> str:
        """Thoughts/tools (sometimes) then the visible answer; returns the leaf id."""
        rng, pool = self.rng, self.pool
        cur = parent
        if c.model in REASONING_MODELS and rng.random() < 0.7:
            cur = c.thoughts(cur, [(pool.sentence(3, 7), pool.paragraph(1, 4)) for _ in range(rng.randint(1, 4))])
            cur = c.reasoning_recap(cur, rng.randint(1, 90))
        if rng.random() < 0.06:
            for _ in range(rng.randint(1, 3)):
                code = pool._fill(rng.choice(CODE_TEMPLATES["python"]))
                if rng.random() < 0.2:
                    out = ("Traceback (most recent call last):\n  File \"<stdin>\", line 1, in <module>\n"
                           "KeyError: 'value'")
                else:
                    out = "\n".join(f"{rng.choice(IDENTS)}: {rng.random() * 1000:.2f}" for _ in range(rng.randint(1, 8)))
                cur = c.tool_call(cur, code, out)
        text, cites = self.assistant_answer_text(user_text)
        return c.assistant_text(cur, text, citations=cites)

    def user_turn(self, c: Conv, parent: str, text: str) -> str:
        if c.t0 >= T_2023_05 and self.rng.random() < 0.05:
            return c.user_images(parent, text, self.rng.choice((1, 1, 1, 2)))
        if self.rng.random() < 0.02:  # some user messages lack a timestamp
            return c.user_text(parent, text, create_time=None)
        return c.user_text(parent, text)

    def deep_thread(self, c: Conv, parent: str, turns: int, counting: bool = False) -> str:
        """A long linear back-and-forth of short messages with lean metadata.

        With ``counting`` the texts are just "1", "2", "3", ... (keeps the small
        example export small); otherwise short sentences.
        """
        rng, pool = self.rng, self.pool
        cur = parent
        for i in range(turns):
            ut = str(2 * i + 1) if counting else f"step {i + 1}: " + pool.sentence(2, 8)
            msg = c.message("user", {"content_type": "text", "parts": [ut]}, create_time=c.tick(2, 30),
                            metadata={"timestamp_": "absolute"})
            cur = c.add(cur, msg)
            if counting:
                at = str(2 * i + 2)
            else:
                at = pool.sentence(3, 14) if rng.random() < 0.9 else rng.choice(COMMON_REPLIES)
            msg = c.message("assistant", {"content_type": "text", "parts": [at]}, create_time=c.tick(1, 5),
                            end_turn=True, metadata={"model_slug": c.model, "timestamp_": "absolute"})
            cur = c.add(cur, msg)
        return cur

    def random_conversation(self) -> dict:
        rng, pool = self.rng, self.pool
        t0 = rng.uniform(T_START, T_END)
        model = self.pick_model(t0)
        if t0 >= T_2024_05 and rng.random() < 0.7:
            root_id = "client-created-root"
        else:
            root_id = "aaa1" + self.uuid()[4:]
        c = Conv(self, t0, model, root_id)
        title = self.title()
        cur = root_id
        if rng.random() < 0.85:
            cur = c.system_hidden(cur)
        if rng.random() < 0.20:
            cur = c.user_context(cur, pool.paragraph(1, 3), pool.paragraph(1, 3))
        if t0 >= T_2024 and rng.random() < 0.04:
            cur = c.model_context(cur, "\n".join(f"{i}. [{2024 + i % 2}-0{1 + i % 9}-1{i % 10}]. {pool.sentence()}"
                                                   for i in range(1, rng.randint(2, 8))))

        if rng.random() < 1 / 200:
            leaf = self.deep_thread(c, cur, rng.randint(1000, 2500))
            return c.finish(title, leaf)

        turns = 2 + min(18, int(rng.expovariate(1 / 4)))
        branch_at = rng.randrange(turns) if rng.random() < 0.10 else -1
        alt_leaf = None
        for k in range(turns):
            utext = self.random_user_text(first=(k == 0))
            if k == branch_at:
                if rng.random() < 0.6:
                    # Regenerated answer: the same user node gets two assistant children.
                    u = self.user_turn(c, cur, utext)
                    alt_leaf = self.assistant_turn(c, u, utext)
                    for _ in range(rng.randint(0, 2)):  # the old branch sometimes went on
                        t2 = self.random_user_text(first=False)
                        alt_leaf = self.assistant_turn(c, self.user_turn(c, alt_leaf, t2), t2)
                    cur = self.assistant_turn(c, u, utext)
                else:
                    # Edited prompt: the same parent gets two user children.
                    u1 = self.user_turn(c, cur, utext)
                    alt_leaf = self.assistant_turn(c, u1, utext)
                    utext = utext + " " + pool.sentence(3, 8)
                    u2 = self.user_turn(c, cur, utext)
                    cur = self.assistant_turn(c, u2, utext)
                continue
            u = self.user_turn(c, cur, utext)
            cur = self.assistant_turn(c, u, utext)

        update_time = "auto"
        if rng.random() < 0.01:  # interrupted generation left an empty in-progress answer
            u = self.user_turn(c, cur, self.random_user_text(first=False))
            cur = c.assistant_in_progress(u)
        if rng.random() < 0.03:
            update_time = None
        current = alt_leaf if (alt_leaf and rng.random() < 0.15) else cur
        gizmo = self.gizmo_id() if (t0 >= T_2024 and rng.random() < 0.08) else None
        return c.finish(title, current, update_time=update_time, gizmo_id=gizmo,
                        is_archived=rng.random() < 0.05)

    # -- small scripted mode ---------------------------------------------------
    def small_conversations(self, deep_levels: int = 300) -> list[dict]:
        """One hand-scripted conversation per edge case (ids/times from the seed).

        The last one is a linear thread of ``deep_levels`` message nodes; at
        roughly 500 bytes per node it dominates the size of the small export.
        """
        convs = []
        rng = self.rng
        flatten_q = POPULAR_PROMPTS[0]  # "How do I flatten a list of lists in Python?"
        flatten_a = ("Use a nested list comprehension:\n\n```python\nnested = [[1, 2], [3], [4, 5]]\n"
                     "flat = [x for sub in nested for x in sub]\nprint(flat)  # [1, 2, 3, 4, 5]\n```\n\n"
                     "For very large inputs, `itertools.chain.from_iterable(nested)` avoids building "
                     "intermediate lists.")

        # 1. Plain chat: hidden system message, markdown + code, "thanks!" follow-up.
        c = Conv(self, 1686571200.123456, "gpt-4", "aaa1" + self.uuid()[4:])
        cur = c.system_hidden(c.root_id)
        cur = c.user_text(cur, flatten_q)
        cur = c.assistant_text(cur, flatten_a)
        cur = c.user_text(cur, "thanks!")
        cur = c.assistant_text(cur, COMMON_REPLIES[0])
        convs.append(c.finish("Flatten nested lists in Python", cur))

        # 2. Custom instructions (user_editable_context) + memory (model_editable_context).
        c = Conv(self, 1719835200.5, "gpt-4o", "client-created-root")
        cur = c.system_hidden(c.root_id)
        cur = c.user_context(cur, "I'm a backend developer in Berlin. I mostly write Rust and Python.",
                             "Be concise. Use metric units. Prefer code over prose.")
        cur = c.model_context(cur, "1. [2024-06-30]. User is a backend developer who prefers Rust.")
        cur = c.user_text(cur, "Plan a 2-day hiking trip near Berlin.")
        cur = c.assistant_text(cur, "### Day 1 — Sächsische Schweiz\n\n- Train to Bad Schandau (~2 h)\n"
                                    "- Malerweg stage 1, 11 km\n\n### Day 2 — Bastei\n\n- Bastei bridge loop, 8 km\n"
                                    "- Return by S-Bahn")
        convs.append(c.finish("Weekend hiking near Berlin", cur))

        # 3. Branch by regeneration: one user node, two assistant children; current on the new one.
        c = Conv(self, 1722470400.25, "gpt-4o", "client-created-root")
        cur = c.system_hidden(c.root_id)
        u = c.user_text(cur, "Why does the borrow checker reject `let r = &mut v; v.push(1); r.len();`?")
        c.assistant_text(u, "Because `r` is a mutable borrow of `v` that is still alive when you call "
                            "`v.push(1)`. (first answer, later regenerated)")
        a2 = c.assistant_text(u, "`r` holds `&mut v` until its last use (`r.len()`), so `v.push(1)` would "
                                 "create a second mutable borrow. Move `r.len()` before the push or drop `r`.")
        u2 = c.user_text(a2, "Got it, so non-lexical lifetimes end the borrow at its last use?")
        cur = c.assistant_text(u2, "Exactly — since Rust 2018, a borrow lasts until its last use, not "
                                   "until the end of the scope.")
        convs.append(c.finish("Rust borrow checker question", cur))

        # 4. Branch by edited prompt: two user children of the system node; current_node points at
        #    the OLDER branch (the user switched back with the < 1/2 > arrows).
        c = Conv(self, 1730000000.0, "gpt-4o-mini", "client-created-root")
        sysn = c.system_hidden(c.root_id)
        u1 = c.user_text(sysn, "Write a limerick about a cat.")
        a1 = c.assistant_text(u1, "A cat with a taste for the cream\nWould plot and would patiently scheme;\n"
                                  "She'd wait by the door,\nThen pounce on the floor,\nAnd vanish as quick as a dream.")
        u2 = c.user_text(sysn, "Write a limerick about a dog.")
        c.assistant_text(u2, "A dog who was fond of the park\nWould chase every squirrel till dark;\n"
                             "He'd dig and he'd run,\nHave a whole lot of fun,\nThen sleep without even a bark.")
        convs.append(c.finish("New chat", a1))

        # 5. Tool turn: code -> python, execution_output (a failing and a passing run), final answer.
        c = Conv(self, 1700000000.0, "gpt-4", "aaa1" + self.uuid()[4:])
        cur = c.system_hidden(c.root_id)
        cur = c.user_text(cur, "What is the mean and max of 3, 9, 4, 12?")
        cur = c.tool_call(cur, "import statistics\nxs = [3, 9, 4, 12]\nstatistics.mean(xs), max(xz)",
                          "---------------------------------------------------------------------------\n"
                          "NameError                                 Traceback (most recent call last)\n"
                          "\x1b[0;31mNameError\x1b[0m: name 'xz' is not defined")
        cur = c.tool_call(cur, "statistics.mean(xs), max(xs)", "(7, 12)")
        cur = c.assistant_text(cur, "The mean is **7** and the maximum is **12**.")
        convs.append(c.finish("Mean and max with Python", cur, gizmo_id="g-" + "".join(rng.choices(BASE62, k=9))))

        # 6. Image uploads: two pointers in one message, one in a later message.  In the zip,
        #    pointers 0 and 2 have asset files and pointer 1 is missing.
        c = Conv(self, 1716000000.75, "gpt-4o", "client-created-root")
        cur = c.system_hidden(c.root_id)
        cur = c.user_images(cur, "What's the difference between these two screenshots?", n_images=2)
        cur = c.assistant_text(cur, "The second screenshot shows the settings panel expanded and the "
                                    "dark theme enabled; otherwise they are identical.")
        cur = c.user_images(cur, "And this one?", n_images=1)
        cur = c.assistant_text(cur, "That's an error dialog: *Permission denied (os error 13)*.")
        convs.append(c.finish("Compare screenshots", cur))

        # 7. Reasoning model: thoughts + reasoning_recap before the answer.
        c = Conv(self, 1740000000.0, "o3", "client-created-root")
        cur = c.system_hidden(c.root_id)
        cur = c.user_text(cur, "Prove that sqrt(2) is irrational.")
        cur = c.thoughts(cur, [("Choosing a proof", "A proof by contradiction with a reduced fraction p/q "
                                                    "is the classic route."),
                               ("Checking parity", "If p² = 2q² then p is even, so q is even too.")])
        cur = c.reasoning_recap(cur, 7)
        cur = c.assistant_text(cur, "Suppose √2 = p/q in lowest terms. Then p² = 2q², so p is even; write "
                                    "p = 2k. Then 4k² = 2q², so q² = 2k² and q is even — contradicting "
                                    "lowest terms. ∎")
        convs.append(c.finish("Proof: √2 is irrational", cur))

        # 8. Web answer with private-use citation markers and content_references.
        c = Conv(self, 1745000000.0, "gpt-4o", "client-created-root")
        cur = c.system_hidden(c.root_id)
        cur = c.user_text(cur, "What's new in the latest Rust release?")
        m0 = f"{CITE_OPEN}cite{CITE_SEP}turn0search1{CITE_CLOSE}"
        m1 = f"{CITE_OPEN}cite{CITE_SEP}turn0search3{CITE_CLOSE}"
        text = (f"The latest stable release stabilises async closures {m0} and adds new "
                f"`Option` helpers {m1}.")
        refs = []
        for i, m in ((1, m0), (3, m1)):
            start = text.index(m)
            refs.append({"matched_text": m, "start_idx": start, "end_idx": start + len(m),
                         "alt": "([blog.rust-lang.org](https://blog.rust-lang.org/))", "type": "grouped_webpages",
                         "items": [{"title": "Announcing Rust", "url": f"https://blog.rust-lang.org/#{i}",
                                    "attribution": "blog.rust-lang.org"}],
                         "refs": [{"turn_index": 0, "ref_type": "search", "ref_index": i}]})
        cur = c.assistant_text(cur, text, citations=refs)
        convs.append(c.finish("Latest Rust release", cur, is_archived=True))

        # 9. Interrupted answer: in_progress assistant message with parts [""].
        c = Conv(self, 1733000000.0, "gpt-4o", "client-created-root")
        cur = c.system_hidden(c.root_id)
        cur = c.user_text(cur, "Write a 2,000 word essay on the history of tea.")
        cur = c.assistant_in_progress(cur)
        convs.append(c.finish("History of tea essay", cur))

        # 10. Unicode everywhere: CJK, RTL, emoji (surrogate pairs, ZWJ), astral math, combining marks.
        c = Conv(self, 1710000000.0, "gpt-4", "aaa1" + self.uuid()[4:])
        cur = c.system_hidden(c.root_id)
        cur = c.user_text(cur, "日本語で答えてください: " + UNICODE_SNIPPETS[2] + " 🍣🎌")
        cur = c.assistant_text(cur, "もちろんです！" + UNICODE_SNIPPETS[3] + "\n\n" + UNICODE_SNIPPETS[13])
        cur = c.user_text(cur, UNICODE_SNIPPETS[7] + "\n" + UNICODE_SNIPPETS[8])
        cur = c.assistant_text(cur, "\n".join(UNICODE_SNIPPETS[12:18]))
        convs.append(c.finish(UNICODE_TITLES[0], cur))

        # 11. Duplicate of conversation 1's messages (same prompt, same answer, "thanks!").
        c = Conv(self, 1726000000.0, "gpt-4o", "client-created-root")
        cur = c.system_hidden(c.root_id)
        cur = c.user_text(cur, flatten_q)
        cur = c.assistant_text(cur, flatten_a)
        cur = c.user_text(cur, "thanks!")
        cur = c.assistant_text(cur, COMMON_REPLIES[0])
        convs.append(c.finish("Flatten a list (again)", cur))

        # 12. Null timestamps: messages with create_time null and conversation update_time null.
        c = Conv(self, 1690000000.0, "text-davinci-002-render-sha", "aaa1" + self.uuid()[4:])
        cur = c.user_text(c.root_id, "What is the capital of Australia?", create_time=None)
        cur = c.assistant_text(cur, "The capital of Australia is **Canberra**.", create_time=None)
        convs.append(c.finish("Capital of Australia", cur, update_time=None))

        # 13. Deep thread: `deep_levels` (300) message nodes in one linear chain of
        #     user/assistant pairs counting "1", "2", ... (root -> 1 -> 2 -> ... -> 300).
        c = Conv(self, 1695000000.0, "gpt-4", "aaa1" + self.uuid()[4:])
        leaf = self.deep_thread(c, c.root_id, (deep_levels + 1) // 2, counting=True)
        convs.append(c.finish("Counting game", leaf))

        # 14. What the user says about themselves, among questions: the extraction stage's
        #     input (identity, relationship, preference, procedure, decision; the questions
        #     and the pasted command yield nothing).
        c = Conv(self, 1747000000.0, "gpt-4o", "client-created-root")
        cur = c.system_hidden(c.root_id)
        cur = c.user_text(cur, "Some context first: I'm a nurse and I live in Leeds. My daughter Ema is 7.")
        cur = c.assistant_text(cur, "Thanks, that helps. What would you like to plan?")
        cur = c.user_text(cur, "I don't eat meat, so keep the recipes vegetarian. Always use metric units.")
        cur = c.assistant_text(cur, "Noted: vegetarian recipes in grams and millilitres.")
        cur = c.user_text(cur, "For the rota app I'm building we decided to go with Postgres. "
                               "Never suggest npm, we use pnpm. Why does `pnpm install --frozen-lockfile` fail in CI?")
        cur = c.assistant_text(cur, "The lockfile no longer matches `package.json`; run `pnpm install` "
                                    "locally and commit the updated `pnpm-lock.yaml`.")
        convs.append(c.finish("Weekly meal plan", cur))

        # 15. Later, a changed value of the same slot: the new home supersedes Leeds.
        c = Conv(self, 1760000000.0, "gpt-4o", "client-created-root")
        cur = c.system_hidden(c.root_id)
        cur = c.user_text(cur, "I moved to York last month. Which bus goes from the station to the hospital?")
        cur = c.assistant_text(cur, "Several routes stop at York Hospital; check the operator's journey planner "
                                    "for the current timetable.")
        convs.append(c.finish("Bus to York Hospital", cur))
        return convs


def to_2026_shape(conv: dict, rng: random.Random) -> dict:
    """Convert a conversation in place to the 2026 sharded shape.

    Drops ``children`` from every node and often drops the optional message
    fields.  Uses its own RNG so the main content stream is layout-independent.
    """
    optional = ("status", "weight", "recipient", "end_turn")
    for node in conv["mapping"].values():
        del node["children"]
        msg = node["message"]
        if msg is None:
            continue
        if rng.random() < 0.6:
            for key in optional:
                del msg[key]
        else:
            for key in optional:
                if rng.random() < 0.25:
                    del msg[key]
    return conv


# --------------------------------------------------------------------------
# Writers
# --------------------------------------------------------------------------

class SingleWriter:
    """conversations.json: one line, json.dumps defaults (ASCII, ', ' / ': ')."""

    def __init__(self, out_dir: str):
        self.final = os.path.join(out_dir, "conversations.json")
        self.tmp = self.final + ".partial"
        self.f = open(self.tmp, "wb", buffering=4 * MIB)
        self.f.write(b"[")
        self.total = 1
        self.count = 0

    def write(self, conv: dict) -> None:
        data = json.dumps(conv).encode("ascii")
        if self.count:
            self.f.write(b", ")
            self.total += 2
        self.f.write(data)
        self.total += len(data)
        self.count += 1

    def close(self) -> list[str]:
        self.f.write(b"]")
        self.total += 1
        self.f.close()
        os.replace(self.tmp, self.final)
        return ["conversations.json"]


class ShardedWriter:
    """conversations-NNN.json shards (indent 2, sorted keys) + export_manifest.json."""

    def __init__(self, out_dir: str, shard_size: int, seed: int):
        self.out_dir = out_dir
        self.shard_size = shard_size
        self.shape_rng = random.Random(f"shape-{seed}")
        self.shards: list[tuple[str, int]] = []  # (name, size) of finished shards
        self.f = None
        self.total = 0
        self.count = 0

    def _open(self) -> None:
        self.name = f"conversations-{len(self.shards):03d}.json"
        self.tmp = os.path.join(self.out_dir, self.name + ".partial")
        self.f = open(self.tmp, "wb", buffering=4 * MIB)
        self.f.write(b"[\n")
        self.shard_bytes = 2
        self.shard_count = 0

    def _close_shard(self) -> None:
        self.f.write(b"\n]")
        self.shard_bytes += 2
        self.f.close()
        os.replace(self.tmp, os.path.join(self.out_dir, self.name))
        self.shards.append((self.name, self.shard_bytes))
        self.total += 2
        self.f = None

    def write(self, conv: dict) -> None:
        if self.f is None:
            self._open()
            self.total += 2
        to_2026_shape(conv, self.shape_rng)
        # Dumping a one-element list and stripping "[\n" / "\n]" yields the element
        # indented exactly as json.dump(list, indent=2) would indent it.
        data = json.dumps([conv], indent=2, sort_keys=True)[2:-2].encode("ascii")
        if self.shard_count:
            self.f.write(b",\n")
            self.shard_bytes += 2
            self.total += 2
        self.f.write(data)
        self.shard_bytes += len(data)
        self.total += len(data)
        self.shard_count += 1
        self.count += 1
        if self.shard_bytes >= self.shard_size:
            self._close_shard()

    def close(self) -> list[str]:
        if self.f is not None:
            self._close_shard()
        manifest = {"export_files": [{"path": n, "size_bytes": s} for n, s in self.shards]}
        path = os.path.join(self.out_dir, "export_manifest.json")
        with open(path + ".partial", "w", encoding="ascii") as f:
            f.write(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
        os.replace(path + ".partial", path)
        return [n for n, _ in self.shards] + ["export_manifest.json"]


def clean_out_dir(out_dir: str) -> None:
    """Remove files a previous run may have left (so layouts never mix)."""
    os.makedirs(out_dir, exist_ok=True)
    for name in os.listdir(out_dir):
        base = name.removesuffix(".partial")
        if base in ("conversations.json", "export_manifest.json") or (
                base.startswith("conversations-") and base.endswith(".json")):
            os.remove(os.path.join(out_dir, name))


def write_zip(zip_path: str, out_dir: str, names: list[str], image_ids: list[str]) -> list[str]:
    """Zip the export files plus fake PNG assets for every other image pointer."""
    tmp = zip_path + ".partial"
    assets = []
    with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED,
                         compresslevel=ZIP_COMPRESSLEVEL, allowZip64=True) as zf:
        for name in names:
            path = os.path.join(out_dir, name)
            zi = zipfile.ZipInfo(name, date_time=ZIP_DATE_TIME)
            zi.compress_type = zipfile.ZIP_DEFLATED
            zi._compresslevel = ZIP_COMPRESSLEVEL  # not applied automatically for ZipInfo + open('w')
            zi.external_attr = 0o644 << 16
            zi.file_size = os.path.getsize(path)  # lets zipfile decide on ZIP64 up front
            with open(path, "rb") as src, zf.open(zi, "w") as dst:
                shutil.copyfileobj(src, dst, 4 * MIB)
        for i, fid in enumerate(image_ids[: 2 * MAX_ZIP_ASSETS]):
            if i % 2:
                continue  # odd pointers stay unresolved on purpose
            name = f"{fid}-image.png"
            digest = zlib.crc32(fid.encode())
            png = tiny_png(8, 8, (digest & 0xFF, (digest >> 8) & 0xFF, (digest >> 16) & 0xFF))
            zi = zipfile.ZipInfo(name, date_time=ZIP_DATE_TIME)
            zi.external_attr = 0o644 << 16
            zf.writestr(zi, png, compress_type=zipfile.ZIP_DEFLATED, compresslevel=ZIP_COMPRESSLEVEL)
            assets.append(name)
    os.replace(tmp, zip_path)
    return assets


# --------------------------------------------------------------------------
# Main
# --------------------------------------------------------------------------

def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size", type=parse_size, help="target bytes of conversation JSON, e.g. 256M, 1G, 4G")
    ap.add_argument("--small", action="store_true", help="write the tiny scripted example export instead")
    ap.add_argument("--out", required=True, help="output export folder (created; old export files removed)")
    ap.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    ap.add_argument("--layout", choices=("single", "sharded"), default="single",
                    help="single: conversations.json (2023-2025); sharded: 2026 shards + manifest")
    ap.add_argument("--shard-size", type=parse_size, default=64 * MIB,
                    help="target shard size for --layout sharded (default 64M)")
    ap.add_argument("--small-depth", type=int, default=300, metavar="N",
                    help="message nodes in the small export's deep thread (default 300, rounded up to even)")
    ap.add_argument("--zip", action="store_true", help="also write OUT.zip with the files and fake assets")
    ap.add_argument("--quiet", action="store_true", help="no progress on stderr")
    args = ap.parse_args(argv)
    if args.small == (args.size is not None):
        ap.error("give exactly one of --size or --small")

    out_dir = args.out.rstrip("/") or "/"
    clean_out_dir(out_dir)
    gen = Generator(args.seed)
    if args.layout == "single":
        writer = SingleWriter(out_dir)
    else:
        writer = ShardedWriter(out_dir, args.shard_size, args.seed)

    if args.small:
        for conv in gen.small_conversations(args.small_depth):
            writer.write(conv)
    else:
        step = max(args.size // 16, 64 * MIB)
        next_report = step
        while writer.total < args.size:
            writer.write(gen.random_conversation())
            if not args.quiet and writer.total >= next_report:
                print(f"gen_chatgpt: {writer.total / MIB:,.0f} / {args.size / MIB:,.0f} MiB",
                      file=sys.stderr, flush=True)
                next_report += step
    names = writer.close()

    summary = f"gen_chatgpt: wrote {writer.count} conversations, {writer.total:,} bytes in {len(names)} file(s) to {out_dir}"
    if args.zip:
        zip_path = out_dir + ".zip"
        assets = write_zip(zip_path, out_dir, names, gen.image_ids)
        summary += f"; {zip_path}: {os.path.getsize(zip_path):,} bytes, {len(assets)} image assets"
    if not args.quiet:
        print(summary, file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
