#!/usr/bin/env python3
"""Measures extraction quality on the evaluation set made by ``benches/gen_dialogues.py``:
precision, recall and F1 per memory type and per language, for memport's rules and for the
baseline (every first-person sentence of the user taken as a memory).

A prediction is one piece of evidence of a memory from ``memport inspect --memories --dedup off --json``
(message, type, statement). It matches an expected memory of the same message when the types
agree and the expected value appears in the statement (case-insensitive). The untyped score
ignores the type; the baseline can only be scored untyped.

Usage: python3 benches/extraction_eval.py [--binary target/release/memport] [--set /tmp/memport-eval]
"""

import argparse
import collections
import json
import os
import re
import subprocess
import sys

FIRST_PERSON = re.compile(
    r"\b(i|i'm|my|me|ich|mein|meine|mir|mich|je|j'|mon|ma|mes|yo|mi|mis|me|já|jsem|můj|moje|mám)\b|^(?:bydlím|vivo|soy|prefiero|učím|nejím|preferuji|používám)\b",
    re.IGNORECASE,
)


def user_sentences(conversations):
    for conversation in conversations:
        for node_id, node in conversation["mapping"].items():
            message = node.get("message")
            if not message or message["author"]["role"] != "user":
                continue
            text = message["content"]["parts"][0]
            for sentence in re.split(r"(?<=[.!?])\s+|\n", text):
                yield conversation["id"], node_id, sentence


def score(predicted, expected, typed):
    """(precision, recall, f1, matched predictions, predictions, matched expected, expected)."""
    key = (lambda item: (item["message_id"], item["type"])) if typed else (lambda item: (item["message_id"],))
    by_key = collections.defaultdict(list)
    for item in expected:
        by_key[key(item)].append(item)
    matched_expected = set()
    matched_predictions = 0
    for prediction in predicted:
        hit = next(
            (id(item) for item in by_key.get(key(prediction), []) if item["value"].lower() in prediction["statement"].lower() and id(item) not in matched_expected),
            None,
        )
        if hit is not None:
            matched_expected.add(hit)
            matched_predictions += 1
    precision = matched_predictions / len(predicted) if predicted else 1.0
    recall = len(matched_expected) / len(expected) if expected else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return precision, recall, f1, len(predicted), len(expected)


def row(label, result):
    precision, recall, f1, predictions, expected = result
    return f"| {label} | {precision:.2f} | {recall:.2f} | {f1:.2f} | {predictions} | {expected} |"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--binary", default="target/release/memport")
    ap.add_argument("--set", default="/tmp/memport-eval", help="folder made by gen_dialogues.py (made when missing)")
    ap.add_argument("--varied", action="store_true", help="make the set with the everyday phrasings (gen_dialogues.py --varied)")
    args = ap.parse_args()
    if not os.path.exists(os.path.join(args.set, "gold.json")):
        command = [sys.executable, os.path.join(os.path.dirname(__file__), "gen_dialogues.py"), "--out", args.set]
        subprocess.run(command + (["--varied"] if args.varied else []), check=True)
    expected = json.load(open(os.path.join(args.set, "gold.json"), encoding="utf-8"))
    conversations = json.load(open(os.path.join(args.set, "conversations.json"), encoding="utf-8"))
    language_of = {item["conversation_id"]: item["language"] for item in expected}
    # The gold labels are per message and the set repeats messages: every copy is read.
    command = [args.binary, "inspect", "--memories", "--dedup", "off", "--json", os.path.join(args.set, "conversations.json")]
    output = subprocess.run(command, check=True, capture_output=True, text=True)
    preview = json.loads(output.stdout)
    predicted = [
        {"conversation_id": evidence["conversation_id"], "message_id": evidence["message_id"], "type": memory["type"], "statement": memory["statement"]}
        for memory in preview["memories"]
        for evidence in memory["evidence"]
    ]
    baseline = [
        {"conversation_id": conversation_id, "message_id": message_id, "type": "fact", "statement": sentence}
        for conversation_id, message_id, sentence in user_sentences(conversations)
        if FIRST_PERSON.search(sentence)
    ]
    print("| set | precision | recall | F1 | predicted | expected |")
    print("|---|---:|---:|---:|---:|---:|")
    print(row("memport, typed", score(predicted, expected, True)))
    print(row("memport, untyped", score(predicted, expected, False)))
    print(row("baseline (every first-person sentence), untyped", score(baseline, expected, False)))
    print()
    print("| type | precision | recall | F1 | predicted | expected |")
    print("|---|---:|---:|---:|---:|---:|")
    for memory_type in sorted({item["type"] for item in expected}):
        subset = lambda items: [item for item in items if item["type"] == memory_type]
        print(row(memory_type, score(subset(predicted), subset(expected), True)))
    print()
    print("| language | precision | recall | F1 | predicted | expected |")
    print("|---|---:|---:|---:|---:|---:|")
    for language in sorted(set(language_of.values())):
        subset = lambda items: [item for item in items if language_of.get(item["conversation_id"]) == language]
        print(row(language, score(subset(predicted), subset(expected), True)))


if __name__ == "__main__":
    main()
