#!/usr/bin/env python3
"""The user turns of a ChatGPT export as ``benches/extraction.rs`` reads them (a helper).

Writes one JSON object a line: ``{"user": TEXT, "assistant": TEXT or null, "time": SECONDS}``,
the user's text and the assistant's turn before it (extraction reads a like that repeats the
assistant as a reaction), for every user text turn: conversations in file order, each one's
turns in the order they were written.
The export is read whole, so give it one of the generated ones:

    python3 benches/gen_chatgpt.py --size 256M --out /tmp/memport-bench/chatgpt-256M-seed1
    python3 benches/extraction_texts.py /tmp/memport-bench/chatgpt-256M-seed1/conversations.json \\
        > /tmp/memport-bench/user-turns-256M.ndjson
"""

from __future__ import annotations

import argparse
import json
import sys


def text_of(message: dict) -> str | None:
    content = message.get("content") or {}
    if content.get("content_type") not in ("text", "multimodal_text"):
        return None
    parts = [part for part in content.get("parts") or [] if isinstance(part, str)]
    text = "\n".join(parts)
    return text if text.strip() else None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("export", help="a ChatGPT conversations.json")
    args = parser.parse_args()
    with open(args.export, encoding="utf-8") as file:
        conversations = json.load(file)
    out = sys.stdout
    for conversation in conversations:
        # The nodes in the order their messages were written, as the export's tree gives them.
        nodes = [node for node in (conversation.get("mapping") or {}).values() if node.get("message")]
        nodes.sort(key=lambda node: node["message"].get("create_time") or 0)
        assistant = None
        for node in nodes:
            message = node["message"]
            role = (message.get("author") or {}).get("role")
            text = text_of(message)
            if text is None:
                continue
            if role == "assistant":
                assistant = text
            elif role == "user":
                record = {"user": text, "assistant": assistant, "time": message.get("create_time") or 0}
                out.write(json.dumps(record, ensure_ascii=False) + "\n")
                assistant = None
    return 0


if __name__ == "__main__":
    sys.exit(main())
