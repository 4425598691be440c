// kb's service worker: keeps the page's own files so the page opens when kb cannot be
// reached (a phone out of Wi-Fi range). Network first: while kb answers, every file comes
// from kb (and the copy kept is refreshed); only when it does not does the kept copy serve.
// The API is never kept nor answered from here: /api, /mcp and /healthz go to kb as if
// there were no worker, so an answer is always kb's own, never a stale one.
"use strict";

const CACHE = "kb-page-v1";

// The files a share brought (see takeShare), kept until the page files or drops them.
const SHARE_CACHE = "kb-shared-files";

// The page (at `/` and `/share`, the same HTML) and every file it loads.
const PAGE_FILES = [
  "/", "/page.css", "/page.js", "/vendor/marked.umd.js", "/vendor/purify.min.js",
  "/manifest.webmanifest", "/icons/kb-192.png", "/icons/kb-512.png", "/icons/kb.svg",
];

// How long a page file may take from kb before the kept copy is served instead.
const NETWORK_WAIT_MS = 4000;

self.addEventListener("install", (event) => {
  event.waitUntil(caches.open(CACHE).then((cache) => cache.addAll(PAGE_FILES)).then(() => self.skipWaiting()));
});

self.addEventListener("activate", (event) => {
  event.waitUntil((async () => {
    for (const key of await caches.keys()) {
      if (key !== CACHE && key !== SHARE_CACHE) await caches.delete(key);
    }
    await self.clients.claim();
  })());
});

self.addEventListener("fetch", (event) => {
  const request = event.request;
  const url = new URL(request.url);
  if (url.origin !== self.location.origin) return;
  if (request.method === "POST" && url.pathname === "/share") {
    event.respondWith(takeShare(request));
    return;
  }
  if (request.method !== "GET") return;
  // Opening the page (with a share's query, or an entry's #/entry/… hash) is the page.
  const navigating = request.mode === "navigate";
  const key = navigating && (url.pathname === "/" || url.pathname === "/share") ? "/" : url.pathname;
  if (!PAGE_FILES.includes(key) || (navigating && key !== "/")) return;
  event.respondWith(networkFirst(request, key));
});

// kb's answer when it comes in time (kept for later); the kept copy otherwise.
async function networkFirst(request, key) {
  const cache = await caches.open(CACHE);
  const fromKb = fetch(request).then(async (response) => {
    if (response.ok) await cache.put(key, response.clone());
    return response;
  });
  fromKb.catch(() => { /* kb unreachable: the kept copy answers */ });
  const kept = await cache.match(key);
  if (!kept) return fromKb;
  let timer;
  const late = new Promise((resolve) => { timer = setTimeout(() => resolve(kept), NETWORK_WAIT_MS); });
  try {
    return await Promise.race([fromKb, late]);
  } catch (_) {
    return kept;
  } finally {
    clearTimeout(timer);
  }
}

// A share from another app (the manifest's share_target: a POST of its title, text, link and
// files). Nothing goes to kb from here: the files are kept in a cache of their own and the
// page opens at /share with the rest, to be filed only when the person says so.
async function takeShare(request) {
  const form = await request.formData();
  const cache = await caches.open(SHARE_CACHE);
  for (const key of await cache.keys()) await cache.delete(key);
  let count = 0;
  for (const file of form.getAll("files")) {
    if (!file || typeof file === "string") continue;
    const headers = { "Content-Type": file.type || "application/octet-stream", "X-Kb-Name": encodeURIComponent(file.name) };
    await cache.put("/shared-file/" + count, new Response(file, { headers }));
    count += 1;
  }
  const params = new URLSearchParams();
  for (const name of ["title", "text", "url"]) {
    const value = form.get(name);
    if (typeof value === "string" && value) params.set(name, value);
  }
  if (count) params.set("files", String(count));
  return Response.redirect("/share?" + params.toString(), 303);
}
