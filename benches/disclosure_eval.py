#!/usr/bin/env python3
"""Scores memory extraction on the hand-written disclosure set (``benches/disclosure_set/*.json``):
about 60 user messages per language (en, de, fr, es, cs), each labelled with the memories a
careful reader would take from it, or with none (the trap categories).

The script writes a ChatGPT export with one conversation per message (the assistant turn the
message answers, where the set gives one, and a short assistant reply after it), runs
``memport inspect --memories --json --dedup off`` on it, and scores what comes back per language
and per category, beside a baseline that takes every user sentence with a first-person word as a
memory. It is a yardstick, not a test: the exit code is 0 whatever the scores.

The set: one JSON array per language, of messages
``{id, lang, category, date, assistant_before, [user_before], text, gold, [quote_must_not]}``.
``category`` is one of the fact categories (present, past, future, in_question, list,
other_people, negation, secret_in_fact) or the traps, whose gold is empty (reaction, phatic,
task_request, dangling, question, pasted, hypothetical). ``assistant_before`` is the assistant
turn the message answers (``user_before``, the request that turn answered, so the conversation
starts with the user; memories found in it are not scored). Each gold memory is
``{type, about, must, [alt_types], [must_not], [optional]}``: ``type`` a PAM memory type,
``must`` a list of groups of alternatives (lower-case stems that survive rewording into a
third-person statement in the message's language), ``optional: true`` for a memory a good
extractor may or may not write (a detail said in the same breath, a second reading).

Scoring, per message:

* A prediction is one memory with evidence on that message (a memory whose evidence names
  several messages counts once for each of them). Its text is the memory's ``statement``.
* A prediction matches a gold memory when, for every group of ``must``, one alternative appears in
  the statement (case-insensitive substring), and no ``must_not`` string does.
* Precision: predictions that match any gold memory of their message (required or ``optional``),
  over all predictions. Every prediction on a trap message (gold empty) is a false positive.
* Recall: required gold memories matched, one-to-one (a maximum matching, so one statement that
  lumps "bakes cookies and knits" together covers one gold memory, not two). ``optional`` gold
  memories never count against recall; a prediction that matches one is not a false positive.
* Typed: among matched gold memories, the share whose prediction has the gold ``type`` or one of
  its ``alt_types``. memport's own types are read as PAM's (docs/extraction.md, "In each
  format"): procedure -> instruction, decision and pitfall -> fact; a ``decision`` also counts
  as ``goal``, since PAM has no decision type.
* About: for a gold memory about someone else (``about`` is not ``user``), the first ``must``
  group names that person. A prediction that carries the rest of the fact but not the person
  ("Is allergic to peanuts" for "my husband is allergic to peanuts") is counted as misattributed.
* Leaks: each ``quote_must_not`` string found anywhere in the JSON of a memory with evidence on
  that message (statement, value, entities, ...), case-insensitive.
* Trivial share: the share of all predictions that fall on trap messages.

Usage:
    python3 benches/disclosure_eval.py [--binary target/release/memport] [--set benches/disclosure_set]
                                       [--lang en,de] [--json] [--show N] [--keep DIR]
"""

from __future__ import annotations

import argparse
import calendar
import collections
import datetime as dt
import glob
import json
import os
import re
import subprocess
import sys
import tempfile
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
LANGS = ["en", "de", "fr", "es", "cs"]
FACT_CATEGORIES = ["present", "past", "future", "in_question", "list", "other_people", "negation", "secret_in_fact"]
TRAP_CATEGORIES = ["reaction", "phatic", "task_request", "dangling", "question", "pasted", "hypothetical"]
CATEGORIES = FACT_CATEGORIES + TRAP_CATEGORIES

# memport type -> the PAM types it stands for (docs/extraction.md, "In each format").
TYPE_AS_PAM = {
    "procedure": {"instruction"},
    "decision": {"fact", "goal"},
    "pitfall": {"fact"},
}

NAMESPACE = uuid.UUID("5b0f6a52-3f4e-4d55-9a0e-6d2d6c1f0a11")

# ---------------------------------------------------------------------------
# The export
# ---------------------------------------------------------------------------

ASSISTANT_AFTER = {
    "en": ["Sure, here's what I'd suggest:\n\n1. Start small.\n2. Check back in a week.", "Got it. Here's a first draft you can adjust.",
           "Good question. Short answer: it depends, but here are the main points.", "Happy to help! Anything else?"],
    "de": ["Klar, hier ein Vorschlag:\n\n1. Klein anfangen.\n2. Nach einer Woche nachjustieren.", "Alles klar, hier ist ein erster Entwurf.",
           "Gute Frage. Kurz gesagt: Es kommt darauf an, aber hier die wichtigsten Punkte.", "Gern geschehen! Noch etwas?"],
    "fr": ["Bien sûr, voici ce que je propose :\n\n1. Commencer petit.\n2. Ajuster après une semaine.", "Compris, voici un premier jet.",
           "Bonne question. En bref : ça dépend, mais voici l'essentiel.", "Avec plaisir ! Autre chose ?"],
    "es": ["Claro, te propongo esto:\n\n1. Empieza poco a poco.\n2. Revisa en una semana.", "Entendido, aquí tienes un primer borrador.",
           "Buena pregunta. En resumen: depende, pero estos son los puntos clave.", "¡De nada! ¿Algo más?"],
    "cs": ["Jasně, navrhuji tohle:\n\n1. Začni zlehka.\n2. Po týdnu uprav.", "Rozumím, tady je první návrh.",
           "Dobrá otázka. Stručně: záleží na tom, ale tady jsou hlavní body.", "Rádo se stalo! Ještě něco?"],
}


def load_set(folder, langs):
    items = []
    for lang in langs:
        path = os.path.join(folder, f"{lang}.json")
        if not os.path.exists(path):
            sys.exit(f"disclosure_eval: no {path}")
        with open(path, encoding="utf-8") as f:
            items.extend(json.load(f))
    ids = [item["id"] for item in items]
    duplicates = [i for i, n in collections.Counter(ids).items() if n > 1]
    if duplicates:
        sys.exit(f"disclosure_eval: duplicate ids {duplicates}")
    return items


def build_export(items):
    """One ChatGPT conversation per message; returns (conversations, {message node id: item id}, context node ids)."""
    conversations = []
    target_of = {}
    context_nodes = set()
    for n, item in enumerate(items):
        day = dt.datetime.strptime(item["date"], "%Y-%m-%d").replace(hour=9, tzinfo=dt.timezone.utc)
        t = calendar.timegm(day.timetuple()) + (n % 97) * 61 + 0.123
        conv_id = str(uuid.uuid5(NAMESPACE, "conv/" + item["id"]))

        def node_id(role):
            return str(uuid.uuid5(NAMESPACE, f"{item['id']}/{role}"))

        turns = [("system", "", True)]
        if item.get("user_before"):
            turns.append(("user", item["user_before"], False))
        if item.get("assistant_before"):
            turns.append(("assistant", item["assistant_before"], False))
        turns.append(("user", item["text"], False))
        replies = ASSISTANT_AFTER.get(item["lang"], ASSISTANT_AFTER["en"])
        turns.append(("assistant", replies[n % len(replies)], False))

        mapping = {"client-created-root": {"id": "client-created-root", "message": None, "parent": None, "children": []}}
        parent = "client-created-root"
        seen_roles = collections.Counter()
        last = parent
        for k, (role, text, hidden) in enumerate(turns):
            seen_roles[role] += 1
            is_target = role == "user" and text == item["text"] and k == len(turns) - 2
            nid = node_id("target" if is_target else f"{role}{seen_roles[role]}")
            metadata = {"is_visually_hidden_from_conversation": True} if hidden else {}
            if role == "assistant":
                metadata = {"model_slug": "gpt-4o", "finish_details": {"type": "stop"}}
            message = {
                "id": nid,
                "author": {"role": role, "name": None, "metadata": {}},
                "create_time": None if role == "system" else t + k * 20,
                "update_time": None,
                "content": {"content_type": "text", "parts": [text]},
                "status": "finished_successfully",
                "end_turn": True if role == "assistant" else None,
                "weight": 0.0 if hidden else 1.0,
                "metadata": metadata,
                "recipient": "all",
                "channel": None,
            }
            mapping[nid] = {"id": nid, "message": message, "parent": parent, "children": []}
            mapping[parent]["children"].append(nid)
            if is_target:
                target_of[nid] = item["id"]
            elif role == "user":
                context_nodes.add(nid)
            parent = last = nid
        first_line = item["text"].strip().splitlines()[0]
        conversations.append({
            "id": conv_id,
            "conversation_id": conv_id,
            "title": (first_line[:48] + "…") if len(first_line) > 48 else first_line,
            "create_time": t,
            "update_time": t + len(turns) * 20,
            "current_node": last,
            "mapping": mapping,
            "moderation_results": [],
            "is_archived": False,
            "default_model_slug": "gpt-4o",
        })
    return conversations, target_of, context_nodes


# ---------------------------------------------------------------------------
# Predictions
# ---------------------------------------------------------------------------


def run_memport(binary, export_path):
    command = [binary, "inspect", "--memories", "--json", "--dedup", "off", export_path]
    proc = subprocess.run(command, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"disclosure_eval: {' '.join(command)} exited {proc.returncode}:\n{proc.stderr[-2000:]}")
    try:
        return json.loads(proc.stdout)
    except json.JSONDecodeError as e:
        sys.exit(f"disclosure_eval: inspect printed no JSON ({e}); first bytes: {proc.stdout[:300]!r}")


def memories_of(output):
    """The memory list, whatever the top level is (an object with "memories", or a list)."""
    if isinstance(output, list):
        return output
    for key in ("memories", "extracted", "items"):
        if isinstance(output.get(key), list):
            return output[key]
    sys.exit(f"disclosure_eval: no memory list in the inspect JSON (keys: {sorted(output)})")


def evidence_messages(memory):
    for ev in memory.get("evidence") or []:
        mid = ev.get("message_id") or ev.get("message") or ev.get("message_ref")
        if mid:
            yield mid


def extractor_predictions(output, target_of, context_nodes):
    """{item id: [prediction]}, and the number of memories whose evidence is on context turns only."""
    predictions = collections.defaultdict(list)
    on_context = 0
    unknown = 0
    for memory in memories_of(output):
        raw = json.dumps(memory, ensure_ascii=False)
        targets = []
        for mid in evidence_messages(memory):
            if mid in target_of and target_of[mid] not in targets:
                targets.append(target_of[mid])
            elif mid in context_nodes:
                on_context += 1
            elif mid not in target_of:
                unknown += 1
        for item_id in targets:
            predictions[item_id].append({
                "statement": memory.get("statement") or memory.get("content") or "",
                "type": memory.get("type") or memory.get("memory_type"),
                "raw": raw,
            })
    return predictions, on_context, unknown


FIRST_PERSON = {
    "en": r"\b(i|i'm|im|i've|ive|i'd|i'll|me|my|mine|myself|we|we're|we've|us|our|ours)\b",
    "de": r"\b(ich|mich|mir|mein\w*|wir|uns|unser\w*|bin|hab|habe)\b",
    "fr": r"(\b(je|moi|mon|ma|mes|me|nous|notre|nos)\b|\b[jm]['’])",
    # Spanish and Czech drop the pronoun: their common first-person verb forms count as well.
    "es": r"\b(yo|me|mi|mis|m[ií]o|m[ií]a|conmigo|nosotros|nosotras|nuestr\w*|soy|estoy|estaba|tengo|tenía|he|voy|fui|quiero|necesito|puedo|"
          r"trabajo|vivo|hablo|toco|como|bebo|hago|hice|uso|llevo|prefiero|odio|busco|creo|nací|viví|\w*[bcdfghjlmnñprstvz]é)\b",
    "cs": r"\b(já|mě|mne|mi|mně|mnou|můj|moje|mého|mému|mým|my|nás|nám|náš|naše|jsem|jsme|bych|bychom|\w*(?:ím|ám|uju|uji))\b",
}


def baseline_predictions(items):
    predictions = collections.defaultdict(list)
    for item in items:
        pattern = re.compile(FIRST_PERSON[item["lang"]], re.IGNORECASE)
        for sentence in re.split(r"(?<=[.!?…])\s+|\n+", item["text"]):
            sentence = sentence.strip()
            if sentence and pattern.search(sentence):
                predictions[item["id"]].append({"statement": sentence, "type": None, "raw": sentence})
    return predictions


# ---------------------------------------------------------------------------
# Scoring
# ---------------------------------------------------------------------------


def matches(gold, statement, groups=None):
    text = statement.lower()
    groups = gold["must"] if groups is None else groups
    if not all(any(alt.lower() in text for alt in group) for group in groups):
        return False
    return not any(bad.lower() in text for bad in gold.get("must_not", []))


def type_ok(gold, prediction_type):
    if prediction_type is None:
        return False
    accepted = {gold["type"], *gold.get("alt_types", [])}
    return bool(({prediction_type} | TYPE_AS_PAM.get(prediction_type, set())) & accepted)


def best_matching(golds, predictions):
    """Maximum one-to-one matching: most required golds, then most typed, then most optional.
    Returns {gold index: prediction index}."""
    edges = [[p for p, pred in enumerate(predictions) if matches(g, pred["statement"])] for g in golds]
    memo = {}

    def solve(i, used):
        if i == len(golds):
            return (0, 0, 0), ()
        key = (i, used)
        if key in memo:
            return memo[key]
        best_score, best_pairs = solve(i + 1, used)
        for p in edges[i]:
            if used >> p & 1:
                continue
            score, pairs = solve(i + 1, used | (1 << p))
            required = 0 if golds[i].get("optional") else 1
            typed = 1 if required and type_ok(golds[i], predictions[p]["type"]) else 0
            score = (score[0] + required, score[1] + typed, score[2] + 1 - required)
            if score > best_score:
                best_score, best_pairs = score, ((i, p),) + pairs
        memo[key] = (best_score, best_pairs)
        return memo[key]

    return dict(solve(0, 0)[1])


def score_item(item, predictions):
    golds = item["gold"]
    matching = best_matching(golds, predictions)
    correct = [any(matches(g, pred["statement"]) for g in golds) for pred in predictions]
    required = [i for i, g in enumerate(golds) if not g.get("optional")]
    matched = [i for i in required if i in matching]
    typed = [i for i in matched if type_ok(golds[i], predictions[matching[i]]["type"])]
    misattributed = 0
    for g in golds:
        if g.get("about", "user") == "user" or len(g["must"]) < 2:
            continue
        for pred in predictions:
            if matches(g, pred["statement"], g["must"][1:]) and not matches(g, pred["statement"], g["must"][:1]):
                misattributed += 1
    leaks = []
    for secret in item.get("quote_must_not", []):
        if any(secret.lower() in pred["raw"].lower() for pred in predictions):
            leaks.append(secret)
    return {
        "id": item["id"], "lang": item["lang"], "category": item["category"],
        "predictions": len(predictions), "correct": sum(correct),
        "gold": len(required), "matched": len(matched), "typed": len(typed),
        "misattributed": misattributed, "leaks": leaks, "trap": not golds,
        "missed": [golds[i] for i in required if i not in matching],
        "false_positives": [pred for pred, ok in zip(predictions, correct) if not ok],
        "matches": [{"gold": golds[i], "statement": predictions[p]["statement"], "type": predictions[p]["type"]} for i, p in sorted(matching.items())],
    }


def aggregate(rows):
    total = collections.Counter()
    for r in rows:
        total["messages"] += 1
        for key in ("predictions", "correct", "gold", "matched", "typed", "misattributed"):
            total[key] += r[key]
        total["leaks"] += len(r["leaks"])
        if r["trap"]:
            total["trap_predictions"] += r["predictions"]
    p = total["correct"] / total["predictions"] if total["predictions"] else None
    rec = total["matched"] / total["gold"] if total["gold"] else None
    f1 = 2 * p * rec / (p + rec) if p is not None and rec is not None and p + rec > 0 else (0.0 if p is not None and rec is not None else None)
    return {
        **{k: total[k] for k in ("messages", "predictions", "correct", "gold", "matched", "typed", "misattributed", "leaks", "trap_predictions")},
        "precision": p, "recall": rec, "f1": f1,
        "typed_accuracy": total["typed"] / total["matched"] if total["matched"] else None,
        "trivial_share": total["trap_predictions"] / total["predictions"] if total["predictions"] else None,
    }


def evaluate(items, predictions, typed=True):
    rows = [score_item(item, predictions.get(item["id"], [])) for item in items]
    langs = [l for l in LANGS if any(r["lang"] == l for r in rows)]
    summary = {
        "overall": aggregate(rows),
        "by_language": {l: aggregate([r for r in rows if r["lang"] == l]) for l in langs},
        "by_category": {c: aggregate([r for r in rows if r["category"] == c]) for c in CATEGORIES if any(r["category"] == c for r in rows)},
        "by_language_category": {f"{l}/{c}": aggregate([r for r in rows if r["lang"] == l and r["category"] == c])
                                 for l in langs for c in CATEGORIES if any(r["lang"] == l and r["category"] == c for r in rows)},
    }
    if not typed:  # the baseline has no types: its typed accuracy is not a number
        for group in [summary["overall"], *summary["by_language"].values(), *summary["by_category"].values(), *summary["by_language_category"].values()]:
            group["typed_accuracy"] = None
    return rows, summary


# ---------------------------------------------------------------------------
# Output
# ---------------------------------------------------------------------------


def fmt(x):
    return "   —" if x is None else f"{x:.2f}"


def table(title, groups, base):
    lines = [f"\n{title}", "",
             "| group | msgs | gold | pred | P | R | F1 | typed | misattr | leaks | trivial | base pred | base P | base R | base F1 | base leaks |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for name, s in groups.items():
        b = base[name]
        lines.append(f"| {name} | {s['messages']} | {s['gold']} | {s['predictions']} | {fmt(s['precision'])} | {fmt(s['recall'])} | {fmt(s['f1'])} | "
                     f"{fmt(s['typed_accuracy'])} | {s['misattributed']} | {s['leaks']} | {fmt(s['trivial_share'])} | "
                     f"{b['predictions']} | {fmt(b['precision'])} | {fmt(b['recall'])} | {fmt(b['f1'])} | {b['leaks']} |")
    return "\n".join(lines)


def category_matrix(summary, key):
    langs = [l for l in LANGS if l in summary["by_language"]]
    lines = [f"\n{key} by category and language (traps: false positives)", "", "| category | " + " | ".join(langs) + " | all |",
             "|---|" + "---:|" * (len(langs) + 1)]
    for c in summary["by_category"]:
        cells = []
        for l in langs + [None]:
            s = summary["by_category"][c] if l is None else summary["by_language_category"].get(f"{l}/{c}")
            if s is None:
                cells.append("")
            elif c in TRAP_CATEGORIES:
                cells.append(f"{s['predictions']} FP")
            else:
                cells.append(fmt(s[key]))
        lines.append(f"| {c} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def show(rows, items_by_id, n, label):
    out = [f"\n{label}: misses (first {n})"]
    misses = [(r, g) for r in rows for g in r["missed"]]
    for r, g in misses[:n]:
        out.append(f"  {r['id']} [{r['category']}] {g['type']} must={g['must']}  «{short(items_by_id[r['id']]['text'])}»")
        preds = [m for m in r["false_positives"]] + [{"statement": m["statement"], "type": m["type"]} for m in r["matches"]]
        for p in preds[:4]:
            out.append(f"        got: {p['type']}: {p['statement']}")
    out.append(f"\n{label}: false positives (first {n})")
    fps = [(r, p) for r in rows for p in r["false_positives"]]
    for r, p in fps[:n]:
        out.append(f"  {r['id']} [{r['category']}] {p['type']}: {p['statement']}  «{short(items_by_id[r['id']]['text'])}»")
    leaks = [(r, s) for r in rows for s in r["leaks"]]
    if leaks:
        out.append(f"\n{label}: leaks")
        for r, s in leaks:
            out.append(f"  {r['id']} [{r['category']}] {s}")
    return "\n".join(out)


def lean(row):
    """A scored message for --json: the false positives without their raw memory JSON."""
    return {**row, "false_positives": [{"statement": p["statement"], "type": p["type"]} for p in row["false_positives"]]}


def short(text, n=90):
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--binary", default="target/release/memport")
    ap.add_argument("--set", default=os.path.join(HERE, "disclosure_set"), help="folder of {lang}.json files")
    ap.add_argument("--lang", default=",".join(LANGS), help="comma-separated languages (default: all)")
    ap.add_argument("--json", action="store_true", help="print the scores as JSON")
    ap.add_argument("--show", type=int, default=0, metavar="N", help="list the first N misses and false positives")
    ap.add_argument("--show-baseline", action="store_true", help="with --show: list the baseline's as well")
    ap.add_argument("--keep", metavar="DIR", help="write the export and memport's output here and keep them")
    args = ap.parse_args()

    if not os.path.exists(args.binary):
        sys.exit(f"disclosure_eval: no binary at {args.binary} (build it, or give --binary)")
    items = load_set(args.set, [l.strip() for l in args.lang.split(",") if l.strip()])
    items_by_id = {item["id"]: item for item in items}
    conversations, target_of, context_nodes = build_export(items)
    workdir = args.keep or tempfile.mkdtemp(prefix="memport-disclosure-")
    os.makedirs(workdir, exist_ok=True)
    export_path = os.path.join(workdir, "conversations.json")
    with open(export_path, "w", encoding="utf-8") as f:
        json.dump(conversations, f)
    output = run_memport(args.binary, export_path)
    if args.keep:
        with open(os.path.join(workdir, "inspect.json"), "w", encoding="utf-8") as f:
            json.dump(output, f, ensure_ascii=False, indent=1)
    else:
        os.remove(export_path)
        os.rmdir(workdir)

    predicted, on_context, unknown = extractor_predictions(output, target_of, context_nodes)
    rows, summary = evaluate(items, predicted)
    base_rows, base_summary = evaluate(items, baseline_predictions(items), typed=False)
    counts = output.get("counts", {}) if isinstance(output, dict) else {}

    if args.json:
        json.dump({
            "binary": args.binary, "messages": len(items),
            "extractor": summary, "baseline": base_summary,
            "memories_on_context_turns": on_context, "evidence_on_unknown_messages": unknown,
            "inspect_counts": counts,
            "messages_detail": [lean(r) for r in rows],
        }, sys.stdout, ensure_ascii=False, indent=1, default=str)
        print()
        return 0

    print(f"disclosure set: {len(items)} messages, {summary['overall']['gold']} required gold memories; binary {args.binary}")
    print(table("By language (extractor, then baseline: every first-person user sentence)",
                {**summary["by_language"], "all": summary["overall"]}, {**base_summary["by_language"], "all": base_summary["overall"]}))
    print(table("By category", {**summary["by_category"], "all": summary["overall"]}, {**base_summary["by_category"], "all": base_summary["overall"]}))
    print(category_matrix(summary, "f1"))
    print(category_matrix(base_summary, "f1").replace("f1 by category", "baseline f1 by category", 1))
    print(f"\nmemories from context turns (not scored): {on_context}; evidence on unknown messages: {unknown}")
    if counts:
        print("inspect counts: " + ", ".join(f"{k} {v}" for k, v in counts.items() if not isinstance(v, dict)))
    if args.show:
        print(show(rows, items_by_id, args.show, "extractor"))
        if args.show_baseline:
            print(show(base_rows, items_by_id, args.show, "baseline"))
    return 0


if __name__ == "__main__":
    try:
        main()
    except BrokenPipeError:
        pass
    sys.exit(0)
