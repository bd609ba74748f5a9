"""Drives `memport serve` with the official MCP Python SDK's client, as an MCP host does: lists
the tools, then recalls, remembers, gets, revises and forgets, checking each answer.
Run by tests/mcp_client.rs as `python tests/mcp_client.py MEMPORT STORE` (stdio: `memport serve
STORE --mcp`) or `python tests/mcp_client.py --http URL TOKEN READ_TOKEN` (MCP's streamable HTTP
transport at URL, with a token that grants writing, then with one that grants reading only);
exits non-zero with the first failed check. Prints one JSON line of what it saw, for the Rust
side to check the store against.
"""

import asyncio
import json
import sys

import httpx2
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

TOOLS = {"ump.capabilities", "ump.recall", "ump.remember", "ump.get", "ump.revise", "ump.forget"}


def check(condition, message):
    if not condition:
        raise SystemExit(f"mcp_client: {message}")


async def call(session, name, arguments):
    result = await session.call_tool(name, arguments)
    return result


async def main(memport, store):
    server = StdioServerParameters(command=memport, args=["serve", store, "--mcp"])
    async with stdio_client(server) as (read, write):
        async with ClientSession(read, write) as session:
            seen = await check_session(session)
    print(json.dumps(seen))


def http_client(token):
    return httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30)


async def main_http(url, token, read_token):
    async with http_client(token) as client, streamable_http_client(url, http_client=client) as streams:
        async with ClientSession(streams[0], streams[1]) as session:
            seen = await check_session(session)
    # A token that grants reading only: the writing tools answer `unsupported`.
    async with http_client(read_token) as client, streamable_http_client(url, http_client=client) as streams:
        async with ClientSession(streams[0], streams[1]) as session:
            await session.initialize()
            recalled = await call(session, "ump.recall", {"query": "where does the user live", "limit": 1})
            check(not recalled.is_error, f"recall with a read token: {recalled.content}")
            refused = await call(session, "ump.remember", {"record": {"kind": "semantic", "body": {"text": "Should not be stored"}}})
            check(refused.is_error and refused.structured_content["error"]["code"] == "unsupported", f"remember with a read token: {refused}")
    print(json.dumps(seen))


async def check_session(session):
    """The checks on one session that may write; what it erased and tombstoned."""
    await session.initialize()
    tools = {tool.name for tool in (await session.list_tools()).tools}
    check(TOOLS <= tools, f"the six UMP tools are listed, got {sorted(tools)}")

    capabilities = (await call(session, "ump.capabilities", {})).structured_content
    check(capabilities["ump"] == "0.1" and capabilities["writable"], f"capabilities: {capabilities}")

    # A memory extracted from the bundled ChatGPT example: the user lives in York.
    recalled = await call(session, "ump.recall", {"query": "where does the user live", "limit": 5})
    check(not recalled.is_error, f"recall failed: {recalled.content}")
    results = recalled.structured_content["results"]
    texts = [result["record"]["body"]["text"] for result in results]
    check(texts and texts[0] == "Lives in York", f"the current home ranks first: {texts}")
    check("Lives in Leeds" not in texts, f"the superseded home is not current: {texts}")
    signals = results[0]["signals"]
    check({"similarity", "recency", "salience"} <= set(signals), f"UMP's signal names: {signals}")
    framed = recalled.content[0].text
    check("untrusted" in framed and "<untrusted-memory-records" in framed, "recalled records are framed as untrusted data")

    remembered = await call(
        session, "ump.remember", {"record": {"kind": "semantic", "body": {"text": "Prefers green tea in the morning"}}}
    )
    check(not remembered.is_error, f"remember failed: {remembered.content}")
    record_id = remembered.structured_content["id"]
    check(remembered.structured_content["result"] == "created", f"remember: {remembered.structured_content}")
    again = await call(session, "ump.remember", {"record": {"kind": "semantic", "body": {"text": "Prefers green tea in the morning"}}})
    check(again.structured_content == {"id": record_id, "result": "merged"}, f"remember again: {again.structured_content}")

    got = (await call(session, "ump.get", {"id": record_id})).structured_content["record"]
    check(got["body"]["text"] == "Prefers green tea in the morning" and got["lifecycle"]["status"] == "active", f"get: {got}")

    revised = await call(session, "ump.revise", {"id": record_id, "patch": {"body": {"text": "Prefers black coffee in the morning"}}})
    check(not revised.is_error, f"revise failed: {revised.content}")
    successor = revised.structured_content["id"]
    check(revised.structured_content["supersedes"] == [record_id], f"revise: {revised.structured_content}")
    old = (await call(session, "ump.get", {"id": record_id})).structured_content["record"]
    check(old["superseded_by"] == [successor] and old["time"]["valid_to"], f"the old record is kept, superseded: {old}")
    morning = (await call(session, "ump.recall", {"query": "morning", "limit": 5})).structured_content["results"]
    check([r["record"]["body"]["text"] for r in morning][:1] == ["Prefers black coffee in the morning"], f"recall after revise: {morning}")

    forgotten = await call(session, "ump.forget", {"id": successor, "reason": "user_revoked"})
    check(forgotten.structured_content == {"result": "tombstoned"}, f"forget: {forgotten.structured_content}")
    after = (await call(session, "ump.recall", {"query": "coffee", "limit": 5})).structured_content["results"]
    check(all(r["record"]["id"] != successor for r in after), "a tombstoned record is not recalled")

    erased = await call(session, "ump.forget", {"id": record_id, "reason": "erasure request", "hard": True})
    check(erased.structured_content == {"result": "erased"}, f"hard forget: {erased.structured_content}")
    missing = await call(session, "ump.get", {"id": record_id})
    check(missing.is_error and missing.structured_content["error"]["code"] == "not_found", f"get after erasure: {missing}")

    invalid = await call(session, "ump.remember", {"record": {"kind": "opinion", "body": {"text": "x"}}})
    check(invalid.is_error and invalid.structured_content["error"]["code"] == "invalid_record", f"an unknown kind: {invalid}")
    return {"erased": record_id, "tombstoned": successor}


if __name__ == "__main__":
    if sys.argv[1] == "--http":
        asyncio.run(main_http(sys.argv[2], sys.argv[3], sys.argv[4]))
    else:
        asyncio.run(main(sys.argv[1], sys.argv[2]))
