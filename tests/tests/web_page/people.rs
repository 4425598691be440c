//! The page on a kb with accounts: a person signs in with a link (used up only by their
//! tap), picks a shared vault in the header, and what they file lands there and nowhere
//! else.

use std::path::Path;
use std::sync::Arc;

use kb_domain::{PersonName, VaultName, VaultRole};
use kb_storage::accounts::vaults::NewVault;
use kb_storage::accounts::{Person, SqliteAccounts};
use serde_json::json;

use crate::webdriver::ENTER;
use crate::{browser_available, entry_files, open_page};

/// kb serving `served` to the people of `data`, as `kb serve` does once it has accounts.
async fn start_with_accounts(served: &Path, data: &Path, accounts: SqliteAccounts) -> String {
    let config = kb_core::Config::offline(served);
    let assistant = kb_core::Assistant::open(config.clone()).await.unwrap();
    let mut state = kb_server::AppState::new(Arc::new(assistant), None);
    state.accounts = Some(Arc::new(kb_server::people::Accounts::new(data.to_path_buf(), Some(accounts))));
    let vaults = kb_server::vaults::Served::new(data.to_path_buf(), config, state.clone(), None);
    state.vaults = Some(Arc::new(vaults));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, kb_server::router(state)).await });
    format!("http://{addr}/")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_person_signs_in_with_a_link_and_files_in_the_shared_vault_they_pick() {
    if !browser_available() {
        return;
    }
    let served = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let family = data.path().join("family");
    std::fs::create_dir_all(&family).unwrap();
    let accounts = SqliteAccounts::open(data.path()).await.unwrap();
    let now = chrono::Utc::now();
    let ana = Person {
        name: PersonName::parse("ana").unwrap(),
        email: Some("ana@example.org".into()),
        webhook: None,
        admin: false,
    };
    accounts.add(&ana, now).await.unwrap();
    let name = VaultName::parse("family").unwrap();
    let shared = NewVault { name: &name, path: &family, owner: None, sync_remote: None };
    accounts.add_vault(&shared, now).await.unwrap();
    accounts.grant("family", "ana", VaultRole::Editor).await.unwrap();
    let link = accounts.sign_in_link("ana", now).await.unwrap().unwrap();
    let url = start_with_accounts(served.path(), data.path(), accounts.clone()).await;

    // Opened from the link, the page asks first: nothing is used up by opening it.
    let (_driver, _profile, page) = open_page(&format!("{url}#sign-in={}", link.code)).await;
    page.wait_until(
        "the sign-in question",
        "return document.querySelector('#sign-in-dialog').open;",
        json!([]),
    )
    .await;
    assert!(accounts.tokens().await.unwrap().is_empty(), "opening the link issued nothing");
    let yes = page.wait_for("#sign-in-use button[value=use]").await;
    page.click(&yes).await;
    page.wait_until(
        "the token kept",
        "return (localStorage.getItem('kb-token') || '').startsWith('kb_');",
        json!([]),
    )
    .await;
    let tokens = accounts.tokens().await.unwrap();
    assert_eq!((tokens.len(), tokens[0].label.as_deref()), (1, Some("sign-in")));

    // Two vaults: the switcher shows, on ana's own; family is picked, and the page reopens there.
    page.wait_until(
        "the vault switcher",
        "const s = document.querySelector('#vault-select'); return !s.hidden && s.options.length === 2;",
        json!([]),
    )
    .await;
    page.execute(
        "const s = document.querySelector('#vault-select'); s.value = 'family'; s.dispatchEvent(new Event('change'));",
        json!([]),
    )
    .await;
    page.wait_until(
        "the page in family",
        "return localStorage.getItem('kb-vault') === 'family' && document.querySelector('#vault-select').value === 'family';",
        json!([]),
    )
    .await;
    let input = page.wait_for("#message-input").await;
    page.type_into(&input, &format!("Renew passport by Dec 15{ENTER}")).await;
    let note = page.text_of(".turn-note").await;
    assert!(note.contains("admin/"), "note: {note}");
    assert_eq!(entry_files(&family).len(), 1, "filed in the vault picked: {:?}", entry_files(&family));
    assert!(entry_files(served.path()).is_empty(), "nothing in ana's own vault");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_waiting_capture_is_filed_only_with_its_persons_token() {
    if !browser_available() {
        return;
    }
    let kb = two_people().await;
    let (_driver, _profile, page) = open_page(&kb.url).await;

    // ana's capture waits in this browser; the page now holds bo's token (and still thinks
    // it is ana's, as after a token pasted in the prompt).
    let item = json!([{"key": "k-ana-1", "text": "[idea] Ana's private diary", "at": "2026-11-29T10:00:00Z",
                        "vault": "", "person": "ana"}]);
    page.execute(
        "localStorage.setItem('kb-token', arguments[0]); localStorage.setItem('kb-person', 'ana'); \
         localStorage.setItem('kb-outbox', JSON.stringify(arguments[1])); location.reload();",
        json!([kb.bo, item]),
    )
    .await;
    page.wait_until(
        "the capture waiting for ana",
        "return /written as ana/.test((JSON.parse(localStorage.getItem('kb-outbox') || '[]')[0] || {}).note || '') \
                && document.querySelector('#outbox').hidden;",
        json!([]),
    )
    .await;
    filed_only_as_ana(&page, &kb).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_waiting_capture_goes_once_kb_is_back_to_say_whose_token_it_is() {
    if !browser_available() {
        return;
    }
    let served = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let accounts = SqliteAccounts::open(data.path()).await.unwrap();
    let now = chrono::Utc::now();
    let ana = Person { name: PersonName::parse("ana").unwrap(), email: None, webhook: None, admin: false };
    accounts.add(&ana, now).await.unwrap();
    let token = accounts.issue(&ana.name, &Default::default(), now).await.unwrap().unwrap().secret;
    let url = start_with_accounts(served.path(), data.path(), accounts.clone()).await;
    let reach = crate::phone::Reach::to(&url).await;
    let (_driver, _profile, page) = open_page(&reach.url).await;
    page.execute("localStorage.setItem('kb-token', arguments[0]); location.reload();", json!([token])).await;
    page.wait_until(
        "the page to know it is ana's, under its service worker",
        "navigator.serviceWorker.ready.then(() => { window.kbWorkerReady = true; }); \
         return window.kbWorkerReady === true && localStorage.getItem('kb-person') === 'ana';",
        json!([]),
    )
    .await;
    page.refresh().await;
    page.wait_until(
        "the worker to control the page",
        "return !!navigator.serviceWorker.controller;",
        json!([]),
    )
    .await;

    // Reopened out of kb's reach with ana's capture waiting: kb cannot say whose the token is.
    reach.set(false);
    let item = json!([{"key": "k-ana-2", "text": "[idea] Ana's garden plan", "at": "2026-11-29T10:00:00Z",
                        "vault": "", "person": "ana"}]);
    page.execute("localStorage.setItem('kb-outbox', JSON.stringify(arguments[0]));", json!([item])).await;
    page.refresh().await;
    let waiting = page.text_of("#outbox li").await;
    assert!(waiting.contains("Ana's garden plan"), "{waiting}");

    // Back in reach, with nothing touched in the page: kb is asked again, and it goes.
    reach.set(true);
    page.wait_until("the outbox emptied", "return !localStorage.getItem('kb-outbox');", json!([])).await;
    assert_eq!(entry_files(served.path()).len(), 1, "{:?}", entry_files(served.path()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_capture_refused_with_one_token_is_never_resent_with_anothers() {
    if !browser_available() {
        return;
    }
    let kb = two_people().await;
    let (_driver, _profile, page) = open_page(&kb.url).await;
    page.execute("localStorage.setItem('kb-token', arguments[0]); location.reload();", json!([kb.ana])).await;
    page.wait_until(
        "the page to know it is ana's",
        "return localStorage.getItem('kb-person') === 'ana';",
        json!([]),
    )
    .await;

    // ana's waiting capture goes; kb refuses ana's token (revoked meanwhile) just as another
    // tab keeps bo's token in its place.
    let item = json!([{"key": "k-ana-3", "text": "[idea] Ana's surprise party plan", "at": "2026-11-29T10:00:00Z",
                        "vault": "", "person": "ana"}]);
    page.execute(
        "const real = window.fetch; const bo = arguments[0]; \
         window.fetch = function (input, init) { \
           if (!window.kbRefused && String(input).includes('/api/capture')) { \
             window.kbRefused = true; \
             localStorage.setItem('kb-token', bo); localStorage.removeItem('kb-person'); \
             return Promise.resolve(new Response('{\"error\":{\"code\":\"unauthorized\",\"message\":\"revoked\"}}', \
               { status: 401, headers: { 'Content-Type': 'application/json' } })); \
           } \
           return real.apply(this, arguments); \
         }; \
         localStorage.setItem('kb-outbox', JSON.stringify(arguments[1])); \
         window.dispatchEvent(new Event('online'));",
        json!([kb.bo, item]),
    )
    .await;
    page.wait_until(
        "the capture, refused, to wait as ana's",
        "return window.kbRefused === true && localStorage.getItem('kb-person') === 'bo' && \
                /written as ana/.test((JSON.parse(localStorage.getItem('kb-outbox') || '[]')[0] || {}).note || '') && \
                document.querySelector('#outbox').hidden;",
        json!([]),
    )
    .await;
    tokio::time::sleep(std::time::Duration::from_secs(2)).await;
    filed_only_as_ana(&page, &kb).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_capture_written_as_someone_on_a_kb_without_accounts_waits_for_the_persons_word() {
    if !browser_available() {
        return;
    }
    let served = tempfile::tempdir().unwrap();
    let url = crate::start_kb(served.path()).await;
    let (_driver, _profile, page) = open_page(&url).await;
    // Written as ana when this kb had accounts; it has none now (and the page still
    // remembers ana from then).
    let item = json!([{"key": "k-ana-4", "text": "[idea] Ana's reading list", "at": "2026-11-29T10:00:00Z",
                        "vault": "", "person": "ana"}]);
    page.execute(
        "localStorage.setItem('kb-person', 'ana'); localStorage.setItem('kb-outbox', JSON.stringify(arguments[0])); \
         location.reload();",
        json!([item]),
    )
    .await;
    page.wait_until(
        "the capture held, saying why",
        "const held = document.querySelector('#held-list'); \
         return !!held && /Ana's reading list/.test(held.textContent) && /has none now/.test(held.textContent) \
                && !localStorage.getItem('kb-outbox');",
        json!([]),
    )
    .await;
    assert!(entry_files(served.path()).is_empty(), "nothing filed before the person says so");
    // The person sends it again: it is filed here.
    let again = page.wait_for("#held-list button").await;
    assert_eq!(page.text_of("#held-list button").await, "Send again");
    page.click(&again).await;
    page.wait_until(
        "the capture filed",
        "return !localStorage.getItem('kb-outbox') && \
        document.querySelector('#held').hidden;",
        json!([]),
    )
    .await;
    wait_for_a_file(served.path()).await;
    assert_eq!(entry_files(served.path()).len(), 1, "{:?}", entry_files(served.path()));
}

/// kb with accounts for ana and bo, each with their own vault, and their tokens.
struct TwoPeople {
    served: tempfile::TempDir,
    _data: tempfile::TempDir,
    bo_vault: std::path::PathBuf,
    ana: String,
    bo: String,
    url: String,
}

async fn two_people() -> TwoPeople {
    let served = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let accounts = SqliteAccounts::open(data.path()).await.unwrap();
    let now = chrono::Utc::now();
    for name in ["ana", "bo"] {
        let person =
            Person { name: PersonName::parse(name).unwrap(), email: None, webhook: None, admin: false };
        accounts.add(&person, now).await.unwrap();
    }
    let bo_vault = data.path().join("vaults/bo");
    std::fs::create_dir_all(&bo_vault).unwrap();
    let token = |name: &str| {
        let accounts = accounts.clone();
        let name = PersonName::parse(name).unwrap();
        async move { accounts.issue(&name, &Default::default(), now).await.unwrap().unwrap().secret }
    };
    let (ana, bo) = (token("ana").await, token("bo").await);
    let url = start_with_accounts(served.path(), data.path(), accounts.clone()).await;
    TwoPeople { served, _data: data, bo_vault, ana, bo, url }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_late_answer_about_an_old_token_never_makes_the_page_someone_else() {
    if !browser_available() {
        return;
    }
    let kb = two_people().await;
    let (_driver, _profile, page) = open_page(&kb.url).await;
    // Asked with ana's token, kb's answer on whose it is comes late; meanwhile kb refuses
    // her token elsewhere (revoked), and the token dialog opens.
    let slow = format!(
        "const real = window.fetch; \
         window.fetch = function (input, init) {{ \
           const auth = (init && init.headers && init.headers['Authorization']) || ''; \
           if (String(input).includes('/api/vaults') && auth.includes('{ana}')) {{ \
             window.kbAskedLate = true; \
             const self = this, args = arguments; \
             return new Promise((done) => setTimeout(done, 3000)).then(() => real.apply(self, args)); \
           }} \
           if (String(input).includes('/api/conversations') && auth.includes('{ana}')) {{ \
             return Promise.resolve(new Response('{{\"error\":{{\"code\":\"unauthorized\",\"message\":\"revoked\"}}}}', \
               {{ status: 401, headers: {{ 'Content-Type': 'application/json' }} }})); \
           }} \
           return real.apply(this, arguments); \
         }};",
        ana = kb.ana
    );
    page.cdp("Page.addScriptToEvaluateOnNewDocument", json!({ "source": slow })).await;
    let item = json!([{"key": "k-ana-5", "text": "[idea] Ana's secret plan", "at": "2026-11-29T10:00:00Z",
                        "vault": "", "person": "ana"}]);
    page.execute(
        "localStorage.setItem('kb-token', arguments[0]); localStorage.setItem('kb-person', 'ana'); \
         localStorage.setItem('kb-outbox', JSON.stringify(arguments[1])); location.reload();",
        json!([kb.ana, item]),
    )
    .await;
    page.wait_until(
        "ana's token asked about, and the token dialog open",
        "return window.kbAskedLate === true && document.querySelector('#token-dialog').open;",
        json!([]),
    )
    .await;
    // bo's token is typed into the dialog before kb's answer about ana's comes.
    let input = page.wait_for("#token-input").await;
    page.type_into(&input, &format!("{}{ENTER}", kb.bo)).await;
    page.wait_until(
        "the capture waiting as ana's, the page bo's",
        "return localStorage.getItem('kb-person') === 'bo' && \
                /written as ana/.test((JSON.parse(localStorage.getItem('kb-outbox') || '[]')[0] || {}).note || '');",
        json!([]),
    )
    .await;
    // The late answer about ana's token has come and gone.
    tokio::time::sleep(std::time::Duration::from_millis(3500)).await;
    assert_eq!(page.execute("return localStorage.getItem('kb-person');", json!([])).await, json!("bo"));
    let bo_files = entry_files(&kb.bo_vault);
    assert!(bo_files.is_empty(), "ana's capture went into bo's vault: {bo_files:?}");
    assert!(entry_files(kb.served.path()).is_empty());
    let hidden = page.execute("return document.querySelector('#outbox').hidden;", json!([])).await;
    assert_eq!(hidden, json!(true), "bo is shown ana's waiting capture");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_tab_signing_in_as_someone_else_clears_the_page() {
    if !browser_available() {
        return;
    }
    let kb = two_people().await;
    let (_driver, _profile, page) = open_page(&kb.url).await;
    page.execute("localStorage.setItem('kb-token', arguments[0]); location.reload();", json!([kb.ana])).await;
    page.wait_until(
        "the page to know it is ana's",
        "return localStorage.getItem('kb-person') === 'ana';",
        json!([]),
    )
    .await;
    let input = page.wait_for("#message-input").await;
    page.type_into(&input, &format!("[idea] Ana's diary{ENTER}")).await;
    page.wait_until("ana's entry listed", "return /Ana's diary/.test(document.body.innerText);", json!([]))
        .await;
    // Another tab keeps bo's token.
    page.execute(
        "window.kbBefore = true; localStorage.setItem('kb-token', arguments[0]); \
         window.dispatchEvent(new StorageEvent('storage', { key: 'kb-token' }));",
        json!([kb.bo]),
    )
    .await;
    page.wait_until(
        "the page open again as bo",
        "return window.kbBefore === undefined && localStorage.getItem('kb-person') === 'bo';",
        json!([]),
    )
    .await;
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    let text = page.execute("return document.body.innerText;", json!([])).await;
    assert!(!text.as_str().unwrap_or_default().contains("Ana's diary"), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_capture_held_for_ana_is_shown_and_filed_only_as_ana() {
    if !browser_available() {
        return;
    }
    let kb = two_people().await;
    let (_driver, _profile, page) = open_page(&kb.url).await;
    // kb asked ana about her capture (it may be a Priya she has); the page is bo's now.
    let held = json!([{"key": "k-ana-6", "text": "[person] Priya lent me a ladder", "code": "possible_duplicate",
                        "message": "Priya may be someone you have", "person": "ana", "vault": "",
                        "candidates": [{"path": "people/priya-raman.md", "name": "Priya Raman"}]}]);
    page.execute(
        "localStorage.setItem('kb-token', arguments[0]); localStorage.setItem('kb-held', JSON.stringify(arguments[1])); \
         location.reload();",
        json!([kb.bo, held]),
    )
    .await;
    page.wait_until(
        "the page to know it is bo's",
        "return localStorage.getItem('kb-person') === 'bo';",
        json!([]),
    )
    .await;
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let hidden = page.execute("return document.querySelector('#held').hidden;", json!([])).await;
    assert_eq!(hidden, json!(true), "bo is shown ana's held capture");
    let text = page.execute("return document.body.innerText;", json!([])).await;
    assert!(!text.as_str().unwrap_or_default().contains("Priya"), "{text}");

    // ana is back: she sees it and files it as new, into her own vault.
    page.execute("localStorage.setItem('kb-token', arguments[0]); location.reload();", json!([kb.ana])).await;
    page.wait_until(
        "ana's held capture shown",
        "return !document.querySelector('#held').hidden && \
                /File as new/.test(document.querySelector('#held').textContent);",
        json!([]),
    )
    .await;
    page.execute(
        "[...document.querySelectorAll('#held-list button')].find((b) => b.textContent === 'File as new').click();",
        json!([]),
    )
    .await;
    wait_for_a_file(kb.served.path()).await;
    assert_eq!(entry_files(kb.served.path()).len(), 1, "{:?}", entry_files(kb.served.path()));
    assert!(entry_files(&kb.bo_vault).is_empty(), "{:?}", entry_files(&kb.bo_vault));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_capture_held_for_someone_shows_on_a_kb_without_accounts() {
    if !browser_available() {
        return;
    }
    let served = tempfile::tempdir().unwrap();
    let url = crate::start_kb(served.path()).await;
    let (_driver, _profile, page) = open_page(&url).await;
    // kb asked ana about it when it had accounts; it has none now.
    let held = json!([{"key": "k-ana-7", "text": "[idea] Ana's seed swap", "code": "possible_duplicate",
                        "message": "it may be an idea you have", "person": "ana", "vault": "", "candidates": []}]);
    page.execute(
        "localStorage.setItem('kb-held', JSON.stringify(arguments[0])); location.reload();",
        json!([held]),
    )
    .await;
    page.wait_until(
        "the held capture shown",
        "return !document.querySelector('#held').hidden && /Ana's seed swap/.test(document.querySelector('#held').textContent);",
        json!([]),
    )
    .await;
    page.execute(
        "[...document.querySelectorAll('#held-list button')].find((b) => b.textContent === 'File as new').click();",
        json!([]),
    )
    .await;
    wait_for_a_file(served.path()).await;
    assert_eq!(entry_files(served.path()).len(), 1, "{:?}", entry_files(served.path()));
}

/// Waits (up to 20 s) until `vault` holds an entry file.
async fn wait_for_a_file(vault: &Path) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while entry_files(vault).is_empty() && std::time::Instant::now() < deadline {
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}

/// ana's capture, waiting in `page` while it holds someone else's token, went nowhere; with
/// ana's token back it is filed in ana's vault, once.
async fn filed_only_as_ana(page: &crate::webdriver::Session, kb: &TwoPeople) {
    let bo_files = entry_files(&kb.bo_vault);
    assert!(bo_files.is_empty(), "ana's capture went into bo's vault: {bo_files:?}");
    assert!(entry_files(kb.served.path()).is_empty());
    page.execute("localStorage.setItem('kb-token', arguments[0]); location.reload();", json!([kb.ana])).await;
    page.wait_until("the outbox emptied", "return !localStorage.getItem('kb-outbox');", json!([])).await;
    assert_eq!(entry_files(kb.served.path()).len(), 1, "{:?}", entry_files(kb.served.path()));
    assert!(entry_files(&kb.bo_vault).is_empty());
}
