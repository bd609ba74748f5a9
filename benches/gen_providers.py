#!/usr/bin/env python3
"""Deterministic generator of synthetic Claude, Grok, Copilot and Gemini exports (stdlib only).

Companion of ``gen_chatgpt.py`` (whose text pool, word lists and size parser it
imports): it writes exports shaped like the real ones described in
``provider-formats.md`` sections 2-5, so memport can be tested and benchmarked
on every provider without anybody's private chats.

Providers and layouts (``OUT`` = ``--out``; the *main file* is the one
``--size`` measures):

* ``claude``: ``OUT/conversations.json`` (main; bare array, 2-space indent,
  raw UTF-8), ``projects.json`` (starter project + 3 normal ones with
  ``prompt_template`` and ``docs``), ``memories.json`` (array wrapping one
  object; ``--memories-object`` writes the bare object), ``users.json`` (fake
  PII).  Three eras by ``created_at``: before 2024-09 (no ``flags``/``summary``,
  plain text only), 2024-09..2025-05 (flags, artifacts, rare thinking), from
  2025-05 (``parent_message_uuid``, thinking with summaries and signature,
  web search ``tool_use``/``tool_result`` with knowledge blocks and citations,
  ``token_budget``, ``text`` = rendering of all blocks with the "not supported"
  placeholder for tool blocks).
* ``grok``: ``OUT/ttl/30d/export_data/<user uuid>/prod-grok-backend.json``
  (main; one line, compact), ``prod-mc-auth-mgmt-api.json`` and
  ``prod-mc-billing.json`` (fake PII-shaped data a converter must never read),
  ``prod-mc-asset-server/<asset id>/content`` for the first attachments and
  ``prod-mc-asset-server/<user id>-profile-picture.webp``.  Conversations
  before 2025-09 use the 2025 shape (``conversation_id``/``response_id``, ISO
  times), later ones the 2026 shape (``id``/``_id``, Mongo ``$date`` times,
  ``model: "build"`` + ``metadata.request_metadata.resolved_model``).
* ``copilot``: ``OUT/copilot-activity-history.csv`` (UTF-8 BOM,
  ``Conversation,Time,Author,Message``, CRLF rows, LF inside quoted cells,
  newest first, AI row before the Human row it answers with the same
  timestamp).  ``--truncated``: AI answers cut to 100 characters + ``...``
  (2025 exports).  ``--layout chat-activity``: ``copilot-chat-activity.csv``
  (``CreatedAt,MessageContent,Author,ChatName``, ``M/D/YYYY H:MM:SS +HH:MM``,
  ``user``/``bot``); ``--layout windows-apps``:
  ``windows-apps-copilot-activity-history.csv`` (``Timestamp,ClientApp,Prompt``).
* ``gemini-json``: ``OUT/Takeout/My Activity/Gemini Apps/MyActivity.json``
  (main; array, newest first, 2-space indent, written the way Google's JSON
  writer does it: raw UTF-8 but ``< > & = '`` as ``\\u003c``-style escapes),
  plus decoys ``Takeout/My Activity/YouTube/MyActivity.json`` and
  ``.../Chrome/MyActivity.json`` (other products, same file name, some Chrome
  visits of gemini.google.com) and ``Takeout/archive_browser.html``.
* ``gemini-html``: the same records as ``MyActivity.html`` files
  (Material-Design-Lite ``div.outer-cell`` blocks; local times in CET/CEST
  like ``Jul 26, 2026, 8:07:57 AM CEST``), decoys as HTML too.

``--small`` writes a tiny export (main file about 30 KiB) whose first
conversations each force one edge case, so every case appears at least once;
it is meant to be committed as an example.  ``--zip`` also writes ``OUT.zip``
(deflate, fixed timestamps, sorted members relative to OUT).

Determinism: everything derives from ``--seed`` (string-seeded
``random.Random`` streams, no clock, no hash order), so the same provider,
options, seed and size always give the same bytes.  Output also depends on
``gen_chatgpt.py``'s text pool, so changing that file changes these outputs.
Generation stops when the main file reaches ``--size`` (overshoot: at most one
conversation).  Files are written incrementally, main file under a
``.partial`` name renamed last, so a cached export is complete iff its main
file exists.  Copilot and Gemini are written newest first, generated walking
backwards in time with an adaptive gap so the timestamps stay inside the
provider's plausible date range at any size.

Usage:
    python3 benches/gen_providers.py PROVIDER --out DIR [--size 256M | --small]
                                     [--seed N] [--zip] [provider options]
    PROVIDER: claude, grok, copilot, gemini-json, gemini-html
"""

from __future__ import annotations

import argparse
import base64
import bisect
import calendar
import csv
import datetime
import importlib.util
import io
import json
import math
import os
import random
import re
import shutil
import sys
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))


def _load_chatgpt_generator():
    """Import gen_chatgpt.py (a sibling script, not a package) for its text helpers."""
    spec = importlib.util.spec_from_file_location("gen_chatgpt", os.path.join(HERE, "gen_chatgpt.py"))
    mod = importlib.util.module_from_spec(spec)
    saved, sys.dont_write_bytecode = sys.dont_write_bytecode, True  # no benches/__pycache__
    try:
        spec.loader.exec_module(mod)
    finally:
        sys.dont_write_bytecode = saved
    return mod


G = _load_chatgpt_generator()
parse_size = G.parse_size
KIB, MIB = G.KIB, G.MIB

PROVIDERS = ("claude", "grok", "copilot", "gemini-json", "gemini-html")
SMALL_TARGET = 30 * KIB
ZIP_DATE_TIME = (2026, 7, 27, 0, 0, 0)
ZIP_COMPRESSLEVEL = 6

# --------------------------------------------------------------------------
# Time helpers (all times are integer microseconds since the epoch, UTC)
# --------------------------------------------------------------------------

SEC = 1_000_000
MINUTE = 60 * SEC
HOUR = 60 * MINUTE
DAY = 24 * HOUR
_EPOCH = datetime.datetime(1970, 1, 1)


def ts(y: int, m: int, d: int, hh: int = 0, mm: int = 0) -> int:
    return calendar.timegm((y, m, d, hh, mm, 0)) * SEC


def _dt(t: int) -> datetime.datetime:
    return _EPOCH + datetime.timedelta(microseconds=t)


def iso_us(t: int) -> str:
    """2025-07-06T03:10:13.076141Z (Claude, Grok 2025)."""
    d = _dt(t)
    return f"{d:%Y-%m-%dT%H:%M:%S}.{d.microsecond:06d}Z"


def iso_us_offset(t: int) -> str:
    """2025-06-27T10:46:02.691887+00:00 (Claude projects.json)."""
    d = _dt(t)
    return f"{d:%Y-%m-%dT%H:%M:%S}.{d.microsecond:06d}+00:00"


def iso_ms(t: int) -> str:
    """2026-07-26T06:07:57.773Z (Google Takeout)."""
    d = _dt(t)
    return f"{d:%Y-%m-%dT%H:%M:%S}.{d.microsecond // 1000:03d}Z"


def naive_s(t: int) -> str:
    """2026-07-06T15:38:42 (Copilot: no zone, seconds)."""
    return f"{_dt(t):%Y-%m-%dT%H:%M:%S}"


def mongo_date(t: int) -> dict:
    return {"$date": {"$numberLong": str(t // 1000)}}


def _last_sunday(year: int, month: int) -> int:
    last = calendar.monthrange(year, month)[1]
    wd = calendar.weekday(year, month, last)  # Monday = 0
    return last - (wd + 1) % 7


def eu_offset_hours(t: int) -> int:
    """Central European offset: +2 between the last Sundays of March and October (01:00 UTC)."""
    y = _dt(t).year
    start = ts(y, 3, _last_sunday(y, 3), 1)
    end = ts(y, 10, _last_sunday(y, 10), 1)
    return 2 if start <= t < end else 1


def takeout_html_time(t: int) -> str:
    """Jul 26, 2026, 8:07:57 AM CEST (English Takeout HTML, local time)."""
    off = eu_offset_hours(t)
    d = _dt(t + off * HOUR)
    hour12 = d.hour % 12 or 12
    ampm = "AM" if d.hour < 12 else "PM"
    return f"{d:%b} {d.day}, {d.year}, {hour12}:{d:%M:%S} {ampm} {'CEST' if off == 2 else 'CET'}"


def copilot_chat_time(t: int) -> str:
    """1/2/2026 3:04:05 +01:00 (copilot-chat-activity.csv, local time with offset)."""
    off = eu_offset_hours(t)
    d = _dt(t + off * HOUR)
    return f"{d.month}/{d.day}/{d.year} {d.hour}:{d:%M:%S} +{off:02d}:00"


# --------------------------------------------------------------------------
# Text helpers
# --------------------------------------------------------------------------

_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_INLINE_CODE = re.compile(r"`([^`\n]+)`")
_BOLD = re.compile(r"\*\*([^*\n]+)\*\*")
_LINK = re.compile(r"\[([^\]\n]+)\]\(((?:https?|ca)://[^)\s]+)\)")
_OL_ITEM = re.compile(r"^\d+\. ")


def strip_controls(s: str) -> str:
    return _CONTROL.sub("", s.replace("\r\n", "\n").replace("\r", "\n"))


def html_escape(s: str) -> str:
    return (s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            .replace('"', "&quot;").replace("'", "&#39;"))


def inline_html(s: str) -> str:
    s = html_escape(s)
    s = _INLINE_CODE.sub(r"<code>\1</code>", s)
    s = _BOLD.sub(r"<b>\1</b>", s)
    return _LINK.sub(r'<a href="\2">\1</a>', s)


def _html_group(lines: list[str]) -> str:
    first = lines[0]
    if first.startswith("- ") or first.startswith("  - "):
        return "<ul>" + "".join(f"<li>{inline_html(l.lstrip()[2:])}</li>" for l in lines) + "</ul>"
    if _OL_ITEM.match(first):
        return "<ol>" + "".join(f"<li>{inline_html(_OL_ITEM.sub('', l))}</li>" for l in lines) + "</ol>"
    if first.startswith("### "):
        head = f"<h3>{inline_html(first[4:])}</h3>"
        return head + (f"<p>{'<br>'.join(inline_html(l) for l in lines[1:])}</p>" if lines[1:] else "")
    if first.startswith("|"):
        rows = [l.strip("|").split("|") for l in lines if not l.startswith("|---")]
        head = "".join(f"<th>{inline_html(c.strip())}</th>" for c in rows[0])
        body = "".join("<tr>" + "".join(f"<td>{inline_html(c.strip())}</td>" for c in r) + "</tr>"
                       for r in rows[1:])
        return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
    if first.startswith("> "):
        return f"<blockquote><p>{'<br>'.join(inline_html(l[2:]) for l in lines)}</p></blockquote>"
    return f"<p>{'<br>'.join(inline_html(l) for l in lines)}</p>"


def md_to_html(md: str) -> str:
    """Tiny Markdown -> HTML for the pool's block shapes (answers of Gemini)."""
    lines = strip_controls(md).split("\n")
    out: list[str] = []
    group: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("```"):
            if group:
                out.append(_html_group(group))
                group = []
            lang = line[3:].strip()
            body = []
            i += 1
            while i < len(lines) and not lines[i].startswith("```"):
                body.append(lines[i])
                i += 1
            i += 1
            cls = f' class="language-{lang}"' if lang else ""
            out.append(f"<pre><code{cls}>{html_escape(chr(10).join(body))}</code></pre>")
            continue
        if line.strip():
            group.append(line)
        elif group:
            out.append(_html_group(group))
            group = []
        i += 1
    if group:
        out.append(_html_group(group))
    return "".join(out)


def curly(text: str) -> str:
    """Typographic apostrophes and non-breaking hyphens outside code fences (Copilot style)."""
    parts = text.split("```")
    for i in range(0, len(parts), 2):
        parts[i] = parts[i].replace("'", "\u2019").replace("built-in", "built\u2011in")
    return "```".join(parts)


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")[:60] or "more"


def title_case_words(rng: random.Random, lo: int = 2, hi: int = 5) -> str:
    return " ".join(rng.choices(G.TITLE_WORDS, k=rng.randint(lo, hi)))


IMAGE_PROMPTS = ["a cat astronaut floating above Earth", "a cozy cabin in a snowy forest at dusk",
                 "a watercolor map of Lisbon", "a robot reading a book in a library",
                 "a neon city street in the rain", "a bowl of ramen, studio lighting"]
IMAGE_DESCRIPTIONS = [
    "The image shows a handwritten note with a shopping list; the last item is hard to read.",
    "This is a screenshot of a terminal with a Rust compiler error about a borrowed value.",
    "The photo shows a houseplant with yellowing leaves, which usually points to overwatering.",
    "It's a chart of monthly expenses; the biggest category is rent, then groceries.",
]
FILE_NAMES = ["notes.txt", "error.log", "report.pdf", "data.csv", "main.py", "README.md",
              "Q3 budget (final).xlsx", "résumé_2026.docx", "スクリーンショット.png", "paste.txt"]


class Base:
    """Seeded source of ids and realistic text shared by all providers."""

    def __init__(self, provider: str, seed: int, small: bool):
        self.small = small
        self.rng = random.Random(f"{provider}-{seed}")
        self.pool = G.TextPool(random.Random(f"pool-{seed}"))
        self.popular_answers = [self.pool.text(self.pool.rng.randint(80, 700)) for _ in G.POPULAR_PROMPTS]
        self.pool.rng = self.rng

    # -- ids -----------------------------------------------------------------
    def uuid(self) -> str:
        h = "%032x" % self.rng.getrandbits(128)
        return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{'89ab'[int(h[16], 16) & 3]}{h[17:20]}-{h[20:]}"

    def hexid(self, n: int) -> str:
        return "%0*x" % (n, self.rng.getrandbits(4 * n))

    def b62(self, n: int) -> str:
        return "".join(self.rng.choices(G.BASE62, k=n))

    # -- text ----------------------------------------------------------------
    def answer_len(self) -> int:
        if self.small:
            return int(min(350, max(40, self.rng.lognormvariate(math.log(140), 0.5))))
        return int(min(6000, max(50, self.rng.lognormvariate(math.log(700), 0.9))))

    def prompt(self, first: bool) -> str:
        rng, pool = self.rng, self.pool
        r = rng.random()
        if not first and r < 0.12:
            return rng.choice(G.COMMON_FOLLOWUPS)
        if first and r < 0.05:
            return rng.choice(G.POPULAR_PROMPTS)
        r = rng.random()
        if r < 0.05:
            return pool.text(rng.randint(20, 200 if self.small else 300), unicode=True)
        if r < 0.55:
            return pool.question() + ("" if rng.random() < 0.5 else " " + pool.sentence())
        if r < 0.72:
            return pool.question() + "\n\n" + rng.choice(pool.code)
        if r < 0.78:
            return pool.question() + "\n\n" + rng.choice(G.ESCAPE_SNIPPETS)
        if r < 0.96 or self.small:
            return pool.paragraph(1, 3)
        return pool.question() + "\n\n" + pool.text(rng.randint(500, 4000))  # long paste

    def answer(self, prompt: str, unicode_p: float = 0.06) -> str:
        rng = self.rng
        if prompt in G.COMMON_FOLLOWUPS and rng.random() < 0.4:
            return rng.choice(G.COMMON_REPLIES)
        if prompt in G.POPULAR_PROMPTS and rng.random() < 0.5:
            return self.popular_answers[G.POPULAR_PROMPTS.index(prompt)]
        return self.pool.text(self.answer_len(), unicode=rng.random() < unicode_p)

    def turns(self, mean: float, cap: int) -> int:
        """Number of exchanges in a conversation (1 or 2 with --small)."""
        if self.small:
            return 1 + (self.rng.random() < 0.3)
        return min(1 + int(self.rng.expovariate(1 / mean)), cap)

    def title(self) -> str:
        rng = self.rng
        r = rng.random()
        if r < 0.06:
            return rng.choice(G.UNICODE_TITLES)
        if r < 0.07:
            return 'Fix "path\\to\\file", again'
        return title_case_words(rng)

    def code_snippet(self) -> tuple[str, str]:
        """(language, code) without fences."""
        block = self.rng.choice(self.pool.code)
        first_nl = block.index("\n")
        return block[3:first_nl], block[first_nl + 1:-4]


class MainFile:
    """The main file: written under .partial, byte-counted, renamed on close."""

    def __init__(self, path: str):
        self.path = path
        os.makedirs(os.path.dirname(path), exist_ok=True)
        self.f = open(path + ".partial", "wb", buffering=4 * MIB)
        self.total = 0

    def write(self, data: bytes) -> None:
        self.f.write(data)
        self.total += len(data)

    def close(self) -> None:
        self.f.close()
        os.replace(self.path + ".partial", self.path)


def write_file(path: str, data: bytes) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path + ".partial", "wb") as f:
        f.write(data)
    os.replace(path + ".partial", path)


def dumps_indented_element(obj, **kw) -> str:
    """One array element exactly as json.dumps(list, indent=2) would indent it."""
    return json.dumps([obj], indent=2, **kw)[2:-2]


def run_until(target: int, main: MainFile, step, force_list: list, label: str, quiet: bool) -> int:
    """Call step(force) until the main file reaches target bytes; forced cases first."""
    count = 0
    report_every = max(target // 8, 64 * MIB)
    next_report = report_every
    while main.total < target or count < len(force_list):
        step(force_list[count] if count < len(force_list) else frozenset())
        count += 1
        if not quiet and main.total >= next_report:
            print(f"gen_providers {label}: {main.total / MIB:,.0f} / {target / MIB:,.0f} MiB",
                  file=sys.stderr, flush=True)
            next_report += report_every
    return count


# --------------------------------------------------------------------------
# Claude
# --------------------------------------------------------------------------

T_CL0, T_CL_MID, T_CL_NEW, T_CL1 = ts(2024, 3, 1), ts(2024, 9, 1), ts(2025, 5, 1), ts(2026, 7, 1)
T_CL_EXPORT = ts(2026, 7, 20, 9, 30)
CLAUDE_ROOT = "00000000-0000-4000-8000-000000000000"
CLAUDE_PLACEHOLDER = "\n```\nThis block is not supported on your current device yet.\n```\n\n"
ARTIFACT_TYPES = ("application/vnd.ant.code", "text/markdown", "application/vnd.ant.react")
SITES = ("docs.rs", "developer.mozilla.org", "en.wikipedia.org", "stackoverflow.com", "example.com",
         "blog.rust-lang.org", "docs.python.org")


class Claude(Base):
    # --small: one conversation per group of edge cases, before the random ones
    FORCED = [("branch_retry", "thinking"), ("branch_edit", "attachment"), ("empty",),
              ("web_search", "token_budget"), ("artifact", "files", "unicode"), ("tool_only", "project"),
              ("old", "no_content"), ("blank_text",)]

    def __init__(self, seed: int, small: bool):
        super().__init__("claude", seed, small)
        self.account = self.uuid()
        self.project_ids = [self.uuid() for _ in range(4)]  # [0] is the starter project
        self.project_names = ["How to use Claude", "Home renovation", "memport docs", "Thesis: Läufer & Co"]

    # -- blocks ----------------------------------------------------------------
    def _stamps(self, b: dict, start: int, stop: int) -> dict:
        b["start_timestamp"] = iso_us(start)
        b["stop_timestamp"] = iso_us(stop)
        if self.era >= 1:
            b["flags"] = None
        return b

    def text_block(self, text: str, start: int, stop: int, citations=None) -> dict:
        b = self._stamps({}, start, stop)
        b["type"] = "text"
        b["text"] = text
        b["citations"] = citations or []
        return b

    def thinking_block(self, start: int, stop: int) -> dict:
        rng, pool = self.rng, self.pool
        b = self._stamps({}, start, stop)
        b["type"] = "thinking"
        b["thinking"] = (pool.paragraph(1, 2) if self.small
                         else "\n\n".join(pool.paragraph(1, 3) for _ in range(rng.randint(1, 4))))
        b["summaries"] = [{"summary": pool.sentence(3, 8)} for _ in range(rng.randint(1, 3))]
        b["cut_off"] = False
        b["truncated"] = False
        b["signature"] = base64.b64encode(rng.randbytes(rng.randint(60, 120) if self.small
                                                        else rng.randint(200, 700))).decode()
        b["alternative_display_type"] = None
        return b

    def tool_use(self, name: str, inp: dict, message: str, start: int, stop: int) -> dict:
        b = self._stamps({}, start, stop)
        b.update({"type": "tool_use", "id": "toolu_01" + self.b62(22), "name": name, "input": inp,
                  "message": message, "integration_name": None, "integration_icon_url": None,
                  "context": None, "display_content": None, "approval_options": None, "approval_key": None})
        return b

    def tool_result(self, use: dict, content: list, start: int, stop: int) -> dict:
        b = self._stamps({}, start, stop)
        b.update({"type": "tool_result", "tool_use_id": use["id"], "name": use["name"], "content": content,
                  "is_error": False, "message": None, "display_content": None})
        return b

    # -- messages --------------------------------------------------------------
    def message(self, sender: str, text: str, content: list, t: int, parent: str | None,
                attachments=None, files=None) -> dict:
        m = {"uuid": self.uuid(), "text": text, "content": content, "sender": sender,
             "created_at": iso_us(t),
             # old data: every message's updated_at is the export time [A2]
             "updated_at": iso_us(T_CL_EXPORT if self.era == 0 else t),
             "attachments": attachments or [], "files": files or []}
        if self.era == 2:
            m["parent_message_uuid"] = parent
        return m

    def human(self, prompt: str, t: int, parent: str, force: frozenset, empty: bool) -> tuple[dict, int]:
        rng = self.rng
        if "unicode" in force and rng.random() < 0.5:
            prompt = rng.choice(G.UNICODE_SNIPPETS) + "\n" + prompt
        attachments, files = [], []
        if not empty and ("attachment" in force or rng.random() < 0.05):
            kind = rng.random()
            if kind < 0.5:
                lang, code = self.code_snippet()
                suffix = {"python": "py", "rust": "rs", "javascript": "js", "bash": "sh"}.get(lang, "txt")
                name, ftype, body = f"{rng.choice(G.IDENTS)}.{suffix}", "txt", code
            elif kind < 0.8:
                name, ftype, body = "paste.txt", "txt", self.pool.text(300 if self.small else rng.randint(500, 8000))
            else:
                name, ftype, body = "notes.md", "text/markdown", self.pool.text(300 if self.small else 2000)
            attachments.append({"file_name": name, "file_size": len(body.encode()), "file_type": ftype,
                                "extracted_content": body})
        if not empty and ("files" in force or rng.random() < 0.04):
            fname = rng.choice(("image.png", "IMG_2043.jpeg", "Screenshot 2025-11-02 at 10.14.22.png", "scan.pdf"))
            files.append({"file_name": fname} if self.era < 2 else {"file_uuid": self.uuid(), "file_name": fname})
        if empty:
            prompt = ""
        if "no_content" in force or (self.era == 0 and rng.random() < 0.01):
            return self.message("human", prompt, [], t, parent, attachments, files), t  # text only, content []
        block = self.text_block(prompt, t, t)
        text = prompt
        if ("blank_text" in force or (self.era >= 1 and rng.random() < 0.03)) and prompt:
            text = ""  # text and content disagree: only the block has the prompt
        return self.message("human", text, [block], t, parent, attachments, files), t

    def assistant(self, prompt: str, t: int, parent: str, force: frozenset, empty: bool) -> tuple[dict, int]:
        rng, pool = self.rng, self.pool
        t += rng.randint(300_000, 4 * SEC)
        if empty or rng.random() < 0.01:
            return self.message("assistant", "", [self.text_block("", t, t)], t, parent), t
        blocks, rendered = [], []
        era = self.era
        if era == 2 and ("token_budget" in force or rng.random() < 0.005):
            blocks.append({"start_timestamp": None, "stop_timestamp": None, "flags": None, "type": "token_budget"})
        if "thinking" in force or (era == 2 and rng.random() < 0.25) or (era == 1 and rng.random() < 0.05):
            t2 = t + rng.randint(2, 40) * SEC
            b = self.thinking_block(t, t2)
            blocks.append(b)
            if era == 2:
                rendered.append(b["thinking"])
            t = t2
        tool_only = "tool_only" in force or (era >= 1 and rng.random() < 0.01)
        web = not tool_only and era == 2 and ("web_search" in force or rng.random() < 0.05)
        artifact = tool_only or (era >= 1 and ("artifact" in force or rng.random() < 0.06))
        if web:
            query = " ".join(rng.choices(G.WORDS, k=rng.randint(2, 5)))
            use = self.tool_use("web_search", {"query": query}, "Searching the web", t, t + SEC)
            hits = []
            for _ in range(2 if self.small else rng.randint(2, 6)):
                site = rng.choice(SITES)
                url = f"https://{site}/{slug(pool.sentence(2, 4))}"
                hits.append({"type": "knowledge", "title": title_case_words(rng), "url": url,
                             "metadata": {"type": "webpage_metadata", "site_domain": site,
                                          "favicon_url": f"https://www.google.com/s2/favicons?sz=64&domain={site}",
                                          "site_name": site.split(".")[-2].title()},
                             "is_missing": False, "text": pool.sentence() if self.small else pool.paragraph(1, 5),
                             "is_citable": True, "prompt_context_metadata": {"url": url}})
            res = self.tool_result(use, hits, t + SEC, t + 2 * SEC)
            blocks += [use, res]
            rendered += [CLAUDE_PLACEHOLDER, CLAUDE_PLACEHOLDER]
            t += 2 * SEC
            sentences = [pool.sentence() for _ in range(rng.randint(3, 6))]
            text = " ".join(sentences)
            cites, pos = [], 0
            for s in sentences:
                if rng.random() < 0.5:
                    cites.append({"uuid": self.uuid(), "start_index": pos, "end_index": pos + len(s),
                                  "details": {"type": "web_search_citation", "url": rng.choice(hits)["url"]}})
                pos += len(s) + 1
            t2 = t + rng.randint(2, 20) * SEC
            blocks.append(self.text_block(text, t, t2, cites))
            rendered.append(text)
            t = t2
        elif artifact:
            if not tool_only:
                intro = pool.sentence()
                blocks.append(self.text_block(intro, t, t + SEC))
                rendered.append(intro)
            atype = rng.choice(ARTIFACT_TYPES)
            lang, code = self.code_snippet()
            body = code if atype != "text/markdown" else pool.text(self.answer_len())
            inp = {"id": slug(title_case_words(rng, 2, 3)).replace("_", "-"), "type": atype,
                   "title": title_case_words(rng), "command": "create", "content": body,
                   "language": lang if atype == "application/vnd.ant.code" else None,
                   "version_uuid": self.uuid()}
            if rng.random() < 0.2:  # an update of an earlier artifact
                inp = {"id": inp["id"], "command": "update", "old_str": body[:20], "new_str": body[:20].upper(),
                       "version_uuid": self.uuid()}
            use = self.tool_use("artifacts", inp, "artifacts", t + SEC, t + 8 * SEC)
            res = self.tool_result(use, [{"type": "text", "text": "OK", "uuid": self.uuid()}],
                                   t + 8 * SEC, t + 8 * SEC)
            blocks += [use, res]
            rendered += [CLAUDE_PLACEHOLDER, CLAUDE_PLACEHOLDER]
            t += 9 * SEC
            if not tool_only:
                outro = self.answer(prompt)
                blocks.append(self.text_block(outro, t, t + 3 * SEC))
                rendered.append(outro)
                t += 3 * SEC
        else:
            text = self.answer(prompt)
            t2 = t + rng.randint(1, 30) * SEC
            blocks.append(self.text_block(text, t, t2))
            rendered.append(text)
            t = t2
        if era == 2:
            text = "".join(rendered)  # thinking + answer concatenated, placeholders for tools [A1][U3]
        else:
            text = "".join(b["text"] for b in blocks if b["type"] == "text")
        t += rng.randint(10_000, 200_000)
        return self.message("assistant", text, blocks, t, parent), t

    def conversation(self, force: frozenset) -> dict:
        rng = self.rng
        new_only = {"branch_retry", "branch_edit", "thinking", "web_search", "token_budget", "tool_only"}
        if "old" in force or "no_content" in force:
            t0 = rng.randrange(T_CL0, T_CL_MID)
        elif force & new_only or "artifact" in force:
            t0 = rng.randrange(T_CL_NEW, T_CL1)
        else:
            t0 = rng.randrange(T_CL0, T_CL1)
        self.era = 0 if t0 < T_CL_MID else 1 if t0 < T_CL_NEW else 2
        empty = "empty" in force or rng.random() < 0.02
        n_turns = self.turns(2.5, 40)
        branch_at, branch = -1, None
        if self.era == 2 and (force & {"branch_retry", "branch_edit"} or rng.random() < 0.19):
            branch = ("retry" if "branch_retry" in force else "edit" if "branch_edit" in force
                      else rng.choice(("retry", "retry", "edit")))
            branch_at = rng.randrange(n_turns)
        msgs: list[dict] = []
        t = t0 + rng.randint(200_000, 6 * SEC)
        parent = CLAUDE_ROOT
        for turn in range(n_turns):
            prompt = self.prompt(turn == 0)
            h, t = self.human(prompt, t, parent, force, empty)
            a, t = self.assistant(prompt, t, h["uuid"], force, empty)
            msgs += [h, a]
            parent = a["uuid"]
            if turn == branch_at:
                t += rng.randint(5, 600) * SEC
                if branch == "retry":  # regenerated answer: second child of the same human message
                    a2, t = self.assistant(prompt, t, h["uuid"], force, empty)
                    msgs.append(a2)
                    parent = a2["uuid"]
                else:  # edited prompt: second child of the human message's parent
                    h2, t = self.human(prompt + " " + self.pool.sentence(3, 8), t, h["parent_message_uuid"],
                                       force, empty)
                    a2, t = self.assistant(prompt, t, h2["uuid"], force, empty)
                    msgs += [h2, a2]
                    parent = a2["uuid"]
            t += rng.randint(20, 1800) * SEC
        name = "" if rng.random() < 0.35 else self.title()
        if "unicode" in force:
            name = rng.choice(G.UNICODE_TITLES)
        conv = {"uuid": self.uuid(), "name": name}
        if self.era >= 1:
            conv["summary"] = "" if rng.random() < 0.7 else self.pool.paragraph(1, 2)
        conv["created_at"] = iso_us(t0)
        conv["updated_at"] = iso_us(max(t0, t - rng.randint(1, 20) * SEC))
        conv["account"] = {"uuid": self.account}
        conv["chat_messages"] = msgs
        if "project" in force or rng.random() < 0.01:
            i = rng.randrange(1, 4)
            conv["project"] = {"uuid": self.project_ids[i], "name": self.project_names[i]}
        return conv

    # -- side files ------------------------------------------------------------
    def projects(self) -> list:
        rng, pool = self.rng, self.pool
        creator = {"uuid": self.account, "full_name": "Test User"}
        out = []
        for i, (pid, name) in enumerate(zip(self.project_ids, self.project_names)):
            t = rng.randrange(T_CL0, T_CL1)
            if i == 0:
                docs = [{"uuid": self.uuid(), "filename": "Getting started.md",
                         "content": "# Getting started\n\n" + pool.text(400 if self.small else 3000),
                         "created_at": iso_us_offset(t)}]
                out.append({"uuid": pid, "name": name, "description": "An example project that explains how "
                            "to work with projects, files and instructions.", "is_private": False,
                            "is_starter_project": True, "prompt_template": "", "created_at": iso_us_offset(t),
                            "updated_at": iso_us_offset(t), "creator": creator, "docs": docs})
                continue
            docs = [{"uuid": self.uuid(), "filename": f"{slug(title_case_words(rng, 1, 3))}.md",
                     "content": pool.text(300 if self.small else rng.randint(500, 6000)),
                     "created_at": iso_us_offset(t + rng.randint(1, 100) * HOUR)}
                    for _ in range(rng.randint(1, 2 if self.small else 4))]
            out.append({"uuid": pid, "name": name, "description": pool.sentence(), "is_private": True,
                        "is_starter_project": False,
                        "prompt_template": f"You are helping me with {name}. " + pool.sentence(),
                        "created_at": iso_us_offset(t), "updated_at": iso_us_offset(t + rng.randint(1, 90) * DAY),
                        "creator": creator, "docs": docs})
        return out

    def memories(self) -> dict:
        pool = self.pool
        md = ("**Work context**\n\nThe user is a backend developer who works mostly in Rust and Python "
              "and cares about streaming parsers and memory use.\n\n**Personal context**\n\n"
              f"{pool.paragraph(1, 2)}\n\n**Top of mind**\n\n- {pool.sentence()}\n- {pool.sentence()}\n\n"
              "**Brief history**\n\n*Recent months*\n\n" + pool.paragraph(1, 3))
        return {"conversations_memory": md,
                "project_memories": {self.project_ids[1]: "**Purpose & context**\n\n" + pool.paragraph(1, 2),
                                     self.project_ids[2]: "**Current state**\n\n" + pool.paragraph(1, 2)},
                "account_uuid": self.account}


def gen_claude(args) -> tuple[str, int, int]:
    g = Claude(args.seed, args.small)
    out = args.out
    main = MainFile(os.path.join(out, "conversations.json"))
    main.write(b"[\n")
    first = [True]

    def step(force):
        conv = g.conversation(force)
        data = dumps_indented_element(conv, ensure_ascii=False).encode("utf-8")
        main.write(data if first[0] else b",\n" + data)
        first[0] = False

    forced = [frozenset(f) for f in Claude.FORCED] if args.small else []
    n = run_until(args.size - 3, main, step, forced, "claude", args.quiet)
    main.write(b"\n]")
    dump2 = lambda o: (json.dumps(o, indent=2, ensure_ascii=False) + "\n").encode("utf-8")
    write_file(os.path.join(out, "projects.json"), dump2(g.projects()))
    mem = g.memories()
    write_file(os.path.join(out, "memories.json"), dump2(mem if args.memories_object else [mem]))
    write_file(os.path.join(out, "users.json"), dump2([{
        "uuid": g.account, "full_name": "Test User", "email_address": "test.user@example.com",
        "verified_phone_number": "+15555550100"}]))
    main.close()
    return main.path, main.total, n


# --------------------------------------------------------------------------
# Grok
# --------------------------------------------------------------------------

T_GK0, T_GK_2026, T_GK1 = ts(2024, 12, 1), ts(2025, 9, 1), ts(2026, 7, 1)
MAX_GROK_ASSETS = 30
RESOLVED_MODELS = ("grok-4-0709", "grok-4-fast-reasoning", "grok-3", "grok-4-1-fast-non-reasoning")
WEBP_1PX = base64.b64decode("UklGRhoAAABXRUJQVlA4TA0AAAAvAAAAEAcQERGIiP4HAA==")


class Grok(Base):
    FORCED = [("regen", "thinking"), ("edit", "cited", "leaf_missing"), ("image", "sender_model"),
              ("answer_first", "steps", "attachment"), ("leaf_null", "error"), ("shuffled",),
              ("shape2025", "cited"), ("shape2025_null_root", "regen")]

    def __init__(self, seed: int, small: bool):
        super().__init__("grok", seed, small)
        self.user_id = self.uuid()
        self.assets: list[tuple[str, bytes]] = []

    def stamp(self, t: int):
        return iso_us(t) if self.shape == 2025 else mongo_date(t)

    def hits(self, n: int) -> list:
        rng, pool = self.rng, self.pool
        out = []
        for _ in range(n):
            site = rng.choice(SITES)
            out.append({"url": f"https://{site}/{slug(pool.sentence(2, 4))}", "title": title_case_words(rng),
                        "preview": pool.sentence(8, 20)})
        return out

    def response(self, rid: str, parent: str | None, human: bool, message: str, t: int) -> dict:
        rng = self.rng
        if self.shape == 2025:
            r = {"response_id": rid, "conversation_id": self.conv_id}
        else:
            r = {"_id": rid}
        if human:
            sender = "human"
        elif self.shape == 2025:
            sender = "ASSISTANT" if rng.random() < 0.9 else "assistant"
        else:
            sender = "assistant"
        if not human and ("sender_model" in self.force or rng.random() < 0.02):
            sender = "grok-3"
        r.update({"message": message, "sender": sender, "create_time": self.stamp(t), "parent_response_id": parent})
        if self.shape == 2026:
            r["model"] = self.picker
        r.update({"manual": False, "partial": False, "shared": False, "query": None, "query_type": None,
                  "web_search_results": [], "cited_web_search_results": [], "xpost_ids": [],
                  "generated_image_urls": [], "debug_log": None, "image_attachments": [], "file_attachments": [],
                  "card_attachments_json": [], "is_control": False, "thinking_trace": None, "steps": [],
                  "image_edit_uri": None, "xai_user_id": self.user_id, "xai_anon_user_id": None, "error": None,
                  "media_types": [], "webpage_urls": []})
        if self.shape == 2025:
            r["metadata"] = ({"requestModelDetails": {"modelId": "grok-3"}} if human else {"deepsearchPreset": ""})
        elif human:
            r["metadata"] = {"request_metadata": {"model": self.picker, "mode": "auto"}}
        else:
            r["metadata"] = {"request_metadata": {"model": self.picker, "resolved_model": self.resolved,
                                                  "source": "web"},
                             "ui_layout": {"reasoningUiLayout": "SPLIT", "willThinkLong": False},
                             "llm_info": {"modelHash": self.hexid(16)}}
        r["thinking_start_time"] = None
        r["thinking_end_time"] = None
        if self.shape == 2026:
            r["agent_thinking_traces"] = []
        return r

    def human_turn(self, parent, t: int, first: bool, image: bool) -> tuple[dict, str]:
        rng = self.rng
        prompt = ("Draw " + rng.choice(IMAGE_PROMPTS)) if image else self.prompt(first)
        rid = self.uuid()
        r = self.response(rid, parent, True, prompt, t)
        if "attachment" in self.force or rng.random() < 0.03:
            aid = self.uuid()
            r["file_attachments"] = [aid]
            if len(self.assets) < MAX_GROK_ASSETS:
                lang, code = self.code_snippet()
                blob = code.encode() if rng.random() < 0.7 else G.tiny_png(4, 4, (200, 80, 40))
                self.assets.append((aid, blob))
        return r, prompt

    def assistant_turn(self, parent: str, t: int, prompt: str, image: bool) -> dict:
        rng, pool, f = self.rng, self.pool, self.force
        rid = self.uuid()
        if image:  # image generation: empty message, URLs only
            r = self.response(rid, parent, False, "", t)
            r["query"] = prompt[6:]
            r["query_type"] = "imagine"
            r["media_types"] = ["image"]
            r["generated_image_urls"] = [f"users/{self.user_id}/generated/{self.uuid()}/image.jpg"
                                         for _ in range(rng.choice((1, 2, 2, 4)))]
            return r
        if "error" in f or rng.random() < 0.005:
            r = self.response(rid, parent, False, "", t)
            r["partial"] = True
            r["error"] = "Failed to respond."
            return r
        r = self.response(rid, parent, False, self.answer(prompt), t)
        if "thinking" in f or rng.random() < 0.15:
            card = (f"<xai:tool_usage_card><xai:tool_usage_card_id>{self.hexid(8)}</xai:tool_usage_card_id>"
                    f"<xai:tool_name>web_search</xai:tool_name><xai:tool_args><![CDATA[{{\"query\":"
                    f"\"{' '.join(rng.choices(G.WORDS, k=3))}\"}}]]></xai:tool_args></xai:tool_usage_card>")
            r["thinking_trace"] = pool.paragraph(1, 3) + ("\n" + card + "\n" + pool.paragraph(1, 2)
                                                           if rng.random() < 0.5 else "")
            r["thinking_start_time"] = self.stamp(t - rng.randint(5, 60) * SEC)
            r["thinking_end_time"] = self.stamp(t - rng.randint(1, 4) * SEC)
        if "cited" in f or rng.random() < 0.10:
            found = self.hits(rng.randint(3, 4 if self.small else 10))
            r["web_search_results"] = found
            r["cited_web_search_results"] = found[:rng.randint(1, 3)]
            r["webpage_urls"] = [h["url"] for h in r["cited_web_search_results"]]
        if self.shape == 2026 and ("steps" in f or rng.random() < 0.03):
            found = self.hits(2)
            card_id = self.hexid(8)
            r["steps"] = [{"tag_order": ["text", "tool_usage_card"], "tagged_text": pool.sentence(),
                           "tool_usage_cards": [{"tool_usage_card_id": card_id, "tool": {
                               "web_search": {"args": {"query": " ".join(rng.choices(G.WORDS, k=3))}}}}],
                           "tool_usage_results": [{"tool_usage_card_id": card_id, "web_search_results": found}],
                           "web_search_results": found}]  # repeats the hits
        return r

    def conversation(self, force: frozenset) -> dict:
        rng = self.rng
        self.force = force
        if force & {"shape2025", "shape2025_null_root"}:
            t0 = rng.randrange(T_GK0, T_GK_2026)
        elif force:
            t0 = rng.randrange(T_GK_2026, T_GK1)
        else:
            t0 = rng.randrange(T_GK0, T_GK1)
        self.shape = 2025 if t0 < T_GK_2026 else 2026
        self.conv_id = self.uuid()
        self.picker = rng.choice(("build",) * 5 + ("grok-4", "grok-3", "grok-4-fast"))
        self.resolved = rng.choice(RESOLVED_MODELS)
        # the first turn points at a root that is never exported (2025: sometimes null, as in [X1])
        if self.shape == 2025 and ("shape2025_null_root" in force or rng.random() < 0.4):
            root = None
        else:
            root = self.uuid()
        n_turns = self.turns(2.5, 40)
        branch_at = rng.randrange(n_turns) if (force & {"regen", "edit"} or rng.random() < 0.09) else -1
        branch = "regen" if "regen" in force else "edit" if "edit" in force else rng.choice(("regen", "regen", "edit"))
        items: list[tuple[int, int, dict]] = []  # (time, seq, response)
        t = t0 + rng.randint(10_000, 900_000)
        parent = root
        for turn in range(n_turns):
            image = ("image" in force and turn == 0) or rng.random() < 0.03
            h, prompt = self.human_turn(parent, t, turn == 0, image)
            t_ans = t + rng.randint(2, 60) * SEC
            a = self.assistant_turn(h["_id" if self.shape == 2026 else "response_id"], t_ans, prompt, image)
            # both turns stamped at the end of the turn: the answer can be older than its question [U8]
            if self.shape == 2026 and ((turn == 0 and "answer_first" in force) or rng.random() < 0.08):
                h["create_time"] = self.stamp(t_ans + rng.randint(1_000, 80_000))
                items.append((t_ans, len(items), a))
                items.append((t_ans + 1, len(items), h))
            else:
                items.append((t, len(items), h))
                items.append((t_ans, len(items), a))
            hid = h["_id" if self.shape == 2026 else "response_id"]
            aid = a["_id" if self.shape == 2026 else "response_id"]
            t = t_ans
            if turn == branch_at:
                t += rng.randint(5, 300) * SEC
                if branch == "regen":
                    a2 = self.assistant_turn(hid, t, prompt, image)
                    items.append((t, len(items), a2))
                    aid = a2["_id" if self.shape == 2026 else "response_id"]
                else:
                    h2, prompt2 = self.human_turn(h["parent_response_id"], t, turn == 0, False)
                    t2 = t + rng.randint(2, 60) * SEC
                    a2 = self.assistant_turn(h2["_id" if self.shape == 2026 else "response_id"], t2, prompt2, False)
                    items += [(t, len(items), h2), (t2, len(items) + 1, a2)]
                    aid = a2["_id" if self.shape == 2026 else "response_id"]
                    t = t2
            parent = aid
            t += rng.randint(15, 1200) * SEC
        items.sort(key=lambda x: (x[0], x[1]))
        responses = [{"response": r, "share_link": None} for _, _, r in items]
        if "shuffled" in force or rng.random() < 0.05:  # document order is not reliable
            for _ in range(max(1, len(responses) // 3)):
                i = rng.randrange(len(responses))
                j = rng.randrange(len(responses))
                responses[i], responses[j] = responses[j], responses[i]
        if rng.random() < 0.01:
            responses[-1]["share_link"] = {"share_link_id": self.b62(20), "create_time": iso_us(t)}
        leaf = parent
        r = rng.random()
        if "leaf_null" in force or (not force and (r < 0.4 if self.shape == 2025 else r < 0.03)):
            leaf = None
        elif "leaf_missing" in force or (not force and (r > 0.98 if self.shape == 2025 else r > 0.96)):
            leaf = self.uuid()  # names a response that is not exported
        c = {"conversation_id" if self.shape == 2025 else "id": self.conv_id, "user_id": self.user_id,
             "anon_user_id": None, "create_time": iso_us(t0), "modify_time": iso_us(t),
             "system_prompt_id": None, "temporary": False, "leaf_response_id": leaf,
             "title": "" if (n_turns == 1 and rng.random() < 0.02) else self.grok_title(),
             "summary": "", "asset_ids": [], "root_asset_id": None, "x_user_id": None,
             "starred": rng.choice((None, None, False, True)) if self.shape == 2025 else rng.random() < 0.05,
             "system_prompt_name": "", "media_types": [], "controller": None, "task_result_id": None}
        return {"conversation": c, "responses": responses}

    def grok_title(self) -> str:
        rng = self.rng
        if rng.random() < 0.06:
            return rng.choice(G.UNICODE_TITLES)
        return f"{title_case_words(rng, 1, 3)}: {title_case_words(rng, 1, 2)} and {title_case_words(rng, 1, 2)}"


def gen_grok(args) -> tuple[str, int, int]:
    g = Grok(args.seed, args.small)
    base = os.path.join(args.out, "ttl", "30d", "export_data", g.user_id)
    main = MainFile(os.path.join(base, "prod-grok-backend.json"))
    main.write(b'{"conversations":[')
    first = [True]
    dump = lambda o: json.dumps(o, ensure_ascii=False, separators=(",", ":")).encode("utf-8")

    def step(force):
        data = dump(g.conversation(force))
        main.write(data if first[0] else b"," + data)
        first[0] = False

    forced = [frozenset(f) for f in Grok.FORCED] if args.small else []
    n = run_until(args.size - 200, main, step, forced, "grok", args.quiet)
    rng = g.rng
    projects = [{"workspace_id": g.uuid(), "name": name, "custom_personality": g.pool.sentence(),
                 "preferred_model": "grok-4", "conversation_starters": [g.pool.question()],
                 "create_time": iso_us(rng.randrange(T_GK_2026, T_GK1))}
                for name in ("Fishing trip planner", "Rust side project")]
    media = [{"id": g.uuid(), "original_prompt": p, "media_type": "image",
              "create_time": iso_us(rng.randrange(T_GK_2026, T_GK1)),
              "link": f"https://grok.com/imagine/post/{g.uuid()}"} for p in IMAGE_PROMPTS[:3]]
    main.write(b'],"projects":' + dump(projects) + b',"tasks":[],"media_posts":' + dump(media) + b"}")
    # PII-shaped side files a converter must never read (fake data, documentation IP ranges)
    auth = {"user": {"userId": g.user_id, "email": "jordan.sample@example.com", "givenName": "Jordan",
                     "familyName": "Sample", "birthDate": "1990-04-01", "xUsername": "jordan_sample_x",
                     "createTime": iso_us(T_GK0 - 30 * DAY), "emailConfirmed": True},
            "sessions": [{"sessionId": g.uuid(), "createTime": iso_us(rng.randrange(T_GK0, T_GK1)),
                          "ipAddress": f"203.0.113.{rng.randint(1, 254)}", "userAgent": "Mozilla/5.0 (X11; Linux x86_64)",
                          "city": "Springfield", "country": "US", "latitude": 39.7817, "longitude": -89.6501}
                         for _ in range(3)]}
    write_file(os.path.join(base, "prod-mc-auth-mgmt-api.json"), dump(auth))
    write_file(os.path.join(base, "prod-mc-billing.json"),
               dump({"balance_map": {"credits": {"amount": "0", "currency": "USD"}, "subscription": "SuperGrok"}}))
    assets = os.path.join(base, "prod-mc-asset-server")
    for aid, blob in g.assets:
        write_file(os.path.join(assets, aid, "content"), blob)
    write_file(os.path.join(assets, f"{g.user_id}-profile-picture.webp"), WEBP_1PX)
    main.close()
    return main.path, main.total, n


# --------------------------------------------------------------------------
# Backwards-in-time walk (Copilot, Gemini: files are newest first)
# --------------------------------------------------------------------------

class BackwardClock:
    """Places episodes newest first, keeping the whole export inside [t_lo, t_hi).

    The mean gap between episodes adapts to the bytes still to write, so any
    --size spans roughly the same date range.
    """

    PRIOR_WEIGHT = 20  # episodes' worth of trust in the initial bytes-per-episode guess

    def __init__(self, rng: random.Random, t_lo: int, t_hi: int, target: int, avg_bytes: int, jitter: bool):
        self.rng, self.t_lo, self.cursor, self.target, self.prior = rng, t_lo, t_hi, target, avg_bytes
        self.jitter = jitter  # False (--small): even gaps, so a dozen episodes still span the range
        self.placed = 0

    def place(self, duration: int, written: int, min_gap: int = 0) -> int:
        """Start time of the next (older) episode of the given duration."""
        avg = (written + self.prior * self.PRIOR_WEIGHT) / (self.placed + self.PRIOR_WEIGHT)
        self.placed += 1
        remaining = max(self.target - written, avg)
        mean_gap = max((self.cursor - self.t_lo) * avg / remaining, MINUTE)
        gap = int(self.rng.expovariate(1 / mean_gap) if self.jitter else mean_gap)
        gap = min(gap, max(0, self.cursor - duration - self.t_lo)) + min_gap  # stay inside the range
        self.cursor -= gap + duration
        return self.cursor


# --------------------------------------------------------------------------
# Copilot
# --------------------------------------------------------------------------

T_CP0, T_CP1, T_CP1_2025 = ts(2024, 10, 1), ts(2026, 7, 15), ts(2025, 7, 15)
COMMON_COPILOT_TITLES = ["Casual Greeting", "Greeting and Small Talk", "Friendly Chat", "Quick Question",
                         "Image Description Request"]
CLIENT_APPS = ["Notepad", "Microsoft Word", "Microsoft Edge", "Paint", "Photos", "File Explorer",
               "Windows Copilot", "Outlook"]
SUGGESTIONS = ["explain it step by step", "show a shorter version", "compare with the alternatives",
               "turn this into a checklist", "write tests for it", "make a printable summary"]


class Copilot(Base):
    FORCED = [("empty_human", "suggestions"), ("interleave",), ("quoted_title",), ("unicode", "long"),
              ("reuse_title",)]

    def __init__(self, seed: int, small: bool, truncated: bool, layout: str):
        super().__init__("copilot", seed, small)
        self.truncated = truncated
        self.layout = layout
        self.title_seen: dict[str, int] = {}  # title -> start of its oldest conversation so far
        self.placed_neg: list[int] = []  # -start of every conversation placed (ascending)
        self.placed_titles: list[str] = []

    def ai_text(self, prompt: str, force: frozenset) -> str:
        rng = self.rng
        if prompt == "":
            text = rng.choice(IMAGE_DESCRIPTIONS) + "\n\n" + self.pool.paragraph(1, 2)
        else:
            text = self.answer(prompt, 0.15 if "unicode" in force else 0.06)
            if "long" in force:
                text += "\n\n" + self.pool.text(1500)
        if rng.random() < 0.6:
            text = curly(text)
        if "suggestions" in force or rng.random() < 0.3:
            picks = rng.sample(SUGGESTIONS, 3)
            text += "\n\n---\n\n## \U0001F4A1 Want to go further?\nI can help you:\n\n" + "\n".join(
                f"- [{p}](ca://s?q={p.replace(' ', '_')})" for p in picks)
        text = text.replace("\r\n", "\n").replace("\r", "\n")
        if self.truncated and len(text) > 100:
            text = text[:100] + "..."
        return text

    def copilot_title(self, force: frozenset) -> str:
        rng = self.rng
        if "quoted_title" in force or rng.random() < 0.01:
            return 'Fixing "Access Denied", Again'
        if "unicode" in force:
            return rng.choice(G.UNICODE_TITLES)
        r = rng.random()
        if r < 0.08:
            return rng.choice(COMMON_COPILOT_TITLES)
        if r < 0.12:
            return rng.choice(G.UNICODE_TITLES)
        return title_case_words(rng, 2, 5)

    def fresh_title(self, force: frozenset, cursor: int) -> str:
        """A title not used by any conversation less than two days newer than cursor.

        Conversations are grouped only by title, so two conversations with one title must be
        far enough apart to be told apart (the reuse below makes that case on purpose).
        """
        for _ in range(20):
            title = self.copilot_title(force)
            seen = self.title_seen.get(title)
            if seen is None or seen - cursor >= 2 * DAY:
                return title
            force = frozenset()
        return f"{title_case_words(self.rng, 4, 6)} {self.rng.randint(2, 999)}"

    def reused_title(self, cursor: int, forced: bool) -> tuple[str | None, int]:
        """(title of a newer conversation at least two days away, extra gap needed) or (None, 0)."""
        rng = self.rng
        k = bisect.bisect_right(self.placed_neg, -(cursor + 2 * DAY))  # placed >= 2 days before cursor
        cands = [t for t in self.placed_titles[max(0, k - 50):k] if self.title_seen[t] - cursor >= 2 * DAY]
        if cands:
            return rng.choice(cands), 0
        if forced and self.placed_titles:
            title = self.placed_titles[-1]
            return title, max(0, 2 * DAY - (self.title_seen[title] - cursor)) + rng.randint(0, 5) * DAY
        return None, 0

    def conversation_rows(self, title: str, force: frozenset) -> tuple[list, int]:
        """Rows (relative time, author rank, seq, row) of one conversation; times are filled in later."""
        rng = self.rng
        n = self.turns(3.0, 60)
        rows, t = [], 0
        for turn in range(n):
            if (turn == 0 and "empty_human" in force) or rng.random() < 0.02:
                prompt = ""  # image-only prompt
            else:
                prompt = self.prompt(turn == 0).replace("\r\n", "\n").replace("\r", "\n")
            answer = self.ai_text(prompt, force)
            if self.layout == "history":
                rows.append((t, 0, len(rows), [title, None, "Human", prompt]))
                rows.append((t, 1, len(rows), [title, None, "AI", answer]))
            elif self.layout == "chat-activity":
                t_bot = t + rng.randint(2, 40) * SEC
                rows.append((t, 0, len(rows), [None, prompt, "user", title]))
                rows.append((t_bot, 1, len(rows), [None, answer, "bot", title]))
            elif prompt:
                rows.append((t, 0, len(rows), [None, rng.choice(CLIENT_APPS), prompt]))
            t += rng.randint(20, 1500) * SEC
        return rows, t

    def episode(self, clock: BackwardClock, written: int, force: frozenset) -> list:
        """Rows of one episode (one conversation, sometimes two overlapping ones), newest first."""
        rng = self.rng
        title, min_gap = None, 0
        if "reuse_title" in force or rng.random() < 0.03:
            title, min_gap = self.reused_title(clock.cursor, "reuse_title" in force)
        if title is None:
            title = self.fresh_title(force, clock.cursor)
        rows, dur = self.conversation_rows(title, force)
        convs = [(title, rows, 0)]
        if "interleave" in force or rng.random() < 0.03:  # two conversations open at once
            other = self.fresh_title(frozenset(), clock.cursor)
            if other != title:
                off = rng.randint(0, max(dur, MINUTE)) + SEC
                rows2, dur2 = self.conversation_rows(other, frozenset())
                convs.append((other, rows2, off))
                dur = max(dur, off + dur2)
        start = clock.place(dur, written, min_gap)
        merged = []
        for i, (ttl, rs, off) in enumerate(convs):
            self.title_seen[ttl] = start + off
            self.placed_neg.append(-(start + off))
            self.placed_titles.append(ttl)
            for (t, rank, seq, row) in rs:
                merged.append((start + off + t, rank, i, seq, row))
        merged.sort(key=lambda x: (x[0], x[1], x[2], x[3]), reverse=True)
        return [self.render_time(row, t) for t, _rank, _i, _seq, row in merged]

    def render_time(self, row: list, t: int) -> list:
        if self.layout == "history":
            row[1] = naive_s(t)
        elif self.layout == "chat-activity":
            row[0] = copilot_chat_time(t)
        else:
            row[0] = naive_s(t)
        return row


COPILOT_FILES = {"history": ("copilot-activity-history.csv", ["Conversation", "Time", "Author", "Message"]),
                 "chat-activity": ("copilot-chat-activity.csv", ["CreatedAt", "MessageContent", "Author", "ChatName"]),
                 "windows-apps": ("windows-apps-copilot-activity-history.csv", ["Timestamp", "ClientApp", "Prompt"])}


def gen_copilot(args) -> tuple[str, int, int]:
    layout = args.layout or "history"
    g = Copilot(args.seed, args.small, args.truncated, layout)
    name, header = COPILOT_FILES[layout]
    main = MainFile(os.path.join(args.out, name))
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\r\n")
    writer.writerow(header)
    main.write(b"\xef\xbb\xbf" + buf.getvalue().encode("utf-8"))
    t_hi = T_CP1_2025 if args.truncated else T_CP1
    clock = BackwardClock(g.rng, T_CP0, t_hi, args.size, 2 * KIB if args.small else 5 * KIB,
                          not args.small)

    def step(force):
        buf.seek(0)
        buf.truncate()
        writer.writerows(g.episode(clock, main.total, force))
        main.write(buf.getvalue().encode("utf-8"))

    forced = [frozenset(f) for f in Copilot.FORCED] if args.small else []
    n = run_until(args.size, main, step, forced, "copilot", args.quiet)
    main.close()
    return main.path, main.total, n


# --------------------------------------------------------------------------
# Gemini (Google Takeout My Activity)
# --------------------------------------------------------------------------

T_GM0, T_GM_DETAILS, T_GM1 = ts(2024, 2, 8), ts(2024, 11, 1), ts(2026, 7, 26)
GEMINI_DIR = ("Takeout", "My Activity", "Gemini Apps")
HTML_HEAD = ('<html><head><meta http-equiv="Content-Type" content="text/html; charset=UTF-8">'
             "<title>My Activity</title><style>body{font-family:Roboto,Arial,sans-serif}"
             ".mdl-grid{display:flex;flex-flow:row wrap}.outer-cell{margin:8px}"
             ".mdl-typography--caption{color:#757575}</style></head><body><div class=\"mdl-grid\">")
HTML_TAIL = "</div></body></html>"
WHY_HERE = ("<b>Why is this here?</b><br>&emsp;This activity was saved to your Google Account because the "
            "following settings were on:&nbsp;{ctl}.&nbsp;You can control these settings &nbsp;"
            '<a href="https://myaccount.google.com/activitycontrols">here</a>.')


def google_json_escape(text: str) -> str:
    """Escapes Google's JSON writer applies to Takeout files (HTML-safe, like Gson)."""
    return (text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
            .replace("=", "\\u003d").replace("'", "\\u0027")
            .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))


class Gemini(Base):
    FORCED = [("image_only", "feedback"), ("drafts", "tie"), ("attached", "canvas"), ("no_answer", "used"),
              ("interleave", "cited"), ("unicode",), ("no_details",)]

    def __init__(self, seed: int, small: bool):
        super().__init__("gemini", seed, small)

    def record(self, title: str, t: int, *, html=None, details=None, subtitles=None,
               attached=None, image=None) -> dict:
        r = {"header": "Gemini Apps", "title": title}
        if subtitles:
            r["subtitles"] = subtitles
        r["time"] = t  # rendered by the writer
        r["products"] = ["Gemini Apps"]
        r["activityControls"] = ["Gemini Apps Activity"]
        if details:
            r["details"] = details
        if html is not None:
            r["safeHtmlItem"] = [{"html": h} for h in html]
        if attached:
            r["attachedFiles"] = attached
        if image:
            r["imageFile"] = image
        return r

    def conversation(self, force: frozenset) -> tuple[list, int]:
        """Records (relative time, seq, record) of one conversation."""
        rng, pool = self.rng, self.pool
        app = self.hexid(16)
        url = f"https://gemini.google.com/app/{app}"
        n = self.turns(2.5, 40)
        out, t = [], 0
        self._details = [{"name": url, "url": url}]
        for i in range(n):
            title_prompt = self.prompt(i == 0)
            if "unicode" in force and i == 0:
                title_prompt = rng.choice(G.UNICODE_SNIPPETS)
            kw = {}
            subtitles = []
            image_only = (i == 0 and "image_only" in force) or rng.random() < 0.02
            if image_only:
                img = f"image_{self.hexid(8)}.png"
                kw["attached"], kw["image"] = [img], img
                title_prompt = ""
                subtitles.append({"name": img})
            elif (i == 0 and "attached" in force) or rng.random() < 0.03:
                fname = rng.choice(FILE_NAMES)
                kw["attached"] = [fname]
                subtitles.append({"name": fname})
                if fname.endswith(".png"):
                    kw["image"] = fname  # imageFile is always one of attachedFiles
            if title_prompt == "" or "attached" in kw:
                answer = (rng.choice(IMAGE_DESCRIPTIONS) if title_prompt == "" else self.answer(title_prompt))
            else:
                answer = self.answer(title_prompt, 0.15 if "unicode" in force else 0.06)
            html = [md_to_html(answer)]
            if "attached" in kw:
                html[0] = f"<p>{len(kw['attached'])} attached file.</p>" + html[0]
            if (i == 0 and "drafts" in force) or rng.random() < 0.015:
                html += [md_to_html(self.answer(title_prompt)) for _ in range(rng.randint(1, 3))]
            if (i == 0 and "no_answer" in force) or rng.random() < 0.04:
                html = None
            if (i == 0 and "cited" in force) or rng.random() < 0.05:
                for _ in range(rng.randint(1, 3)):
                    site = rng.choice(SITES)
                    subtitles.append({"name": title_case_words(rng), "url": f"https://{site}/{slug(pool.sentence(2, 4))}"})
            out.append((t, len(out), self.record("Prompted " + title_prompt, 0, html=html,
                                                   details=self._details, subtitles=subtitles or None, **kw)))
            if (i == 0 and "tie" in force) or rng.random() < 0.015:
                # two records with the same time (seen: 13 collisions in 875 records)
                out.append((t, len(out), self.record("Prompted " + self.prompt(False), 0,
                                                       html=[md_to_html(self.answer(""))], details=self._details)))
            if (i == 0 and "feedback" in force) or rng.random() < 0.03:
                out.append((t + rng.randint(5, 120) * SEC, len(out),
                            self.record(rng.choice(("Gave feedback: Good response", "Gave feedback: Good response",
                                                    "Gave feedback: Bad response")), 0, details=self._details)))
            if (i == 0 and "canvas" in force) or rng.random() < 0.01:
                out.append((t + rng.randint(5, 120) * SEC, len(out),
                            self.record(f"Created Canvas {title_case_words(rng, 2, 4)}", 0, details=self._details)))
            if (i == 0 and "used" in force) or rng.random() < 0.02:
                out.append((t + rng.randint(1, 30) * SEC, len(out), self.record("Used Gemini Apps", 0)))
            if rng.random() < 0.005:
                out.append((t + rng.randint(5, 60) * SEC, len(out),
                            self.record("Selected preferred draft", 0, details=self._details)))
            t += rng.randint(30, 1200) * SEC + rng.randint(0, 999) * 1000
        return out, t

    def episode(self, clock: BackwardClock, written: int, force: frozenset) -> list:
        rng = self.rng
        recs, dur = self.conversation(force)
        convs = [recs]
        if "interleave" in force or rng.random() < 0.03:
            off = rng.randint(0, max(dur, MINUTE)) + 1000
            recs2, dur2 = self.conversation(frozenset())
            convs.append([(t + off, s, r) for t, s, r in recs2])
            dur = max(dur, off + dur2)
        start = clock.place(dur, written)
        start -= start % 1000  # millisecond precision
        no_details = "no_details" in force or start < T_GM_DETAILS or rng.random() < 0.03
        merged = []
        for ci, rs in enumerate(convs):
            for t, seq, rec in rs:
                rec["time"] = start + t
                if no_details and "details" in rec:
                    del rec["details"]  # older records carry no conversation URL
                merged.append((start + t, ci, seq, rec))
        merged.sort(key=lambda x: (x[0], x[1], x[2]), reverse=True)
        return [m[3] for m in merged]


def decoy_records(rng: random.Random, n: int) -> dict[str, list]:
    """Non-Gemini My Activity records (YouTube watches, Chrome visits), newest first."""
    out = {"YouTube": [], "Chrome": []}
    for product in out:
        t = T_GM1
        for i in range(n):
            t -= rng.randint(1, 3 * 3600) * SEC + rng.randint(0, 999) * 1000
            t -= t % 1000
            if product == "YouTube":
                vid = "".join(rng.choices(G.BASE62 + "-_", k=11))
                chan = "".join(rng.choices(G.BASE62, k=22))
                out[product].append({"header": "YouTube", "title": f"Watched {title_case_words(rng, 3, 7)}",
                                     "titleUrl": f"https://www.youtube.com/watch?v={vid}",
                                     "subtitles": [{"name": f"{title_case_words(rng, 1, 2)} TV",
                                                    "url": f"https://www.youtube.com/channel/UC{chan}"}],
                                     "time": t, "products": ["YouTube"],
                                     "activityControls": ["YouTube watch history"]})
            else:
                if i % 7 == 3:  # visits of the Gemini web app are Chrome history, not Gemini activity
                    title, url = "Gemini", f"https://gemini.google.com/app/{'%016x' % rng.getrandbits(64)}"
                else:
                    site = rng.choice(SITES)
                    title, url = f"{title_case_words(rng)} - {site}", f"https://{site}/{rng.randint(1, 99999)}"
                out[product].append({"header": "Chrome", "title": f"Visited {title}",
                                     "titleUrl": f"https://www.google.com/url?q={url}&usg=AOvVaw{'%012x' % rng.getrandbits(48)}",
                                     "time": t, "products": ["Chrome"],
                                     "activityControls": ["Web & App Activity"]})
    return out


def gemini_json_element(rec: dict) -> bytes:
    rec = dict(rec)
    rec["time"] = iso_ms(rec["time"])
    return google_json_escape(dumps_indented_element(rec, ensure_ascii=False)).encode("utf-8")


def gemini_html_cell(rec: dict) -> bytes:
    title = rec["title"]
    if title.startswith("Prompted "):
        first = "Prompted&nbsp;" + html_escape(strip_controls(title[len("Prompted "):]))
    elif "titleUrl" in rec:
        verb, _, rest = title.partition(" ")
        first = f'{verb}&nbsp;<a href="{html_escape(rec["titleUrl"])}">{html_escape(rest)}</a>'
    else:
        first = html_escape(title)
    lines = [first]
    for sub in rec.get("subtitles", []):
        if "url" in sub:
            lines.append(f'<a href="{html_escape(sub["url"])}">{html_escape(sub["name"])}</a>')
        else:
            lines.append(html_escape(sub["name"]))
    lines.append(takeout_html_time(rec["time"]))
    body = "<br>".join(lines) + "<br>" + "".join(h["html"] for h in rec.get("safeHtmlItem", []))
    caption = ("<b>Products:</b><br>" + "".join(f"&emsp;{p}<br>" for p in rec["products"])
               + WHY_HERE.format(ctl=rec["activityControls"][0]))
    return (f'<div class="outer-cell mdl-cell mdl-cell--12-col mdl-shadow--2dp"><div class="mdl-grid">'
            f'<div class="header-cell mdl-cell mdl-cell--12-col"><p class="mdl-typography--title">'
            f'{html_escape(rec["header"])}<br></p></div>'
            f'<div class="content-cell mdl-cell mdl-cell--6-col mdl-typography--body-1">{body}</div>'
            f'<div class="content-cell mdl-cell mdl-cell--6-col mdl-typography--body-1 mdl-typography--text-right"></div>'
            f'<div class="content-cell mdl-cell mdl-cell--12-col mdl-typography--caption">{caption}</div>'
            f"</div></div>\n").encode("utf-8")


class ActivityWriter:
    """MyActivity.json (array, indent 2) or MyActivity.html, streamed record by record."""

    def __init__(self, main: MainFile, html: bool):
        self.main, self.html, self.count = main, html, 0
        main.write(HTML_HEAD.encode() + b"\n" if html else b"[\n")

    def write(self, rec: dict) -> None:
        if self.html:
            self.main.write(gemini_html_cell(rec))
        else:
            data = gemini_json_element(rec)
            self.main.write(data if self.count == 0 else b",\n" + data)
        self.count += 1

    def finish(self) -> None:
        self.main.write(HTML_TAIL.encode() + b"\n" if self.html else b"\n]")


def gen_gemini(args, html: bool) -> tuple[str, int, int]:
    g = Gemini(args.seed, args.small)
    ext = "html" if html else "json"
    activity = os.path.join(args.out, "Takeout", "My Activity")
    main = MainFile(os.path.join(activity, "Gemini Apps", f"MyActivity.{ext}"))
    aw = ActivityWriter(main, html)
    clock = BackwardClock(g.rng, T_GM0, T_GM1, args.size, 3 * KIB if args.small else 6 * KIB,
                          not args.small)

    def step(force):
        for rec in g.episode(clock, main.total, force):
            aw.write(rec)

    forced = [frozenset(f) for f in Gemini.FORCED] if args.small else []
    n = run_until(args.size - 16, main, step, forced, args.provider, args.quiet)
    aw.finish()
    n_decoys = 12 if args.small else max(20, min(20_000, args.size // 20_000))
    for product, recs in decoy_records(random.Random(f"decoys-{args.seed}"), n_decoys).items():
        dm = MainFile(os.path.join(activity, product, f"MyActivity.{ext}"))
        dw = ActivityWriter(dm, html)
        for rec in recs:
            dw.write(rec)
        dw.finish()
        dm.close()
    write_file(os.path.join(args.out, "Takeout", "archive_browser.html"),
               ("<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>Archive Overview</title></head>"
                "<body><h1>Archive Overview</h1><p>Your archive contains: My Activity (Chrome, Gemini Apps, "
                "YouTube).</p></body></html>\n").encode())
    main.close()
    return main.path, main.total, n


# --------------------------------------------------------------------------
# Output folder, zip, main
# --------------------------------------------------------------------------

OWNED = {"claude": ["conversations.json", "projects.json", "memories.json", "users.json"],
         "grok": ["ttl"],
         "copilot": [name for name, _ in COPILOT_FILES.values()],
         "gemini-json": ["Takeout"], "gemini-html": ["Takeout"]}


def clean_out_dir(out_dir: str, provider: str) -> None:
    """Remove what a previous run of this provider may have left (only those names)."""
    os.makedirs(out_dir, exist_ok=True)
    for name in OWNED[provider]:
        for cand in (name, name + ".partial"):
            path = os.path.join(out_dir, cand)
            if os.path.isdir(path) and not os.path.islink(path):
                shutil.rmtree(path)
            elif os.path.lexists(path):
                os.remove(path)


def write_zip(zip_path: str, out_dir: str, provider: str) -> int:
    """Zip the provider's files under out_dir (sorted, fixed timestamps, deflate)."""
    files = []
    for name in OWNED[provider]:
        top = os.path.join(out_dir, name)
        if os.path.isfile(top):
            files.append(name)
        for root, dirs, fnames in os.walk(top):
            dirs.sort()
            for f in sorted(fnames):
                files.append(os.path.relpath(os.path.join(root, f), out_dir))
    files.sort()
    tmp = zip_path + ".partial"
    with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=ZIP_COMPRESSLEVEL,
                         allowZip64=True) as zf:
        for rel in files:
            path = os.path.join(out_dir, rel)
            zi = zipfile.ZipInfo(rel.replace(os.sep, "/"), date_time=ZIP_DATE_TIME)
            zi.compress_type = zipfile.ZIP_DEFLATED
            zi._compresslevel = ZIP_COMPRESSLEVEL
            zi.external_attr = 0o644 << 16
            zi.file_size = os.path.getsize(path)
            with open(path, "rb") as src, zf.open(zi, "w") as dst:
                shutil.copyfileobj(src, dst, 4 * MIB)
    os.replace(tmp, zip_path)
    return len(files)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="See the module docstring (head of this file) for the layouts.")
    ap.add_argument("provider", choices=PROVIDERS)
    ap.add_argument("--out", required=True, help="output export folder (created; this provider's old files removed)")
    ap.add_argument("--size", type=parse_size, help="target size of the main file, e.g. 256M, 1G")
    ap.add_argument("--small", action="store_true", help="tiny example export (main file ~30 KiB), every edge case once")
    ap.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    ap.add_argument("--zip", action="store_true", help="also write OUT.zip of the folder (deflate)")
    ap.add_argument("--memories-object", action="store_true",
                    help="claude: write memories.json as a bare object (Sept 2026) instead of a 1-element array")
    ap.add_argument("--truncated", action="store_true",
                    help="copilot: AI answers cut to 100 characters + '...' (2025 exports)")
    ap.add_argument("--layout", choices=("history", "chat-activity", "windows-apps"),
                    help="copilot: which CSV to write (default history = copilot-activity-history.csv)")
    ap.add_argument("--quiet", action="store_true", help="no progress on stderr")
    args = ap.parse_args(argv)
    if args.small == (args.size is not None):
        ap.error("give exactly one of --size or --small")
    if args.layout and args.provider != "copilot":
        ap.error("--layout is for copilot only")
    if args.truncated and args.provider != "copilot":
        ap.error("--truncated is for copilot only")
    if args.memories_object and args.provider != "claude":
        ap.error("--memories-object is for claude only")
    if args.small:
        args.size = SMALL_TARGET
    args.out = args.out.rstrip("/") or "/"
    clean_out_dir(args.out, args.provider)

    if args.provider == "claude":
        path, total, n = gen_claude(args)
    elif args.provider == "grok":
        path, total, n = gen_grok(args)
    elif args.provider == "copilot":
        path, total, n = gen_copilot(args)
    else:
        path, total, n = gen_gemini(args, html=args.provider == "gemini-html")
    summary = f"gen_providers {args.provider}: {n} conversations/episodes, {total:,} bytes in {path}"
    if args.zip:
        zip_path = args.out + ".zip"
        count = write_zip(zip_path, args.out, args.provider)
        summary += f"; {zip_path}: {os.path.getsize(zip_path):,} bytes, {count} files"
    if not args.quiet:
        print(summary, file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
