"""Drives kb's MCP server with the official MCP Python SDK (PyPI `mcp`, 2.3.0), as an
assistant that knows nothing of kb would: over stdio against `kb mcp`, or over streamable
HTTP against `kb serve` at /mcp.

    client.py stdio <kb-binary> <vault>
    client.py http <url> <token> <vault>

The vault is prepared before kb starts: 120 idea entries (so resources/list takes two
pages) and two people named Sam (people/sam-lee.md, people/sam-ortiz.md), so that "Sam"
is ambiguous. The script runs one scenario — the handshake, every tool, each kind of
error, the resources, subscriptions, the prompts — checking what a person would notice,
on the wire and on disk. It prints every failed check and exits 1 if there was any, 0
when all passed. Run by crates/kb-cli/tests/e2e/mcp_python.rs.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
import traceback
import warnings
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, AsyncIterator

import httpx2
import mcp.types as types
from mcp import ClientSession, MCPDeprecationWarning, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

# resources/subscribe is deprecated from the 2026 protocol on; kb negotiates 2025-11-25,
# where it is how a client subscribes.
warnings.filterwarnings("ignore", category=MCPDeprecationWarning)

INVALID_PARAMS = -32602
RESOURCE_NOT_FOUND = -32002

TOOLS = {
    "classify_and_capture",
    "list_entries",
    "get_entry",
    "generate_digest",
    "update_entry",
    "move_entry",
    "search_entries",
    "delete_entry",
    "undo_last_change",
    "find_duplicates",
    "merge_entries",
    "build_context",
    "resolve_conflict",
}
READ_ONLY = {"list_entries", "get_entry", "search_entries", "generate_digest", "find_duplicates", "build_context"}
DESTRUCTIVE = {"delete_entry", "merge_entries", "resolve_conflict"}
CATEGORIES = ("people", "projects", "ideas", "admin", "inbox")

# How long a notification may take to arrive after an edit, and how long to listen for
# one that must not come.
NOTIFY_TIMEOUT = 15.0
QUIET_PERIOD = 2.0

failures: list[str] = []


def check(ok: Any, what: str) -> bool:
    """Records a failed check (the scenario goes on) and answers whether it passed."""
    if not ok:
        failures.append(what)
        print(f"FAILED: {what}", flush=True)
    return bool(ok)


class Abort(Exception):
    """A check the rest of a step depends on failed."""


def require(ok: Any, what: str) -> None:
    if not check(ok, what):
        raise Abort(what)


# ---------------------------------------------------------------------------------------
# The vault on disk


class Vault:
    def __init__(self, root: str) -> None:
        self.root = Path(root)

    def path(self, rel: str) -> Path:
        return self.root / rel

    def exists(self, rel: str) -> bool:
        return self.path(rel).is_file()

    def read(self, rel: str) -> str:
        return self.path(rel).read_text(encoding="utf-8")

    def read_bytes(self, rel: str) -> bytes:
        return self.path(rel).read_bytes()

    def entry_files(self) -> list[str]:
        """Every `{category}/*.md`, relative and sorted."""
        files = []
        for category in CATEGORIES:
            folder = self.root / category
            if folder.is_dir():
                files.extend(f"{category}/{p.name}" for p in folder.iterdir() if p.name.endswith(".md") and p.is_file())
        return sorted(files)

    def snapshot(self) -> dict[str, bytes]:
        """Every file a person sees in the vault (kb's own hidden folder left out)."""
        files = {}
        for p in self.root.rglob("*"):
            rel = p.relative_to(self.root)
            if p.is_file() and not any(part.startswith(".") for part in rel.parts):
                files[rel.as_posix()] = p.read_bytes()
        return files


def diff(before: dict[str, bytes], after: dict[str, bytes]) -> str:
    changed = sorted(k for k in before.keys() & after.keys() if before[k] != after[k])
    added = sorted(after.keys() - before.keys())
    removed = sorted(before.keys() - after.keys())
    return f"added {added}, removed {removed}, changed {changed}"


# ---------------------------------------------------------------------------------------
# Notifications the server sends


class Inbox:
    """Every notification the session hears, in order."""

    def __init__(self) -> None:
        self.items: list[tuple[float, str, str | None]] = []
        self.transport_errors: list[str] = []

    async def handle(self, message: Any) -> None:
        if isinstance(message, Exception):
            self.transport_errors.append(repr(message))
            return
        root = getattr(message, "root", message)
        method = getattr(root, "method", type(root).__name__)
        params = getattr(root, "params", None)
        uri = getattr(params, "uri", None) if params is not None else None
        self.items.append((time.monotonic(), method, str(uri) if uri is not None else None))

    def mark(self) -> int:
        return len(self.items)

    def since(self, mark: int) -> list[tuple[str, str | None]]:
        return [(method, uri) for _, method, uri in self.items[mark:]]

    async def wait_for(self, mark: int, wanted: tuple[str, str | None], timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if wanted in self.since(mark):
                return True
            await asyncio.sleep(0.05)
        return wanted in self.since(mark)


UPDATED = "notifications/resources/updated"
LIST_CHANGED = "notifications/resources/list_changed"


# ---------------------------------------------------------------------------------------
# Helpers over the session


def text_of(result: types.CallToolResult, index: int = 0) -> str:
    if len(result.content) <= index:
        return ""
    block = result.content[index]
    return getattr(block, "text", "") or ""


async def call_ok(session: ClientSession, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """Calls a tool that must succeed (the SDK checks structuredContent against its
    outputSchema) and answers its structured content."""
    try:
        result = await session.call_tool(name, arguments)
    except RuntimeError as error:
        # The SDK's output-schema validation (or another client-side refusal).
        require(False, f"{name} {json.dumps(arguments)}: the SDK refused the result: {error}")
        raise  # not reached: require raised
    except MCPError as error:
        require(False, f"{name} {json.dumps(arguments)}: protocol error {error.code}: {error.message}")
        raise  # not reached: require raised
    require(
        not result.is_error,
        f"{name} {json.dumps(arguments)}: isError with {[getattr(c, 'text', c) for c in result.content]}",
    )
    data = result.structured_content
    require(isinstance(data, dict), f"{name}: structuredContent is an object, got {data!r}")
    # The same data as text, for clients that read content only.
    check(
        result.content and json.loads(text_of(result)) == data,
        f"{name}: content[0] is the structured content as JSON text, got {text_of(result)!r}",
    )
    return data  # type: ignore[return-value]


async def call_error(
    session: ClientSession, vault: Vault, name: str, arguments: dict[str, Any], says: str
) -> types.CallToolResult | None:
    """Calls a tool that must fail as a tool result (isError, not a protocol error) whose
    first text contains `says`, and must change nothing on disk."""
    before = vault.snapshot()
    label = f"{name} {json.dumps(arguments)}"
    try:
        result = await session.call_tool(name, arguments)
    except Exception as error:  # noqa: BLE001 - any exception is the failure being reported
        check(False, f"{label}: a tool result with isError expected, got {type(error).__name__}: {error}")
        return None
    message = text_of(result)
    check(result.is_error is True, f"{label}: isError true expected, got {result.is_error} ({message!r})")
    check(says.lower() in message.lower(), f"{label}: the message should say {says!r}, got {message!r}")
    check(result.structured_content is None, f"{label}: no structuredContent on an error, got {result.structured_content!r}")
    after = vault.snapshot()
    check(before == after, f"{label}: the vault changed on a failing call: {diff(before, after)}")
    return result


async def settle(session: ClientSession, vault: Vault, timeout: float = 10.0) -> bool:
    """Waits until kb's index file on disk (written in the background, a moment after a
    change) is what kb://index says; answers whether it got there."""
    deadline = time.monotonic() + timeout
    while True:
        read = await session.read_resource("kb://index")
        text = getattr(read.contents[0], "text", None) if read.contents else None
        on_disk = vault.read("index.md") if vault.exists("index.md") else None
        if text is not None and text == on_disk:
            return True
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.1)


async def expect_mcp_error(coro: Any, code: int | None, label: str) -> MCPError | None:
    try:
        await coro
    except MCPError as error:
        if code is not None:
            check(error.code == code, f"{label}: error code {code} expected, got {error.code} ({error.message})")
        check(bool(error.message), f"{label}: the error has a message")
        return error
    except Exception as error:  # noqa: BLE001
        check(False, f"{label}: MCPError expected, got {type(error).__name__}: {error}")
        return None
    check(False, f"{label}: MCPError expected, but the request succeeded")
    return None


# ---------------------------------------------------------------------------------------
# The scenario, step by step


async def step_initialize(session: ClientSession) -> None:
    init = await session.initialize()
    check(init.server_info.name == "kb", f"server name 'kb', got {init.server_info.name!r}")
    caps = init.capabilities
    check(caps.tools is not None, f"the tools capability, got {caps}")
    check(caps.prompts is not None, f"the prompts capability, got {caps}")
    require(caps.resources is not None, f"the resources capability, got {caps}")
    check(caps.resources.subscribe is True, f"resources.subscribe true, got {caps.resources}")
    check(caps.resources.list_changed is True, f"resources.listChanged true, got {caps.resources}")
    check(bool(init.instructions) and "kb" in init.instructions, f"instructions about kb, got {init.instructions!r}")


async def step_list_tools(session: ClientSession) -> None:
    listed = await session.list_tools()
    names = [tool.name for tool in listed.tools]
    check(sorted(names) == sorted(TOOLS) and len(names) == len(TOOLS), f"exactly the {len(TOOLS)} tools, got {names}")
    check(listed.next_cursor is None, f"all tools on one page, got cursor {listed.next_cursor!r}")
    for tool in listed.tools:
        schema = tool.input_schema or {}
        check(schema.get("type") == "object", f"{tool.name}: inputSchema type object, got {schema.get('type')!r}")
        check(isinstance(schema.get("properties"), dict), f"{tool.name}: inputSchema has properties")
        out = tool.output_schema
        check(isinstance(out, dict) and out.get("type") == "object", f"{tool.name}: outputSchema of type object, got {out!r}")
        check(bool(tool.description), f"{tool.name}: a description")
        ann = tool.annotations
        if not check(ann is not None, f"{tool.name}: annotations"):
            continue
        check(
            ann.read_only_hint is (tool.name in READ_ONLY),
            f"{tool.name}: readOnlyHint {tool.name in READ_ONLY}, got {ann.read_only_hint}",
        )
        check(
            ann.open_world_hint is (tool.name == "classify_and_capture"),
            f"{tool.name}: openWorldHint only for a capture (a link's page), got {ann.open_world_hint}",
        )
        if tool.name in DESTRUCTIVE:
            check(ann.destructive_hint is True, f"{tool.name}: destructiveHint true, got {ann.destructive_hint}")
        elif tool.name not in READ_ONLY:
            check(ann.destructive_hint is not True, f"{tool.name}: not destructive, got {ann.destructive_hint}")
    capture = next((tool for tool in listed.tools if tool.name == "classify_and_capture"), None)
    require(capture is not None, "classify_and_capture is listed")
    props = capture.input_schema.get("properties", {})
    check("classification" in props, f"classify_and_capture takes a classification, got {sorted(props)}")
    check("text" in capture.input_schema.get("required", []), "classify_and_capture requires text")


async def step_tools(session: ClientSession, vault: Vault, state: dict[str, Any]) -> None:
    # A capture with the assistant's own classification: filed where it said, marked as
    # coming from MCP.
    data = await call_ok(
        session,
        "classify_and_capture",
        {
            "text": "Met Priya Raman at the robotics meetup",
            "classification": {
                "category": "people",
                "confidence": 0.95,
                "name": "Priya Raman",
                "fields": {"context": "robotics meetup"},
            },
        },
    )
    require(data.get("path") == "people/priya-raman.md", f"Priya filed at people/priya-raman.md, got {data}")
    check(data.get("category") == "people" and data.get("name") == "Priya Raman", f"capture answer: {data}")
    check(data.get("clarificationNeeded") is False, f"a confident capture needs no clarification: {data}")
    require(vault.exists("people/priya-raman.md"), "people/priya-raman.md exists on disk")
    priya = vault.read("people/priya-raman.md")
    check("source: mcp" in priya, f"the file says source: mcp:\n{priya}")
    check("name: Priya Raman" in priya, f"the file names Priya Raman:\n{priya}")
    check("robotics meetup" in priya, f"the file keeps the context:\n{priya}")
    check(priya.startswith("---\n"), f"the file starts with frontmatter:\n{priya}")

    # Without a classification: kb's own (offline) classifier files it.
    data = await call_ok(session, "classify_and_capture", {"text": "Renew passport by Dec 15 [admin]"})
    path = data.get("path", "")
    check(isinstance(path, str) and path.split("/")[0] in CATEGORIES and path.endswith(".md"), f"filed somewhere: {data}")
    check(vault.exists(path), f"{path} exists on disk")
    check(path.startswith("admin/"), f"the [admin] hint files it in admin/, got {path}")
    if vault.exists(path):
        check("Renew passport" in vault.read(path), f"{path} holds the text:\n{vault.read(path)}")

    # An unsure caller: the inbox, and kb asks.
    data = await call_ok(
        session,
        "classify_and_capture",
        {
            "text": "Look into widgets sometime",
            "classification": {"category": "ideas", "confidence": 0.3, "name": "Widgets"},
        },
    )
    inbox_path = data.get("path", "")
    require(inbox_path.startswith("inbox/"), f"a confidence of 0.3 goes to inbox/, got {data}")
    check(data.get("clarificationNeeded") is True, f"clarificationNeeded true: {data}")
    check(data.get("category") == "inbox", f"category inbox: {data}")
    check(vault.exists(inbox_path), f"{inbox_path} exists on disk")

    # list_entries
    data = await call_ok(session, "list_entries", {"category": "people"})
    people = sorted(e.get("path") for e in data.get("entries", []))
    check(
        people == ["people/priya-raman.md", "people/sam-lee.md", "people/sam-ortiz.md"],
        f"list_entries people: {people}",
    )
    check(data.get("total") == 3, f"list_entries people total 3: {data.get('total')}")
    data = await call_ok(session, "list_entries", {"category": "ideas", "limit": 5})
    check(len(data.get("entries", [])) == 5, f"list_entries limit 5 gives 5: {len(data.get('entries', []))}")
    check(data.get("total") == 120, f"list_entries ideas total 120: {data.get('total')}")

    # get_entry by a name
    data = await call_ok(session, "get_entry", {"path": "Priya"})
    entry = data.get("entry", {})
    check(entry.get("path") == "people/priya-raman.md", f"get_entry Priya: {data}")
    check(entry.get("name") == "Priya Raman", f"get_entry name: {entry.get('name')}")
    check("robotics meetup" in entry.get("content", ""), f"get_entry content: {entry.get('content')!r}")
    check((data.get("resolved") or {}).get("reference") == "Priya", f"get_entry says how Priya resolved: {data.get('resolved')}")

    # search_entries
    data = await call_ok(session, "search_entries", {"query": "robotics"})
    hits = [e.get("path") for e in data.get("entries", [])]
    check(hits[:1] == ["people/priya-raman.md"], f"search robotics finds Priya first: {hits}")

    # generate_digest
    data = await call_ok(session, "generate_digest", {"type": "daily"})
    check(data.get("type") == "daily", f"daily digest type: {data.get('type')}")
    check("# Daily digest" in data.get("content", ""), f"daily digest heading: {data.get('content')!r}")
    check("Renew passport" in data.get("content", ""), f"the daily digest lists the passport: {data.get('content')!r}")
    data = await call_ok(session, "generate_digest", {"type": "weekly"})
    check(data.get("type") == "weekly", f"weekly digest type: {data.get('type')}")
    check("# Weekly review" in data.get("content", ""), f"weekly review heading: {data.get('content')!r}")

    # update_entry by a name
    data = await call_ok(
        session,
        "update_entry",
        {
            "path": "Priya",
            "updates": {"context": "robotics meetup in Boston"},
            "body": {"mode": "append", "content": "Wants to co-write a paper."},
        },
    )
    check(data.get("path") == "people/priya-raman.md", f"update_entry Priya: {data}")
    check(set(data.get("updatedFields", [])) >= {"context", "content"}, f"updatedFields: {data.get('updatedFields')}")
    priya = vault.read("people/priya-raman.md")
    check("context: robotics meetup in Boston" in priya, f"the new context is on disk:\n{priya}")
    check("Wants to co-write a paper." in priya, f"the appended line is on disk:\n{priya}")

    # move_entry: the inbox capture is an idea
    data = await call_ok(session, "move_entry", {"path": inbox_path, "targetCategory": "ideas"})
    moved = data.get("newPath", "")
    check(data.get("oldPath") == inbox_path, f"move_entry oldPath: {data}")
    require(moved.startswith("ideas/"), f"move_entry newPath in ideas/: {data}")
    check(not vault.exists(inbox_path), f"{inbox_path} is gone from disk")
    check(vault.exists(moved), f"{moved} exists on disk")
    if vault.exists(moved):
        check("Look into widgets sometime" in vault.read(moved), f"{moved} keeps the text")
    state["idea"] = moved

    # A second Priya, filed as someone new, then found as a duplicate and merged.
    data = await call_ok(
        session,
        "classify_and_capture",
        {
            "text": "Priya is moving to MIT",
            "classification": {"category": "people", "confidence": 0.9, "name": "Priya"},
            "createNew": True,
        },
    )
    second = data.get("path", "")
    require(second.startswith("people/") and second != "people/priya-raman.md", f"a second Priya: {data}")
    check(vault.exists(second), f"{second} exists on disk")

    data = await call_ok(session, "find_duplicates", {"name": "Priya"})
    groups = data.get("groups", [])
    check(
        any({e.get("path") for e in g.get("entries", [])} == {"people/priya-raman.md", second} for g in groups),
        f"find_duplicates groups the two Priyas: {groups}",
    )
    check(all(g.get("reason") for g in groups), f"each group says why: {groups}")

    data = await call_ok(session, "merge_entries", {"targetPath": "people/priya-raman.md", "sourcePaths": [second]})
    check(data.get("path") == "people/priya-raman.md", f"merge kept Priya Raman: {data}")
    check(data.get("merged") == [second], f"merge merged {second}: {data}")
    check(not data.get("confirmationRequired"), f"merge over MCP does not wait for a chat confirmation: {data}")
    check(not vault.exists(second), f"{second} is gone from disk after the merge")
    priya = vault.read("people/priya-raman.md")
    check("moving to MIT" in priya, f"the merged notes are in Priya Raman's file:\n{priya}")

    # delete_entry, then undo_last_change brings the file back as it was.
    idea = state["idea"]
    kept = vault.read_bytes(idea)
    data = await call_ok(session, "delete_entry", {"path": idea})
    check(data.get("deleted") is True and data.get("path") == idea, f"delete_entry: {data}")
    check(not data.get("confirmationRequired"), f"delete over MCP does not wait for a chat confirmation: {data}")
    check(not vault.exists(idea), f"{idea} is gone from disk")

    data = await call_ok(session, "undo_last_change", {})
    check(bool(data.get("undone")), f"undo says what it undid: {data}")
    check(
        any(f.get("pathAfter") == idea for f in data.get("files", [])),
        f"undo put {idea} back: {data}",
    )
    check(vault.exists(idea), f"{idea} is back on disk")
    if vault.exists(idea):
        check(vault.read_bytes(idea) == kept, f"{idea} came back byte for byte")


async def step_tool_errors(session: ClientSession, vault: Vault) -> None:
    # The index file catches up with the changes before: from here on nothing may change.
    require(await settle(session, vault), "index.md on disk catches up with kb://index")
    await call_error(session, vault, "get_entry", {"path": "Nobody Atall"}, "Entry not found")
    await call_error(session, vault, "update_entry", {"path": "Nobody Atall", "updates": {"status": "done"}}, "Entry not found")
    await call_error(session, vault, "list_entries", {"limit": 0}, "invalid arguments")
    await call_error(session, vault, "list_entries", {"limit": "ten"}, "invalid arguments")
    await call_error(session, vault, "get_entry", {}, "path")

    # An ambiguous name: the candidates, for the assistant to ask the person.
    result = await call_error(session, vault, "get_entry", {"path": "Sam"}, "could mean several")
    if result is not None:
        message = text_of(result)
        check("Sam Lee" in message and "Sam Ortiz" in message, f"the message names both Sams: {message!r}")
        if check(len(result.content) >= 2, f"a second content block with the candidates: {result.content}"):
            try:
                detail = json.loads(text_of(result, 1))
            except ValueError:
                detail = {}
                check(False, f"the second block is JSON: {text_of(result, 1)!r}")
            paths = sorted(c.get("path") for c in detail.get("candidates", []))
            check(paths == ["people/sam-lee.md", "people/sam-ortiz.md"], f"candidates are both Sams: {detail}")
    await call_error(session, vault, "delete_entry", {"path": "Sam"}, "could mean several")

    # Paths outside the vault.
    for tool, args in [
        ("get_entry", {"path": "../../etc/passwd"}),
        ("update_entry", {"path": "../../etc/passwd", "updates": {"status": "done"}}),
        ("delete_entry", {"path": "../../etc/passwd"}),
        ("move_entry", {"path": "../people/sam-lee.md", "targetCategory": "ideas"}),
    ]:
        await call_error(session, vault, tool, args, "invalid path")

    # A classification kb cannot take.
    await call_error(
        session,
        vault,
        "classify_and_capture",
        {"text": "Met Quinn at the bakery", "classification": {"category": "people", "confidence": 1.5, "name": "Quinn"}},
        "confidence",
    )
    await call_error(
        session,
        vault,
        "classify_and_capture",
        {"text": "Met Quinn at the bakery", "classification": {"category": "recipes", "confidence": 0.9, "name": "Quinn"}},
        "invalid arguments",
    )

    # An unknown tool is a protocol error.
    before = vault.snapshot()
    error = await expect_mcp_error(session.call_tool("launch_rockets", {}), INVALID_PARAMS, "unknown tool")
    if error is not None:
        check("launch_rockets" in error.message, f"the error names the unknown tool: {error.message!r}")
    check(vault.snapshot() == before, "an unknown tool changes nothing on disk")


async def step_concurrent_calls(session: ClientSession, vault: Vault) -> None:
    """Calls in flight together on one connection, as an assistant running tools in
    parallel makes them: each answers for itself and every capture is filed."""
    names = [f"Parallel thought {n}" for n in range(6)]
    captures = [
        session.call_tool(
            "classify_and_capture",
            {"text": f"{name}: try it", "classification": {"category": "ideas", "confidence": 0.9, "name": name}},
        )
        for name in names
    ]
    reads = [session.call_tool("get_entry", {"path": "people/sam-lee.md"}) for _ in range(4)]
    searches = [session.call_tool("search_entries", {"query": "cello"}) for _ in range(4)]
    results = await asyncio.gather(*captures, *reads, *searches, return_exceptions=True)
    failed = [r for r in results if isinstance(r, BaseException) or r.is_error]
    require(not failed, f"parallel calls all succeed: {failed}")
    paths = [r.structured_content.get("path") for r in results[: len(names)]]
    check(len(set(paths)) == len(names), f"each parallel capture has its own file: {paths}")
    for name, path in zip(names, paths):
        check(vault.exists(path) and name in vault.read(path), f"{path} holds {name!r}")
    for result in results[len(names) : len(names) + 4]:
        check(result.structured_content["entry"]["name"] == "Sam Lee", f"get_entry in parallel: {result.structured_content}")
    for result in results[len(names) + 4 :]:
        hits = [e.get("path") for e in result.structured_content.get("entries", [])]
        check(hits == ["people/sam-ortiz.md"], f"search in parallel finds Sam Ortiz: {hits}")


async def step_resources(session: ClientSession, vault: Vault) -> None:
    uris: list[str] = []
    resources: list[types.Resource] = []
    cursor = None
    pages = 0
    while True:
        params = types.PaginatedRequestParams(cursor=cursor) if cursor is not None else None
        page = await session.list_resources(params=params)
        pages += 1
        resources.extend(page.resources)
        uris.extend(str(r.uri) for r in page.resources)
        cursor = page.next_cursor
        if cursor is None or pages > 20:
            break
    files = vault.entry_files()
    check(pages >= 2, f"resources/list takes at least two pages for {len(files)} entries, took {pages}")
    check(len(uris) == len(set(uris)), f"every URI listed once: {len(uris)} listed, {len(set(uris))} unique")
    check(len(uris) == 1 + len(files), f"kb://index plus one per entry file: {len(uris)} listed, {len(files)} files")
    check(uris[:1] == ["kb://index"], f"kb://index comes first: {uris[:1]}")
    expected = {"kb://index"} | {"kb://entries/" + f[: -len(".md")] for f in files}
    check(set(uris) == expected, f"the listed URIs are the files on disk: extra {sorted(set(uris) - expected)}, missing {sorted(expected - set(uris))}")
    by_uri = {str(r.uri): r for r in resources}
    priya = by_uri.get("kb://entries/people/priya-raman")
    if check(priya is not None, "Priya Raman is listed as a resource"):
        check(priya.title == "Priya Raman", f"its title is her name: {priya.title!r}")
        check(priya.mime_type == "text/markdown", f"markdown: {priya.mime_type!r}")
    await expect_mcp_error(
        session.list_resources(params=types.PaginatedRequestParams(cursor="not-a-cursor")),
        INVALID_PARAMS,
        "a cursor kb never gave",
    )

    index = await session.read_resource("kb://index")
    text = getattr(index.contents[0], "text", "") if index.contents else ""
    check("Priya Raman" in text, f"kb://index mentions Priya Raman: {text[:400]!r}")
    check("# Knowledge base" in text, f"kb://index is kb's index: {text[:200]!r}")
    check(index.contents and index.contents[0].mime_type == "text/markdown", "kb://index is markdown")
    check(await settle(session, vault), "kb://index is index.md as it is on disk")

    for rel in ["people/priya-raman.md", "people/sam-ortiz.md", "ideas/idea-042.md"]:
        uri = "kb://entries/" + rel[: -len(".md")]
        read = await session.read_resource(uri)
        require(len(read.contents) == 1, f"{uri}: one content, got {len(read.contents)}")
        content = read.contents[0]
        body = getattr(content, "text", None)
        check(body is not None and body.encode("utf-8") == vault.read_bytes(rel), f"{uri} is {rel} byte for byte")
        check(str(content.uri) == uri, f"{uri}: content uri {content.uri}")
        check(content.mime_type == "text/markdown", f"{uri}: mime type {content.mime_type}")

    await expect_mcp_error(session.read_resource("kb://entries/people/nobody"), RESOURCE_NOT_FOUND, "a missing entry")
    await expect_mcp_error(session.read_resource("file:///etc/passwd"), INVALID_PARAMS, "a file: URI")
    await expect_mcp_error(
        session.read_resource("kb://entries/people/../../../etc/passwd"), INVALID_PARAMS, "a kb URI climbing out"
    )

    templates = await session.list_resource_templates()
    listed = [t.uri_template for t in templates.resource_templates]
    check("kb://entries/{category}/{slug}" in listed, f"the entry template: {listed}")


async def step_subscriptions(session: ClientSession, vault: Vault, inbox: Inbox) -> None:
    entry_uri = "kb://entries/people/priya-raman"
    await session.subscribe_resource(entry_uri)
    await session.subscribe_resource("kb://index")
    await expect_mcp_error(session.subscribe_resource("file:///etc/passwd"), INVALID_PARAMS, "subscribe to a file: URI")
    # Anything kb still had to say about earlier changes.
    await asyncio.sleep(0.5)

    file = vault.path("people/priya-raman.md")
    mark = inbox.mark()
    with open(file, "a", encoding="utf-8") as out:
        out.write("\nEdited by hand: she prefers email.\n")
    got = await inbox.wait_for(mark, (UPDATED, entry_uri), NOTIFY_TIMEOUT)
    check(got, f"resources/updated for {entry_uri} after an outside edit; heard {inbox.since(mark)}")
    got = await inbox.wait_for(mark, (LIST_CHANGED, None), NOTIFY_TIMEOUT)
    check(got, f"resources/list_changed after an outside edit; heard {inbox.since(mark)}")
    got = await inbox.wait_for(mark, (UPDATED, "kb://index"), NOTIFY_TIMEOUT)
    check(got, f"resources/updated for kb://index after an outside edit; heard {inbox.since(mark)}")
    read = await session.read_resource(entry_uri)
    check("she prefers email" in getattr(read.contents[0], "text", ""), "reading the entry again shows the edit")

    await session.unsubscribe_resource(entry_uri)
    await asyncio.sleep(1.0)
    mark = inbox.mark()
    with open(file, "a", encoding="utf-8") as out:
        out.write("\nEdited by hand again: and calls on Fridays.\n")
    # kb saw it (the list and the index are still followed) ...
    got = await inbox.wait_for(mark, (LIST_CHANGED, None), NOTIFY_TIMEOUT)
    check(got, f"resources/list_changed after the second edit; heard {inbox.since(mark)}")
    await asyncio.sleep(QUIET_PERIOD)
    # ... but says nothing more about an entry nobody follows.
    heard = inbox.since(mark)
    check((UPDATED, entry_uri) not in heard, f"no resources/updated for {entry_uri} after unsubscribing; heard {heard}")

    # A new file written by hand: the list changes, and it is a resource like the others.
    mark = inbox.mark()
    by_hand = "---\nname: Written by hand\n---\nA file kb did not write.\n"
    vault.path("ideas/written-by-hand.md").write_text(by_hand, encoding="utf-8")
    got = await inbox.wait_for(mark, (LIST_CHANGED, None), NOTIFY_TIMEOUT)
    check(got, f"resources/list_changed after a new file appeared; heard {inbox.since(mark)}")
    listed: list[str] = []
    cursor = None
    for _ in range(20):
        page = await session.list_resources(params=types.PaginatedRequestParams(cursor=cursor) if cursor else None)
        listed.extend(str(r.uri) for r in page.resources)
        cursor = page.next_cursor
        if cursor is None:
            break
    check("kb://entries/ideas/written-by-hand" in listed, "the file written by hand is listed")
    check(len(listed) == 1 + len(vault.entry_files()), f"{len(listed)} listed for {len(vault.entry_files())} files")
    read = await session.read_resource("kb://entries/ideas/written-by-hand")
    check(getattr(read.contents[0], "text", None) == by_hand, "the file written by hand reads as written")
    await session.unsubscribe_resource("kb://index")


async def step_prompts(session: ClientSession) -> None:
    listed = await session.list_prompts()
    by_name = {p.name: p for p in listed.prompts}
    check(set(by_name) == {"daily_digest", "weekly_review", "capture"}, f"the three prompts: {sorted(by_name)}")
    capture = by_name.get("capture")
    if check(capture is not None and capture.arguments, f"capture has arguments: {capture}"):
        text_arg = next((a for a in capture.arguments if a.name == "text"), None)
        check(text_arg is not None and text_arg.required is True, f"capture's text argument is required: {capture.arguments}")

    for name, heading in [("daily_digest", "# Daily digest"), ("weekly_review", "# Weekly review")]:
        prompt = await session.get_prompt(name)
        require(len(prompt.messages) >= 1, f"{name}: a message")
        message = prompt.messages[0]
        text = getattr(message.content, "text", "")
        check(message.role == "user", f"{name}: a user message, got {message.role}")
        check(heading in text, f"{name}: the text holds {heading!r}: {text[:300]!r}")

    words = "Call the plumber about the leaking tap"
    prompt = await session.get_prompt("capture", {"text": words})
    text = getattr(prompt.messages[0].content, "text", "") if prompt.messages else ""
    check(words in text, f"the capture prompt holds the text: {text!r}")
    check("classify_and_capture" in text, f"the capture prompt names the tool: {text!r}")
    check(prompt.messages and prompt.messages[0].role == "user", "the capture prompt is a user message")

    await expect_mcp_error(session.get_prompt("capture"), INVALID_PARAMS, "the capture prompt without text")
    await expect_mcp_error(session.get_prompt("capture", {"text": "   "}), INVALID_PARAMS, "the capture prompt with blank text")
    await expect_mcp_error(session.get_prompt("horoscope"), INVALID_PARAMS, "an unknown prompt")


async def run_scenario(session: ClientSession, vault: Vault, inbox: Inbox) -> None:
    state: dict[str, Any] = {}
    steps = [
        ("initialize", lambda: step_initialize(session)),
        ("tools/list", lambda: step_list_tools(session)),
        ("tools", lambda: step_tools(session, vault, state)),
        ("tool errors", lambda: step_tool_errors(session, vault)),
        ("concurrent calls", lambda: step_concurrent_calls(session, vault)),
        ("resources", lambda: step_resources(session, vault)),
        ("subscriptions", lambda: step_subscriptions(session, vault, inbox)),
        ("prompts", lambda: step_prompts(session)),
    ]
    for name, step in steps:
        started = time.monotonic()
        try:
            await step()
        except Abort:
            print(f"step {name}: stopped after a failed check", flush=True)
        except Exception as error:  # noqa: BLE001 - reported, and the scenario goes on
            failures.append(f"step {name} raised {type(error).__name__}: {error}")
            print(f"FAILED: step {name} raised:", flush=True)
            traceback.print_exc()
        print(f"step {name}: {time.monotonic() - started:.2f}s", flush=True)
        if name == "initialize" and failures:
            # Nothing else can work without a session.
            break
    check(not inbox.transport_errors, f"no transport errors: {inbox.transport_errors}")


# ---------------------------------------------------------------------------------------
# Transports


@asynccontextmanager
async def stdio_session(binary: str, vault: str, inbox: Inbox) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(command=binary, args=["mcp"], env={"KB_DIR": vault})
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write, message_handler=inbox.handle, read_timeout_seconds=60) as session:
            yield session


@asynccontextmanager
async def http_session(url: str, token: str, inbox: Inbox, seen: set[str]) -> AsyncIterator[ClientSession]:
    headers = {"Authorization": f"Bearer {token}"}
    timeout = httpx2.Timeout(30.0, read=300.0)

    async def note_session(response: httpx2.Response) -> None:
        if session_id := response.headers.get("mcp-session-id"):
            seen.add(session_id)

    hooks = {"response": [note_session]}
    async with httpx2.AsyncClient(headers=headers, timeout=timeout, event_hooks=hooks) as http:
        async with streamable_http_client(url, http_client=http) as (read, write):
            async with ClientSession(read, write, message_handler=inbox.handle, read_timeout_seconds=60) as session:
                yield session


async def check_http_auth(url: str, token: str) -> None:
    """/mcp takes no request without the token."""
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "no-token", "version": "0"},
        },
    }
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    async with httpx2.AsyncClient(timeout=30.0) as http:
        for label, extra in [("no token", {}), ("a wrong token", {"Authorization": f"Bearer {token}-not"})]:
            reply = await http.post(url, json=initialize, headers={**headers, **extra})
            check(reply.status_code == 401, f"/mcp with {label}: HTTP 401 expected, got {reply.status_code}: {reply.text[:300]!r}")
        reply = await http.get(url, headers={"Accept": "text/event-stream"})
        check(reply.status_code == 401, f"GET /mcp with no token: HTTP 401 expected, got {reply.status_code}")


async def check_http_session_ended(url: str, token: str, sessions: set[str]) -> None:
    """Leaving the client ended the session (the SDK sends DELETE): kb no longer knows it."""
    if not check(len(sessions) == 1, f"one Mcp-Session-Id for the whole scenario, got {sessions}"):
        return
    ping = {"jsonrpc": "2.0", "id": 99, "method": "ping"}
    headers = {
        "Authorization": f"Bearer {token}",
        "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json",
        "Mcp-Session-Id": next(iter(sessions)),
        "Mcp-Protocol-Version": "2025-11-25",
    }
    async with httpx2.AsyncClient(timeout=30.0) as http:
        reply = await http.post(url, json=ping, headers=headers)
        check(reply.status_code == 404, f"a request in the ended session: HTTP 404 expected, got {reply.status_code}: {reply.text[:300]!r}")


async def main(argv: list[str]) -> int:
    if len(argv) == 4 and argv[1] == "stdio":
        _, _, binary, root = argv
        vault = Vault(root)
        inbox = Inbox()
        async with stdio_session(binary, root, inbox) as session:
            await run_scenario(session, vault, inbox)
    elif len(argv) == 5 and argv[1] == "http":
        _, _, url, token, root = argv
        vault = Vault(root)
        inbox = Inbox()
        await check_http_auth(url, token)
        sessions: set[str] = set()
        async with http_session(url, token, inbox, sessions) as session:
            await run_scenario(session, vault, inbox)
        await check_http_session_ended(url, token, sessions)
    else:
        print(__doc__, file=sys.stderr)
        return 2
    if failures:
        print(f"\n{len(failures)} check(s) failed:", flush=True)
        for failure in failures:
            print(f"  - {failure}", flush=True)
        return 1
    print("every check passed", flush=True)
    return 0


if __name__ == "__main__":
    started = time.monotonic()
    code = asyncio.run(main(sys.argv))
    print(f"took {time.monotonic() - started:.1f}s", flush=True)
    sys.exit(code)
