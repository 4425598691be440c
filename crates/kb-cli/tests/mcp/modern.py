"""Drives kb's MCP server with the official MCP Python SDK's high-level `Client`, which
negotiates the newest protocol (2026-07-28: `server/discover`, no session, and
`subscriptions/listen` instead of resources/subscribe):

    modern.py stdio <kb-binary> <vault>
    modern.py http <url> <token> <vault>

Checks the negotiated version, a capture with the client's own classification (on disk),
a tool error, a resource read, a prompt, and a listen stream that hears an edit made
outside kb and a change made through kb. Exits 0 when every check passed, else prints the
failures and exits 1. Run by crates/kb-cli/tests/e2e/mcp_python.rs.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

MODERN = "2026-07-28"
HEARD_WITHIN = 15.0
failures: list[str] = []


def check(ok: Any, what: str) -> None:
    if not ok:
        failures.append(what)
        print(f"FAILED: {what}", flush=True)


async def events(subscription: Any, wanted: int) -> list[Any]:
    heard: list[Any] = []

    async def consume() -> None:
        async for event in subscription:
            heard.append(event)
            if len(heard) >= wanted:
                return

    try:
        await asyncio.wait_for(consume(), HEARD_WITHIN)
    except TimeoutError:
        pass
    return heard


def describe(event: Any) -> str:
    return f"{type(event).__name__}:{getattr(event, 'uri', '')}"


async def scenario(client: Client, vault: Path) -> None:
    check(client.session.protocol_version == MODERN, f"negotiated {client.session.protocol_version}, not {MODERN}")

    filed = await client.call_tool(
        "classify_and_capture",
        {
            "text": "Met Priya Raman at the robotics meetup",
            "classification": {"category": "people", "confidence": 0.9, "name": "Priya Raman"},
        },
    )
    check(not filed.is_error, f"capture failed: {filed.content}")
    check((filed.structured_content or {}).get("path") == "people/priya-raman.md", f"filed at {filed.structured_content}")
    entry = vault / "people" / "priya-raman.md"
    check(entry.exists() and "source: mcp" in entry.read_text(), "the capture is not on disk with source: mcp")

    missing = await client.call_tool("get_entry", {"path": "people/nobody.md"})
    check(missing.is_error and "not found" in missing.content[0].text, f"not found: {missing}")

    read = await client.read_resource("kb://entries/people/priya-raman")
    check(read.contents[0].text == entry.read_text(), "the resource is not the file on disk")
    prompt = await client.get_prompt("capture", {"text": "call the plumber"})
    check("call the plumber" in prompt.messages[0].content.text, "the capture prompt lost the text")

    uri = "kb://entries/people/priya-raman"
    async with client.listen(resources_list_changed=True, resource_subscriptions=[uri]) as subscription:
        honored = subscription.honored
        check(honored.resources_list_changed, f"resourcesListChanged not honored: {honored}")
        check(list(honored.resource_subscriptions or []) == [uri], f"subscription not honored: {honored}")

        entry.write_text(entry.read_text() + "She is moving to MIT.\n")
        heard = [describe(e) for e in await events(subscription, 2)]
        check(f"ResourceUpdated:{uri}" in heard, f"an outside edit was not heard: {heard}")
        check(any(h.startswith("ResourcesListChanged") for h in heard), f"no list change heard: {heard}")

        await asyncio.sleep(0.5)
        updated = await client.call_tool("update_entry", {"path": "Priya", "updates": {"context": "robotics"}})
        check(not updated.is_error, f"update failed: {updated.content}")
        heard = [describe(e) for e in await events(subscription, 2)]
        check(f"ResourceUpdated:{uri}" in heard, f"kb's own change was not heard: {heard}")


async def main(argv: list[str]) -> int:
    mode = argv[1]
    if mode == "stdio":
        binary, vault = argv[2], Path(argv[3])
        server: Any = StdioServerParameters(command=binary, args=["mcp"], env={"KB_DIR": str(vault)})
    else:
        url, token, vault = argv[2], argv[3], Path(argv[4])
        http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
        server = streamable_http_client(url, http_client=http)
    async with Client(server) as client:
        await scenario(client, vault)
    if failures:
        print(f"{len(failures)} check(s) failed", flush=True)
        return 1
    print("all checks passed", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv)))
