// The web page's script (served as /page.js after the vendored marked and DOMPurify).
"use strict";
(function () {
  const $ = (sel) => document.querySelector(sel);
  const CATEGORIES = ["people", "projects", "ideas", "admin", "inbox"];
  // A note's vault path: visible folders and a visible .md file, in any folder.
  // (No `:`, so no URL scheme reads as a path.)
  const ENTRY_PATH = /^(?:[^/\\.:\u0000-\u001f][^/\\:\u0000-\u001f]*\/)*[^/\\.:\u0000-\u001f][^/\\:\u0000-\u001f]*\.md$/;
  const PAGE_SIZE = 20;

  // ---------- escaping and markdown ----------

  function escapeHtml(text) {
    return String(text)
      .replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;")
      .replace(/"/g, "&quot;").replace(/'/g, "&#39;");
  }

  // The page's address of an entry: `#/entry/PATH`, with `?line=N` to open it at line N of
  // its file.
  function entryHref(path, line) {
    return "#/entry/" + path.split("/").map(encodeURIComponent).join("/") + (line ? "?line=" + line : "");
  }

  function entryLinkHtml(path, label) {
    return "<a class=\"entry-link\" data-path=\"" + escapeHtml(path) + "\" href=\"" +
      escapeHtml(entryHref(path)) + "\">" + label + "</a>";
  }

  // The vault path a link's target names (`admin/x.md`, `./admin/x.md`, `../admin/x.md`,
  // `/admin/x.md`), or null.
  function entryPathOf(url) {
    const path = url.replace(/^(?:\.{1,2}\/)+|^\//, "");
    return ENTRY_PATH.test(path) ? path : null;
  }

  // A link: http(s) opens in a new tab, a vault path opens the entry, anything else
  // (javascript:, mailto:, a file kb does not serve) is just its label.
  function linkHtml(href, label) {
    const url = String(href || "").trim();
    if (/^https?:\/\/\S+$/i.test(url)) {
      return "<a href=\"" + escapeHtml(url) + "\" rel=\"noopener noreferrer\" target=\"_blank\">" + label + "</a>";
    }
    const path = entryPathOf(url);
    return path ? entryLinkHtml(path, label) : label;
  }

  // marked (CommonMark with GitHub's tables, task lists, strikethrough and autolinks), with
  // kb's choices: a line break is a break; headings start at h3 (they sit under the page's
  // own); raw HTML in the text shows as text, never markup; links as `linkHtml`; images are
  // links to them, never loaded.
  const markdown = new marked.Marked({
    async: false,
    gfm: true,
    breaks: true,
    renderer: {
      heading({ tokens, depth }) {
        const level = Math.min(6, depth + 2);
        return "<h" + level + ">" + this.parser.parseInline(tokens) + "</h" + level + ">\n";
      },
      html({ text, block }) {
        if (!block) return escapeHtml(text);
        return "<p>" + escapeHtml(text.replace(/\n+$/, "")).replace(/\n/g, "<br>") + "</p>\n";
      },
      // marked passes the text after an inline <pre>, <script> or <style> tag through
      // unescaped (`escaped`); that tag shows as text here, so its content must too.
      text(token) {
        return token.escaped && !token.tokens ? escapeHtml(token.text) : false;
      },
      link({ href, tokens }) {
        return linkHtml(href, this.parser.parseInline(tokens));
      },
      image({ href, text }) {
        return linkHtml(href, escapeHtml(text || href));
      },
    },
  });

  // What DOMPurify lets through: its HTML defaults, plus target (for target="_blank" links).
  const SANITIZE = Object.freeze({ USE_PROFILES: { html: true }, ADD_ATTR: ["target"], RETURN_DOM_FRAGMENT: true });

  // The text nodes of `root` outside links and code: where paths and citations are linked.
  function proseTexts(root) {
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT, {
      acceptNode: (node) => node.parentElement && node.parentElement.closest("a, code, pre")
        ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT,
    });
    const texts = [];
    while (walker.nextNode()) texts.push(walker.currentNode);
    return texts;
  }

  // A vault path written in the text (not in a link or code) becomes a link to the entry.
  const BARE_PATH = /(^|[\s(])((?:people|projects|ideas|admin|inbox)\/[A-Za-z0-9._-]+\.md)(?=$|[\s),.;:!?])/g;
  function linkBarePaths(root) {
    for (const node of proseTexts(root)) {
      const text = node.data;
      const parts = [];
      let last = 0;
      for (const m of text.matchAll(BARE_PATH)) {
        const start = m.index + m[1].length;
        parts.push(text.slice(last, start));
        const link = document.createElement("a");
        link.className = "entry-link";
        link.setAttribute("data-path", m[2]);
        link.setAttribute("href", entryHref(m[2]));
        link.textContent = m[2];
        parts.push(link);
        last = start + m[2].length;
      }
      if (parts.length) node.replaceWith(...parts, text.slice(last));
    }
  }

  // Markdown → sanitized HTML. Any prefix of a text renders (an answer arriving in pieces:
  // an unclosed `**` is a literal star, an unfinished code fence runs to the end), and it
  // never throws: should the parser fail, the text shows as plain text.
  function renderMarkdown(text) {
    const source = String(text === null || text === undefined ? "" : text);
    let html;
    try {
      html = markdown.parse(source);
    } catch (_) {
      html = source.trim() ? "<p>" + escapeHtml(source).replace(/\n/g, "<br>") + "</p>" : "";
    }
    const fragment = DOMPurify.sanitize(html, SANITIZE);
    linkBarePaths(fragment);
    const box = document.createElement("div");
    box.append(fragment);
    return box.innerHTML;
  }

  // A search hit's snippet: text, with the matched terms (`**term**`) marked.
  function snippetHtml(snippet) {
    return escapeHtml(snippet).replace(/\*\*([^*]+?)\*\*/g, "<mark>$1</mark>");
  }

  function el(tag, attrs, children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined || v === false) continue;
      if (k === "text") node.textContent = v;
      else if (k === "className") node.className = v;
      else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
      else node.setAttribute(k, v === true ? "" : v);
    }
    for (const c of [].concat(children || [])) {
      if (c !== null && c !== undefined) node.append(c);
    }
    return node;
  }

  // A link opening the entry at `path`; with `passage` (a search hit's), at its lines.
  function entryLink(path, label, passage) {
    const start = passage && passage.startLine;
    if (start) rememberPassage(path, start, passage.endLine);
    return el("a", { className: "entry-link", href: entryHref(path, start), "data-path": path, "data-line": start || null, text: label || path });
  }

  // ---------- the API ----------

  class ApiError extends Error {
    // `candidates`: the entries to choose from, when kb asks (409 `ambiguous`, `possible_duplicate`).
    constructor(status, code, message, candidates) {
      super(message);
      this.status = status;
      this.code = code;
      this.candidates = candidates;
    }
  }

  // The API token, asked for once and kept in this browser (a phone's home-screen app
  // opens without asking again).
  const TOKEN_KEY = "kb-token";
  // The vault this page works in, once kb has accounts ("" or none: the person's own).
  const VAULT_KEY = "kb-vault";
  // The person the token speaks for, as kb last said (for the captures that wait).
  const PERSON_KEY = "kb-person";
  function currentVault() { return localStorage.getItem(VAULT_KEY) || ""; }
  function currentPerson() { return localStorage.getItem(PERSON_KEY) || ""; }
  // Whether kb said, since this page opened, whose the kept token is (loadVaults): until
  // it has, no capture written by someone is sent.
  let personConfirmed = false;
  // The cache the service worker keeps a share's files in (see sw.js).
  const SHARE_CACHE = "kb-shared-files";
  let tokenWaiter = null;
  // While a sign-in link opened here waits for the person's answer, no token is asked for:
  // the link gives one.
  let signInWaiter = null;
  async function askForToken(wrong) {
    if (signInWaiter && await signInWaiter) return true;
    if (!tokenWaiter) {
      tokenWaiter = new Promise((resolve) => {
        const dialog = $("#token-dialog");
        const input = $("#token-input");
        $("#token-title").textContent = wrong ? "That token was not accepted — try again" : "This kb needs its API token";
        input.value = "";
        const done = () => {
          dialog.removeEventListener("close", done);
          tokenWaiter = null;
          const token = input.value.trim();
          if (token) {
            // Whose token it is, kb says next (loadVaults): until then no waiting capture
            // written by someone goes. The person goes first, so no tab ever sees the new
            // token beside the person before.
            localStorage.removeItem(PERSON_KEY);
            localStorage.setItem(TOKEN_KEY, token);
            personConfirmed = false;
            renderOutbox();
            loadVaults();
          }
          resolve(Boolean(token));
        };
        dialog.addEventListener("close", done);
        dialog.showModal();
        input.focus();
      });
    }
    return tokenWaiter;
  }

  // One request with the kept token (a 401 asks for it and tries again), with `extra`
  // headers if given. Answers the response when it is OK; throws an ApiError with the API's
  // code and message otherwise (status 0, code "unreachable", when kb cannot be reached).
  async function request(method, path, body, accept, extra, signal) {
    for (let attempt = 0; attempt < 4; attempt++) {
      const headers = Object.assign({ "Accept": accept }, extra || {});
      if (!("Kb-Vault" in headers) && currentVault()) headers["Kb-Vault"] = currentVault();
      if (headers["Kb-Vault"] === "") delete headers["Kb-Vault"];
      // kb refuses a POST that does not say JSON, even one without a body.
      if (body !== undefined || method === "POST") headers["Content-Type"] = "application/json";
      const token = localStorage.getItem(TOKEN_KEY);
      if (token) headers["Authorization"] = "Bearer " + token;
      // The person it is sent as (none on a kb without accounts).
      const sentAs = currentPerson();
      let response;
      try {
        response = await fetch(path, { method, headers, signal, body: body === undefined ? undefined : JSON.stringify(body) });
      } catch (e) {
        throw new ApiError(0, "unreachable", "kb cannot be reached — is `kb serve` still running?");
      }
      // kb answered: captures that waited because it could not be reached go now.
      kbReached();
      if (response.status === 401) {
        if (sentAs) refusedAsPerson(token);
        const hadToken = Boolean(token);
        // A token kept since this was sent (pasted here, or by another tab) is tried
        // before any is asked for, and is never the one thrown away.
        if (localStorage.getItem(TOKEN_KEY) !== token) continue;
        localStorage.removeItem(TOKEN_KEY);
        if (await askForToken(hadToken)) continue;
        throw new ApiError(401, "unauthorized", "This kb needs its API token.");
      }
      if (!response.ok) {
        const data = await responseData(response);
        const err = data && data.error ? data.error : {};
        // The vault chosen here is gone or no longer this person's: back to their own.
        if (err.code === "vault_not_found" && headers["Kb-Vault"] && headers["Kb-Vault"] === currentVault()) {
          // The vault chosen here is gone or no longer this person's: the page goes back to
          // their own. A read is asked there again; a change is not sent anywhere else.
          localStorage.removeItem(VAULT_KEY);
          loadVaults();
          if (method === "GET") continue;
          throw new ApiError(404, "vault_not_found", "The vault " + headers["Kb-Vault"] +
            " is no longer yours to use, so nothing was sent; the page is back in your own vault.");
        }
        throw new ApiError(response.status, err.code || "http_" + response.status,
          err.message || "kb answered " + response.status + " " + response.statusText, err.candidates);
      }
      return response;
    }
    throw new ApiError(401, "unauthorized", "This kb needs its API token.");
  }

  function responseData(response) {
    const type = response.headers.get("Content-Type") || "";
    return type.includes("json") ? response.json().catch(() => null) : response.text();
  }

  async function api(method, path, body, extra, signal) {
    const response = await request(method, path, body, "application/json", extra, signal);
    if (response.status === 204) return null;
    return responseData(response);
  }

  // A request sent as one of kb's people was refused (the token revoked, expired, or
  // changed meanwhile): it is never sent again here with another token, which may be
  // someone else's; whose that is, kb says first (loadVaults), and the person sends it
  // again (a waiting capture goes by itself once it is theirs). The token it went with is
  // thrown away unless another was kept meanwhile, and one is asked for.
  function refusedAsPerson(token) {
    if (localStorage.getItem(TOKEN_KEY) === token) {
      localStorage.removeItem(TOKEN_KEY);
      localStorage.removeItem(PERSON_KEY);
      askForToken(Boolean(token));
    }
    personConfirmed = false;
    renderOutbox();
    if (!vaultsLoading) loadVaults();
    throw new ApiError(401, "unauthorized", "kb did not take this: the token it went with was refused. Sign in, then send it again.");
  }

  // The HTTP status that comes with each of the API's error codes (an error event has none).
  const CODE_STATUS = Object.freeze({
    bad_request: 400, invalid_arguments: 400, invalid_path: 400, invalid_update: 400, invalid_move: 400,
    not_found: 404, payload_too_large: 413, malformed_entry: 409, changed_since: 409, nothing_to_undo: 409,
    ambiguous: 409, possible_duplicate: 409, llm_rate_limited: 429, internal: 500, disk_error: 500, classification_failed: 502,
    llm_malformed: 502, llm_refused: 502, llm_unavailable: 503, search_not_ready: 503,
    history_unavailable: 503, llm_timeout: 504,
  });

  // Server-Sent Events, fed the text as it arrives: answers the events each piece completes,
  // as { name, data } with data parsed as JSON (or the text when it is not JSON).
  function sseParser() {
    let buffer = "";
    let name = "";
    let data = [];
    return function feed(text, atEnd) {
      buffer += text;
      const events = [];
      for (;;) {
        const end = /\r\n|\n|\r/.exec(buffer);
        // A lone \r at the end may be the first half of a \r\n still on its way.
        if (!end || (end[0] === "\r" && end.index === buffer.length - 1 && !atEnd)) break;
        const line = buffer.slice(0, end.index);
        buffer = buffer.slice(end.index + end[0].length);
        if (line === "") {
          if (data.length) {
            const raw = data.join("\n");
            let value;
            try { value = JSON.parse(raw); } catch (_) { value = raw; }
            events.push({ name: name || "message", data: value });
          }
          name = "";
          data = [];
          continue;
        }
        if (line.startsWith(":")) continue; // a comment (keep-alive)
        const colon = line.indexOf(":");
        const field = colon < 0 ? line : line.slice(0, colon);
        let value = colon < 0 ? "" : line.slice(colon + 1);
        if (value.startsWith(" ")) value = value.slice(1);
        if (field === "event") name = value;
        else if (field === "data") data.push(value);
      }
      return events;
    };
  }

  // POST /api/chat, answered as events while the turn runs: `live` receives each tool start
  // and finish and each piece of the answer. Answers the message.completed body (the JSON
  // answer); throws an ApiError for an error event, with the JSON API's code.
  async function chatStream(body, live) {
    const response = await request("POST", "/api/chat", body, "text/event-stream");
    const type = response.headers.get("Content-Type") || "";
    if (!type.includes("text/event-stream") || !response.body) return responseData(response);
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    const feed = sseParser();
    const cutOff = () => new ApiError(0, "network", "kb stopped answering before the turn ended — is `kb serve` still running?");
    try {
      for (;;) {
        let chunk;
        try {
          chunk = await reader.read();
        } catch (_) {
          throw cutOff();
        }
        const text = chunk.done ? decoder.decode() : decoder.decode(chunk.value, { stream: true });
        for (const event of feed(text, chunk.done)) {
          const data = event.data || {};
          if (event.name === "message.completed") return data;
          if (event.name === "error") {
            throw new ApiError(CODE_STATUS[data.code] || 0, data.code || "error", data.message || "the chat turn failed");
          }
          if (event.name === "tool.started") live.toolStarted(data);
          else if (event.name === "tool.finished") live.toolFinished(data);
          else if (event.name === "message.delta") live.delta(typeof data.text === "string" ? data.text : "");
        }
        // Every piece this chunk brought is shown at once.
        live.show();
        if (chunk.done) throw cutOff();
      }
    } finally {
      reader.cancel().catch(() => {});
    }
  }

  function showError(node, error) {
    node.textContent = error ? (error.message || String(error)) : "";
  }

  // ---------- views (phones show one at a time) ----------

  function setView(view) {
    document.body.dataset.view = view;
    for (const b of document.querySelectorAll("#view-tabs button")) {
      b.setAttribute("aria-pressed", String(b.dataset.view === view));
    }
    if (view === "today") loadToday();
  }
  const isNarrow = () => window.matchMedia("(max-width: 720px)").matches;

  // ---------- conversations ----------

  let currentId = null;
  let conversations = [];

  async function loadConversations() {
    try {
      const data = await api("GET", "/api/conversations");
      conversations = data.conversations || [];
      showError($("#conversations-error"), null);
      renderConversations();
    } catch (e) {
      showError($("#conversations-error"), e);
    }
  }

  function renderConversations() {
    const list = $("#conversation-list");
    list.replaceChildren();
    if (!conversations.length) {
      list.append(el("li", { className: "empty-hint", text: "No conversations yet." }));
      return;
    }
    for (const c of conversations) {
      const current = c.id === currentId;
      const li = el("li", { className: current ? "current" : "", "data-id": c.id });
      const open = el("button", {
        type: "button", className: "conversation-open", title: c.title, text: c.title,
        "aria-current": current ? "true" : null, onclick: () => openConversation(c.id),
      });
      const rename = el("button", { type: "button", className: "rename", "aria-label": "Rename “" + c.title + "”", text: "Rename", onclick: () => startRename(li, c) });
      const del = el("button", { type: "button", className: "delete", "aria-label": "Delete “" + c.title + "”", text: "Delete", onclick: () => deleteConversation(c) });
      li.append(open, el("span", { className: "conversation-actions" }, [rename, del]));
      list.append(li);
    }
  }

  function startRename(li, c) {
    const input = el("input", { type: "text", value: c.title, maxlength: "200", "aria-label": "New title" });
    const form = el("form", { className: "rename-form" }, [input, el("button", { type: "submit", text: "Save" })]);
    const cancel = () => renderConversations();
    form.addEventListener("submit", async (ev) => {
      ev.preventDefault();
      const title = input.value.trim();
      if (!title) { input.focus(); return; }
      try {
        await api("PATCH", "/api/conversations/" + encodeURIComponent(c.id), { title });
        await loadConversations();
        const again = document.querySelector("#conversation-list li[data-id=\"" + CSS.escape(c.id) + "\"] .conversation-open");
        if (again) again.focus();
      } catch (e) { showError($("#conversations-error"), e); }
    });
    input.addEventListener("keydown", (ev) => { if (ev.key === "Escape") { ev.preventDefault(); cancel(); } });
    li.replaceChildren(form);
    input.focus();
    input.select();
  }

  async function deleteConversation(c) {
    if (!window.confirm("Delete the conversation “" + c.title + "” and its messages?")) return;
    try {
      await api("DELETE", "/api/conversations/" + encodeURIComponent(c.id));
      if (c.id === currentId) newConversation();
      await loadConversations();
    } catch (e) { showError($("#conversations-error"), e); }
  }

  function newConversation() {
    currentId = null;
    const log = $("#chat-log");
    log.replaceChildren(el("p", { className: "empty-hint", text: "A new conversation. Tell kb something to remember, or ask it what you know." }));
    renderConversations();
    if (isNarrow()) setView("chat");
    $("#message-input").focus();
  }

  async function openConversation(id) {
    try {
      const data = await api("GET", "/api/conversations/" + encodeURIComponent(id));
      currentId = id;
      renderConversations();
      const log = $("#chat-log");
      log.replaceChildren();
      let turn = freshTurn();
      for (const m of data.messages || []) {
        if (m.role === "user") {
          turn = freshTurn();
          appendUser(m.content);
        } else if (m.role === "assistant" && m.toolCalls && m.toolCalls.length) {
          for (const call of m.toolCalls) turn.toolsUsed.push(call.name);
        } else if (m.role === "tool") {
          noteToolResult(turn, m.content);
        } else if (m.role === "assistant") {
          if (m.filedEntryPath) {
            turn.entry = Object.assign({ path: m.filedEntryPath, confidence: m.filedConfidence }, turn.entry || {});
          }
          appendAssistant(m.content, turn);
          turn = freshTurn();
        }
      }
      if (!log.children.length) log.append(el("p", { className: "empty-hint", text: "No messages yet." }));
      log.scrollTop = log.scrollHeight;
      if (isNarrow()) setView("chat");
    } catch (e) {
      showError($("#conversations-error"), e);
    }
  }

  function freshTurn() { return { toolsUsed: [], entry: null }; }

  function noteToolResult(turn, content) {
    try {
      const result = JSON.parse(content);
      const d = result && result.data;
      if (result && result.success && d && typeof d.path === "string" && "clarificationNeeded" in d) {
        turn.entry = { path: d.path, category: d.category, name: d.name, confidence: d.confidence, clarificationNeeded: d.clarificationNeeded };
      }
    } catch (_) { /* a tool result that is not JSON says nothing about the entry */ }
  }

  // ---------- chat ----------

  function clearHint() {
    const hint = document.querySelector("#chat-log > .empty-hint");
    if (hint) hint.remove();
  }

  function appendUser(text) {
    clearHint();
    const node = el("div", { className: "msg user", "data-role": "user", text });
    $("#chat-log").append(node);
    return node;
  }

  // The answer, with the note of what kb did under it; into `msg` (the message written live)
  // when given, else a new message at the end of the log.
  function appendAssistant(content, turn, msg) {
    clearHint();
    const log = $("#chat-log");
    if (msg) {
      msg.className = "msg assistant";
      msg.removeAttribute("aria-busy");
    } else {
      msg = el("div", { className: "msg assistant", "data-role": "assistant" });
      log.append(msg);
    }
    msg.innerHTML = renderMarkdown(content);
    linkCitations(msg);
    const note = turnNote(turn);
    if (note) msg.after(note);
    return msg;
  }

  // A citation in an answer: `[path:line]` or `[path:start-end]`, the line part after the
  // path's last colon, a `]` in the path written %5D (the rule kb checks answers by).
  const CITATION = /\[([^[\]\n\r]+):(\d+)(?:-(\d+))?\](?!\()/g;

  // Each citation in a finished answer (not in code or a link) becomes a link to the entry
  // at its line, `#/entry/PATH?line=N`, showing the citation as written.
  function linkCitations(root) {
    for (const node of proseTexts(root)) {
      const text = node.data;
      const parts = [];
      let last = 0;
      for (const m of text.matchAll(CITATION)) {
        let path = m[1];
        try { path = decodeURIComponent(path); } catch (_) { /* as written */ }
        const stem = path.split("/").pop().slice(0, -".md".length);
        if ((m.index > 0 && text[m.index - 1] === "[") || !path.endsWith(".md") || !stem.trim()) continue;
        const link = entryLink(path, m[0]);
        link.classList.add("citation");
        link.setAttribute("href", entryHref(path) + "?line=" + m[2]);
        link.dataset.line = m[3] ? m[2] + "–" + m[3] : m[2];
        parts.push(text.slice(last, m.index), link);
        last = m.index + m[0].length;
      }
      if (parts.length) node.replaceWith(...parts, text.slice(last));
    }
  }

  // What the entry view says when it was opened from a citation of `lines` (`12`, `5–7`).
  function citedNotice(lines) {
    return lines ? "The answer cited " + (lines.includes("–") ? "lines " : "line ") + lines + " of this note." : undefined;
  }

  // What the line of a tool says while it runs.
  function toolLabel(name, args) {
    const a = args && typeof args === "object" ? args : {};
    const quoted = (v) => typeof v === "string" && v.trim() ? " “" + v.trim() + "”" : "";
    const path = typeof a.path === "string" ? " " + a.path : "";
    switch (name) {
      case "search_entries": return "Searching" + quoted(a.query) + "…";
      case "classify_and_capture": return "Filing" + quoted(a.text) + "…";
      case "get_entry": return "Reading" + path + "…";
      case "list_entries": return "Listing entries…";
      case "update_entry": return "Updating" + path + "…";
      case "move_entry": return "Moving" + path + "…";
      case "delete_entry": return "Deleting" + path + "…";
      case "merge_entries": return "Merging entries…";
      case "find_duplicates": return "Looking for duplicates…";
      case "generate_digest": return "Writing a digest…";
      case "undo_last_change": return "Undoing the last change…";
      default: return String(name || "A tool") + "…";
    }
  }

  // A turn as it runs: a line per tool (running, then ✓ or ✗ with what it did), then the
  // answer re-rendered as each piece arrives (any prefix of markdown renders).
  function liveTurn() {
    clearHint();
    const log = $("#chat-log");
    const msg = el("div", { className: "msg assistant pending", "data-role": "assistant", "aria-busy": "true", text: "kb is thinking…" });
    log.append(msg);
    let lines = null;
    const running = [];
    let text = "";
    let shown = "";
    const atBottom = () => log.scrollHeight - log.scrollTop - log.clientHeight < 48;
    const keepingBottom = (change) => {
      const stick = atBottom();
      change();
      if (stick) log.scrollTop = log.scrollHeight;
    };
    const mark = (line, symbol, label) => {
      line.querySelector(".tool-mark").replaceWith(el("span", { className: "tool-mark", role: "img", "aria-label": label, text: symbol }));
    };
    return {
      msg,
      toolStarted(data) {
        keepingBottom(() => {
          if (!lines) {
            lines = el("ul", { className: "tool-lines", "data-testid": "tool-lines", "aria-label": "What kb did" });
            msg.before(lines);
          }
          const line = el("li", { className: "tool-line running", "data-tool": data.name }, [
            el("span", { className: "tool-mark" }),
            el("span", { className: "tool-text", text: toolLabel(data.name, data.arguments) }),
          ]);
          mark(line, "", "running");
          lines.append(line);
          running.push(line);
        });
      },
      toolFinished(data) {
        keepingBottom(() => {
          const at = running.findIndex((line) => line.dataset.tool === data.name);
          let line = at < 0 ? null : running.splice(at, 1)[0];
          if (!line) {
            this.toolStarted(data);
            line = running.pop();
          }
          line.className = "tool-line " + (data.success ? "done" : "failed");
          mark(line, data.success ? "✓" : "✗", data.success ? "done" : "failed");
          const summary = String(data.summary || data.name || "");
          const path = typeof data.path === "string" && data.path ? data.path : null;
          const parts = [];
          const where = path ? summary.indexOf(path) : -1;
          if (where >= 0) parts.push(summary.slice(0, where), entryLink(path), summary.slice(where + path.length));
          else parts.push(summary, path ? " " : null, path ? entryLink(path) : null);
          line.querySelector(".tool-text").replaceChildren(...parts.filter((p) => p !== null && p !== ""));
        });
      },
      delta(piece) { text += piece; },
      // Renders the answer so far, when it grew since it was last shown.
      show() {
        if (text === shown || !text.trim()) return;
        shown = text;
        keepingBottom(() => {
          msg.classList.remove("pending");
          msg.innerHTML = renderMarkdown(text);
        });
      },
      // The turn failed: its answer was not kept, so the half-written one goes; tools that
      // were still running show they stopped.
      fail() {
        msg.remove();
        for (const line of running.splice(0)) {
          line.className = "tool-line failed";
          mark(line, "✗", "stopped");
          line.querySelector(".tool-text").append(" stopped");
        }
      },
    };
  }

  function confidenceText(c) {
    return typeof c === "number" ? c.toFixed(2) : "?";
  }

  function turnNote(turn) {
    const tools = turn.toolsUsed || [];
    const entry = turn.entry;
    if (!tools.length && !entry) return null;
    const note = el("div", { className: "turn-note", "data-testid": "turn-note" });
    const line = el("div");
    line.append(tools.length ? "kb used " + tools.join(", ") : "kb used no tools");
    if (entry && entry.path) {
      line.append(" · filed ", entryLink(entry.path, entry.path), " (confidence " + confidenceText(entry.confidence) + ")");
    }
    note.append(line);
    if (entry && entry.clarificationNeeded) {
      const q = el("div", { className: "inbox-question", role: "group", "aria-label": "Where does it belong?" });
      q.append("kb was not sure and put it in the inbox. Where does it belong? ");
      for (const target of CATEGORIES.filter((c) => c !== "inbox")) {
        q.append(el("button", {
          type: "button", text: target, onclick: async (ev) => {
            const buttons = q.querySelectorAll("button");
            buttons.forEach((b) => { b.disabled = true; });
            try {
              const moved = await api("POST", "/api/entries/" + encodeURIComponent(entry.path).replace(/%2F/g, "/") + "/move", { targetCategory: target });
              q.replaceChildren("Moved to ", entryLink(moved.newPath, moved.newPath), ".");
              refreshBrowse();
              loadStatus();
            } catch (e) {
              buttons.forEach((b) => { b.disabled = false; });
              const err = el("div", { className: "error", role: "alert", text: e.message });
              q.append(err);
              ev.target.focus();
            }
          },
        }));
      }
      note.append(q);
    }
    return note;
  }

  let sending = false;
  async function send() {
    const input = $("#message-input");
    const text = input.value;
    if (!text.trim() || sending) return;
    sending = true;
    $("#send").disabled = true;
    const log = $("#chat-log");
    appendUser(text);
    input.value = "";
    if (!navigator.onLine) {
      // No connection: kept, and filed as a capture once kb can be reached.
      queueCapture(text);
      sending = false;
      $("#send").disabled = false;
      input.focus();
      return;
    }
    const live = liveTurn();
    log.scrollTop = log.scrollHeight;
    try {
      const body = { message: text };
      if (currentId) body.conversationId = currentId;
      await showAnswer(await chatStream(body, live), live.msg);
    } catch (e) {
      live.fail();
      if (e.code === "unreachable") {
        // kb did not get it: kept, and filed as a capture once kb can be reached.
        queueCapture(text);
      } else {
        log.append(el("div", { className: "error", role: "alert", "data-testid": "chat-error", text: e.message + (e.status === 429 || e.status === 503 ? " Try again in a moment." : "") }));
        if (!input.value) input.value = text;
      }
    } finally {
      sending = false;
      $("#send").disabled = false;
      log.scrollTop = log.scrollHeight;
      input.focus();
    }
  }

  // A chat turn's answer (the JSON body, or the message.completed event's): the message with
  // what kb filed, into `msg` if it was being written live; then the lists it changed.
  async function showAnswer(data, msg) {
    const isNew = data.conversationId !== currentId;
    currentId = data.conversationId;
    appendAssistant(data.message.content, { toolsUsed: data.toolsUsed || [], entry: data.entry || null }, msg);
    if (data.entry) { refreshBrowse(); loadStatus(); }
    if (isNew) await loadConversations(); else loadConversations();
  }

  // ---------- captures waiting for kb ----------

  // A capture typed while kb cannot be reached (or shared from another app and filed with
  // a tap) waits in this browser (localStorage, so a reload or a closed app keeps it) with
  // a key made when it was queued. It is sent when the browser is back online, when the
  // page opens or is shown again, as soon as any other request reaches kb, and again a
  // second later, then two, four, up to every 5 seconds, as long as something waits (a
  // network just back often is not ready at once, and a slow machine may miss a few
  // tries); kb answers a key it has seen with its first result, so however often it is
  // sent it is filed once.
  //
  // Each waiting capture is sent in turn and none waits for another: one kb cannot take
  // now (busy, rate limited, still answering the same key) stays and is tried again while
  // the ones behind it go. Only when kb cannot be reached at all, or asks for its token,
  // does the round stop there: nothing behind would get through either. An answer that
  // needs the person — several entries it may be about (409 with candidates), a request kb
  // will not take as it is (422 and the other final refusals) — takes the capture off the
  // queue (sending it again would only get the same answer) and keeps it under "Not filed
  // yet" with its choices; the one picked is queued as a new request with a new key.
  const OUTBOX_KEY = "kb-outbox";
  const HELD_KEY = "kb-held";
  const FIRST_RETRY_MS = 1000;
  const LAST_RETRY_MS = 5000;
  let retryMs = FIRST_RETRY_MS;
  // True while what waits was last stopped by kb not being reached.
  let unreached = false;
  // A send that hangs (a network that drops packets) is given up after this, and tried again.
  const SEND_TIMEOUT_MS = 8000;
  let flushing = false;
  let flushAgain = false;
  // Stops the send under way (given up after SEND_TIMEOUT_MS, or when the network is back:
  // one started while it was away may never finish).
  let sendController = null;
  let retryTimer = null;

  function newKey() {
    if (crypto.randomUUID) return crypto.randomUUID();
    // Outside a secure context (plain http to another machine) randomUUID is missing.
    const b = crypto.getRandomValues(new Uint8Array(16));
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    const h = [...b].map((x) => x.toString(16).padStart(2, "0")).join("");
    return h.slice(0, 8) + "-" + h.slice(8, 12) + "-" + h.slice(12, 16) + "-" + h.slice(16, 20) + "-" + h.slice(20);
  }

  // A list of captures kept in localStorage under `name` (each with its key and text).
  function readList(name) {
    try {
      const items = JSON.parse(localStorage.getItem(name) || "[]");
      return Array.isArray(items) ? items.filter((i) => i && typeof i.key === "string" && typeof i.text === "string") : [];
    } catch (_) { return []; }
  }

  function writeList(name, items) {
    if (items.length) localStorage.setItem(name, JSON.stringify(items));
    else localStorage.removeItem(name);
  }

  function readOutbox() { return readList(OUTBOX_KEY); }
  function writeOutbox(items) { writeList(OUTBOX_KEY, items); }

  function dropFromOutbox(key) {
    writeOutbox(readOutbox().filter((i) => i.key !== key));
  }

  // Notes on a waiting capture why its last try did not file it (shown beside it).
  function noteOnWaiting(key, note) {
    writeOutbox(readOutbox().map((i) => (i.key === key ? Object.assign({}, i, { note }) : i)));
  }

  // Keeps `text` to be filed, with `choice` (`{mergeInto}` or `{createNew: true}`, the
  // person's pick after kb asked), shows it waiting, and tries to send it now.
  function queueCapture(text, choice, owner) {
    // It keeps the vault and the person it was written for (`owner`, when it was written
    // before: a held capture's): it is filed there, and only with that person's token.
    const from = owner || { vault: currentVault(), person: currentPerson() };
    const item = { key: newKey(), text, at: new Date().toISOString(), vault: from.vault, person: from.person };
    if (choice && typeof choice.mergeInto === "string") item.mergeInto = choice.mergeInto;
    if (choice && choice.createNew === true) item.createNew = true;
    writeOutbox(readOutbox().concat([item]));
    renderOutbox();
    flushOutbox();
  }

  // The body of `POST /api/capture` for a waiting capture.
  function captureBody(item) {
    const body = { text: item.text };
    if (typeof item.mergeInto === "string") body.mergeInto = item.mergeInto;
    if (item.createNew === true) body.createNew = true;
    return body;
  }

  function renderOutbox() {
    // A capture written as someone else waits out of sight: what they wrote is theirs.
    const items = readOutbox().filter((item) => !item.person || item.person === currentPerson());
    const box = $("#outbox");
    box.hidden = items.length === 0;
    $("#outbox-list").replaceChildren(...items.map((item) => el("li", { "data-key": item.key }, [
      el("span", { className: "outbox-text", text: item.text }),
      el("span", { className: "outbox-state", text: typeof item.note === "string" ? "waiting: " + item.note : "waiting" }),
    ])));
    renderHeld();
  }

  // What kb's refusal `e` of a waiting capture means for it: "retry" (kb cannot take it
  // now: unreachable, no token yet, busy, rate limited, the same key still being
  // answered) or "ask" (only the person can say what to do).
  function afterRefusal(e) {
    if (e.status === 0 || e.status === 401 || e.status === 408 || e.status === 429 || e.status >= 500) return "retry";
    if (e.status === 409 && e.code === "idempotency_in_progress") return "retry";
    return "ask";
  }

  // Sends what waits, oldest first, each with its key (see above).
  async function flushOutbox() {
    if (flushing) {
      // Asked while a run is under way (the network came back): run again once it ends.
      flushAgain = true;
      return;
    }
    flushing = true;
    flushAgain = false;
    clearTimeout(retryTimer);
    let waiting = false;
    try {
      for (const item of readOutbox()) {
        let filed;
        const controller = new AbortController();
        sendController = controller;
        const giveUp = setTimeout(() => controller.abort(), SEND_TIMEOUT_MS);
        if (item.person && (!personConfirmed || item.person !== currentPerson())) {
          // kb has not yet said whose token this is, or it is someone else's: it waits.
          clearTimeout(giveUp);
          sendController = null;
          if (personConfirmed) {
            noteOnWaiting(item.key, "written as " + item.person + ": sign in as them to file it");
          } else {
            // Asked again later should kb not say now (unreachable, busy): it waits.
            waiting = true;
            if (!vaultsLoading) loadVaults();
          }
          continue;
        }
        try {
          const headers = { "Idempotency-Key": item.key, "Kb-Vault": typeof item.vault === "string" ? item.vault : currentVault() };
          filed = await api("POST", "/api/capture", captureBody(item), headers, sendController.signal);
        } catch (e) {
          if (afterRefusal(e) === "retry") {
            waiting = true;
            unreached = e.status === 0;
            if (e.status === 0 || e.status === 401) break;
            noteOnWaiting(item.key, e.message);
            continue;
          }
          dropFromOutbox(item.key);
          holdForPerson(item, e);
          continue;
        } finally {
          clearTimeout(giveUp);
          sendController = null;
        }
        dropFromOutbox(item.key);
        unreached = false;
        const said = item.text.length > 80 ? item.text.slice(0, 79) + "…" : item.text;
        const where = filed.name || filed.path;
        const filedMsg = appendAssistant("", { toolsUsed: ["capture"], entry: filed });
        filedMsg.replaceChildren(el("p", {
          text: filed.merged
            ? "Filed “" + said + "”: added to " + where + " (" + filed.path + ")."
            : "Filed “" + said + "” as " + where + " in " + (filed.category || "kb") + ".",
        }));
        refreshBrowse();
        loadStatus();
      }
    } finally {
      flushing = false;
      renderOutbox();
      if (flushAgain) flushOutbox();
      else if (waiting) retrySoon();
      else retryMs = FIRST_RETRY_MS;
    }
  }

  // ---------- captures that need the person ----------

  // Whether the held capture `held` is for the person here: one written as someone is
  // shown (with the entries of their vault it names) only once kb said this is them.
  function heldHere(held) {
    return !held.person || (personConfirmed && held.person === currentPerson());
  }

  function readHeld() {
    return readList(HELD_KEY).map((held) => Object.assign({}, held, {
      candidates: (Array.isArray(held.candidates) ? held.candidates : [])
        .filter((c) => c && typeof c.path === "string" && typeof c.name === "string"),
    }));
  }

  // Keeps a capture kb answered with a question (`e`: its code, message and candidates)
  // until the person picks what to do with it.
  function holdForPerson(item, e) {
    const candidates = (Array.isArray(e.candidates) ? e.candidates : [])
      .filter((c) => c && typeof c.path === "string")
      .map((c) => ({ path: c.path, name: typeof c.name === "string" ? c.name : c.path }));
    // It keeps the person and vault it was written for: only they see it and file it.
    const held = { key: item.key, text: item.text, code: e.code, message: e.message, candidates,
      person: typeof item.person === "string" ? item.person : "", vault: typeof item.vault === "string" ? item.vault : currentVault() };
    if (typeof item.mergeInto === "string") held.mergeInto = item.mergeInto;
    if (item.createNew === true) held.createNew = true;
    writeList(HELD_KEY, readHeld().concat([held]));
  }

  // On a kb without accounts (`/api/vaults` names no one), a waiting capture written as one
  // of its people has no one to wait for: it is held, and the person sends it here again or
  // lets it go.
  function holdWrittenAsSomeone() {
    const theirs = readOutbox().filter((item) => item.person);
    for (const item of theirs) {
      dropFromOutbox(item.key);
      // Held for whoever is here now: there is no one else to ask.
      holdForPerson(Object.assign({}, item, { person: "" }), {
        code: "no_accounts",
        message: "Written as " + item.person + " when this kb had accounts; it has none now. Send it again to file it here.",
      });
    }
    // Captures held for one of its people too: there is no one else to show them to.
    const held = readHeld();
    if (held.some((h) => h.person)) writeList(HELD_KEY, held.map((h) => Object.assign({}, h, { person: "" })));
    renderOutbox();
  }

  // The person's pick for a held capture: `choice` is queued as a new request (a new key),
  // or, when null, the capture is let go.
  function pickForHeld(held, choice) {
    writeList(HELD_KEY, readHeld().filter((i) => i.key !== held.key));
    if (choice) queueCapture(held.text, choice, { person: held.person || "", vault: held.vault });
    else renderOutbox();
  }

  // The choices for a held capture: each entry it may be about, a new entry when kb asked
  // whether it is someone new, the same request again when kb named no entries, and
  // letting it go.
  function heldChoices(held) {
    const choices = held.candidates.map((c) => ({ label: "Add to " + c.name, choice: { mergeInto: c.path } }));
    if (held.code === "possible_duplicate") choices.push({ label: "File as new", choice: { createNew: true } });
    if (!held.candidates.length) {
      choices.push({ label: "Send again", choice: { mergeInto: held.mergeInto, createNew: held.createNew } });
    }
    choices.push({ label: "Don’t file", choice: null });
    return choices;
  }

  // Why a held capture was not filed, for the person (kb's message for a model asks it to
  // call again; here the buttons are the answer).
  function heldReason(held) {
    if (held.code === "possible_duplicate") return "It may be about an entry you already have: which one, or is it new?";
    if (held.code === "ambiguous") return "That name fits several entries: which one?";
    return held.message || held.code || "kb did not file it.";
  }

  function renderHeld() {
    const items = readHeld().filter(heldHere);
    $("#held").hidden = items.length === 0;
    $("#held-list").replaceChildren(...items.map((held) => el("li", { "data-key": held.key }, [
      el("span", { className: "outbox-text", text: held.text }),
      el("span", { className: "held-reason", text: heldReason(held) }),
      el("div", { className: "held-choices" }, heldChoices(held).map(({ label, choice }) =>
        el("button", { type: "button", text: label, onclick: () => pickForHeld(held, choice) }))),
    ])));
  }

  // Sends what waits at once, the wait between tries back to its first (the network is
  // back, the page is shown again, or kb just answered another request).
  function flushNow() {
    if (sendController) sendController.abort();
    retryMs = FIRST_RETRY_MS;
    flushOutbox();
  }

  // Called when a request reached kb: what waited for kb to be reached goes now.
  function kbReached() {
    if (!unreached || flushing) return;
    unreached = false;
    retryMs = FIRST_RETRY_MS;
    flushOutbox();
  }

  function retrySoon() {
    clearTimeout(retryTimer);
    retryTimer = setTimeout(flushOutbox, retryMs);
    retryMs = Math.min(retryMs * 2, LAST_RETRY_MS);
  }

  // ---------- sharing ----------

  // The page opened by a share (`/share?title=&text=&url=`, from the manifest's
  // share_target). Any site can open that address, so what was shared is only shown, in
  // a box the person may edit, and filed when they tap "File it"; nothing is sent on load.
  function takeShare() {
    if (location.pathname !== "/share") return;
    const params = new URLSearchParams(location.search);
    const parts = [];
    for (const name of ["title", "text", "url"]) {
      const value = (params.get(name) || "").trim();
      // Apps often put the link in the text too: once is enough.
      if (value && !parts.some((p) => p.includes(value))) parts.push(value);
    }
    const fileCount = Number(params.get("files") || 0);
    history.replaceState(null, "", "/");
    if (!parts.length && !fileCount) return;
    $("#share-text").value = parts.join("\n");
    $("#share").hidden = false;
    $("#share-file").focus();
    if (fileCount) sharedFiles().then(showSharedFiles);
  }

  // The files a share brought, kept by the service worker until they are filed or dropped.
  let shared = [];
  async function sharedFiles() {
    if (!("caches" in window)) return [];
    const cache = await caches.open(SHARE_CACHE);
    const files = [];
    for (const request of await cache.keys()) {
      const response = await cache.match(request);
      const name = decodeURIComponent(response.headers.get("X-Kb-Name") || "shared-file");
      files.push(new File([await response.blob()], name, { type: response.headers.get("Content-Type") || "" }));
    }
    return files;
  }

  function showSharedFiles(files) {
    shared = files;
    const list = $("#share-files");
    list.replaceChildren(...files.map((f) => el("li", { text: "📎 " + f.name })));
    list.hidden = !files.length;
  }

  async function dropSharedFiles() {
    shared = [];
    $("#share-files").hidden = true;
    if ("caches" in window) await caches.delete(SHARE_CACHE);
  }

  function fileShare() {
    const text = $("#share-text").value;
    const files = shared;
    if (!text.trim() && !files.length) return;
    closeShare();
    if (text.trim()) {
      appendUser(text);
      queueCapture(text);
    }
    if (files.length) sendFiles(files, "files");
  }

  function closeShare() {
    $("#share").hidden = true;
    $("#share-text").value = "";
    dropSharedFiles();
    $("#message-input").focus();
  }

  // ---------- files and voice notes ----------

  // A file's bytes go as they are, with their own type. kb refuses the three types a page of
  // any site may send without asking first, so a file of one of them goes as octet-stream.
  const FORM_TYPES = ["application/x-www-form-urlencoded", "multipart/form-data", "text/plain"];
  function uploadType(type) {
    const essence = (type || "").split(";")[0].trim().toLowerCase();
    return !essence || FORM_TYPES.includes(essence) ? "application/octet-stream" : type;
  }

  // Sends `blob` to `/api/files` or `/api/voice` as `name`; answers kb's data. Sent again
  // after a lost answer, the same key files it once.
  async function upload(route, name, blob) {
    const key = newKey();
    for (let attempt = 0; attempt < 2; attempt++) {
      const headers = { "Accept": "application/json", "Content-Type": uploadType(blob.type), "Idempotency-Key": key };
      if (currentVault()) headers["Kb-Vault"] = currentVault();
      const token = localStorage.getItem(TOKEN_KEY);
      if (token) headers["Authorization"] = "Bearer " + token;
      const sentAs = currentPerson();
      let response;
      try {
        response = await fetch("/api/" + route + "?name=" + encodeURIComponent(name), { method: "POST", headers, body: blob });
      } catch (e) {
        throw new ApiError(0, "unreachable", "kb cannot be reached: a file or a voice note needs a connection to kb");
      }
      if (response.status === 401 && sentAs) refusedAsPerson(token);
      if (response.status === 401 && attempt === 0) {
        // As in `request`: a token kept since this was sent is tried, not thrown away.
        if (localStorage.getItem(TOKEN_KEY) !== token) continue;
        localStorage.removeItem(TOKEN_KEY);
        if (await askForToken(Boolean(token))) continue;
      }
      const data = await responseData(response);
      if (!response.ok) {
        const err = data && data.error ? data.error : {};
        throw new ApiError(response.status, err.code || "http_" + response.status, err.message || "kb answered " + response.status);
      }
      return data;
    }
    throw new ApiError(401, "unauthorized", "This kb needs its API token.");
  }

  // What kb did with a file or a voice note, said in the conversation.
  function filedText(data) {
    const link = "[" + data.name.replace(/[[\]]/g, "") + "](" + entryHref(data.path) + ")";
    let text = "Filed " + link + " in " + data.category + ".";
    if (data.attachment) text += " The file is kept as `" + data.attachment + "`.";
    if (data.transcribed === false) text += "\n\nIt was not transcribed: " + (data.problem || "no words were heard") + ".";
    else if (data.clarificationNeeded) text += " kb was not sure where it belongs: it waits in the inbox.";
    return text;
  }

  async function sendFiles(files, route) {
    for (const file of files) {
      const label = route === "voice" ? "🎤 voice note" : "📎 " + file.name;
      appendUser(label);
      const msg = el("div", { className: "msg assistant", "data-role": "assistant", "aria-busy": "true", text: "Filing…" });
      $("#chat-log").append(msg);
      try {
        const data = await upload(route, file.name, file);
        appendAssistant(filedText(data), freshTurn(), msg);
        refreshBrowse();
        loadStatus();
      } catch (e) {
        appendAssistant("Not filed: " + e.message, freshTurn(), msg);
      }
    }
  }

  function attachFiles() {
    const input = $("#attach-input");
    const files = [...input.files];
    input.value = "";
    if (files.length) sendFiles(files, "files");
  }

  // A voice note: recorded while the button is pressed, sent when it is pressed again.
  let recorder = null;
  async function toggleRecording() {
    const button = $("#record");
    if (recorder) {
      recorder.stop();
      return;
    }
    if (navigator.onLine === false) {
      appendAssistant("A voice note needs a connection to kb: it is transcribed when it is filed.", freshTurn());
      return;
    }
    let stream;
    try {
      stream = await navigator.mediaDevices.getUserMedia({ audio: true });
    } catch (e) {
      appendAssistant("kb cannot record here: " + (e && e.message ? e.message : "no microphone") + ".", freshTurn());
      return;
    }
    const chunks = [];
    recorder = new MediaRecorder(stream);
    recorder.addEventListener("dataavailable", (ev) => { if (ev.data && ev.data.size) chunks.push(ev.data); });
    recorder.addEventListener("stop", () => {
      const type = recorder.mimeType || "audio/webm";
      stream.getTracks().forEach((t) => t.stop());
      recorder = null;
      button.setAttribute("aria-pressed", "false");
      button.textContent = "🎤";
      const extension = type.includes("ogg") ? "ogg" : type.includes("mp4") ? "m4a" : "webm";
      const blob = new Blob(chunks, { type });
      if (blob.size) sendFiles([new File([blob], "voice-note." + extension, { type })], "voice");
    });
    recorder.start();
    button.setAttribute("aria-pressed", "true");
    button.textContent = "⏹";
  }

  // ---------- search ----------

  // Each search gets a number; an answer to an older one than the newest shown is dropped,
  // so a slow answer never replaces what the person typed since.
  let searchSeq = 0;
  let searchShown = 0;
  let typingTimer = null;
  // Results while typing: the last word may be unfinished ("landl" lists the landlord note).
  const TYPING_DELAY_MS = 200;

  function searchWhileTyping() {
    clearTimeout(typingTimer);
    typingTimer = setTimeout(() => search($("#search-input").value, true), TYPING_DELAY_MS);
  }

  async function search(q, asYouType) {
    const list = $("#search-results");
    const count = $("#search-count");
    const seq = ++searchSeq;
    if (!asYouType) clearTimeout(typingTimer);
    showError($("#search-error"), null);
    if (!q.trim()) { searchShown = seq; list.replaceChildren(); count.textContent = ""; return; }
    try {
      const data = await api("GET", "/api/search?q=" + encodeURIComponent(q) + (asYouType ? "&prefix=true" : ""));
      if (seq < searchShown) return;
      searchShown = seq;
      const hits = data.entries || [];
      // `total` counts the entries holding every word; `partialTotal` those holding some
      // (a question), listed after them; `semanticHits` the hits of the page found by
      // meaning only (hybrid search).
      const byMeaning = data.semanticHits || 0;
      const partial = data.partialTotal || 0;
      const entries = (n) => n === 1 ? "1 entry" : n + " entries";
      const some = partial ? ", " + partial + " with some of the words" : "";
      count.textContent = !hits.length ? "No entries match “" + q + "”."
        : data.total === 0 && byMeaning && !partial ? entries(byMeaning) + " by meaning"
        : entries(data.total) + some + (byMeaning ? ", " + byMeaning + " more by meaning" : "") + (data.fuzzy ? " (close matches)" : "");
      if (data.notice) count.textContent += " — " + data.notice;
      list.replaceChildren(...hits.map((h) => {
        const snippet = el("p", { className: "snippet" });
        snippet.innerHTML = snippetHtml(h.snippet || "");
        const meaning = h.matchedBy === "semantic" ? el("span", { className: "badge by-meaning", text: "by meaning" })
          : h.matchedBy === "partial" ? el("span", { className: "badge by-meaning", text: "some words" }) : null;
        return el("li", { className: "search-hit" }, [
          entryLink(h.path, h.name, h.passage), " ", el("span", { className: "badge", text: h.category }), meaning ? " " : null, meaning, snippet,
        ]);
      }));
    } catch (e) {
      list.replaceChildren();
      count.textContent = "";
      showError($("#search-error"), e);
    }
  }

  // ---------- browse ----------

  let browseOffset = 0;
  // Each list asked for gets a number: an answer to an older one than the newest is dropped
  // (two refreshes at once would otherwise both add their page).
  let browseSeq = 0;
  async function browse(append) {
    const seq = ++browseSeq;
    const category = $("#category-select").value;
    const list = $("#entry-list");
    showError($("#browse-error"), null);
    const from = append ? browseOffset : 0;
    try {
      let url = "/api/entries?limit=" + PAGE_SIZE + "&offset=" + from;
      if (category) url += "&category=" + encodeURIComponent(category);
      const data = await api("GET", url);
      if (seq !== browseSeq) return;
      const items = (data.entries || []).map((e) => el("li", {}, [
        entryLink(e.path, e.name), " ", el("span", { className: "badge", text: e.category }),
        e.status ? el("span", { className: "meta", text: " · " + e.status }) : null,
        e.summary ? el("p", { className: "snippet", text: e.summary }) : null,
      ]));
      if (append) list.append(...items); else list.replaceChildren(...items);
      browseOffset = from + items.length;
      $("#browse-count").textContent = data.total === 0
        ? "No entries" + (category ? " in " + category : "") + " yet."
        : "Showing " + browseOffset + " of " + data.total;
      $("#browse-more").hidden = browseOffset >= data.total;
    } catch (e) {
      if (seq === browseSeq) showError($("#browse-error"), e);
    }
  }
  function refreshBrowse() { browse(false); }

  // ---------- today: nudges and the latest digest ----------

  const RULE_LABELS = {
    admin_due: "due", follow_up: "follow-up", stale_project: "stale project", inbox_waiting: "inbox", no_capture: "quiet",
    sync_conflict: "sync conflict",
  };
  // How a sync conflict is resolved from its nudge: what each button keeps.
  const KEEPS = [
    ["mine", "Keep this copy", "the copy's version is the note now"],
    ["theirs", "Keep the note", "the note stays, the copy is gone"],
    ["both", "Keep both", "both are notes now"],
  ];
  // The rules whose nudge can be marked done (the others: file the entry, or snooze).
  const DONE_RULES = ["admin_due", "follow_up", "stale_project"];

  function loadToday() {
    $("#nudges-notice").textContent = "";
    return Promise.all([loadNudges(), loadDigest()]);
  }

  async function loadNudges() {
    const count = $("#nudges-count");
    showError($("#nudges-error"), null);
    if (!$("#nudge-list").children.length) count.textContent = "Loading the nudges…";
    try {
      const data = await api("GET", "/api/nudges");
      const nudges = data.nudges || [];
      count.textContent = nudges.length === 0 ? "Nothing needs you right now."
        : nudges.length === 1 ? "1 nudge" : nudges.length + " nudges";
      $("#nudge-list").replaceChildren(...nudges.map(nudgeItem));
    } catch (e) {
      count.textContent = "";
      showError($("#nudges-error"), e);
    }
  }

  function nudgeItem(nudge) {
    const about = nudge.name || nudge.message;
    const actions = el("div", { className: "nudge-actions", role: "group", "aria-label": "Nudge: " + about });
    if (DONE_RULES.includes(nudge.rule)) {
      actions.append(el("button", {
        type: "button", className: "nudge-done", text: "Done", "aria-label": "Done: " + about,
        onclick: () => nudgeAction(nudge, "/api/nudges/done", { key: nudge.key }, "Marked “" + about + "” done.", true),
      }));
    }
    // kb's own copies of notes can be resolved here; another tool's copy, or one of a file
    // that is not a note, is kept or deleted by hand.
    if (nudge.rule === "sync_conflict" && nudge.path && /\.conflict-[^/]*\.md$/.test(nudge.path)) {
      for (const [keep, label, said] of KEEPS) {
        actions.append(el("button", {
          type: "button", className: "nudge-keep", text: label, "aria-label": label + ": " + nudge.path,
          onclick: () => nudgeAction(nudge, "/api/sync/resolve", { path: nudge.path, keep: keep }, "Resolved: " + said + ".", true),
        }));
      }
    }
    actions.append(el("button", {
      type: "button", className: "nudge-snooze", text: "Snooze a week", "aria-label": "Snooze for a week: " + about,
      onclick: () => nudgeAction(nudge, "/api/nudges/snooze", { key: nudge.key, days: 7 }, "Snoozed “" + about + "” for a week.", false),
    }));
    if (nudge.path) {
      const open = entryLink(nudge.path, "Open");
      open.classList.add("nudge-open");
      open.setAttribute("aria-label", "Open “" + about + "”");
      actions.append(open);
    }
    return el("li", { className: "nudge", "data-key": nudge.key, "data-rule": nudge.rule }, [
      el("p", { className: "nudge-message" }, [
        el("span", { className: "badge", text: RULE_LABELS[nudge.rule] || nudge.rule }), " " + nudge.message,
      ]),
      actions,
    ]);
  }

  // Done, snooze or resolve (a POST of `body` to `url`), then the nudges again (and the
  // entries, when `changes` says the vault changed); focus goes to the row that took its place.
  async function nudgeAction(nudge, url, body, notice, changes) {
    const list = $("#nudge-list");
    const rows = [...list.children];
    const row = rows.find((li) => li.dataset.key === nudge.key);
    const buttons = row ? row.querySelectorAll("button") : [];
    buttons.forEach((b) => { b.disabled = true; });
    showError($("#nudges-error"), null);
    try {
      const done = await api("POST", url, body);
      $("#nudges-notice").textContent = notice;
      if (changes) {
        const path = done && (done.path || done.note);
        if (path && path === shownPath) openEntry(path);
        refreshBrowse();
        loadStatus();
      }
      await loadNudges();
      const next = list.children[Math.min(rows.indexOf(row), list.children.length - 1)];
      const target = next && next.querySelector("button, a");
      (target || list).focus();
    } catch (e) {
      buttons.forEach((b) => { b.disabled = false; });
      showError($("#nudges-error"), e);
    }
  }

  const isToday = (at) => new Date(at).toDateString() === new Date().toDateString();

  async function loadDigest() {
    showError($("#digest-error"), null);
    try {
      const data = await api("GET", "/api/digests?limit=1");
      showDigest((data.digests || [])[0] || null);
    } catch (e) {
      showError($("#digest-error"), e);
    }
  }

  function showDigest(digest) {
    const view = $("#digest-view");
    if (!digest) {
      view.replaceChildren(el("p", { className: "results-count", text: "No digest kept yet." }));
    } else {
      const body = el("article", { className: "digest-body", "data-testid": "digest-body", "aria-label": digest.title });
      body.innerHTML = renderMarkdown(digest.markdown);
      view.replaceChildren(el("p", { className: "results-count", text: digest.title + " · written " + timeText(digest.createdAt) }), body);
    }
    $("#write-digest").hidden = Boolean(digest) && isToday(digest.createdAt);
  }

  async function writeDigest() {
    const button = $("#write-digest");
    button.disabled = true;
    showError($("#digest-error"), null);
    try {
      const digest = await api("POST", "/api/digests", { type: "daily" });
      showDigest(Object.assign({ createdAt: new Date().toISOString() }, digest));
      $("#digest-view").focus();
    } catch (e) {
      showError($("#digest-error"), e);
    } finally {
      button.disabled = false;
    }
  }

  // ---------- entry view ----------

  function fieldText(value) {
    if (Array.isArray(value)) return value.map(fieldText).join(", ");
    if (value && typeof value === "object") return JSON.stringify(value);
    return String(value);
  }

  function entryUrl(path) {
    return "/api/entries/" + path.split("/").map(encodeURIComponent).join("/");
  }

  // The last lines of the passages search hits named, by `path:start`: a page opened at a
  // hit's first line marks the whole passage (one opened at a line from elsewhere, that line).
  const passageEnds = new Map();
  function rememberPassage(path, start, end) {
    if (passageEnds.size > 500) passageEnds.clear();
    passageEnds.set(path + ":" + start, end);
  }

  // Lines shown around a passage, before and after it; the most lines a passage shows.
  const PASSAGE_CONTEXT = 2;
  const PASSAGE_LINES = 40;

  // The lines of the entry at `path` around the passage starting at `line` (its end when a
  // hit named it), numbered, the passage's own lines marked; null when they cannot be read
  // (a line past the end: the entry is shown without them).
  async function passageSection(path, line) {
    const end = Math.max(line, Math.min(passageEnds.get(path + ":" + line) || line, line + PASSAGE_LINES - 1));
    const first = Math.max(1, line - PASSAGE_CONTEXT);
    let data;
    try {
      data = await api("GET", entryUrl(path) + "?lines=" + first + "-" + (end + PASSAGE_CONTEXT));
    } catch (_) { return null; }
    const lines = data.lines;
    if (!lines || typeof lines.text !== "string") return null;
    const rows = lines.text.split("\n").map((text, i) => {
      const number = lines.start + i;
      const inside = number >= line && number <= end;
      return el("div", { className: "source-line" + (inside ? " passage-line" : ""), "data-line": String(number) }, [
        el("span", { className: "line-number", "aria-hidden": "true", text: String(number) }),
        inside ? el("mark", { text: text }) : text,
      ]);
    });
    return el("section", { className: "entry-passage", "data-testid": "entry-passage", "aria-label": "Lines " + line + (end > line ? "–" + end : "") + " of the file" }, [
      el("h3", { text: "Line " + line + (end > line ? "–" + end : "") }),
      el("div", { className: "source-lines" }, rows),
    ]);
  }

  let shownPath = null;
  let shownLine = null;
  let entryLoads = 0;
  // Shows the entry at `path` with its history; `notice` (text) says what just happened;
  // `line` (a number), the lines of its file from there, marked, above the notes.
  async function openEntry(path, notice, line) {
    const view = $("#entry-view");
    view.hidden = false;
    if (isNarrow()) setView("browse");
    const load = ++entryLoads;
    const noticeNode = notice ? el("p", { className: "entry-notice", role: "status", "data-testid": "entry-notice", text: notice }) : null;
    try {
      const passage = line ? passageSection(path, line) : Promise.resolve(null);
      const data = await api("GET", entryUrl(path));
      const passageNode = await passage;
      if (load !== entryLoads) return;
      const entry = data.entry;
      shownPath = entry.path;
      shownLine = line || null;
      const fields = el("dl");
      for (const [key, value] of Object.entries(entry.frontmatter || {})) {
        if (key === "name" || value === null || value === "") continue;
        fields.append(el("dt", { text: key.replace(/_/g, " ") }), el("dd", { text: fieldText(value) }));
      }
      const body = el("div", { className: "entry-body", "data-testid": "entry-body" });
      body.innerHTML = renderMarkdown(entry.content || "") || "<p class=\"meta\">No notes.</p>";
      view.replaceChildren(...[
        el("div", { className: "panel-head flush" }, [
          el("h2", { id: "entry-name", "data-testid": "entry-name", text: entry.name || entry.path }),
          el("button", { type: "button", id: "entry-close", text: "Close", "aria-label": "Close the entry", onclick: closeEntry }),
        ]),
        noticeNode,
        el("div", { className: "entry-path" }, [el("span", { className: "badge", text: entry.category }), " " + entry.path]),
        passageNode, fields, body, linksSection(data), relatedSection(data), historySection(entry.path),
      ].filter(Boolean));
      if (passageNode) {
        const marked = passageNode.querySelector(".passage-line");
        if (marked) marked.scrollIntoView({ block: "center" });
        view.focus({ preventScroll: true });
        return;
      }
    } catch (e) {
      if (load !== entryLoads) return;
      shownPath = null;
      shownLine = null;
      // A deleted entry's history stays reachable by its last path: show it, to restore from.
      view.replaceChildren(...[
        el("div", { className: "panel-head flush" }, [
          el("h2", { text: path }),
          el("button", { type: "button", id: "entry-close", text: "Close", onclick: closeEntry }),
        ]),
        noticeNode,
        el("p", { className: "error", role: "alert", text: e.message }),
        e.status === 404 && ENTRY_PATH.test(path) ? historySection(path) : null,
      ].filter(Boolean));
    }
    view.scrollIntoView({ block: "nearest" });
    view.focus({ preventScroll: true });
  }

  // ---------- entry links ----------

  // What the entry links to and what links to it (`data.links`, `data.backlinks` of
  // get_entry), each note a link that opens it (a file that is not a note by its path, a
  // broken link as written), with the line that links; none: nothing.
  function linksSection(data) {
    const list = (title, testid, notes) => notes.length === 0 ? [] : [
      el("h3", { text: title }),
      el("ul", { className: "link-list", "data-testid": testid }, notes.map((note) => el("li", {}, [
        note.path ? entryLink(note.path, note.name)
          : note.kind === "file" ? el("span", { className: "file", title: "a file of the vault", text: note.file || note.name })
          : el("span", { className: "unresolved", title: "no such note", text: note.name }),
        el("span", { className: "meta", text: " — " + note.line }),
      ]))),
    ];
    const parts = [...list("Links to", "links-to", data.links || []), ...list("Linked from", "linked-from", data.backlinks || [])];
    return parts.length === 0 ? null : el("section", { className: "entry-links", "data-testid": "entry-links" }, parts);
  }

  // The entries nearest this one in meaning (`data.related` of get_entry, with an
  // embedding model), each a link that opens it; none: nothing.
  function relatedSection(data) {
    const related = data.related || [];
    if (related.length === 0) return null;
    return el("section", { className: "entry-links", "data-testid": "entry-related" }, [
      el("h3", { text: "Related" }),
      el("ul", { className: "link-list", "data-testid": "related-list" }, related.map((r) => el("li", {}, [
        entryLink(r.path, r.name),
        el("span", { className: "meta", text: " — " + r.category }),
      ]))),
    ]);
  }

  // ---------- entry history ----------

  function historySection(path) {
    const list = el("ol", { className: "history-list", "data-testid": "history-list" });
    const count = el("p", { className: "results-count", text: "Loading the history…" });
    const error = el("p", { className: "error", role: "alert" });
    loadHistory(path, list, count, error);
    return el("section", { className: "entry-history", "data-testid": "entry-history", "aria-labelledby": "history-title" }, [
      el("h3", { id: "history-title", text: "History" }), count, error, list,
    ]);
  }

  async function loadHistory(path, list, count, error) {
    try {
      const data = await api("GET", entryUrl(path) + "/history");
      const revisions = data.revisions || [];
      count.textContent = revisions.length === 0 ? "No changes recorded yet."
        : revisions.length === 1 ? "1 change" : revisions.length + " changes, newest first";
      list.replaceChildren(...revisions.map((r, i) => revisionItem(path, r, i === 0)));
    } catch (e) {
      count.textContent = "";
      showError(error, e);
    }
  }

  function timeText(at) {
    const when = new Date(at);
    return isNaN(when.getTime()) ? String(at) : when.toLocaleString();
  }

  // One revision: when, who, what; opened, its diff and a button to go back to it.
  function revisionItem(path, revision, newest) {
    const summary = el("summary", {}, [
      el("time", { datetime: revision.at, text: timeText(revision.at) }), " ",
      el("span", { className: "badge", text: revision.source }),
      revision.tool ? el("span", { className: "meta", text: " " + revision.tool }) : null,
      el("span", { className: "revision-description", text: revision.description }),
    ]);
    const details = el("details", { className: "revision" }, [summary]);
    let loaded = false;
    details.addEventListener("toggle", () => {
      if (details.open && !loaded) {
        loaded = true;
        loadRevision(path, revision, newest, details).catch(() => { loaded = false; });
      }
    });
    return el("li", { "data-revision": String(revision.id) }, [details]);
  }

  async function loadRevision(path, revision, newest, details) {
    const box = el("div", { className: "revision-body" }, [el("p", { className: "meta", text: "Loading the change…" })]);
    details.append(box);
    let full;
    try {
      full = await api("GET", entryUrl(path) + "/history/" + encodeURIComponent(revision.id));
    } catch (e) {
      box.remove();
      details.append(el("p", { className: "error", role: "alert", text: e.message }));
      throw e;
    }
    const parts = [];
    if (full.pathBefore && full.pathAfter && full.pathBefore !== full.pathAfter) {
      parts.push(el("p", { className: "meta", text: "Moved from " + full.pathBefore + " to " + full.pathAfter + "." }));
    }
    parts.push(...diffView(full.before, full.after));
    // The newest revision is the entry as it is, unless it deleted it.
    if (!newest || full.after === null) {
      const restore = el("button", { type: "button", className: "restore", text: "Restore this version" });
      restore.addEventListener("click", () => restoreRevision(path, revision, restore, box));
      parts.push(restore);
    }
    box.replaceChildren(...parts);
  }

  async function restoreRevision(path, revision, button, box) {
    button.disabled = true;
    try {
      const done = await api("POST", entryUrl(path) + "/restore", { revision: revision.id });
      const notice = done.revision === undefined || done.revision === null
        ? "The entry already has the text of the version of " + timeText(revision.at) + "."
        : "Restored the version of " + timeText(revision.at) + ". Its history keeps the text it replaced.";
      const href = entryHref(done.path);
      if (location.hash !== href) history.replaceState(null, "", href);
      await openEntry(done.path, notice);
      refreshBrowse();
      loadStatus();
    } catch (e) {
      button.disabled = false;
      box.append(el("p", { className: "error", role: "alert", text: e.message }));
      button.focus();
    }
  }

  // The lines of a file's text (none for no file); a final newline ends the last line.
  function textLines(text) {
    if (text === null || text === undefined) return [];
    const lines = String(text).split("\n");
    if (lines[lines.length - 1] === "") lines.pop();
    return lines;
  }

  // A line diff of `a` → `b`: [kind, line] with kind "same", "del" or "add". The longest
  // common subsequence of the lines between the common head and tail (entry-sized files;
  // past a couple of million line pairs, the middle is shown as all removed, then added).
  function lineDiff(a, b) {
    let head = 0;
    while (head < a.length && head < b.length && a[head] === b[head]) head++;
    let tail = 0;
    while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
    const x = a.slice(head, a.length - tail);
    const y = b.slice(head, b.length - tail);
    const ops = a.slice(0, head).map((line) => ["same", line]);
    const n = x.length;
    const m = y.length;
    let i = 0;
    let j = 0;
    if (n * m <= 2000000) {
      const w = m + 1;
      const common = new Uint32Array((n + 1) * w); // common[i*w+j]: LCS of x[i..] and y[j..]
      for (let p = n - 1; p >= 0; p--) {
        for (let q = m - 1; q >= 0; q--) {
          common[p * w + q] = x[p] === y[q] ? common[(p + 1) * w + q + 1] + 1
            : Math.max(common[(p + 1) * w + q], common[p * w + q + 1]);
        }
      }
      while (i < n && j < m) {
        if (x[i] === y[j]) { ops.push(["same", x[i]]); i++; j++; }
        else if (common[(i + 1) * w + j] >= common[i * w + j + 1]) { ops.push(["del", x[i]]); i++; }
        else { ops.push(["add", y[j]]); j++; }
      }
    }
    for (; i < n; i++) ops.push(["del", x[i]]);
    for (; j < m; j++) ops.push(["add", y[j]]);
    for (const line of a.slice(a.length - tail)) ops.push(["same", line]);
    return ops;
  }

  const DIFF_CONTEXT = 2;
  // The diff as nodes: a one-line summary, then the changed lines with a little context.
  // Every line is text (textContent), never markup.
  function diffView(before, after) {
    const ops = lineDiff(textLines(before), textLines(after));
    const added = ops.filter((o) => o[0] === "add").length;
    const removed = ops.filter((o) => o[0] === "del").length;
    const plural = (k, what) => k + " line" + (k === 1 ? "" : "s") + " " + what;
    let summary;
    if (before === null || before === undefined) summary = "Created: " + plural(added, "added");
    else if (after === null || after === undefined) summary = "Deleted: " + plural(removed, "removed");
    else if (!added && !removed) summary = before === after ? "The text did not change." : "Only line endings changed.";
    else summary = [added ? plural(added, "added") : "", removed ? plural(removed, "removed") : ""].filter(Boolean).join(", ");
    const parts = [el("p", { className: "meta diff-summary", text: summary })];
    if (!added && !removed) return parts;
    const near = ops.map(() => false);
    ops.forEach((o, k) => {
      if (o[0] === "same") return;
      for (let d = Math.max(0, k - DIFF_CONTEXT); d <= Math.min(ops.length - 1, k + DIFF_CONTEXT); d++) near[d] = true;
    });
    const box = el("div", { className: "diff", "data-testid": "diff", role: "group", "aria-label": "Changes: " + summary });
    let skipped = 0;
    const flush = () => {
      if (skipped) box.append(el("div", { className: "diff-line diff-skip", text: "… " + plural(skipped, "unchanged") }));
      skipped = 0;
    };
    ops.forEach((o, k) => {
      if (!near[k]) { skipped++; return; }
      flush();
      const [kind, line] = o;
      const tag = kind === "add" ? "ins" : kind === "del" ? "del" : "div";
      box.append(el(tag, { className: "diff-line diff-" + kind }, [
        el("span", { className: "diff-mark", "aria-hidden": "true", text: kind === "add" ? "+" : kind === "del" ? "−" : " " }),
        line,
      ]));
    });
    flush();
    parts.push(box);
    return parts;
  }

  function closeEntry() {
    const view = $("#entry-view");
    view.hidden = true;
    view.replaceChildren();
    shownPath = null;
    shownLine = null;
    if (location.hash.startsWith("#/entry/")) history.replaceState(null, "", location.pathname + location.search);
  }

  // The entry the address names (`#/entry/PATH`, `#/entry/PATH?line=N`): `{path, line}`
  // (`line` null when none, or not a line number), or null.
  function entryFromHash() {
    if (!location.hash.startsWith("#/entry/")) return null;
    const [encoded, query] = location.hash.slice("#/entry/".length).split("?", 2);
    let path;
    try { path = encoded.split("/").map(decodeURIComponent).join("/"); } catch (_) { return null; }
    const wanted = new URLSearchParams(query || "").get("line");
    const line = wanted && /^[1-9][0-9]{0,8}$/.test(wanted) ? Number(wanted) : null;
    return { path: path, line: line };
  }

  // ---------- wiring ----------

  // Where sync stands, in a few words: `/healthz`'s `sync`.
  function syncStatus(sync) {
    const state = sync.state === "failing" ? "sync failing"
      : sync.state === "syncing" ? "syncing"
      : sync.lastSync ? "synced " + new Date(sync.lastSync).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" })
      : "not synced yet";
    const conflicts = sync.conflicts || 0;
    return conflicts === 0 ? state
      : state + " · " + conflicts + (conflicts === 1 ? " conflict (see Today)" : " conflicts (see Today)");
  }

  async function loadStatus() {
    try {
      const response = await fetch("/healthz");
      const h = await response.json();
      const model = h.model === "offline" ? "offline model" : "model " + h.model;
      let text = model + " · " + h.entries + (h.entries === 1 ? " entry" : " entries");
      if (h.sync) text += " · " + syncStatus(h.sync);
      $("#status").textContent = text;
    } catch (_) { $("#status").textContent = "kb cannot be reached"; }
  }

  // Once kb has accounts: who the token speaks for, and the vaults they may use, to pick
  // from in the header (shown when there are two or more).
  let vaultsLoading = false;
  async function loadVaults() {
    let data;
    vaultsLoading = true;
    // The token asked about: an answer that comes once another is kept (another tab, the
    // token dialog) is about someone who may no longer be here, and is asked again.
    const asked = localStorage.getItem(TOKEN_KEY);
    try { data = await api("GET", "/api/vaults"); } catch (_) { return; } finally { vaultsLoading = false; }
    if (localStorage.getItem(TOKEN_KEY) !== asked) {
      loadVaults();
      return;
    }
    if (!data || !Array.isArray(data.vaults)) return;
    if (typeof data.person === "string") {
      localStorage.setItem(PERSON_KEY, data.person);
      personConfirmed = true;
      // Captures that waited to know whose token this is may go now; those held for the
      // person show.
      renderOutbox();
      if (readOutbox().length) flushOutbox();
    } else {
      // A kb without accounts has no one to name: a person kept from before is forgotten.
      localStorage.removeItem(PERSON_KEY);
      holdWrittenAsSomeone();
    }
    const select = $("#vault-select");
    select.hidden = data.vaults.length < 2;
    // The first vault of the person's own is the one reached without naming any.
    const first = data.vaults.findIndex((v) => v.own);
    select.replaceChildren(...data.vaults.map((v, i) => {
      const label = v.name + (v.own ? " (yours)" : "") + (v.role === "reader" ? " · read only" : "");
      const option = el("option", { value: i === first ? "" : v.name, text: label });
      if (v.current) option.selected = true;
      return option;
    }));
  }

  function switchVault() {
    const chosen = $("#vault-select").value;
    if (chosen) localStorage.setItem(VAULT_KEY, chosen); else localStorage.removeItem(VAULT_KEY);
    // Everything on the page is the vault's: it opens afresh in the one chosen.
    location.hash = "";
    location.reload();
  }

  // ---------- sign-in links ----------

  // Asks kb to mail a sign-in link to the person named in the token dialog. kb answers the
  // same whoever is named; the link leads back here, with its code after #sign-in=.
  async function askForLink(ev) {
    ev.preventDefault();
    const name = $("#sign-in-name").value.trim();
    if (!name) return;
    const said = $("#sign-in-said");
    try {
      const response = await fetch("/api/sign-in", { method: "POST", headers: { "Content-Type": "application/json", "Accept": "application/json" }, body: JSON.stringify({ name }) });
      const data = await responseData(response);
      said.textContent = data && data.message ? data.message : (data && data.error ? data.error.message : "kb answered " + response.status);
    } catch (_) { said.textContent = "kb cannot be reached."; }
  }

  // A sign-in link opened here: the code is used up only when the person says so (a POST),
  // never by opening the page, so a mail scanner that follows the link uses nothing.
  function useSignInLink() {
    if (!location.hash.startsWith("#sign-in=")) return;
    const code = location.hash.slice("#sign-in=".length);
    history.replaceState(null, "", location.pathname);
    const dialog = $("#sign-in-dialog");
    // Resolves true once signed in (the token is kept), false when the person says no.
    signInWaiter = new Promise((resolve) => {
      const answered = async () => {
        if (dialog.returnValue !== "use") {
          dialog.removeEventListener("close", answered);
          signInWaiter = null;
          resolve(false);
          return;
        }
        try {
          const response = await fetch("/api/sign-in/redeem", { method: "POST", headers: { "Content-Type": "application/json", "Accept": "application/json" }, body: JSON.stringify({ code }) });
          const data = await responseData(response);
          if (response.ok && data && data.token) {
            dialog.removeEventListener("close", answered);
            // No tab ever sees the new token beside the person before, nor the other way round.
            localStorage.removeItem(PERSON_KEY);
            localStorage.setItem(TOKEN_KEY, data.token);
            localStorage.setItem(PERSON_KEY, data.person);
            localStorage.removeItem(VAULT_KEY);
            signInWaiter = null;
            resolve(true);
            loadVaults();
            return;
          }
          $("#sign-in-problem").textContent = data && data.error ? data.error.message : "This link did not work.";
        } catch (_) { $("#sign-in-problem").textContent = "kb cannot be reached."; }
        dialog.showModal();
      };
      dialog.addEventListener("close", answered);
    });
    dialog.showModal();
  }

  function start() {
    $("#composer").addEventListener("submit", (ev) => { ev.preventDefault(); send(); });
    $("#message-input").addEventListener("keydown", (ev) => {
      if (ev.key === "Enter" && !ev.shiftKey && !ev.isComposing) { ev.preventDefault(); send(); }
    });
    $("#new-conversation").addEventListener("click", newConversation);
    $("#search-form").addEventListener("submit", (ev) => { ev.preventDefault(); search($("#search-input").value, false); });
    $("#search-input").addEventListener("input", searchWhileTyping);
    $("#category-select").addEventListener("change", refreshBrowse);
    $("#browse-refresh").addEventListener("click", refreshBrowse);
    $("#browse-more").addEventListener("click", () => browse(true));
    $("#today-refresh").addEventListener("click", loadToday);
    $("#write-digest").addEventListener("click", writeDigest);
    for (const b of document.querySelectorAll("#view-tabs button")) {
      b.addEventListener("click", () => setView(b.dataset.view));
    }
    document.addEventListener("click", (ev) => {
      const link = ev.target.closest ? ev.target.closest("a.entry-link") : null;
      if (!link || ev.button !== 0 || ev.ctrlKey || ev.metaKey || ev.shiftKey) return;
      ev.preventDefault();
      const path = link.dataset.path;
      // A citation's range reads "5–7": it opens at its first line.
      const first = link.dataset.line ? parseInt(link.dataset.line, 10) : NaN;
      const line = Number.isFinite(first) && first > 0 ? first : null;
      if (location.hash !== link.getAttribute("href")) history.pushState(null, "", link.getAttribute("href"));
      // A citation says so in the entry; a search hit's passage is marked without a word.
      openEntry(path, link.classList.contains("citation") ? citedNotice(link.dataset.line) : null, line);
    });
    window.addEventListener("popstate", () => {
      const wanted = entryFromHash();
      if (wanted && (wanted.path !== shownPath || wanted.line !== shownLine)) openEntry(wanted.path, null, wanted.line);
      else if (!wanted && shownPath) closeEntry();
    });
    $("#token-form").addEventListener("submit", () => { /* method=dialog closes it */ });
    window.addEventListener("online", flushNow);
    // The app brought back to the front (a phone's tab switch or screen unlock): try again.
    document.addEventListener("visibilitychange", () => {
      if (document.visibilityState === "visible" && readOutbox().length && !flushing) flushNow();
    });
    window.addEventListener("focus", () => { if (readOutbox().length && !flushing) flushNow(); });
    // Another tab of kb changed what waits.
    window.addEventListener("storage", (ev) => {
      if (ev.key === OUTBOX_KEY || ev.key === HELD_KEY) renderOutbox();
      // Another tab kept another token, maybe someone else's: the page opens again with it,
      // so nothing of the person before (their entries, conversations, what waits) stays
      // on screen.
      if (ev.key === TOKEN_KEY) {
        personConfirmed = false;
        location.reload();
      }
    });
    $("#share-file").addEventListener("click", fileShare);
    $("#attach").addEventListener("click", () => $("#attach-input").click());
    $("#attach-input").addEventListener("change", attachFiles);
    $("#record").addEventListener("click", toggleRecording);
    if (!window.MediaRecorder || !navigator.mediaDevices) $("#record").hidden = true;
    $("#share-discard").addEventListener("click", closeShare);
    if ("serviceWorker" in navigator) {
      navigator.serviceWorker.register("/sw.js").catch((e) => console.warn("kb: no offline copy of the page:", e));
    }
    $("#vault-select").addEventListener("change", switchVault);
    $("#sign-in-form").addEventListener("submit", askForLink);
    useSignInLink();
    loadVaults();
    renderOutbox();
    takeShare();
    if (readOutbox().length) flushOutbox();
    loadStatus();
    // Sync and the embeddings move on their own: the status line follows them.
    setInterval(() => { if (document.visibilityState === "visible") loadStatus(); }, 60000);
    loadConversations().then(refreshBrowse);
    const initial = entryFromHash();
    if (initial) openEntry(initial.path, null, initial.line);
    if ($("#share").hidden) $("#message-input").focus();
  }

  // The renderers and the line diff, for the browser test to check what they make of hostile input.
  window.kbRender = Object.freeze({ markdown: renderMarkdown, snippet: snippetHtml, lineDiff: lineDiff });
  start();
})();
