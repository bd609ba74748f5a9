#!/usr/bin/env python3
"""Consecutive monthly exports of one synthetic account, with the exact delta between them (stdlib only).

For testing and benchmarking ``memport sync``, which turns each month's full export into a
delta against the previous one.  Writes ``OUT/month-1/``, ``OUT/month-2/``, ... (each a
complete export folder laid out exactly as ``gen_chatgpt.py`` / ``gen_providers.py`` lay it
out, same file names) and ``OUT/changes.json``, which says for every month after the first
exactly what changed since the month before.  Conversations come from those two generators
(imported, not copied); this file only re-exports them a month later and changes some.

Usage:
    python3 benches/gen_months.py PROVIDER --out DIR [--size 4M | --conversations N]
        [--seed S] [--changed 0.05] [--months 2] [--quiet]
        [--layout single|sharded (chatgpt) | history|chat-activity (copilot)]
        [--shard-size 64M] [--truncated] [--memories-object]
    python3 benches/gen_months.py --self-test
    PROVIDER: chatgpt, claude, grok, copilot, gemini-json, gemini-html

Month 1 is what the single-export generator writes: with ``--size S`` it is byte for byte
``gen_chatgpt.py --size S`` / ``gen_providers.py PROVIDER --size S`` with the same seed and
layout (``--self-test`` checks this), with ``--conversations N`` its first N conversations.
``--size`` measures month 1's main file(s); later months are about as big.  (Copilot and Gemini
generate episodes of one or two interleaved conversations; with ``--conversations`` the last
episode is cut to exactly N conversations, so month 1 is then a near-prefix.)  Month N+1 is the
same account exported 30 days later: every conversation the user did not touch is written
byte for byte as before (same element bytes, same key order and formatting); about
``--changed`` of the conversations alive at month N are changed, and new conversations dated
inside the new month are added (as many as deleted + half the other changes, at least one).
With ``--conversations`` the changed ones are an exact sample of ``round(changed * N)``
positions, at least one per kind the provider supports (so ``--conversations 20`` always
shows every kind); with ``--size`` every conversation is changed with probability
``--changed``.  ``--changed 0`` gives identical months.

Kinds of change, per provider:

==============  ========  ======  ===========  =======  =======  ===
provider        appended  edited  regenerated  renamed  deleted  new
==============  ========  ======  ===========  =======  =======  ===
chatgpt         yes       yes     yes          yes      yes      yes
claude          yes       yes*    yes*         yes      yes      yes
grok            yes       yes     yes          yes      yes      yes
copilot         open**    no      no           no       yes      yes
gemini-json     yes***    no      no           no       yes      yes
gemini-html     open**    no      no           no       yes      yes
==============  ========  ======  ===========  =======  =======  ===

* appended: one or two user turns, each answered, after the active leaf, dated in the new
  month; the conversation's ``update_time`` / ``updated_at`` / ``modify_time`` moves.
* edited: a new user message as a sibling of an existing one on the active path (the last
  one in 70 %, an earlier one otherwise, so earlier turns can leave the active path) plus an
  answer.  ChatGPT: new node under the edited node's parent in ``mapping``, ``current_node``
  moved to the answer (2026 shards keep no ``children``; 2023-25 files add the id to the
  parent's ``children``).  Claude: a new human message with the same ``parent_message_uuid``
  as the edited one and its answer appended to ``chat_messages`` (the format has no current
  node: the newest leaf is the active one).  Grok: a new human response with the edited
  one's ``parent_response_id``, ``leaf_response_id`` moved to the new answer.
* regenerated: a new assistant answer as a sibling of the active one (child of the last user
  message on the active path); the active leaf moves to it.
* renamed: only the title changes (``title`` / ``name``).
* ``*`` Claude conversations older than 2025-05 carry no ``parent_message_uuid`` (as in the
  real exports), so they cannot branch: planned edits/regenerations go to the next
  conversation that can take them.
* ``**`` Copilot CSV rows and Gemini HTML cells carry no conversation id: memport groups them
  by title (Copilot) or by time alone (Gemini HTML) with a 60-minute gap.  A turn added a
  month later would be a new conversation to any reader, so only the conversation still open
  at the previous export (its last row ten minutes before it) is continued, minutes after the
  export; every month's newest new conversation ends ten minutes before the export so the
  next month can continue it.  Everything else is deleted, kept, or new.  Some new Copilot
  conversations reuse an old conversation's title (a chat resumed weeks later), which every
  reader sees as a new conversation; their ``details`` say ``continues``.
* ``***`` Gemini JSON: conversations with a conversation URL in ``details`` can be continued
  at any time (memport joins records by URL); records without one only when open, as above.

Identifiers in changes.json (the lists ``unchanged``, ``edited``, ``regenerated``,
``deleted``, ``new`` and the keys of ``appended`` and ``renamed``):

* chatgpt: the conversation ``id`` (= ``conversation_id``); claude: ``uuid``; grok: the
  conversation ``id`` (2026 shape) or ``conversation_id`` (2025 shape).
* copilot: ``"<Conversation or ChatName> @ <time of the conversation's first row, as written>"``.
  A conversation is what memport groups: rows of one title whose times are at most 60
  minutes apart.  Titles alone repeat (the generator reuses titles two days apart), so the
  first row's time is part of the id (memport derives its id from the same two values).
  A test can rely on: each id names exactly one such group in each month it is listed for;
  unchanged groups have byte-identical rows; an appended group keeps its first row and gains
  exactly ``appended[id]`` rows, all newer than the previous export.
* gemini-json: the conversation URL (``https://gemini.google.com/app/<id>``, also the
  ``details[0].url`` of its records) when it has one; otherwise ``"time:<ISO time of its
  oldest record>"`` (UTC, milliseconds, as in the JSON ``time``), and such an id covers
  *every* URL-less record of one generated episode (two interleaved URL-less conversations
  count as one, as memport would group them).  Records without a URL (also the
  "Used Gemini Apps" / feedback records inside URL conversations) can only be matched by
  time: a test can rely on the oldest record's time being present in both months
  (unchanged, appended) or absent from the later one (deleted), and on the record
  arithmetic (records of the earlier month minus ``messages_removed`` of the deleted ones
  plus ``messages_added`` = records of the later month, all others byte-identical).  It
  cannot rely on memport grouping URL-less records the same way: big exports put episodes
  less than 60 minutes apart and memport then joins them.
* gemini-html: the HTML carries no URLs, so every id is ``"time:<ISO UTC time of the oldest
  record>"``; in the page that record shows the same instant in CET/CEST to the second
  (``gen_providers.takeout_html_time``).

changes.json::

    {"provider": "chatgpt", "layout": "single", "seed": 1, "changed": 0.05,
     "message_unit": "...", "kinds": [...],
     "exports": [{"month": 1, "folder": "month-1", "exported_at": "2025-12-03T00:00:00.000000Z"}, ...],
     "months": [{"month": 2, "unchanged": [ids], "appended": {id: n}, "edited": [ids],
                 "regenerated": [ids], "renamed": {id: "new title"}, "deleted": [ids],
                 "new": [ids], "messages_added": total,
                 "details": {id: {"kind": ..., "messages_added": n, ...}}}]}

Lists are in export order (new conversations in creation order).  ``messages_added`` counts
the provider's message units (``message_unit``): ChatGPT mapping nodes with a message, Claude
``chat_messages`` entries, Grok responses, Copilot CSV rows, Gemini activity records (a
record is a prompt with its answer; appended Gemini records always have one answer).  It is
the sum over appended, edited (2 per edit), regenerated (1) and new conversations.
``details`` adds, per changed id: ``new_message_ids`` (tree providers, creation order),
``after`` (appended: the leaf the turns follow), ``replaces`` (edited: the user message
edited; regenerated: the answer replaced), ``old_title``, ``messages_removed`` (deleted),
``continues`` (Copilot new conversation under an old title).  Every month's ``exported_at``
bounds it: all added messages are dated between the previous month's export and this one.
Exports are 30 days apart; month 1 is exported two days after the generator's last date
(ChatGPT, Grok), at ``gen_providers.T_CL_EXPORT`` (Claude), or ten minutes after the newest
record (Copilot, Gemini: the newest conversation is still open).  For a regeneration
``replaces`` is the first node of the replaced answer turn (ChatGPT: possibly its thoughts or
tool-call node).

Placement: new conversations go at the end of the JSON arrays (ChatGPT, Claude, Grok: the
generators do not sort by time either) and at the top of the newest-first Copilot CSV and
Gemini activity files, merged by time with the turns added to the open conversation.
Export-level files are written again each month, unchanged (Claude projects, memories,
users; Grok projects, media posts, account files; Gemini decoy products), except what
follows from the conversations: the ChatGPT 2026 ``export_manifest.json`` lists each month's
own shards and sizes, and Grok's asset folder gains the attachments of added turns.

Scale: everything is streamed.  One pass generates each conversation once and writes it to
every month's file in turn (all months' files are open at once), changing it in place
between months, so memory holds one conversation (Copilot and Gemini: the month's new rows,
a few percent of a month, because they go first in newest-first files; the old rows are
spooled to a temporary file).  Determinism: every draw comes from string-seeded
``random.Random`` streams (the base streams of the single-export generators, plus one stream
per month and conversation for the changes), no clock, no hash order.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import csv
import datetime
import hashlib
import importlib.util
import io
import json
import math
import os
import re
import random
import shutil
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)  # gen_chatgpt.py imports self_statements.py from here


def _load(name: str):
    """Import a sibling script (benches/ is not a package) without writing __pycache__."""
    spec = importlib.util.spec_from_file_location(name, os.path.join(HERE, f"{name}.py"))
    mod = importlib.util.module_from_spec(spec)
    saved, sys.dont_write_bytecode = sys.dont_write_bytecode, True
    try:
        spec.loader.exec_module(mod)
    finally:
        sys.dont_write_bytecode = saved
    return mod


P = _load("gen_providers")
G = P.G  # the gen_chatgpt module gen_providers loaded (one copy, so patches reach it)

PROVIDERS = ("chatgpt", "claude", "grok", "copilot", "gemini-json", "gemini-html")
TREE_KINDS = ("appended", "edited", "regenerated", "renamed", "deleted")
SEC, MINUTE, HOUR, DAY = P.SEC, P.MINUTE, P.HOUR, P.DAY
MONTH_GAP = 30 * DAY
OPEN_LEAD = 10 * MINUTE  # Copilot/Gemini: the open conversation's last record before the export
GAP = 60 * MINUTE  # memport's default --gap-minutes
MESSAGE_UNITS = {
    "chatgpt": "mapping node with a message (every role, hidden ones included)",
    "claude": "chat_messages entry",
    "grok": "response",
    "copilot": "CSV row",
    "gemini-json": "activity record (a prompt with its answers)",
    "gemini-html": "activity record (one outer-cell div: a prompt with its answers)",
}
_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)


# --------------------------------------------------------------------------
# Small helpers
# --------------------------------------------------------------------------

def iso_to_us(text: str) -> int:
    d = datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))
    if d.tzinfo is None:
        d = d.replace(tzinfo=datetime.timezone.utc)
    return (d - _EPOCH) // datetime.timedelta(microseconds=1)


@contextlib.contextmanager
def drawing_from(gen, rng: random.Random):
    """Let a generator (gen_chatgpt.Generator or a gen_providers.Base) draw from `rng` for a while.

    The base stream is left exactly where it was, so changing conversations never shifts
    what month 1 (and every later base conversation) looks like.
    """
    saved = gen.rng, gen.pool.rng
    gen.rng = gen.pool.rng = rng
    try:
        yield
    finally:
        gen.rng, gen.pool.rng = saved


@contextlib.contextmanager
def patched(module, **values):
    """Temporarily set module globals (the generators' date ranges) so new conversations are
    dated inside the new month."""
    saved = {k: getattr(module, k) for k in values}
    for k, v in values.items():
        setattr(module, k, v)
    try:
        yield
    finally:
        for k, v in saved.items():
            setattr(module, k, v)


def fresh_prompt(pool, rng: random.Random) -> str:
    """A user prompt no other message has (a drawn sentence makes it unique)."""
    text = pool.question() + " " + pool.sentence()
    if rng.random() < 0.25:
        text += "\n\n" + rng.choice(pool.code)
    return text


def new_title(rng: random.Random, old: str) -> str:
    for _ in range(10):
        title = P.title_case_words(rng, 2, 5)
        if title != old:
            return title
    return old + " (renamed)"


class Ledger:
    """Decides what happens to each conversation each month and records it for changes.json."""

    def __init__(self, provider: str, months: int, changed: float, kinds: tuple, seed: int, count):
        self.provider, self.n_months, self.changed, self.kinds = provider, months, changed, kinds
        self.seed, self.count = seed, count
        self.months, self.details = {}, {}
        for m in range(2, months + 1):
            self.months[m] = {"month": m, "unchanged": [], "appended": {}, "edited": [], "regenerated": [],
                              "renamed": {}, "deleted": [], "new": [], "messages_added": 0}
            self.details[m] = {}
        self.pos = dict.fromkeys(range(2, months + 1), 0)
        self.pending = {m: [] for m in range(2, months + 1)}
        self.plans: dict[int, dict[int, str]] = {}
        self.open: dict[int, str] = {}  # month -> id of the conversation open at the export before it
        self.exported_at: dict[int, int] = {}

    def _plan(self, m: int) -> dict:
        """--conversations: an exact sample of positions, every kind at least once."""
        if m not in self.plans:
            n = self.count
            rng = random.Random(f"plan-{self.seed}-{m}")
            k = min(n, max(len(self.kinds), round(self.changed * n))) if n else 0
            positions = rng.sample(range(n), k)
            kinds = [self.kinds[i % len(self.kinds)] for i in range(k)]
            rng.shuffle(kinds)
            self.plans[m] = dict(zip(positions, kinds))
        return self.plans[m]

    def _draw(self, m: int, position: int, key: str):
        if self.count is not None:
            return self._plan(m).get(position)
        rng = random.Random(f"fate-{self.seed}-{m}-{key}")
        return rng.choice(self.kinds) if rng.random() < self.changed else None

    def decide(self, m: int, key: str, capable) -> str | None:
        """The change of conversation `key` in month m (None: unchanged).

        A drawn kind the conversation cannot take (an edit of a Claude chat from before
        branches existed, say) waits for the next unchanged conversation that can.
        """
        position = self.pos[m]
        self.pos[m] += 1
        if self.changed <= 0:
            return None
        kind = self._draw(m, position, key)
        if self.open.get(m) == key:  # still open at the last export: continued
            if kind not in (None, "appended"):
                self.pending[m].append(kind)
            return "appended"
        if kind is not None:
            if capable(kind):
                return kind
            self.pending[m].append(kind)
            return None
        for i, waiting in enumerate(self.pending[m]):
            if capable(waiting):
                del self.pending[m][i]
                return waiting
        return None

    def record(self, m: int, key: str, kind: str | None, info: dict | None = None) -> None:
        month = self.months[m]
        if kind is None:
            month["unchanged"].append(key)
            return
        info = info or {}
        added = info.get("messages_added", 0)
        if kind == "appended":
            month["appended"][key] = added
        elif kind == "renamed":
            month["renamed"][key] = info["title"]
        else:
            month[kind].append(key)
        month["messages_added"] += added
        detail = {"kind": kind}
        detail.update((k, v) for k, v in info.items() if k != "title")
        self.details[m][key] = detail

    def n_new(self, m: int) -> int:
        if self.changed <= 0:
            return 0
        month = self.months[m]
        modified = len(month["appended"]) + len(month["edited"]) + len(month["regenerated"]) + len(month["renamed"])
        return max(1, len(month["deleted"]) + math.ceil(modified / 2))

    def document(self, args) -> dict:
        months = []
        for m in range(2, self.n_months + 1):
            entry = dict(self.months[m])
            entry["details"] = self.details[m]
            months.append(entry)
        return {"provider": self.provider, "layout": getattr(args, "layout", None), "seed": args.seed,
                "changed": self.changed, "message_unit": MESSAGE_UNITS[self.provider], "kinds": list(self.kinds),
                "exports": [{"month": m, "folder": f"month-{m}", "exported_at": P.iso_us(self.exported_at[m])}
                            for m in range(1, self.n_months + 1)],
                "months": months}


# --------------------------------------------------------------------------
# Tree providers (ChatGPT, Claude, Grok): one JSON array, new conversations at its end
# --------------------------------------------------------------------------

class ArrayFile:
    """A main file that is a JSON array: head, elements joined by `sep`, tail."""

    def __init__(self, path: str, head: bytes, sep: bytes):
        self.main = P.MainFile(path)
        self.main.write(head)
        self.sep, self.count = sep, 0

    @property
    def total(self) -> int:
        return self.main.total

    def write(self, data: bytes) -> None:
        self.main.write(data if self.count == 0 else self.sep + data)
        self.count += 1

    def close(self, tail: bytes) -> None:
        self.main.write(tail)
        self.main.close()


class ShardFile(G.ShardedWriter):
    """gen_chatgpt's 2026 shard writer (shards + export_manifest.json), fed elements already in
    the 2026 shape and already encoded (an unchanged conversation is encoded once)."""

    def write(self, data: bytes) -> None:
        if self.f is None:
            self._open()
            self.total += 2
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


def tree_path(leaf: str | None, parent_of: dict) -> list:
    """Ids from `leaf` up to the root (a dangling parent ends the walk)."""
    out, seen = [], set()
    while leaf is not None and leaf in parent_of and leaf not in seen:
        seen.add(leaf)
        out.append(leaf)
        leaf = parent_of[leaf]
    return out


def pick_user(users: list, rng: random.Random):
    """The message to edit: the last user message on the path (70 %) or an earlier one."""
    if len(users) > 1 and rng.random() >= 0.7:
        return users[rng.randrange(1, len(users))]
    return users[0]


class GrowConv(G.Conv):
    """gen_chatgpt's conversation builder, adding nodes to an existing conversation."""

    def __init__(self, gen, conv: dict, t: float, model: str, shape_rng):
        self.gen, self.rng, self.clock, self.model = gen, gen.rng, t, model
        self.t0 = conv.get("create_time") or t
        self.root_id = None
        self.mapping = conv["mapping"]
        self.new_meta = True
        self.shape_rng = shape_rng  # not None: 2026 shards (no children, optional fields dropped)

    def add(self, parent: str, msg: dict) -> str:
        nid = msg["id"]
        node = {"id": nid, "message": msg, "parent": parent, "children": []}
        if self.shape_rng is not None:
            G.to_2026_shape({"mapping": {nid: node}}, self.shape_rng)
        else:
            self.mapping[parent]["children"].append(nid)
        self.mapping[nid] = node
        return nid


class ChatGPTMonths:
    provider = "chatgpt"
    kinds = TREE_KINDS

    def __init__(self, args):
        self.args = args
        self.gen = G.Generator(args.seed)
        self.sharded = args.layout == "sharded"
        self.shape_rng = random.Random(f"shape-{args.seed}")  # the stream gen_chatgpt's ShardedWriter uses
        self.e1 = int(G.T_END * SEC) + 2 * DAY
        self.size_slack = 0

    def open_main(self, m: int, folder: str):
        if self.sharded:
            return ShardFile(folder, self.args.shard_size, self.args.seed)
        return ArrayFile(os.path.join(folder, "conversations.json"), b"[", b", ")

    def close_main(self, m: int, folder: str, f) -> None:
        if self.sharded:
            f.close()
        else:
            f.close(b"]")

    def encode(self, conv: dict) -> bytes:
        if self.sharded:
            return json.dumps([conv], indent=2, sort_keys=True)[2:-2].encode("ascii")
        return json.dumps(conv).encode("ascii")

    def key(self, conv: dict) -> str:
        return conv["id"]

    def count(self, conv: dict) -> int:
        return sum(1 for node in conv["mapping"].values() if node["message"] is not None)

    def base(self) -> dict:
        conv = self.gen.random_conversation()
        if self.sharded:
            G.to_2026_shape(conv, self.shape_rng)
        return conv

    def new(self, m: int, lo: int, hi: int) -> dict:
        with patched(G, T_START=lo / SEC, T_END=(hi - 2 * DAY) / SEC):  # deep threads last up to a day
            conv = self.gen.random_conversation()
        if self.sharded:
            G.to_2026_shape(conv, self.shape_rng)
        return conv

    @staticmethod
    def users_on_path(conv: dict) -> list:
        mapping = conv["mapping"]
        path = tree_path(conv.get("current_node"), {k: n["parent"] for k, n in mapping.items()})
        users = []
        for nid in path:
            msg = mapping[nid]["message"]
            if (msg and msg["author"]["role"] == "user"
                    and msg["content"]["content_type"] in ("text", "multimodal_text")
                    and not (msg.get("metadata") or {}).get("is_visually_hidden_from_conversation")):
                users.append(nid)
        return users

    def capable(self, kind: str, conv: dict) -> bool:
        if kind in ("edited", "regenerated"):
            return bool(self.users_on_path(conv))
        if kind == "appended":
            return conv.get("current_node") in conv["mapping"]
        return True

    def apply(self, kind: str, conv: dict, m: int, rng: random.Random, lo: int, hi: int) -> dict:
        gen = self.gen
        if kind == "renamed":
            old = conv["title"]
            conv["title"] = new_title(rng, old)
            return {"title": conv["title"], "old_title": old, "messages_added": 0}
        with drawing_from(gen, rng):
            t = rng.uniform(lo / SEC, hi / SEC)
            c = GrowConv(gen, conv, t, gen.pick_model(t), rng if self.sharded else None)
            mapping = conv["mapping"]
            ids, info = [], {}
            if kind == "appended":
                cur = info["after"] = conv["current_node"]
                for _ in range(rng.choice((1, 1, 2))):
                    text = fresh_prompt(gen.pool, rng)
                    u = c.user_text(cur, text)
                    answer, cites = gen.assistant_answer_text(text)
                    cur = c.assistant_text(u, answer, citations=cites)
                    ids += [u, cur]
            else:
                users = self.users_on_path(conv)
                path = tree_path(conv["current_node"], {k: n["parent"] for k, n in mapping.items()})
                u = users[0] if kind == "regenerated" else pick_user(users, rng)
                parts = mapping[u]["message"]["content"].get("parts") or []
                old_text = "\n".join(p for p in parts if isinstance(p, str))
                if kind == "regenerated":
                    i = path.index(u)
                    info["replaces"] = path[i - 1] if i > 0 else None
                    answer, cites = gen.assistant_answer_text(old_text)
                    ids.append(c.assistant_text(u, answer, citations=cites))
                else:
                    info["replaces"] = u
                    text = (old_text + " " if old_text else "") + gen.pool.sentence(3, 8)
                    u2 = c.user_text(mapping[u]["parent"], text)
                    answer, cites = gen.assistant_answer_text(text)
                    ids += [u2, c.assistant_text(u2, answer, citations=cites)]
            conv["current_node"] = ids[-1]
            conv["update_time"] = round(c.clock + rng.uniform(0.1, 3.0), 6)
        info["messages_added"] = len(ids)
        info["new_message_ids"] = ids
        return info

    def after_base(self) -> None:
        pass

    def side_files(self, m: int, folder: str) -> None:
        pass


class ClaudeMonths:
    provider = "claude"
    kinds = TREE_KINDS

    def __init__(self, args):
        self.args = args
        self.g = P.Claude(args.seed, False)
        self.e1 = P.T_CL_EXPORT
        self.size_slack = 3

    def open_main(self, m: int, folder: str):
        return ArrayFile(os.path.join(folder, "conversations.json"), b"[\n", b",\n")

    def close_main(self, m: int, folder: str, f) -> None:
        f.close(b"\n]")

    def encode(self, conv: dict) -> bytes:
        return P.dumps_indented_element(conv, ensure_ascii=False).encode("utf-8")

    def key(self, conv: dict) -> str:
        return conv["uuid"]

    def count(self, conv: dict) -> int:
        return len(conv["chat_messages"])

    def base(self) -> dict:
        return self.g.conversation(frozenset())

    def new(self, m: int, lo: int, hi: int) -> dict:
        with patched(P, T_CL0=lo, T_CL1=hi - DAY):
            return self.g.conversation(frozenset())

    @staticmethod
    def era(conv: dict) -> int:
        t0 = iso_to_us(conv["created_at"])
        return 0 if t0 < P.T_CL_MID else 1 if t0 < P.T_CL_NEW else 2

    @staticmethod
    def path(conv: dict) -> list:
        """Messages of the active path, leaf first (the newest leaf is the active one)."""
        msgs = conv["chat_messages"]
        if not msgs:
            return []
        if not any("parent_message_uuid" in x for x in msgs):
            return msgs[::-1]
        by_id = {x["uuid"]: x for x in msgs}
        parents = {x.get("parent_message_uuid") for x in msgs}
        leaf = max((x for x in msgs if x["uuid"] not in parents), key=lambda x: x["created_at"])
        ids = tree_path(leaf["uuid"], {x["uuid"]: x.get("parent_message_uuid") for x in msgs})
        return [by_id[i] for i in ids]

    def capable(self, kind: str, conv: dict) -> bool:
        if kind in ("edited", "regenerated"):
            return self.era(conv) == 2 and any(x["sender"] == "human" for x in self.path(conv))
        return True

    @staticmethod
    def text_of(msg: dict) -> str:
        return msg["text"] or "".join(b.get("text", "") for b in msg["content"] if b.get("type") == "text")

    def apply(self, kind: str, conv: dict, m: int, rng: random.Random, lo: int, hi: int) -> dict:
        g = self.g
        if kind == "renamed":
            old = conv["name"]
            conv["name"] = new_title(rng, old)
            return {"title": conv["name"], "old_title": old, "messages_added": 0}
        g.era = self.era(conv)
        added, info = [], {}
        no = frozenset()
        with drawing_from(g, rng):
            t = rng.randrange(lo, hi)
            path = self.path(conv)
            if kind == "appended":
                parent = path[0]["uuid"] if path else P.CLAUDE_ROOT
                info["after"] = path[0]["uuid"] if path else None
                for _ in range(rng.choice((1, 1, 2))):
                    prompt = fresh_prompt(g.pool, rng)
                    h, t = g.human(prompt, t, parent, no, False)
                    a, t = g.assistant(prompt, t, h["uuid"], no, False)
                    added += [h, a]
                    parent = a["uuid"]
                    t += rng.randint(20, 600) * SEC
            else:
                humans = [x for x in path if x["sender"] == "human"]
                h = humans[0] if kind == "regenerated" else pick_user(humans, rng)
                if kind == "regenerated":
                    i = next(j for j, x in enumerate(path) if x is h)
                    info["replaces"] = path[i - 1]["uuid"] if i > 0 else None
                    a, t = g.assistant(self.text_of(h), t, h["uuid"], no, False)
                    added.append(a)
                else:
                    info["replaces"] = h["uuid"]
                    text = self.text_of(h)
                    text = (text + " " if text else "") + g.pool.sentence(3, 8)
                    h2, t = g.human(text, t, h["parent_message_uuid"], no, False)
                    a, t = g.assistant(text, t, h2["uuid"], no, False)
                    added += [h2, a]
        if g.era == 0:  # the constant export-time updated_at of old data would predate them
            for x in added:
                x["updated_at"] = x["created_at"]
        conv["chat_messages"].extend(added)
        conv["updated_at"] = added[-1]["created_at"]
        info["messages_added"] = len(added)
        info["new_message_ids"] = [x["uuid"] for x in added]
        return info

    def after_base(self) -> None:
        """Side files, drawn where gen_providers draws them (after the conversations)."""
        g = self.g
        dump2 = lambda o: (json.dumps(o, indent=2, ensure_ascii=False) + "\n").encode("utf-8")
        projects = dump2(g.projects())
        mem = g.memories()
        self.sides = {"projects.json": projects,
                      "memories.json": dump2(mem if self.args.memories_object else [mem]),
                      "users.json": dump2([{"uuid": g.account, "full_name": "Test User",
                                            "email_address": "test.user@example.com",
                                            "verified_phone_number": "+15555550100"}])}

    def side_files(self, m: int, folder: str) -> None:
        for name, data in self.sides.items():
            P.write_file(os.path.join(folder, name), data)


class GrokMonths:
    provider = "grok"
    kinds = TREE_KINDS

    def __init__(self, args):
        self.args = args
        self.g = P.Grok(args.seed, False)
        self.e1 = P.T_GK1 + 2 * DAY
        self.size_slack = 200
        self.extra_assets: list[tuple[int, str, bytes]] = []  # (month, asset id, bytes)
        self.base_dir = lambda folder: os.path.join(folder, "ttl", "30d", "export_data", self.g.user_id)

    def open_main(self, m: int, folder: str):
        return ArrayFile(os.path.join(self.base_dir(folder), "prod-grok-backend.json"), b'{"conversations":[', b",")

    def close_main(self, m: int, folder: str, f) -> None:
        f.close(self.tail)

    def encode(self, obj: dict) -> bytes:
        return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode("utf-8")

    def key(self, obj: dict) -> str:
        c = obj["conversation"]
        return c["id"] if "id" in c else c["conversation_id"]

    def count(self, obj: dict) -> int:
        return len(obj["responses"])

    def base(self) -> dict:
        return self.g.conversation(frozenset())

    def new(self, m: int, lo: int, hi: int) -> dict:
        before = len(self.g.assets)
        with patched(P, T_GK0=lo, T_GK1=hi - DAY):
            obj = self.g.conversation(frozenset())
        self.extra_assets += [(m, aid, blob) for aid, blob in self.g.assets[before:]]
        return obj

    @staticmethod
    def rid(r: dict) -> str:
        return r["_id"] if "_id" in r else r["response_id"]

    @staticmethod
    def rtime(r: dict) -> int:
        v = r["create_time"]
        return int(v["$date"]["$numberLong"]) * 1000 if isinstance(v, dict) else iso_to_us(v)

    def path(self, obj: dict) -> list:
        rs = [x["response"] for x in obj["responses"]]
        if not rs:
            return []
        by_id = {self.rid(r): r for r in rs}
        leaf = obj["conversation"].get("leaf_response_id")
        if leaf not in by_id:  # null or not exported: the newest leaf
            parents = {r["parent_response_id"] for r in rs}
            leaf = self.rid(max((r for r in rs if self.rid(r) not in parents), key=self.rtime))
        ids = tree_path(leaf, {self.rid(r): r["parent_response_id"] for r in rs})
        return [by_id[i] for i in ids]

    def capable(self, kind: str, obj: dict) -> bool:
        if kind in ("edited", "regenerated"):
            return any(r["sender"] == "human" for r in self.path(obj))
        return True

    def apply(self, kind: str, obj: dict, m: int, rng: random.Random, lo: int, hi: int) -> dict:
        g, c = self.g, obj["conversation"]
        if kind == "renamed":
            old = c["title"]
            with drawing_from(g, rng):
                title = g.grok_title()
            c["title"] = title if title != old else new_title(rng, old)
            return {"title": c["title"], "old_title": old, "messages_added": 0}
        rs = [x["response"] for x in obj["responses"]]
        g.force, g.shape, g.conv_id = frozenset(), 2026 if "id" in c else 2025, self.key(obj)
        g.picker = next((r["model"] for r in rs if "model" in r), "build")
        g.resolved = next((r["metadata"]["request_metadata"]["resolved_model"] for r in rs
                           if "resolved_model" in r.get("metadata", {}).get("request_metadata", {})), None)
        saved_assets, g.assets = g.assets, []
        added, info = [], {}
        try:
            with drawing_from(g, rng):
                if g.resolved is None:
                    g.resolved = rng.choice(P.RESOLVED_MODELS)
                t = rng.randrange(lo, hi)
                path = self.path(obj)
                if kind == "appended":
                    parent = info["after"] = self.rid(path[0]) if path else None
                    for _ in range(rng.choice((1, 1, 2))):
                        h, _ = g.human_turn(parent, t, False, False)
                        h["message"] = prompt = fresh_prompt(g.pool, rng)
                        t += rng.randint(2, 60) * SEC
                        a = g.assistant_turn(self.rid(h), t, prompt, False)
                        added += [h, a]
                        parent = self.rid(a)
                        t += rng.randint(15, 1200) * SEC
                else:
                    humans = [r for r in path if r["sender"] == "human"]
                    h = humans[0] if kind == "regenerated" else pick_user(humans, rng)
                    if kind == "regenerated":
                        i = next(j for j, r in enumerate(path) if r is h)
                        info["replaces"] = self.rid(path[i - 1]) if i > 0 else None
                        added.append(g.assistant_turn(self.rid(h), t, h["message"], False))
                    else:
                        info["replaces"] = self.rid(h)
                        h2, _ = g.human_turn(h["parent_response_id"], t, False, False)
                        h2["message"] = text = (h["message"] + " " if h["message"] else "") + g.pool.sentence(3, 8)
                        t += rng.randint(2, 60) * SEC
                        added += [h2, g.assistant_turn(self.rid(h2), t, text, False)]
        finally:
            self.extra_assets += [(m, aid, blob) for aid, blob in g.assets]
            g.assets = saved_assets
        obj["responses"].extend({"response": r, "share_link": None} for r in added)
        c["leaf_response_id"] = self.rid(added[-1])
        c["modify_time"] = P.iso_us(self.rtime(added[-1]))
        info["messages_added"] = len(added)
        info["new_message_ids"] = [self.rid(r) for r in added]
        return info

    def after_base(self) -> None:
        """Everything gen_grok draws after the conversations, in its order."""
        g = self.g
        rng = g.rng
        dump = lambda o: json.dumps(o, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        projects = [{"workspace_id": g.uuid(), "name": name, "custom_personality": g.pool.sentence(),
                     "preferred_model": "grok-4", "conversation_starters": [g.pool.question()],
                     "create_time": P.iso_us(rng.randrange(P.T_GK_2026, P.T_GK1))}
                    for name in ("Fishing trip planner", "Rust side project")]
        media = [{"id": g.uuid(), "original_prompt": p, "media_type": "image",
                  "create_time": P.iso_us(rng.randrange(P.T_GK_2026, P.T_GK1)),
                  "link": f"https://grok.com/imagine/post/{g.uuid()}"} for p in P.IMAGE_PROMPTS[:3]]
        self.tail = b'],"projects":' + dump(projects) + b',"tasks":[],"media_posts":' + dump(media) + b"}"
        auth = {"user": {"userId": g.user_id, "email": "jordan.sample@example.com", "givenName": "Jordan",
                         "familyName": "Sample", "birthDate": "1990-04-01", "xUsername": "jordan_sample_x",
                         "createTime": P.iso_us(P.T_GK0 - 30 * DAY), "emailConfirmed": True},
                "sessions": [{"sessionId": g.uuid(), "createTime": P.iso_us(rng.randrange(P.T_GK0, P.T_GK1)),
                              "ipAddress": f"203.0.113.{rng.randint(1, 254)}",
                              "userAgent": "Mozilla/5.0 (X11; Linux x86_64)",
                              "city": "Springfield", "country": "US", "latitude": 39.7817, "longitude": -89.6501}
                             for _ in range(3)]}
        self.sides = {"prod-mc-auth-mgmt-api.json": dump(auth),
                      "prod-mc-billing.json": dump({"balance_map": {"credits": {"amount": "0", "currency": "USD"},
                                                                    "subscription": "SuperGrok"}})}
        self.base_assets = list(g.assets)

    def side_files(self, m: int, folder: str) -> None:
        base = self.base_dir(folder)
        for name, data in self.sides.items():
            P.write_file(os.path.join(base, name), data)
        assets = os.path.join(base, "prod-mc-asset-server")
        for aid, blob in self.base_assets + [(a, b) for mm, a, b in self.extra_assets if mm <= m]:
            P.write_file(os.path.join(assets, aid, "content"), blob)
        P.write_file(os.path.join(assets, f"{self.g.user_id}-profile-picture.webp"), P.WEBP_1PX)


def run_tree(ad, args, ledger: Ledger, folders: list[str], say) -> int:
    """One pass: each conversation is generated once and written to every month it lives in."""
    n_months, seed = args.months, args.seed
    window = lambda m: (ledger.exported_at[m - 1] + HOUR, ledger.exported_at[m] - 2 * DAY)
    files = [ad.open_main(m, folders[m - 1]) for m in range(1, n_months + 1)]

    def later(conv: dict, key: str, data: bytes, first: int) -> None:
        for m in range(first, n_months + 1):
            kind = ledger.decide(m, key, lambda k: ad.capable(k, conv))
            if kind == "deleted":
                ledger.record(m, key, "deleted", {"messages_removed": ad.count(conv)})
                return
            info = None
            if kind is not None:
                info = ad.apply(kind, conv, m, random.Random(f"change-{seed}-{m}-{key}"), *window(m))
                data = ad.encode(conv)
            ledger.record(m, key, kind, info)
            files[m - 1].write(data)

    month1, n = files[0], 0
    report_every = 64 * G.MIB
    next_report = report_every
    target = None if args.size is None else args.size - ad.size_slack
    while (month1.total < target) if target is not None else (n < args.conversations):
        conv = ad.base()
        data = ad.encode(conv)
        month1.write(data)
        n += 1
        later(conv, ad.key(conv), data, 2)
        if month1.total >= next_report:
            say(f"month 1: {month1.total / G.MIB:,.0f} MiB, {n} conversations")
            next_report += report_every
    ad.after_base()
    for m in range(2, n_months + 1):
        lo, hi = ledger.exported_at[m - 1] + DAY, ledger.exported_at[m] - DAY
        for _ in range(ledger.n_new(m)):
            conv = ad.new(m, lo, hi)
            key = ad.key(conv)
            data = ad.encode(conv)
            ledger.record(m, key, "new", {"messages_added": ad.count(conv)})
            files[m - 1].write(data)
            later(conv, key, data, m + 1)
    for m in range(1, n_months + 1):
        ad.close_main(m, folders[m - 1], files[m - 1])
        ad.side_files(m, folders[m - 1])
    return n


# --------------------------------------------------------------------------
# Row providers (Copilot CSV, Gemini activity): newest first, no conversation ids
# --------------------------------------------------------------------------

class Unit:
    """One conversation of a row export, as memport would group it."""
    __slots__ = ("key", "title", "url", "first", "last", "count", "order")

    def __init__(self, order: int):
        self.order, self.key, self.title, self.url = order, None, None, None
        self.first = self.last = None
        self.count = 0

    def saw(self, t: int) -> None:
        self.first = t if self.first is None else min(self.first, t)
        self.last = t if self.last is None else max(self.last, t)
        self.count += 1


class CopilotMonths:
    provider = "copilot"
    kinds = ("deleted",)

    def __init__(self, args):
        self.args = args
        self.layout = args.layout or "history"
        self.g = P.Copilot(args.seed, False, args.truncated, self.layout)
        self.name, header = P.COPILOT_FILES[self.layout]
        buf = io.StringIO()
        self.csv_buf, self.csv = buf, csv.writer(buf, lineterminator="\r\n")
        self.head = b"\xef\xbb\xbf" + self.encode_row(header)
        self.sep, self.tail = b"", b""
        self.title_col, self.time_col = (0, 1) if self.layout == "history" else (3, 0)
        self.size_slack = 0
        self.avg_bytes = 5 * G.KIB
        self.t_range = (P.T_CP0, P.T_CP1_2025 if args.truncated else P.T_CP1)
        self._times: list[int] = []
        g = self.g
        render = g.render_time

        def render_time(row, t):  # remember each row's time (episodes return rendered rows only)
            self._times.append(t)
            return render(row, t)
        g.render_time = render_time
        self.units = 0

    def main_path(self, folder: str) -> str:
        return os.path.join(folder, self.name)

    def encode_row(self, row: list) -> bytes:
        self.csv_buf.seek(0)
        self.csv_buf.truncate()
        self.csv.writerow(row)
        return self.csv_buf.getvalue().encode("utf-8")

    def episode(self, clock, written: int) -> tuple[list, list]:
        """[(unit, bytes, time)] newest first, and the units."""
        self._times = []
        rows = self.g.episode(clock, written, frozenset())
        units: dict[str, Unit] = {}
        out = []
        for row, t in zip(rows, self._times):
            title = row[self.title_col]
            u = units.get(title)
            if u is None:
                u = units[title] = Unit(self.units)
                self.units += 1
                u.title = title
            u.saw(t)
            u.key = f"{title} @ {row[self.time_col]}"  # the last row written is the oldest
            out.append((u, self.encode_row(row), t))
        return out, list(units.values())

    def turn_rows(self, title: str, t: int, rng: random.Random) -> tuple[list, int]:
        """(time, rank, row) of one exchange at time t, as Copilot.conversation_rows makes them."""
        g = self.g
        prompt = fresh_prompt(g.pool, rng)
        answer = g.ai_text(prompt, frozenset())
        if self.layout == "history":
            rows = [(t, 0, [title, None, "Human", prompt]), (t, 1, [title, None, "AI", answer])]
        else:
            rows = [(t, 0, [None, prompt, "user", title]),
                    (t + rng.randint(2, 40) * SEC, 1, [None, answer, "bot", title])]
        return rows, t + rng.randint(20, 1500) * SEC

    def append(self, u: Unit, m: int, rng: random.Random, lo: int, hi: int, is_open: bool) -> list:
        """Rows continuing the open conversation, minutes after the last export."""
        t = lo + rng.randint(1, 20) * MINUTE
        out = []
        with drawing_from(self.g, rng):
            for _ in range(rng.choice((1, 1, 2))):
                rows, t = self.turn_rows(u.title, t, rng)
                for tt, rank, row in rows:
                    out.append((tt, rank, P.Copilot.render_time(self.g, row, tt)))
        return [(tt, rank, seq, self.encode_row(row)) for seq, (tt, rank, row) in enumerate(out)]

    def new_units(self, m: int, n: int, lo: int, hi: int, old_titles: list, open_title) -> list:
        """n new conversations dated in (lo, hi); the first ends OPEN_LEAD before the export."""
        g, rng = self.g, self.g.rng
        used = {open_title}
        made = []
        for i in range(n):
            continues = None
            title = None
            if old_titles and rng.random() < 0.25:  # an old chat resumed: a new conversation to any reader
                cand, key = old_titles[rng.randrange(len(old_titles))]
                if cand not in used:
                    title, continues = cand, key
            if title is None:
                for _ in range(20):
                    title = g.copilot_title(frozenset())
                    if title not in used:
                        break
                else:
                    title = f"{P.title_case_words(rng, 4, 6)} {rng.randint(2, 999)}"
            used.add(title)
            rows, dur = g.conversation_rows(title, frozenset())
            span = max(r[0] for r in rows)
            if i == 0:
                start = hi - OPEN_LEAD - span
            else:
                start = rng.randrange(lo + DAY, max(lo + DAY + 1, hi - DAY - dur))
            u = Unit(self.units)
            self.units += 1
            u.title = title
            entries = []
            for t, rank, seq, row in rows:
                P.Copilot.render_time(g, row, start + t)
                u.saw(start + t)
                entries.append((start + t, rank, seq, self.encode_row(row)))
            oldest = min(rows, key=lambda r: (r[0], r[1]))[3]
            u.key = f"{title} @ {oldest[self.time_col]}"
            made.append((u, entries, continues))
        return made

    def side_files(self, m: int, folder: str) -> None:
        pass


class GeminiMonths:
    kinds = ("appended", "deleted")

    def __init__(self, args, html: bool):
        self.args, self.html = args, html
        self.provider = "gemini-html" if html else "gemini-json"
        if html:
            self.kinds = ("deleted",)
        self.g = P.Gemini(args.seed, False)
        ext = "html" if html else "json"
        self.ext = ext
        self.head = P.HTML_HEAD.encode() + b"\n" if html else b"[\n"
        self.sep = b"" if html else b",\n"
        self.tail = P.HTML_TAIL.encode() + b"\n" if html else b"\n]"
        self.size_slack = 16
        self.avg_bytes = 6 * G.KIB
        self.t_range = (P.T_GM0, P.T_GM1)
        self.units = 0
        self._tags: dict[int, int] = {}
        self._next_tag = 0
        conversation = self.g.conversation

        def tagged(force):  # remember which conversation each record of an episode came from
            recs, dur = conversation(force)
            for _, _, rec in recs:
                self._tags[id(rec)] = self._next_tag
            self._next_tag += 1
            return recs, dur
        self.g.conversation = tagged

    def main_path(self, folder: str) -> str:
        return os.path.join(folder, *P.GEMINI_DIR, f"MyActivity.{self.ext}")

    def encode(self, rec: dict) -> bytes:
        return P.gemini_html_cell(rec) if self.html else P.gemini_json_element(rec)

    @staticmethod
    def url_of(rec: dict):
        details = rec.get("details")
        return details[0].get("url") if details else None

    def episode(self, clock, written: int) -> tuple[list, list]:
        self._tags = {}
        recs = self.g.episode(clock, written, frozenset())
        by_tag: dict[int, Unit] = {}
        keyless = None
        out = []
        for rec in recs:
            tag = self._tags[id(rec)]
            u = by_tag.get(tag)
            if u is None:
                url = None if self.html else next((self.url_of(r) for r in recs
                                                   if self._tags[id(r)] == tag and self.url_of(r)), None)
                if url is None:  # URL-less conversations of one episode are one group to memport
                    if keyless is None:
                        keyless = Unit(self.units)
                        self.units += 1
                    u = keyless
                else:
                    u = Unit(self.units)
                    self.units += 1
                    u.url = u.key = url
                by_tag[tag] = u
            u.saw(rec["time"])
            out.append((u, self.encode(rec), rec["time"]))
        units = list(dict.fromkeys(u for u, _, _ in out))
        for u in units:
            if u.url is None:
                u.key = "time:" + P.iso_ms(u.first)
        return out, units

    def record(self, prompt: str, t: int, url) -> dict:
        details = [{"name": url, "url": url}] if url else None
        return self.g.record("Prompted " + prompt, t, html=[P.md_to_html(self.g.answer(prompt))], details=details)

    def append(self, u: Unit, m: int, rng: random.Random, lo: int, hi: int, is_open: bool) -> list:
        t = lo + rng.randint(1, 20) * MINUTE if is_open else rng.randrange(lo + HOUR, hi - 2 * DAY)
        out = []
        with drawing_from(self.g, rng):
            for seq in range(rng.choice((1, 1, 2))):
                t -= t % 1000
                rec = self.record(fresh_prompt(self.g.pool, rng), t, u.url)
                out.append((t, 0, seq, self.encode(rec)))
                t += rng.randint(30, 1200) * SEC + rng.randint(0, 999) * 1000
        return out

    def new_units(self, m: int, n: int, lo: int, hi: int, old_titles: list, open_title) -> list:
        g, rng = self.g, self.g.rng
        made = []
        for i in range(n):
            recs, dur = g.conversation(frozenset())
            span = max(t for t, _, _ in recs) if recs else 0
            start = hi - OPEN_LEAD - span if i == 0 else rng.randrange(lo + DAY, max(lo + DAY + 1, hi - DAY - dur))
            start -= start % 1000
            no_details = rng.random() < 0.03
            u = Unit(self.units)
            self.units += 1
            entries = []
            for t, seq, rec in recs:
                rec["time"] = start + t
                if no_details and "details" in rec:
                    del rec["details"]
                u.saw(rec["time"])
                entries.append((rec["time"], 0, seq, self.encode(rec)))
            url = None if self.html else next((self.url_of(r) for _, _, r in recs if self.url_of(r)), None)
            u.url = url
            u.key = url or "time:" + P.iso_ms(u.first)
            made.append((u, entries, None))
        return made

    def side_files(self, m: int, folder: str) -> None:
        if m == 1:
            n_decoys = max(20, min(20_000, self.size_estimate // 20_000))
            activity = os.path.join(folder, "Takeout", "My Activity")
            for product, recs in P.decoy_records(random.Random(f"decoys-{self.args.seed}"), n_decoys).items():
                dm = P.MainFile(os.path.join(activity, product, f"MyActivity.{self.ext}"))
                dw = P.ActivityWriter(dm, self.html)
                for rec in recs:
                    dw.write(rec)
                dw.finish()
                dm.close()
            P.write_file(os.path.join(folder, "Takeout", "archive_browser.html"),
                         ("<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>Archive Overview</title></head>"
                          "<body><h1>Archive Overview</h1><p>Your archive contains: My Activity (Chrome, Gemini Apps, "
                          "YouTube).</p></body></html>\n").encode())
            self.month1 = folder
            return
        for product in ("YouTube", "Chrome"):
            rel = os.path.join("Takeout", "My Activity", product, f"MyActivity.{self.ext}")
            os.makedirs(os.path.dirname(os.path.join(folder, rel)), exist_ok=True)
            shutil.copyfile(os.path.join(self.month1, rel), os.path.join(folder, rel))
        rel = os.path.join("Takeout", "archive_browser.html")
        shutil.copyfile(os.path.join(self.month1, rel), os.path.join(folder, rel))


def run_rows(ad, args, ledger: Ledger, folders: list[str], say) -> int:
    """One pass over the base episodes; month N's rows written to month-N's body spool, the
    new month's rows kept (they go first in newest-first files) and merged at the end."""
    n_months, seed = args.months, args.seed
    target = args.size if args.size is not None else args.conversations * ad.avg_bytes
    ad.size_estimate = target
    clock = P.BackwardClock(ad.g.rng, *ad.t_range, target, ad.avg_bytes, True)
    m1 = P.MainFile(ad.main_path(folders[0]))
    m1.write(ad.head)
    m1_count = 0
    spools = {}
    for m in range(2, n_months + 1):
        path = ad.main_path(folders[m - 1])
        os.makedirs(os.path.dirname(path), exist_ok=True)
        spools[m] = open(path + ".body.partial", "wb", buffering=4 * G.MIB)
    seg: dict[int, list] = {m: [] for m in range(2, n_months + 1)}  # new rows: (t, rank, order, seq, bytes, unit)
    deleted_at: dict[int, int] = {}  # unit order -> month it is gone from
    titles: dict[str, str] = {}  # Copilot: id -> title of every conversation
    old_titles: list = []  # Copilot: (title, id) of the base conversations, for resumed chats
    counter = [0]

    def window(m):
        return ledger.exported_at[m - 1], ledger.exported_at[m]

    def decide(u: Unit, m: int) -> bool:
        """Month m's fate of unit u; False when deleted."""
        kind = ledger.decide(m, u.key, lambda k: k == "deleted" or (k == "appended" and u.url is not None))
        if kind == "deleted":
            deleted_at[u.order] = m
            ledger.record(m, u.key, "deleted", {"messages_removed": u.count})
            return False
        if kind == "appended":
            rng = random.Random(f"change-{seed}-{m}-{u.key}")
            rows = ad.append(u, m, rng, *window(m), ledger.open.get(m) == u.key)
            for t, rank, seq, data in rows:
                seg[m].append((t, rank, counter[0], seq, data, u.order))
                u.saw(t)
            counter[0] += 1
            ledger.record(m, u.key, "appended", {"messages_added": len(rows)})
        else:
            ledger.record(m, u.key, None)
        return True

    units_done, first = 0, True
    report_every = 64 * G.MIB
    next_report = report_every
    while (m1.total < target - ad.size_slack) if args.size is not None else (units_done < args.conversations):
        rows, units = ad.episode(clock, m1.total)
        if args.size is None and units_done + len(units) > args.conversations:
            keep = set(id(u) for u in units[:args.conversations - units_done])
            units = [u for u in units if id(u) in keep]
            rows = [r for r in rows if id(r[0]) in keep]
        if first:
            newest = max(units, key=lambda u: u.last)
            ledger.exported_at[1] = newest.last + OPEN_LEAD
            for m in range(2, n_months + 1):
                ledger.exported_at[m] = ledger.exported_at[1] + (m - 1) * MONTH_GAP
            ledger.open[2] = newest.key
            first = False
        for _, data, _ in rows:
            m1.write(data if m1_count == 0 else ad.sep + data)
            m1_count += 1
        alive = units
        for m in range(2, n_months + 1):
            alive = [u for u in alive if decide(u, m)]
            keep = set(id(u) for u in alive)
            spool = spools[m]
            for u, data, _ in rows:
                if id(u) in keep:
                    spool.write(ad.sep + data)
        for u in units:
            if u.title is not None:
                titles[u.key] = u.title
                old_titles.append((u.title, u.key))
        units_done += len(units)
        if m1.total >= next_report:
            say(f"month 1: {m1.total / G.MIB:,.0f} MiB, {units_done} conversations")
            next_report += report_every
    m1.write(ad.tail)
    m1.close()
    if first:  # no conversation at all
        for m in range(1, n_months + 1):
            ledger.exported_at[m] = ad.t_range[1] + (m - 1) * MONTH_GAP

    for m in range(2, n_months + 1):
        lo, hi = window(m)
        made = ad.new_units(m, ledger.n_new(m), lo, hi, old_titles, titles.get(ledger.open.get(m)))
        for i, (u, entries, continues) in enumerate(made):
            info = {"messages_added": len(entries)}
            if continues:
                info["continues"] = continues
            ledger.record(m, u.key, "new", info)
            for t, rank, seq, data in entries:
                seg[m].append((t, rank, counter[0], seq, data, u.order))
            counter[0] += 1
            if i == 0 and m < n_months:
                ledger.open[m + 1] = u.key
        for u, _, _ in made:
            for mm in range(m + 1, n_months + 1):
                if not decide(u, mm):
                    break
        for u, _, _ in made:
            if u.title is not None:
                titles[u.key] = u.title
                old_titles.append((u.title, u.key))

    for m in range(2, n_months + 1):
        spools[m].close()
        path = ad.main_path(folders[m - 1])
        out = P.MainFile(path)
        out.write(ad.head)
        count = 0
        for j in range(m, 1, -1):
            for t, rank, order, seq, data, unit in sorted(seg[j], key=lambda e: e[:4], reverse=True):
                if deleted_at.get(unit, n_months + 1) > m:
                    out.write(data if count == 0 else ad.sep + data)
                    count += 1
        with open(path + ".body.partial", "rb") as body:
            start = len(body.read(len(ad.sep))) if count == 0 else 0
            if count:
                body.seek(0)
            shutil.copyfileobj(body, out.f, 4 * G.MIB)
            out.total += body.tell() - start
        os.remove(path + ".body.partial")
        out.write(ad.tail)
        out.close()
    for m in range(1, n_months + 1):
        ad.side_files(m, folders[m - 1])
    return units_done


# --------------------------------------------------------------------------
# Main
# --------------------------------------------------------------------------

def clean_out(out: str) -> None:
    """Remove what an earlier run left: month-N folders and changes.json, nothing else."""
    os.makedirs(out, exist_ok=True)
    for name in os.listdir(out):
        path = os.path.join(out, name)
        if re.fullmatch(r"month-\d+", name) and os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path)
        elif name in ("changes.json", "changes.json.partial"):
            os.remove(path)


def generate(args) -> dict:
    """Write the months and changes.json; returns the changes document."""
    say = (lambda msg: None) if args.quiet else (lambda msg: print(f"gen_months {args.provider}: {msg}",
                                                                    file=sys.stderr, flush=True))
    out = args.out.rstrip("/") or "/"
    clean_out(out)
    folders = [os.path.join(out, f"month-{m}") for m in range(1, args.months + 1)]
    for f in folders:
        os.makedirs(f)
    if args.provider == "chatgpt":
        ad = ChatGPTMonths(args)
    elif args.provider == "claude":
        ad = ClaudeMonths(args)
    elif args.provider == "grok":
        ad = GrokMonths(args)
    elif args.provider == "copilot":
        ad = CopilotMonths(args)
    else:
        ad = GeminiMonths(args, html=args.provider == "gemini-html")
    ledger = Ledger(args.provider, args.months, args.changed, ad.kinds, args.seed, args.conversations)
    if hasattr(ad, "e1"):
        for m in range(1, args.months + 1):
            ledger.exported_at[m] = ad.e1 + (m - 1) * MONTH_GAP
        n = run_tree(ad, args, ledger, folders, say)
    else:
        n = run_rows(ad, args, ledger, folders, say)
    doc = ledger.document(args)
    path = os.path.join(out, "changes.json")
    with open(path + ".partial", "w", encoding="utf-8") as f:
        f.write(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    os.replace(path + ".partial", path)
    for month in doc["months"]:
        say(f"month {month['month']}: {len(month['unchanged'])} unchanged, {len(month['appended'])} appended, "
            f"{len(month['edited'])} edited, {len(month['regenerated'])} regenerated, {len(month['renamed'])} renamed, "
            f"{len(month['deleted'])} deleted, {len(month['new'])} new, {month['messages_added']} messages added")
    say(f"{n} conversations in month 1, {args.months} months in {out}")
    return doc


def parse_args(argv=None, allow_self_test=True):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="See the module docstring (head of this file) for what changes and the ids.")
    ap.add_argument("provider", nargs="?", choices=PROVIDERS)
    ap.add_argument("--out", help="output folder: month-1/ ... month-N/ and changes.json (those are replaced)")
    ap.add_argument("--size", type=G.parse_size, help="target size of month 1's main file(s), e.g. 4M, 1G (default 4M)")
    ap.add_argument("--conversations", type=int, metavar="N", help="month 1 holds exactly N conversations")
    ap.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    ap.add_argument("--changed", type=float, default=0.05,
                    help="share of conversations changed (or deleted) each month (default 0.05)")
    ap.add_argument("--months", type=int, default=2, help="number of monthly exports (default 2)")
    ap.add_argument("--layout", help="chatgpt: single (2023-25, default) or sharded (2026 shards + manifest); "
                                     "copilot: history (default) or chat-activity")
    ap.add_argument("--shard-size", type=G.parse_size, default=64 * G.MIB, help="chatgpt sharded: shard size (64M)")
    ap.add_argument("--truncated", action="store_true", help="copilot: answers cut to 100 characters (2025)")
    ap.add_argument("--memories-object", action="store_true", help="claude: memories.json as a bare object")
    ap.add_argument("--quiet", action="store_true", help="no progress on stderr")
    if allow_self_test:
        ap.add_argument("--self-test", action="store_true", help="generate small sets for every provider and check them")
    args = ap.parse_args(argv)
    if getattr(args, "self_test", False):
        return args
    if args.provider is None or args.out is None:
        ap.error("give PROVIDER and --out (or --self-test)")
    if args.size is not None and args.conversations is not None:
        ap.error("give at most one of --size and --conversations")
    if args.size is None and args.conversations is None:
        args.size = 4 * G.MIB
    if args.conversations is not None and args.conversations < 0:
        ap.error("--conversations must be >= 0")
    if not 0 <= args.changed <= 1:
        ap.error("--changed must be between 0 and 1")
    if args.months < 1:
        ap.error("--months must be at least 1")
    layouts = {"chatgpt": ("single", "sharded"), "copilot": ("history", "chat-activity")}
    if args.layout is not None and args.layout not in layouts.get(args.provider, ()):
        ap.error(f"--layout {args.layout} is not a layout of {args.provider} "
                 f"(chatgpt: single, sharded; copilot: history, chat-activity)")
    if args.provider == "chatgpt" and args.layout is None:
        args.layout = "single"
    if args.provider == "copilot" and args.layout is None:
        args.layout = "history"
    if args.truncated and args.provider != "copilot":
        ap.error("--truncated is for copilot only")
    if args.memories_object and args.provider != "claude":
        ap.error("--memories-object is for claude only")
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    if args.self_test:
        return self_test()
    generate(args)
    return 0


# --------------------------------------------------------------------------
# Self-test: reads the months back the way a consumer would and checks changes.json
# --------------------------------------------------------------------------

class Failure(AssertionError):
    pass


def check(cond, msg: str) -> None:
    if not cond:
        raise Failure(msg)


def check_merged(prev: list, cur: list, n_added: int, n_removed: int, m: int) -> None:
    """A newest-first file of month m is the added records (newest first) followed by month m-1's
    records in their order, minus the removed ones.  (Month 1's own order is the single-export
    generator's: it can put a record a few seconds out of order where episodes touch.)"""
    top, rest = cur[:n_added], cur[n_added:]
    check(all(a[0] >= b[0] for a, b in zip(top, top[1:])), f"month {m}: added records not newest first")
    check(not rest or not top or top[-1][0] >= rest[0][0], f"month {m}: added records not on top")
    earlier = iter(prev)
    check(len(prev) - len(rest) == n_removed and all(any(x == y for y in earlier) for x in rest),
          f"month {m}: the earlier month's records are not kept in order below the added ones")


def tree_digest(root: str) -> str:
    h = hashlib.sha256()
    for dirpath, dirs, files in os.walk(root):
        dirs.sort()
        for name in sorted(files):
            path = os.path.join(dirpath, name)
            h.update(os.path.relpath(path, root).encode() + b"\0")
            with open(path, "rb") as f:
                h.update(hashlib.sha256(f.read()).digest())
    return h.hexdigest()


def read_tree_month(provider: str, folder: str, layout) -> dict:
    """{id: view} of one month, after checking the file re-serializes to its exact bytes."""
    views = {}
    if provider == "chatgpt":
        if layout == "sharded":
            names = sorted(n for n in os.listdir(folder) if re.fullmatch(r"conversations-\d{3}\.json", n))
            with open(os.path.join(folder, "export_manifest.json")) as f:
                manifest = json.load(f)
            check([e["path"] for e in manifest["export_files"]] == names, "manifest does not list the shards")
            for e in manifest["export_files"]:
                check(os.path.getsize(os.path.join(folder, e["path"])) == e["size_bytes"], "manifest size wrong")
        else:
            names = ["conversations.json"]
        convs = []
        for name in names:
            with open(os.path.join(folder, name), "rb") as f:
                raw = f.read()
            arr = json.loads(raw)
            again = (json.dumps(arr, indent=2, sort_keys=True) if layout == "sharded" else json.dumps(arr)).encode("ascii")
            check(again == raw, f"{name} is not written the provider's way")
            convs += arr
        for c in convs:
            msgs = {}
            for nid, node in c["mapping"].items():
                msg = node["message"]
                if msg is not None:
                    ct = msg.get("create_time")
                    msgs[nid] = (node["parent"], msg["author"]["role"], None if ct is None else round(ct * SEC),
                                 json.dumps(msg, sort_keys=True))
            dump = (lambda o: json.dumps(o, sort_keys=True)) if layout == "sharded" else json.dumps
            views[c["id"]] = {"conv": c, "canon": dump(c), "dump": dump, "title_key": "title", "msgs": msgs,
                              "leaf": c["current_node"], "created": round(c["create_time"] * SEC)}
        return views
    if provider == "claude":
        path = os.path.join(folder, "conversations.json")
        with open(path, "rb") as f:
            raw = f.read()
        arr = json.loads(raw)
        check(json.dumps(arr, indent=2, ensure_ascii=False).encode() == raw, "claude file not written the provider's way")
        for side in ("projects.json", "memories.json", "users.json"):
            check(os.path.exists(os.path.join(folder, side)), f"claude {side} missing")
        for c in arr:
            msgs = {m["uuid"]: (m.get("parent_message_uuid"), "user" if m["sender"] == "human" else "assistant",
                                iso_to_us(m["created_at"]), json.dumps(m)) for m in c["chat_messages"]}
            views[c["uuid"]] = {"conv": c, "canon": json.dumps(c, ensure_ascii=False), "title_key": "name",
                                "dump": lambda o: json.dumps(o, ensure_ascii=False),
                                "msgs": msgs, "leaf": None, "created": iso_to_us(c["created_at"])}
        return views
    base = os.path.join(folder, "ttl", "30d", "export_data")
    (user,) = os.listdir(base)
    with open(os.path.join(base, user, "prod-grok-backend.json"), "rb") as f:
        raw = f.read()
    doc = json.loads(raw)
    check(json.dumps(doc, ensure_ascii=False, separators=(",", ":")).encode() == raw, "grok file not compact JSON")
    for obj in doc["conversations"]:
        c = obj["conversation"]
        msgs = {}
        for x in obj["responses"]:
            r = x["response"]
            msgs[GrokMonths.rid(r)] = (r["parent_response_id"], "user" if r["sender"] == "human" else "assistant",
                                       GrokMonths.rtime(r), json.dumps(x))
        views[c.get("id") or c["conversation_id"]] = {
            "conv": obj, "canon": json.dumps(obj, ensure_ascii=False), "title_key": None, "msgs": msgs,
            "dump": lambda o: json.dumps(o, ensure_ascii=False),
            "leaf": c["leaf_response_id"], "created": iso_to_us(c["create_time"])}
    return views


def check_tree_month(provider: str, prev: dict, cur: dict, month: dict, lo: int, hi: int) -> None:
    m = month["month"]
    det = month["details"]
    classified = (month["unchanged"] + list(month["appended"]) + month["edited"] + month["regenerated"]
                  + list(month["renamed"]) + month["deleted"])
    check(len(classified) == len(set(classified)) and set(classified) == set(prev),
          f"month {m}: lists do not classify every earlier conversation exactly once")
    check(not set(month["new"]) & set(prev), f"month {m}: a new id existed before")
    check(set(cur) == (set(prev) - set(month["deleted"])) | set(month["new"]), f"month {m}: ids do not add up")
    total = 0
    for k in month["unchanged"]:
        check(prev[k]["canon"] == cur[k]["canon"], f"month {m}: unchanged {k} differs")
    for k, title in month["renamed"].items():
        old, new = prev[k]["conv"], cur[k]["conv"]
        tk = prev[k]["title_key"] or "conversation"
        getter = (lambda c: c["conversation"]["title"]) if tk == "conversation" else (lambda c: c[tk])
        check(getter(new) == title != getter(old), f"month {m}: {k} not renamed to {title!r}")
        back = json.loads(json.dumps(new))
        if tk == "conversation":
            back["conversation"]["title"] = getter(old)
        else:
            back[tk] = getter(old)
        check(cur[k]["dump"](back) == prev[k]["canon"], f"month {m}: renamed {k} changed more than its title")
    for kind in ("appended", "edited", "regenerated"):
        for k in month[kind]:
            check(k in det and det[k]["kind"] == kind, f"month {m}: {kind} {k} has no matching details")
            p, c, d = prev[k], cur[k], det[k]
            check(all(c["msgs"].get(i) == v for i, v in p["msgs"].items()), f"month {m}: {kind} {k} lost or changed a message")
            added = [i for i in c["msgs"] if i not in p["msgs"]]
            check(sorted(added) == sorted(d["new_message_ids"]) and len(added) == d["messages_added"],
                  f"month {m}: {kind} {k} new messages differ from details")
            if kind == "appended":
                check(month["appended"][k] == len(added), f"month {m}: appended count of {k}")
            total += len(added)
            for i in added:
                t = c["msgs"][i][2]
                check(t is not None and lo < t < hi, f"month {m}: {kind} {k} message {i} dated outside the month")
            first = c["msgs"][d["new_message_ids"][0]]
            if kind == "appended":
                check(first[1] == "user" and (first[0] is None or first[0] == d["after"]),
                      f"month {m}: appended {k} does not follow the old leaf")
            elif kind == "edited":
                replaced = p["msgs"][d["replaces"]]
                check(first[1] == "user" and replaced[1] == "user" and first[0] == replaced[0],
                      f"month {m}: edited {k} is not a sibling of the edited message")
            else:
                check(first[1] == "assistant" and p["msgs"].get(first[0], (None, "user"))[1] == "user",
                      f"month {m}: regenerated {k} does not answer a user message")
                if d["replaces"] is not None:
                    check(p["msgs"][d["replaces"]][0] == first[0], f"month {m}: regenerated {k} is no sibling")
            if c["leaf"] is not None or provider == "chatgpt":
                check(c["leaf"] == d["new_message_ids"][-1], f"month {m}: {kind} {k} active leaf not moved")
    for k in month["new"]:
        check(len(cur[k]["msgs"]) == det[k]["messages_added"], f"month {m}: new {k} message count")
        check(lo < cur[k]["created"] < hi, f"month {m}: new {k} not dated in the month")
        total += det[k]["messages_added"]
    for k in month["deleted"]:
        check(det[k]["messages_removed"] == len(prev[k]["msgs"]), f"month {m}: deleted {k} count")
    check(total == month["messages_added"], f"month {m}: messages_added {month['messages_added']} != {total}")


def copilot_time(text: str) -> int:
    if "/" in text:  # M/D/YYYY H:MM:SS +HH:MM
        d = datetime.datetime.strptime(text, "%m/%d/%Y %H:%M:%S %z")
        return (d - _EPOCH) // datetime.timedelta(microseconds=1)
    return iso_to_us(text)


def read_copilot_month(folder: str, layout: str) -> dict:
    name, header = P.COPILOT_FILES[layout]
    with open(os.path.join(folder, name), "rb") as f:
        raw = f.read()
    check(raw.startswith(b"\xef\xbb\xbf"), "copilot CSV lacks its BOM")
    rows = list(csv.reader(io.StringIO(raw[3:].decode("utf-8"), newline="")))
    check(rows[0] == header, "copilot header")
    ti, tc = (0, 1) if layout == "history" else (3, 0)
    times = [copilot_time(r[tc]) for r in rows[1:]]
    groups: dict[str, list] = {"": list(zip(times, map(tuple, rows[1:])))}  # "": every row, file order
    open_by_title: dict[str, tuple] = {}
    for t, r in reversed(groups[""]):  # memport: the file reversed, by title, 60-minute gap
        title = r[ti]
        cur = open_by_title.get(title)
        if cur is None or t - cur[1] > GAP:
            key = f"{title} @ {r[tc]}"
            check(key not in groups, f"copilot id {key!r} names two conversations")
            groups[key] = []
            cur = (key, t)
        open_by_title[title] = (cur[0], t)
        groups[cur[0]].append((t, tuple(r)))
    return groups


def check_copilot_month(prev: dict, cur: dict, month: dict, lo: int, hi: int) -> None:
    m, det = month["month"], month["details"]
    check_merged(prev[""], cur[""], month["messages_added"],
                 sum(det[k]["messages_removed"] for k in month["deleted"]), m)
    prev, cur = dict(prev), dict(cur)
    del prev[""], cur[""]
    classified = month["unchanged"] + list(month["appended"]) + month["deleted"]
    check(not (month["edited"] or month["regenerated"] or month["renamed"]), "copilot cannot edit")
    check(len(classified) == len(set(classified)) and set(classified) == set(prev), f"month {m}: copilot ids")
    check(set(cur) == (set(prev) - set(month["deleted"])) | set(month["new"]), f"month {m}: copilot ids add up")
    total = 0
    for k in month["unchanged"]:
        check(prev[k] == cur[k], f"month {m}: unchanged {k} differs")
    for k, n in month["appended"].items():
        check(cur[k][:len(prev[k])] == prev[k] and len(cur[k]) - len(prev[k]) == n, f"month {m}: appended {k}")
        check(all(lo < t < hi for t, _ in cur[k][len(prev[k]):]), f"month {m}: appended {k} dates")
        total += n
    for k in month["new"]:
        check(len(cur[k]) == det[k]["messages_added"] and all(lo < t < hi for t, _ in cur[k]), f"month {m}: new {k}")
        total += len(cur[k])
    for k in month["deleted"]:
        check(det[k]["messages_removed"] == len(prev[k]), f"month {m}: deleted {k} count")
    check(total == month["messages_added"], f"month {m}: copilot messages_added")


HTML_TIME = re.compile(r"<br>([A-Z][a-z]{2} \d{1,2}, \d{4}, \d{1,2}:\d{2}:\d{2} [AP]M CES?T)<br>")


def html_time(text: str) -> int:
    stamp, zone = text.rsplit(" ", 1)
    d = datetime.datetime.strptime(stamp, "%b %d, %Y, %I:%M:%S %p")
    return (d.replace(tzinfo=datetime.timezone.utc) - _EPOCH) // datetime.timedelta(microseconds=1) \
        - (2 if zone == "CEST" else 1) * HOUR


def read_gemini_month(folder: str, html: bool) -> list:
    """[(time, url, raw element)] newest first."""
    path = os.path.join(folder, *P.GEMINI_DIR, "MyActivity." + ("html" if html else "json"))
    with open(path, encoding="utf-8") as f:
        raw = f.read()
    out = []
    if html:
        check(raw.startswith(P.HTML_HEAD) and raw.endswith(P.HTML_TAIL + "\n"), "gemini html frame")
        body = raw[len(P.HTML_HEAD) + 1:-len(P.HTML_TAIL) - 1]
        cells = [c for c in re.split(r'(?=<div class="outer-cell)', body) if c]
        for c in cells:
            out.append((html_time(HTML_TIME.search(c).group(1)), None, c))
    else:
        arr = json.loads(raw)
        again = P.google_json_escape(json.dumps(arr, indent=2, ensure_ascii=False))
        check(again == raw, "gemini json not written the provider's way")
        for rec in arr:
            out.append((iso_to_us(rec["time"]), GeminiMonths.url_of(rec), json.dumps(rec, ensure_ascii=False)))
    return out


def check_gemini_month(prev: list, cur: list, month: dict, lo: int, hi: int, html: bool) -> None:
    m, det = month["month"], month["details"]
    check(not (month["edited"] or month["regenerated"] or month["renamed"]), "gemini cannot edit")
    check_merged(prev, cur, month["messages_added"], sum(det[k]["messages_removed"] for k in month["deleted"]), m)
    classified = month["unchanged"] + list(month["appended"]) + month["deleted"]
    check(len(classified) == len(set(classified)), f"month {m}: gemini id listed twice")
    urls_prev = {u for _, u, _ in prev if u}
    urls_cur = {u for _, u, _ in cur if u}
    check({k for k in classified if not k.startswith("time:")} == urls_prev, f"month {m}: URL ids")
    check(urls_cur == (urls_prev - set(month["deleted"])) | {k for k in month["new"] if not k.startswith("time:")},
          f"month {m}: URL ids add up")
    stamp = (lambda us: P.takeout_html_time(us)) if html else (lambda us: P.iso_ms(us))
    def keyless(recs):
        c = collections.Counter()
        for t, u, raw in recs:
            if u is None:
                c[stamp(t)] += 1
        return c
    kp, kc = keyless(prev), keyless(cur)
    for k in classified:
        if k.startswith("time:"):
            s = stamp(iso_to_us(k[5:]))
            check(kp[s] > 0, f"month {m}: {k} not in the earlier month")
            if k in month["deleted"]:
                check(kc[s] < kp[s], f"month {m}: deleted {k} still there")
            else:
                check(kc[s] >= kp[s], f"month {m}: kept {k} lost its first record")
    by_url = lambda recs, url: [raw for _, u, raw in recs if u == url]
    for k in month["unchanged"]:
        if not k.startswith("time:"):
            check(by_url(prev, k) == by_url(cur, k), f"month {m}: unchanged {k} differs")
    for k, n in month["appended"].items():
        if not k.startswith("time:"):
            a, b = by_url(prev, k), by_url(cur, k)
            check(b[-len(a):] == a and len(b) - len(a) == n, f"month {m}: appended {k}")
    removed = collections.Counter(r for _, _, r in prev) - collections.Counter(r for _, _, r in cur)
    added = collections.Counter(r for _, _, r in cur) - collections.Counter(r for _, _, r in prev)
    check(sum(removed.values()) == sum(det[k]["messages_removed"] for k in month["deleted"]),
          f"month {m}: removed records {sum(removed.values())}")
    check(sum(added.values()) == month["messages_added"]
          == sum(month["appended"].values()) + sum(det[k]["messages_added"] for k in month["new"]),
          f"month {m}: added records")
    added_times = [t for t, _, r in cur if r in added]
    check(all(lo - SEC < t < hi for t in added_times), f"month {m}: added records dated outside the month")
    for k in month["new"]:
        if k.startswith("time:"):
            check(kc[stamp(iso_to_us(k[5:]))] > kp[stamp(iso_to_us(k[5:]))], f"month {m}: new {k} missing")


def verify(out: str, provider: str, layout) -> dict:
    with open(os.path.join(out, "changes.json"), encoding="utf-8") as f:
        doc = json.load(f)
    check(doc["provider"] == provider, "provider")
    exports = {e["month"]: iso_to_us(e["exported_at"]) for e in doc["exports"]}
    n = len(doc["exports"])
    check(len(doc["months"]) == n - 1, "months")
    folders = [os.path.join(out, f"month-{m}") for m in range(1, n + 1)]
    if provider in ("chatgpt", "claude", "grok"):
        views = [read_tree_month(provider, f, layout) for f in folders]
        for month in doc["months"]:
            m = month["month"]
            check_tree_month(provider, views[m - 2], views[m - 1], month, exports[m - 1], exports[m])
    elif provider == "copilot":
        views = [read_copilot_month(f, layout) for f in folders]
        for month in doc["months"]:
            m = month["month"]
            check_copilot_month(views[m - 2], views[m - 1], month, exports[m - 1], exports[m])
    else:
        html = provider == "gemini-html"
        views = [read_gemini_month(f, html) for f in folders]
        for month in doc["months"]:
            m = month["month"]
            check_gemini_month(views[m - 2], views[m - 1], month, exports[m - 1], exports[m], html)
    return doc


def self_test() -> int:
    variants = [("chatgpt", "single"), ("chatgpt", "sharded"), ("claude", None), ("grok", None),
                ("copilot", "history"), ("copilot", "chat-activity"), ("gemini-json", None), ("gemini-html", None)]
    t_start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="gen_months_selftest_") as tmp:
        for provider, layout in variants:
            t0 = time.monotonic()
            name = provider + (f"-{layout}" if layout else "")
            lay = ["--layout", layout] if layout else []
            base = [provider, "--quiet", "--seed", "7"] + lay

            # 1. Every kind the provider has, three months, checked against the files.
            a = os.path.join(tmp, name, "a")
            doc = generate(parse_args(base + ["--out", a, "--conversations", "16", "--months", "3",
                                              "--changed", "0.2"], False))
            verify(a, provider, layout)
            for month in doc["months"]:
                for kind in doc["kinds"]:
                    check(month[kind] if kind != "appended" else month["appended"] or provider == "gemini-json",
                          f"{name}: month {month['month']} has no {kind}")
                check(month["new"] and month["unchanged"], f"{name}: month {month['month']} has no new/unchanged")
                if provider in ("copilot", "gemini-html"):
                    check(len(month["appended"]) == 1, f"{name}: the open conversation was not continued")

            # 2. Same arguments, same bytes.
            b = os.path.join(tmp, name, "b")
            generate(parse_args(base + ["--out", b, "--conversations", "16", "--months", "3", "--changed", "0.2"], False))
            check(tree_digest(a) == tree_digest(b), f"{name}: not deterministic")

            # 3. Default 5 % with 20 conversations (what integration tests use).
            c = os.path.join(tmp, name, "c")
            doc = generate(parse_args(base + ["--out", c, "--conversations", "20"], False))
            verify(c, provider, layout)
            check(len(doc["months"]) == 1, f"{name}: default months")

            # 4. --size: month 1 is byte for byte the single-export generator's output.
            d = os.path.join(tmp, name, "d")
            generate(parse_args(base + ["--out", d, "--size", "48K", "--changed", "0.3"], False))
            verify(d, provider, layout)
            ref = os.path.join(tmp, name, "ref")
            if provider == "chatgpt":
                G.main(["--size", "48K", "--seed", "7", "--out", ref, "--quiet", "--layout", layout])
            else:
                P.main([provider, "--size", "48K", "--seed", "7", "--out", ref, "--quiet"]
                       + (["--layout", layout] if layout else []))
            check(tree_digest(os.path.join(d, "month-1")) == tree_digest(ref),
                  f"{name}: month 1 differs from the single-export generator")

            # 5. --changed 0: identical months.
            e = os.path.join(tmp, name, "e")
            doc = generate(parse_args(base + ["--out", e, "--conversations", "6", "--changed", "0"], False))
            check(tree_digest(os.path.join(e, "month-1")) == tree_digest(os.path.join(e, "month-2")),
                  f"{name}: --changed 0 months differ")
            check(doc["months"][0]["messages_added"] == 0 and not doc["months"][0]["new"], f"{name}: changed 0")
            print(f"self-test {name}: OK ({time.monotonic() - t0:.1f} s)", flush=True)
    print(f"self-test: OK ({len(variants)} layouts, {time.monotonic() - t_start:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
