//! References by name, end to end: the real `kb serve` over real HTTP, on a small
//! seeded vault, with the offline model and with a scripted OpenAI-compatible model. People
//! name entries as they speak ("mark the passport thing done", "show Priya", "josé"); each
//! row of the routing tables says a message (and the answers after it, in one
//! conversation), the tools the chat used and what is on disk afterwards — which files
//! changed (exactly those), a field's value, a Log line. A name that fits several entries
//! (two people called Sam) changes nothing and asks; the next message picks one.

use std::collections::BTreeMap;
use std::path::Path;

use crate::common::{KbServer, url_path};
use kb_llm::testing::{FakeOpenAi, FakeReply};
use serde_json::{Value, json};

/// The vault every table starts from: a few people (two called Sam), projects, ideas, admin
/// items and an inbox entry, each written by hand.
const SEED: &[(&str, &str)] = &[
    (
        "people/priya-raman.md",
        "---\nname: Priya Raman\ncontext: Robotics meetup\n---\nMet at the robotics meetup.\n",
    ),
    (
        "people/jose-alvarez.md",
        "---\nname: José Álvarez\ncontext: Neighbour who plays chess\n---\nLives next door.\n",
    ),
    (
        "people/maria-chen.md",
        "---\nname: Maria Chen\ncontext: Former colleague at Acme\n---\nWorks in design now.\n",
    ),
    ("people/sam-lee.md", "---\nname: Sam Lee\ncontext: Climbing gym\n---\nClimbs on Tuesdays.\n"),
    ("people/sam-ortiz.md", "---\nname: Sam Ortiz\ncontext: Accountant\n---\nDoes my taxes.\n"),
    (
        "admin/passport-renewal.md",
        "---\nname: Passport renewal\nstatus: pending\ndue_date: 2026-12-15\n---\nRenew before the trip.\n",
    ),
    ("admin/car-insurance.md", "---\nname: Car insurance\nstatus: pending\n---\nCompare quotes.\n"),
    ("admin/dentist-appointment.md", "---\nname: Dentist appointment\nstatus: pending\n---\nCleaning.\n"),
    ("admin/gym-membership.md", "---\nname: Gym membership\nstatus: pending\n---\nCancel before January.\n"),
    ("ideas/bakery.md", "---\nname: Bakery\none_liner: A bakery that lends books\n---\nBread and books.\n"),
    ("ideas/book-swap.md", "---\nname: Book swap\none_liner: A monthly book swap\n---\nAt the library.\n"),
    ("ideas/zine.md", "---\nname: Zine\none_liner: A photocopied zine about bikes\n---\n"),
    ("ideas/kite-festival.md", "---\nname: Kite festival\none_liner: A kite festival on the beach\n---\n"),
    ("ideas/tea-club.md", "---\nname: Tea club\none_liner: Tasting teas monthly\n---\n"),
    ("projects/old-site.md", "---\nname: Old site\nstatus: active\n---\nThe old website.\n"),
    (
        "projects/garden-shed.md",
        "---\nname: Garden shed\nstatus: active\nnext_action: Buy timber\n---\nBuild it in spring.\n",
    ),
    ("projects/website-redesign.md", "---\nname: Website redesign\nstatus: active\n---\nNew look.\n"),
    ("projects/kitchen-tiles.md", "---\nname: Kitchen tiles\nstatus: active\n---\nPick a colour.\n"),
    ("inbox/widgets.md", "---\nname: Widgets\noriginal_text: widgets for the shop\n---\n"),
];

/// A second "Priya", for the duplicate and merge rows.
const PRIYA: (&str, &str) = ("people/priya.md", "---\nname: Priya\ncontext: Robotics\n---\nLikes drones.\n");

fn seed(vault: &Path, extra: &[(&str, &str)]) {
    for (path, text) in SEED.iter().chain(extra) {
        let file = vault.join(path);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(file, text).unwrap();
    }
}

/// A `kb serve` with the offline model over the seeded vault (plus `extra` files).
async fn offline(extra: &'static [(&'static str, &'static str)]) -> KbServer {
    let kb = KbServer::start_with_vault(&[], |vault| seed(vault, extra)).await;
    assert_eq!(kb.get("/healthz").await.expect(200)["model"], "offline");
    kb
}

/// A `kb serve` over the seeded vault, wired to a fresh scripted model.
async fn scripted() -> (FakeOpenAi, KbServer) {
    scripted_with(&[]).await
}

/// One chat turn; its answer.
async fn chat(kb: &KbServer, message: &str, conversation: Option<&str>) -> Value {
    let body = match conversation {
        Some(id) => json!({"conversationId": id, "message": message}),
        None => json!({"message": message}),
    };
    kb.post("/api/chat", &body).await.expect(200)
}

fn conversation_id(answer: &Value) -> String {
    answer["conversationId"].as_str().unwrap().to_string()
}

fn content(answer: &Value) -> String {
    answer["message"]["content"].as_str().unwrap_or("").to_string()
}

fn tools_used(answer: &Value) -> Vec<String> {
    serde_json::from_value(answer["toolsUsed"].clone()).unwrap()
}

/// Every entry file of the vault and its bytes.
fn snapshot(kb: &KbServer) -> BTreeMap<String, Vec<u8>> {
    let vault = kb.vault();
    kb.entry_files().into_iter().map(|p| (p.clone(), std::fs::read(vault.join(&p)).unwrap())).collect()
}

/// The files created, changed or removed between two snapshots, sorted.
fn changed(before: &BTreeMap<String, Vec<u8>>, after: &BTreeMap<String, Vec<u8>>) -> Vec<String> {
    let mut paths: Vec<String> =
        before.keys().chain(after.keys()).filter(|p| before.get(*p) != after.get(*p)).cloned().collect();
    paths.sort();
    paths.dedup();
    paths
}

/// The entry's frontmatter as kb reads it.
async fn frontmatter(kb: &KbServer, path: &str) -> Value {
    kb.get(&format!("/api/entries/{}", url_path(path))).await.expect(200)["entry"]["frontmatter"].clone()
}

fn text_of(kb: &KbServer, path: &str) -> String {
    std::fs::read_to_string(kb.vault().join(path)).unwrap_or_default()
}

/// Whether `text` has a dated Log line `- YYYY-MM-DD: said` under `## Log`.
fn has_log_line(text: &str, said: &str) -> bool {
    let Some((_, log)) = text.split_once("\n## Log\n") else { return false };
    log.lines().any(|line| {
        let Some(rest) = line.strip_prefix("- ") else { return false };
        let Some((date, rest)) = rest.split_once(": ") else { return false };
        is_date(date) && rest == said
    })
}

fn is_date(text: &str) -> bool {
    let b = text.as_bytes();
    b.len() == 10
        && b.iter().enumerate().all(|(i, c)| if i == 4 || i == 7 { *c == b'-' } else { c.is_ascii_digit() })
}

/// What a row expects on disk (or in the final answer) afterwards.
#[derive(Debug, Clone, Copy)]
enum Expect {
    /// A frontmatter field holds this text.
    Field(&'static str, &'static str, &'static str),
    /// A frontmatter field holds a `YYYY-MM-DD` date.
    DateField(&'static str, &'static str),
    /// A frontmatter list field holds these items.
    List(&'static str, &'static str, &'static [&'static str]),
    /// The entry's `## Log` has a dated line with this text.
    Log(&'static str, &'static str),
    /// The file exists.
    Exists(&'static str),
    /// The file is gone.
    Absent(&'static str),
    /// The file holds this text (in its notes).
    Notes(&'static str, &'static str),
    /// The last answer says this.
    Says(&'static str),
}

/// One row: the messages of one conversation, the tools each turn used, the files that
/// changed (exactly these) and what else must hold.
#[derive(Debug, Clone, Copy)]
struct Row {
    say: &'static [&'static str],
    tools: &'static [&'static [&'static str]],
    changes: &'static [&'static str],
    expect: &'static [Expect],
}

const fn row(
    say: &'static [&'static str],
    tools: &'static [&'static [&'static str]],
    changes: &'static [&'static str],
    expect: &'static [Expect],
) -> Row {
    Row { say, tools, changes, expect }
}

use Expect::{Absent, DateField, Exists, Field, List, Log, Notes, Says};

const SEARCH: &[&[&str]] = &[&["search_entries"]];
const GET: &[&[&str]] = &[&["get_entry"]];
const UPDATE: &[&[&str]] = &[&["update_entry"]];
const MOVE: &[&[&str]] = &[&["move_entry"]];
const CAPTURE: &[&[&str]] = &[&["classify_and_capture"]];
const DUPLICATES: &[&[&str]] = &[&["find_duplicates"]];
const NOTHING: &[&str] = &[];

/// The offline routing table: read-only rows first, then rows that change one entry each.
const OFFLINE_TABLE: &[Row] = &[
    // Finding and showing, by name, part of a name, other case, without accents. A question
    // about someone or something ("what do I know about Priya?") shows that entry whole.
    row(&["what do I know about Priya?"], GET, NOTHING, &[Says("people/priya-raman.md")]),
    row(&["show me Priya Raman"], GET, NOTHING, &[Says("Priya Raman (people/priya-raman.md)")]),
    row(&["show Priya"], GET, NOTHING, &[Says("Priya Raman (people/priya-raman.md)")]),
    row(
        &["open the passport renewal"],
        GET,
        NOTHING,
        &[Says("Passport renewal (admin/passport-renewal.md)")],
    ),
    row(&["what's the due date of the passport renewal?"], GET, NOTHING, &[Says("due_date: 2026-12-15")]),
    row(&["tell me about José"], GET, NOTHING, &[Says("people/jose-alvarez.md")]),
    row(&["find josé"], SEARCH, NOTHING, &[Says("people/jose-alvarez.md")]),
    row(&["show josé álvarez"], GET, NOTHING, &[Says("José Álvarez (people/jose-alvarez.md)")]),
    row(&["show Jose Alvarez"], GET, NOTHING, &[Says("José Álvarez (people/jose-alvarez.md)")]),
    row(&["who is maria chen?"], GET, NOTHING, &[Says("people/maria-chen.md")]),
    row(&["show me MARIA CHEN"], GET, NOTHING, &[Says("Maria Chen (people/maria-chen.md)")]),
    row(&["pull up the zine idea"], GET, NOTHING, &[Says("Zine (ideas/zine.md)")]),
    row(&["what about the book swap?"], GET, NOTHING, &[Says("ideas/book-swap.md")]),
    row(&["open the zeppelin"], GET, NOTHING, &[Says("Entry not found")]),
    row(&["any duplicates of Sam?"], DUPLICATES, NOTHING, &[Says("I found no duplicates.")]),
    row(&["find duplicates"], DUPLICATES, NOTHING, &[Says("I found no duplicates.")]),
    row(
        &["show Sam"],
        GET,
        NOTHING,
        &[Says("Which one do you mean: Sam Lee (people/sam-lee.md) or Sam Ortiz")],
    ),
    // Updates by name.
    row(
        &["mark the passport thing done"],
        UPDATE,
        &["admin/passport-renewal.md"],
        &[Field("admin/passport-renewal.md", "status", "done")],
    ),
    row(
        &["set the due date of the passport renewal to Dec 20"],
        UPDATE,
        &["admin/passport-renewal.md"],
        &[
            DateField("admin/passport-renewal.md", "due_date"),
            Field("admin/passport-renewal.md", "status", "done"),
        ],
    ),
    row(
        &["set the status of the garden shed to blocked"],
        UPDATE,
        &["projects/garden-shed.md"],
        &[Field("projects/garden-shed.md", "status", "blocked")],
    ),
    row(
        &["tag the garden shed with diy, weekend"],
        UPDATE,
        &["projects/garden-shed.md"],
        &[List("projects/garden-shed.md", "tags", &["diy", "weekend"])],
    ),
    row(
        &["mark car insurance as done"],
        UPDATE,
        &["admin/car-insurance.md"],
        &[Field("admin/car-insurance.md", "status", "done")],
    ),
    row(
        &["set the next action of the website redesign to Email the agency"],
        UPDATE,
        &["projects/website-redesign.md"],
        &[Field("projects/website-redesign.md", "next_action", "Email the agency")],
    ),
    row(
        &["push the dentist appointment to Friday"],
        UPDATE,
        &["admin/dentist-appointment.md"],
        &[DateField("admin/dentist-appointment.md", "due_date")],
    ),
    row(
        &["change the due date of the dentist appointment to 2026-12-01"],
        UPDATE,
        &["admin/dentist-appointment.md"],
        &[Field("admin/dentist-appointment.md", "due_date", "2026-12-01")],
    ),
    row(
        &["rename the bakery idea to Bread & Books"],
        UPDATE,
        &["ideas/bakery.md"],
        &[Field("ideas/bakery.md", "name", "Bread & Books")],
    ),
    row(
        &["set the context of josé to Chess club captain"],
        UPDATE,
        &["people/jose-alvarez.md"],
        &[Field("people/jose-alvarez.md", "context", "Chess club captain")],
    ),
    row(
        &["set Maria Chen's context to Now at Globex"],
        UPDATE,
        &["people/maria-chen.md"],
        &[Field("people/maria-chen.md", "context", "Now at Globex")],
    ),
    row(&["mark the zeppelin thing done"], UPDATE, NOTHING, &[Says("Entry not found")]),
    row(
        &["mark the kitchen tiles done", "undo that"],
        &[&["update_entry"], &["undo_last_change"]],
        NOTHING,
        &[],
    ),
    // Captures about someone already there go to their Log, whatever the case or accents.
    row(
        &["Priya is moving to MIT"],
        CAPTURE,
        &["people/priya-raman.md"],
        &[Log("people/priya-raman.md", "Priya is moving to MIT")],
    ),
    row(
        &["Had coffee with Priya Raman, she recommended a drone kit"],
        CAPTURE,
        &["people/priya-raman.md"],
        &[Log("people/priya-raman.md", "Had coffee with Priya Raman, she recommended a drone kit")],
    ),
    row(
        &["JOSÉ ÁLVAREZ likes jazz"],
        CAPTURE,
        &["people/jose-alvarez.md"],
        &[Log("people/jose-alvarez.md", "JOSÉ ÁLVAREZ likes jazz")],
    ),
    row(
        &["Jose Alvarez is learning the guitar"],
        CAPTURE,
        &["people/jose-alvarez.md"],
        &[Log("people/jose-alvarez.md", "Jose Alvarez is learning the guitar")],
    ),
    row(
        &["Maria Chen starts at Globex in May"],
        CAPTURE,
        &["people/maria-chen.md"],
        &[Log("people/maria-chen.md", "Maria Chen starts at Globex in May")],
    ),
    row(
        &["Met Ines Duarte at the climbing gym"],
        CAPTURE,
        &["people/ines-duarte.md"],
        &[Field("people/ines-duarte.md", "name", "Ines Duarte")],
    ),
    // Moves by name.
    row(
        &["move the book swap idea to projects"],
        MOVE,
        &["ideas/book-swap.md", "projects/book-swap.md"],
        &[Absent("ideas/book-swap.md"), Field("projects/book-swap.md", "name", "Book swap")],
    ),
    row(
        &["file the zine idea under projects"],
        MOVE,
        &["ideas/zine.md", "projects/zine.md"],
        &[Absent("ideas/zine.md"), Exists("projects/zine.md")],
    ),
    row(
        &["move the widgets note to ideas"],
        MOVE,
        &["ideas/widgets.md", "inbox/widgets.md"],
        &[Absent("inbox/widgets.md"), Exists("ideas/widgets.md")],
    ),
    row(
        &["move kite festival to projects"],
        MOVE,
        &["ideas/kite-festival.md", "projects/kite-festival.md"],
        &[Exists("projects/kite-festival.md")],
    ),
    row(
        &["actually the tea club is a project"],
        MOVE,
        &["ideas/tea-club.md", "projects/tea-club.md"],
        &[Exists("projects/tea-club.md")],
    ),
    // Deletes by name: asked first, done on yes, kept on no.
    row(
        &["delete the old site", "yes"],
        &[&["delete_entry"], &["delete_entry"]],
        &["projects/old-site.md"],
        &[Absent("projects/old-site.md")],
    ),
    row(&["delete José", "no"], &[&["delete_entry"], &[]], NOTHING, &[Says("nothing was changed")]),
    row(
        &["remove the gym membership entry", "yes"],
        &[&["delete_entry"], &["delete_entry"]],
        &["admin/gym-membership.md"],
        &[Absent("admin/gym-membership.md")],
    ),
    row(&["delete the zeppelin"], &[&["delete_entry"]], NOTHING, &[Says("Entry not found")]),
];

/// Duplicates and merges, over the seed plus a second "Priya".
const TIDY_TABLE: &[Row] = &[
    row(
        &["any duplicates of Priya?"],
        DUPLICATES,
        NOTHING,
        &[Says("Priya Raman (people/priya-raman.md), Priya (people/priya.md)")],
    ),
    row(&["show Priya"], GET, NOTHING, &[Says("Priya (people/priya.md)")]),
    row(
        &["merge Priya into Priya Raman", "no"],
        &[&["merge_entries"], &[]],
        NOTHING,
        &[Exists("people/priya.md")],
    ),
    row(
        &["merge Priya into Priya Raman", "yes"],
        &[&["merge_entries"], &["merge_entries"]],
        &["people/priya-raman.md", "people/priya.md"],
        &[Absent("people/priya.md"), List("people/priya-raman.md", "aliases", &["Priya"])],
    ),
    row(&["find duplicates"], DUPLICATES, NOTHING, &[Says("I found no duplicates.")]),
    // The old name still finds the entry it was merged into.
    row(&["show Priya"], GET, NOTHING, &[Says("Priya Raman (people/priya-raman.md)")]),
];

/// Runs each row in a conversation of its own and checks it; panics naming the row.
async fn run_table(kb: &KbServer, table: &[Row]) {
    for (n, row) in table.iter().enumerate() {
        let label = format!("row {n} {:?}", row.say);
        let before = snapshot(kb);
        let mut conversation: Option<String> = None;
        let mut last = Value::Null;
        for (k, message) in row.say.iter().enumerate() {
            let answer = chat(kb, message, conversation.as_deref()).await;
            conversation = Some(conversation_id(&answer));
            assert_eq!(tools_used(&answer), row.tools[k], "{label}, message {message:?}: {answer}");
            last = answer;
        }
        let after = snapshot(kb);
        assert_eq!(changed(&before, &after), row.changes, "{label}: the files changed; answer: {last}");
        for expect in row.expect {
            check(kb, expect, &last, &label).await;
        }
    }
}

async fn check(kb: &KbServer, expect: &Expect, last: &Value, label: &str) {
    match *expect {
        Field(path, key, value) => {
            let fields = frontmatter(kb, path).await;
            assert_eq!(fields[key], value, "{label}: {path} {key}: {fields}");
        }
        DateField(path, key) => {
            let fields = frontmatter(kb, path).await;
            assert!(fields[key].as_str().is_some_and(is_date), "{label}: {path} {key}: {fields}");
        }
        List(path, key, items) => {
            let fields = frontmatter(kb, path).await;
            assert_eq!(fields[key], json!(items), "{label}: {path} {key}: {fields}");
        }
        Log(path, said) => {
            let text = text_of(kb, path);
            assert!(has_log_line(&text, said), "{label}: no Log line {said:?} in {path}:\n{text}");
        }
        Exists(path) => assert!(kb.vault().join(path).is_file(), "{label}: {path} is missing"),
        Absent(path) => assert!(!kb.vault().join(path).exists(), "{label}: {path} is still there"),
        Notes(path, words) => {
            let text = text_of(kb, path);
            assert!(text.contains(words), "{label}: {path} lacks {words:?}:\n{text}");
        }
        Says(words) => assert!(content(last).contains(words), "{label}: the answer lacks {words:?}: {last}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn offline_routing_table() {
    assert!(OFFLINE_TABLE.len() + TIDY_TABLE.len() >= 40);
    let kb = offline(&[]).await;
    run_table(&kb, OFFLINE_TABLE).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn offline_duplicates_and_merges_table() {
    let kb = offline(&[PRIYA]).await;
    run_table(&kb, TIDY_TABLE).await;
}

const SAM_CHOICES: &str = "Sam Lee (people/sam-lee.md) or Sam Ortiz (people/sam-ortiz.md)";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn offline_two_people_called_sam_are_asked_about_and_the_next_message_picks_one() {
    let kb = offline(&[]).await;
    let seeded = snapshot(&kb);

    // Shown: which Sam? Nothing changes; the name picks one.
    let asked = chat(&kb, "show Sam", None).await;
    assert_eq!(tools_used(&asked), ["get_entry"]);
    assert!(content(&asked).contains(&format!("Which one do you mean: {SAM_CHOICES}?")), "{asked}");
    let shown = chat(&kb, "Sam Ortiz", Some(&conversation_id(&asked))).await;
    assert_eq!(tools_used(&shown), ["get_entry"]);
    assert!(content(&shown).starts_with("Sam Ortiz (people/sam-ortiz.md)\ncontext: Accountant"), "{shown}");
    assert_eq!(snapshot(&kb), seeded);

    // Updated: nothing changes until the person says which; then only that one changes.
    let asked = chat(&kb, "set Sam's context to Climbing partner", None).await;
    assert_eq!(tools_used(&asked), ["update_entry"]);
    assert!(content(&asked).contains(SAM_CHOICES), "{asked}");
    assert_eq!(snapshot(&kb), seeded);
    let done = chat(&kb, "Sam Ortiz", Some(&conversation_id(&asked))).await;
    assert_eq!(tools_used(&done), ["update_entry"]);
    assert_eq!(changed(&seeded, &snapshot(&kb)), ["people/sam-ortiz.md"]);
    assert_eq!(frontmatter(&kb, "people/sam-ortiz.md").await["context"], "Climbing partner");

    // By place in the list, and by a word only one of them has.
    let before = snapshot(&kb);
    let asked = chat(&kb, "set Sam's context to Bouldering on Tuesdays", None).await;
    let done = chat(&kb, "the first one", Some(&conversation_id(&asked))).await;
    assert_eq!(tools_used(&done), ["update_entry"]);
    assert_eq!(changed(&before, &snapshot(&kb)), ["people/sam-lee.md"]);
    assert_eq!(frontmatter(&kb, "people/sam-lee.md").await["context"], "Bouldering on Tuesdays");
    let before = snapshot(&kb);
    let asked = chat(&kb, "set Sam's context to Tax advisor", None).await;
    let done = chat(&kb, "Ortiz", Some(&conversation_id(&asked))).await;
    assert_eq!(tools_used(&done), ["update_entry"], "{asked} {done}");
    assert_eq!(changed(&before, &snapshot(&kb)), ["people/sam-ortiz.md"]);
    assert_eq!(frontmatter(&kb, "people/sam-ortiz.md").await["context"], "Tax advisor");

    // A message naming neither drops the question: it is answered as a new one.
    let before = snapshot(&kb);
    let asked = chat(&kb, "show Sam", None).await;
    let other = chat(&kb, "list my projects", Some(&conversation_id(&asked))).await;
    assert_eq!(tools_used(&other), ["list_entries"]);
    assert_eq!(snapshot(&kb), before);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn offline_lunch_with_sam_asks_which_sam_then_logs_it_or_files_someone_new() {
    let kb = offline(&[]).await;
    let seeded = snapshot(&kb);

    let asked = chat(&kb, "Had lunch with Sam", None).await;
    assert_eq!(tools_used(&asked), ["classify_and_capture"]);
    assert!(content(&asked).contains(&format!("Is this about {SAM_CHOICES}?")), "{asked}");
    assert!(content(&asked).contains("Nothing is filed yet"), "{asked}");
    assert_eq!(snapshot(&kb), seeded, "nothing is filed before the person says which");
    let logged = chat(&kb, "Sam Lee", Some(&conversation_id(&asked))).await;
    assert_eq!(tools_used(&logged), ["classify_and_capture"]);
    assert!(content(&logged).contains("Added that to “Sam Lee” (people/sam-lee.md)"), "{logged}");
    assert_eq!(changed(&seeded, &snapshot(&kb)), ["people/sam-lee.md"]);
    let text = text_of(&kb, "people/sam-lee.md");
    assert!(text.contains("Climbs on Tuesdays.\n"), "{text}");
    assert!(has_log_line(&text, "Had lunch with Sam"), "{text}");

    let before = snapshot(&kb);
    let asked = chat(&kb, "Had lunch with Sam", None).await;
    assert_eq!(snapshot(&kb), before);
    let filed = chat(&kb, "someone new", Some(&conversation_id(&asked))).await;
    assert_eq!(tools_used(&filed), ["classify_and_capture"]);
    assert_eq!(changed(&before, &snapshot(&kb)), ["people/sam.md"]);
    assert_eq!(frontmatter(&kb, "people/sam.md").await["name"], "Sam");
    assert!(text_of(&kb, "people/sam.md").contains("Had lunch with Sam"));
}

/// One tool call as the model sends it.
fn call(id: &str, name: &str, arguments: &Value) -> FakeReply {
    FakeReply::tool_calls(&[(id, name, &arguments.to_string())])
}

/// The tool results the model read in its last request (those after the person's message).
fn results_read(fake: &FakeOpenAi) -> Vec<Value> {
    let requests = fake.requests();
    let messages = requests.last().unwrap().json()["messages"].as_array().unwrap().clone();
    let after = messages.iter().rposition(|m| m["role"] == "user").unwrap() + 1;
    messages[after..]
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| serde_json::from_str(m["content"].as_str().unwrap()).unwrap())
        .collect()
}

/// One scripted turn: the model makes `calls`, (the classifier answers `classified`), and
/// then says "Done."; the turn's answer and the one tool result the model read.
async fn scripted_turn(
    (fake, kb): (&FakeOpenAi, &KbServer),
    message: &str,
    conversation: Option<&str>,
    calls: Option<(&str, Value)>,
    classified: Option<FakeReply>,
) -> (Value, Value) {
    if let Some((tool, arguments)) = &calls {
        fake.push(call("call_1", tool, arguments));
    }
    if let Some(classified) = classified {
        fake.push(classified);
    }
    fake.push(FakeReply::text("Done."));
    let answer = chat(kb, message, conversation).await;
    assert_eq!(content(&answer), "Done.", "{answer}");
    assert_eq!(fake.pending(), 0, "the model was not asked as scripted: {answer}");
    let results = results_read(fake);
    assert_eq!(results.len(), 1, "{results:?}");
    (answer, results[0].clone())
}

fn candidate_paths(list: &Value) -> Vec<String> {
    list.as_array().unwrap().iter().map(|c| c["path"].as_str().unwrap().to_string()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scripted_model_names_entries_and_reads_how_they_resolved() {
    let (fake, kb) = scripted().await;
    let turn = |message: &'static str, tool: &'static str, arguments: Value| {
        let (fake, kb) = (&fake, &kb);
        async move { scripted_turn((fake, kb), message, None, Some((tool, arguments)), None).await }
    };

    // Update by a loose name: resolved, and the model is model_read how.
    let before = snapshot(&kb);
    let (answer, result) = turn(
        "mark the passport thing done",
        "update_entry",
        json!({"path": "the passport renewal", "updates": {"status": "done"}}),
    )
    .await;
    assert_eq!(tools_used(&answer), ["update_entry"]);
    assert_eq!(result["success"], true, "{result}");
    assert_eq!(result["data"]["path"], "admin/passport-renewal.md");
    assert_eq!(result["data"]["resolved"]["path"], "admin/passport-renewal.md", "{result}");
    assert_eq!(result["data"]["resolved"]["reference"], "the passport renewal", "{result}");
    assert_eq!(changed(&before, &snapshot(&kb)), ["admin/passport-renewal.md"]);
    assert_eq!(frontmatter(&kb, "admin/passport-renewal.md").await["status"], "done");

    // Get by a first name, and by a name in other case without accents.
    let (_, result) = turn("what about Priya?", "get_entry", json!({"path": "Priya"})).await;
    assert_eq!(result["data"]["entry"]["path"], "people/priya-raman.md", "{result}");
    assert_eq!(result["data"]["resolved"]["by"], "partial name", "{result}");
    let (_, result) = turn("show jose alvarez", "get_entry", json!({"path": "jose alvarez"})).await;
    assert_eq!(result["data"]["entry"]["path"], "people/jose-alvarez.md", "{result}");
    assert_eq!(result["data"]["resolved"]["by"], "name", "{result}");

    // Move by name.
    let before = snapshot(&kb);
    let (_, result) = turn(
        "the book swap is a project",
        "move_entry",
        json!({"path": "the book swap", "targetCategory": "projects"}),
    )
    .await;
    assert_eq!(result["data"]["newPath"], "projects/book-swap.md", "{result}");
    assert_eq!(changed(&before, &snapshot(&kb)), ["ideas/book-swap.md", "projects/book-swap.md"]);

    // A name that matches nothing: not found, with nothing changed.
    let before = snapshot(&kb);
    let (_, result) = turn(
        "mark the zeppelin done",
        "update_entry",
        json!({"path": "zeppelin", "updates": {"status": "done"}}),
    )
    .await;
    assert_eq!(result["success"], false);
    assert!(result["error"].as_str().unwrap().starts_with("Entry not found"), "{result}");
    assert_eq!(snapshot(&kb), before);

    // A capture about someone already there is added to their Log.
    let before = snapshot(&kb);
    let text = "Had coffee with Priya, she is moving to MIT";
    let (answer, result) = scripted_turn(
        (&fake, &kb),
        text,
        None,
        Some(("classify_and_capture", json!({"text": text}))),
        Some(FakeReply::classification("people", 0.9, "Priya")),
    )
    .await;
    assert_eq!(tools_used(&answer), ["classify_and_capture"]);
    assert_eq!(result["data"]["merged"], true, "{result}");
    assert_eq!(result["data"]["path"], "people/priya-raman.md", "{result}");
    assert_eq!(changed(&before, &snapshot(&kb)), ["people/priya-raman.md"]);
    assert!(has_log_line(&text_of(&kb, "people/priya-raman.md"), text));

    // A delete by name asks first; the yes deletes that entry.
    let (asked, result) = turn("delete the old site", "delete_entry", json!({"path": "the old site"})).await;
    assert_eq!(result["data"]["confirmationRequired"], true, "{result}");
    assert_eq!(result["data"]["path"], "projects/old-site.md", "{result}");
    assert!(kb.vault().join("projects/old-site.md").exists());
    let (done, result) = scripted_turn((&fake, &kb), "yes", Some(&conversation_id(&asked)), None, None).await;
    assert_eq!(tools_used(&done), ["delete_entry"]);
    assert_eq!(result["data"]["deleted"], true, "{result}");
    assert!(!kb.vault().join("projects/old-site.md").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scripted_model_two_people_called_sam() {
    let (fake, kb) = scripted().await;
    let seeded = snapshot(&kb);

    // get_entry "Sam": the model reads the candidates; the person's pick runs the call.
    let (asked, result) =
        scripted_turn((&fake, &kb), "show Sam", None, Some(("get_entry", json!({"path": "Sam"}))), None)
            .await;
    assert_eq!(result["success"], false);
    assert_eq!(
        candidate_paths(&result["candidates"]),
        ["people/sam-lee.md", "people/sam-ortiz.md"],
        "{result}"
    );
    assert_eq!(result["candidates"][1]["name"], "Sam Ortiz");
    assert_eq!(snapshot(&kb), seeded);
    let (picked, result) =
        scripted_turn((&fake, &kb), "Sam Ortiz", Some(&conversation_id(&asked)), None, None).await;
    assert_eq!(tools_used(&picked), ["get_entry"]);
    assert_eq!(result["data"]["entry"]["path"], "people/sam-ortiz.md", "{result}");

    // update_entry "Sam": nothing changes until "the second one".
    let (asked, result) = scripted_turn(
        (&fake, &kb),
        "Sam's context is now Climbing partner",
        None,
        Some(("update_entry", json!({"path": "Sam", "updates": {"context": "Climbing partner"}}))),
        None,
    )
    .await;
    assert_eq!(
        candidate_paths(&result["candidates"]),
        ["people/sam-lee.md", "people/sam-ortiz.md"],
        "{result}"
    );
    assert_eq!(snapshot(&kb), seeded);
    let (done, result) =
        scripted_turn((&fake, &kb), "the second one", Some(&conversation_id(&asked)), None, None).await;
    assert_eq!(tools_used(&done), ["update_entry"]);
    assert_eq!(result["data"]["path"], "people/sam-ortiz.md", "{result}");
    assert_eq!(changed(&seeded, &snapshot(&kb)), ["people/sam-ortiz.md"]);
    assert_eq!(frontmatter(&kb, "people/sam-ortiz.md").await["context"], "Climbing partner");

    // A capture about "Sam": possibleDuplicate, nothing filed; "Sam Lee" logs it there.
    let before = snapshot(&kb);
    let (asked, result) = scripted_turn(
        (&fake, &kb),
        "Had lunch with Sam",
        None,
        Some(("classify_and_capture", json!({"text": "Had lunch with Sam"}))),
        Some(FakeReply::classification("people", 0.9, "Sam")),
    )
    .await;
    assert_eq!(result["success"], false);
    assert_eq!(
        candidate_paths(&result["possibleDuplicate"]),
        ["people/sam-lee.md", "people/sam-ortiz.md"],
        "{result}"
    );
    assert_eq!(snapshot(&kb), before);
    let (logged, result) = scripted_turn(
        (&fake, &kb),
        "Sam Lee",
        Some(&conversation_id(&asked)),
        None,
        Some(FakeReply::classification("people", 0.9, "Sam")),
    )
    .await;
    assert_eq!(tools_used(&logged), ["classify_and_capture"]);
    assert_eq!(result["data"]["merged"], true, "{result}");
    assert_eq!(changed(&before, &snapshot(&kb)), ["people/sam-lee.md"]);
    assert!(has_log_line(&text_of(&kb, "people/sam-lee.md"), "Had lunch with Sam"));

    // The model may also name the entry itself: mergeInto by name.
    let before = snapshot(&kb);
    let (_, result) = scripted_turn(
        (&fake, &kb),
        "Sam Ortiz called about the taxes",
        None,
        Some((
            "classify_and_capture",
            json!({"text": "Sam Ortiz called about the taxes", "mergeInto": "sam ortiz"}),
        )),
        Some(FakeReply::classification("people", 0.9, "Sam Ortiz")),
    )
    .await;
    assert_eq!(result["data"]["path"], "people/sam-ortiz.md", "{result}");
    assert_eq!(result["data"]["resolved"]["path"], "people/sam-ortiz.md", "{result}");
    assert_eq!(changed(&before, &snapshot(&kb)), ["people/sam-ortiz.md"]);
    assert!(has_log_line(&text_of(&kb, "people/sam-ortiz.md"), "Sam Ortiz called about the taxes"));
}

// The scripted-model routing tables. The scripted model passes a person's words for an
// entry as it would ("the passport thing", "Jose", "Priya's entry"), rarely a path; each
// row says the messages of one conversation, what the model does in each turn (its tool
// calls, and the classifier's answer when a capture asks for one), what each tool result
// the model read said (how the name resolved, the candidates, `merged`, a proposal), and
// what is on disk afterwards.

/// What the scripted model answers in a turn, in order, before it says "Done.".
#[derive(Debug, Clone, Copy)]
enum Script {
    /// A round that calls this tool with these arguments (JSON text).
    Calls(&'static str, &'static str),
    /// The capture classifier's answer: category, confidence, name.
    Classifies(&'static str, f64, &'static str),
}

/// What one tool result the model read says.
#[derive(Debug, Clone, Copy)]
enum ModelRead {
    /// `success: true`.
    Done,
    /// `success: false`, and the error holds this text.
    Refused(&'static str),
    /// The name resolved to this path by this rule (`resolved`, or one of its items).
    Resolved(&'static str, &'static str),
    /// The entry was given by its path: the result has no `resolved`.
    AsPath,
    /// `candidates`: these entries, in this order.
    Candidates(&'static [&'static str]),
    /// `possibleDuplicate`: these entries, in this order.
    PossibleDuplicate(&'static [&'static str]),
    /// A capture added to this existing entry: `merged: true` and its `path`.
    MergedInto(&'static str),
    /// A delete or merge proposed and not done: `confirmationRequired` and this `proposal`.
    Proposes(&'static str),
    /// The value at this JSON pointer: this text, or for a number, boolean, list or null
    /// this JSON.
    At(&'static str, &'static str),
    /// The search hits are these entries, in this order.
    Hits(&'static [&'static str]),
}

/// One message of a conversation and the turn it starts.
#[derive(Debug, Clone, Copy)]
struct Turn {
    say: &'static str,
    script: &'static [Script],
    /// The `toolsUsed` of the answer; `None`: the tools the model called, in order.
    tools: Option<&'static [&'static str]>,
    /// For each tool result the model read in this turn, in order, what it says.
    model_read: &'static [&'static [ModelRead]],
}

/// The person says `say`; the model makes `script`'s calls.
const fn ask(
    say: &'static str,
    script: &'static [Script],
    model_read: &'static [&'static [ModelRead]],
) -> Turn {
    Turn { say, script, tools: None, model_read }
}

/// The person answers a question (a pick, a yes, a no); kb runs `tools` itself, or none.
const fn answer(
    say: &'static str,
    script: &'static [Script],
    tools: &'static [&'static str],
    model_read: &'static [&'static [ModelRead]],
) -> Turn {
    Turn { say, script, tools: Some(tools), model_read }
}

/// One row of a scripted table: a conversation, the files it changed (exactly these) and
/// what else must hold afterwards.
#[derive(Debug, Clone, Copy)]
struct ScriptedRow {
    turns: &'static [Turn],
    changes: &'static [&'static str],
    expect: &'static [Expect],
}

const fn srow(
    turns: &'static [Turn],
    changes: &'static [&'static str],
    expect: &'static [Expect],
) -> ScriptedRow {
    ScriptedRow { turns, changes, expect }
}

use ModelRead::{
    AsPath, At, Candidates, Done, Hits, MergedInto, PossibleDuplicate, Proposes, Refused, Resolved,
};
use Script::{Calls, Classifies};

const SAMS: &[&str] = &["people/sam-lee.md", "people/sam-ortiz.md"];
const NOT_FOUND: &[&[ModelRead]] = &[&[Refused("Entry not found")]];

/// The scripted routing table over the seed: read-only rows first, then rows that each
/// change entries no later row depends on.
const SCRIPTED: &[ScriptedRow] = &[
    // Showing and finding: a first name, the whole name in other case, without accents,
    // with filler words, a word of the name that only a search finds.
    srow(
        &[ask(
            "what do I know about Priya?",
            &[
                Calls("search_entries", r#"{"query": "Priya"}"#),
                Calls("get_entry", r#"{"path": "Priya Raman"}"#),
            ],
            &[
                &[Done, Hits(&["people/priya-raman.md"])],
                &[Done, Resolved("people/priya-raman.md", "name"), At("/data/entry/name", "Priya Raman")],
            ],
        )],
        NOTHING,
        &[],
    ),
    srow(
        &[ask(
            "show me Priya",
            &[Calls("get_entry", r#"{"path": "Priya"}"#)],
            &[&[
                Done,
                Resolved("people/priya-raman.md", "partial name"),
                At("/data/entry/path", "people/priya-raman.md"),
            ]],
        )],
        NOTHING,
        &[],
    ),
    srow(
        &[ask(
            "pull up priya raman",
            &[Calls("get_entry", r#"{"path": "priya raman"}"#)],
            &[&[
                Done,
                Resolved("people/priya-raman.md", "name"),
                At("/data/entry/frontmatter/context", "Robotics meetup"),
            ]],
        )],
        NOTHING,
        &[],
    ),
    srow(
        &[ask(
            "open Priya's entry",
            &[Calls("get_entry", r#"{"path": "Priya's entry"}"#)],
            &[&[Done, Resolved("people/priya-raman.md", "partial name")]],
        )],
        NOTHING,
        &[],
    ),
    srow(
        &[ask(
            "open the passport renewal",
            &[Calls("get_entry", r#"{"path": "the passport renewal"}"#)],
            &[&[
                Done,
                Resolved("admin/passport-renewal.md", "name"),
                At("/data/entry/content", "Renew before the trip.\n"),
            ]],
        )],
        NOTHING,
        &[],
    ),
    srow(
        &[ask(
            "when is the passport thing due?",
            &[Calls("get_entry", r#"{"path": "the passport thing"}"#)],
            &[&[
                Done,
                Resolved("admin/passport-renewal.md", "partial name"),
                At("/data/entry/frontmatter/due_date", "2026-12-15"),
            ]],
        )],
        NOTHING,
        &[],
    ),
    srow(
        &[ask(
            "tell me about José",
            &[Calls("get_entry", r#"{"path": "José"}"#)],
            &[&[
                Done,
                Resolved("people/jose-alvarez.md", "partial name"),
                At("/data/entry/name", "José Álvarez"),
            ]],
        )],
        NOTHING,
        &[],
    ),
    srow(
        &[ask(
            "SHOW JOSE ALVAREZ",
            &[Calls("get_entry", r#"{"path": "JOSE ALVAREZ"}"#)],
            &[&[Done, Resolved("people/jose-alvarez.md", "name")]],
        )],
        NOTHING,
        &[],
    ),
    srow(
        &[ask(
            "who's maria again?",
            &[Calls("get_entry", r#"{"path": "maria"}"#)],
            &[&[
                Done,
                Resolved("people/maria-chen.md", "partial name"),
                At("/data/entry/frontmatter/context", "Former colleague at Acme"),
            ]],
        )],
        NOTHING,
        &[],
    ),
    srow(
        &[ask(
            "pull up the zine idea",
            &[Calls("get_entry", r#"{"path": "the zine idea"}"#)],
            &[&[Done, Resolved("ideas/zine.md", "name")]],
        )],
        NOTHING,
        &[],
    ),
    srow(
        &[ask(
            "what was the kite thing?",
            &[Calls("get_entry", r#"{"path": "the kite thing"}"#)],
            &[&[Done, Resolved("ideas/kite-festival.md", "partial name")]],
        )],
        NOTHING,
        &[],
    ),
    srow(
        &[ask(
            "how is the shed going?",
            &[Calls("get_entry", r#"{"path": "the shed"}"#)],
            &[&[
                Done,
                Resolved("projects/garden-shed.md", "search"),
                At("/data/entry/frontmatter/next_action", "Buy timber"),
            ]],
        )],
        NOTHING,
        &[],
    ),
    srow(
        &[ask(
            "what was the widgets note?",
            &[Calls("get_entry", r#"{"path": "the widgets note"}"#)],
            &[&[Done, Resolved("inbox/widgets.md", "name"), At("/data/entry/category", "inbox")]],
        )],
        NOTHING,
        &[],
    ),
    srow(
        &[ask(
            "show people/maria-chen.md",
            &[Calls("get_entry", r#"{"path": "people/maria-chen.md"}"#)],
            &[&[Done, AsPath, At("/data/entry/name", "Maria Chen")]],
        )],
        NOTHING,
        &[],
    ),
    srow(
        &[ask("open the zeppelin", &[Calls("get_entry", r#"{"path": "the zeppelin"}"#)], NOT_FOUND)],
        NOTHING,
        &[],
    ),
    srow(
        &[ask(
            "show Prya",
            &[Calls("get_entry", r#"{"path": "Prya"}"#)],
            &[&[Refused("Entry not found: “Prya”. The nearest names: Priya Raman (people/priya-raman.md)")]],
        )],
        NOTHING,
        &[],
    ),
    srow(
        &[
            ask(
                "show Sam",
                &[Calls("get_entry", r#"{"path": "Sam"}"#)],
                &[&[Refused("could mean several"), Candidates(SAMS)]],
            ),
            answer(
                "Sam Ortiz",
                &[],
                &["get_entry"],
                &[&[Done, At("/data/entry/path", "people/sam-ortiz.md")]],
            ),
        ],
        NOTHING,
        &[],
    ),
    // Searching.
    srow(
        &[ask(
            "who plays chess?",
            &[Calls("search_entries", r#"{"query": "chess"}"#)],
            &[&[Done, Hits(&["people/jose-alvarez.md"]), At("/data/total", "1")]],
        )],
        NOTHING,
        &[],
    ),
    srow(
        &[ask(
            "who did I meet at the robotics meetup?",
            &[Calls("search_entries", r#"{"query": "robotics meetup", "category": "people"}"#)],
            &[&[Done, Hits(&["people/priya-raman.md"])]],
        )],
        NOTHING,
        &[],
    ),
    srow(
        &[ask(
            "anything about books?",
            &[Calls("search_entries", r#"{"query": "books"}"#)],
            &[&[Done, Hits(&["ideas/book-swap.md", "ideas/bakery.md"])]],
        )],
        NOTHING,
        &[],
    ),
    // Duplicates: two Sams are not one person.
    srow(
        &[ask(
            "any duplicates of Sam?",
            &[Calls("find_duplicates", r#"{"name": "Sam"}"#)],
            &[&[Done, At("/data/total", "0")]],
        )],
        NOTHING,
        &[],
    ),
    srow(
        &[ask("find duplicates", &[Calls("find_duplicates", "{}")], &[&[Done, At("/data/total", "0")]])],
        NOTHING,
        &[],
    ),
    // Updating fields by name.
    srow(
        &[ask(
            "mark the passport thing done",
            &[Calls("update_entry", r#"{"path": "the passport thing", "updates": {"status": "done"}}"#)],
            &[&[
                Done,
                Resolved("admin/passport-renewal.md", "partial name"),
                At("/data/updatedFields", r#"["status"]"#),
            ]],
        )],
        &["admin/passport-renewal.md"],
        &[
            Field("admin/passport-renewal.md", "status", "done"),
            Field("admin/passport-renewal.md", "due_date", "2026-12-15"),
        ],
    ),
    srow(
        &[ask(
            "the dentist appointment is on December 1st",
            &[Calls(
                "update_entry",
                r#"{"path": "dentist appointment", "updates": {"due_date": "2026-12-01"}}"#,
            )],
            &[&[Done, Resolved("admin/dentist-appointment.md", "name")]],
        )],
        &["admin/dentist-appointment.md"],
        &[Field("admin/dentist-appointment.md", "due_date", "2026-12-01")],
    ),
    srow(
        &[ask(
            "next step on the garden shed is calling the carpenter",
            &[Calls(
                "update_entry",
                r#"{"path": "garden shed", "updates": {"next_action": "Call the carpenter"}}"#,
            )],
            &[&[Done, Resolved("projects/garden-shed.md", "name")]],
        )],
        &["projects/garden-shed.md"],
        &[Field("projects/garden-shed.md", "next_action", "Call the carpenter")],
    ),
    srow(
        &[ask(
            "tag the website redesign with web and design",
            &[Calls(
                "update_entry",
                r#"{"path": "The Website Redesign", "updates": {"tags": ["web", "design"]}}"#,
            )],
            &[&[Done, Resolved("projects/website-redesign.md", "name")]],
        )],
        &["projects/website-redesign.md"],
        &[List("projects/website-redesign.md", "tags", &["web", "design"])],
    ),
    srow(
        &[ask(
            "José is the chess club captain now",
            &[Calls("update_entry", r#"{"path": "Jose", "updates": {"context": "Chess club captain"}}"#)],
            &[&[Done, Resolved("people/jose-alvarez.md", "partial name")]],
        )],
        &["people/jose-alvarez.md"],
        &[Field("people/jose-alvarez.md", "context", "Chess club captain")],
    ),
    srow(
        &[ask(
            "call the kitchen tiles project Kitchen refit",
            &[Calls(
                "update_entry",
                r#"{"path": "kitchen tiles project", "updates": {"name": "Kitchen refit"}}"#,
            )],
            &[&[Done, Resolved("projects/kitchen-tiles.md", "name")]],
        )],
        &["projects/kitchen-tiles.md"],
        &[Field("projects/kitchen-tiles.md", "name", "Kitchen refit")],
    ),
    srow(
        &[ask(
            "set the status of projects/website-redesign.md to waiting",
            &[Calls(
                "update_entry",
                r#"{"path": "projects/website-redesign.md", "updates": {"status": "waiting"}}"#,
            )],
            &[&[Done, AsPath, At("/data/path", "projects/website-redesign.md")]],
        )],
        &["projects/website-redesign.md"],
        &[Field("projects/website-redesign.md", "status", "waiting")],
    ),
    srow(
        &[ask(
            "put the car insurance to sleep",
            &[Calls("update_entry", r#"{"path": "car insurance", "updates": {"status": "sleeping"}}"#)],
            &[&[Refused(r#"field "status""#)]],
        )],
        NOTHING,
        &[Field("admin/car-insurance.md", "status", "pending")],
    ),
    srow(
        &[ask(
            "mark the zeppelin thing done",
            &[Calls("update_entry", r#"{"path": "the zeppelin thing", "updates": {"status": "done"}}"#)],
            NOT_FOUND,
        )],
        NOTHING,
        &[],
    ),
    srow(
        &[
            ask(
                "Sam's context is Bouldering buddy",
                &[Calls("update_entry", r#"{"path": "Sam", "updates": {"context": "Bouldering buddy"}}"#)],
                &[&[Candidates(SAMS)]],
            ),
            answer(
                "the first one",
                &[],
                &["update_entry"],
                &[&[Done, At("/data/path", "people/sam-lee.md")]],
            ),
        ],
        &["people/sam-lee.md"],
        &[
            Field("people/sam-lee.md", "context", "Bouldering buddy"),
            Field("people/sam-ortiz.md", "context", "Accountant"),
        ],
    ),
    // Editing the notes by name.
    srow(
        &[ask(
            "note on the car insurance: got a quote from Acme",
            &[Calls(
                "update_entry",
                r#"{"path": "the car insurance", "body": {"mode": "append", "content": "Got a quote from Acme."}}"#,
            )],
            &[&[
                Done,
                Resolved("admin/car-insurance.md", "name"),
                At("/data/updatedFields", r#"["content"]"#),
            ]],
        )],
        &["admin/car-insurance.md"],
        &[Notes("admin/car-insurance.md", "\nCompare quotes.\n\nGot a quote from Acme.\n")],
    ),
    srow(
        &[ask(
            "log on the garden shed: called the carpenter",
            &[Calls(
                "update_entry",
                r#"{"path": "the garden shed", "body": {"mode": "section", "section": "Log", "content": "Called the carpenter"}}"#,
            )],
            &[&[Done, Resolved("projects/garden-shed.md", "name")]],
        )],
        &["projects/garden-shed.md"],
        &[
            Log("projects/garden-shed.md", "Called the carpenter"),
            Notes("projects/garden-shed.md", "Build it in spring.\n"),
        ],
    ),
    srow(
        &[ask(
            "Maria works in product design now, fix her notes",
            &[Calls(
                "update_entry",
                r#"{"path": "Maria", "body": {"mode": "find_replace", "find": "design", "content": "product design"}}"#,
            )],
            &[&[Done, Resolved("people/maria-chen.md", "partial name")]],
        )],
        &["people/maria-chen.md"],
        &[Notes("people/maria-chen.md", "\nWorks in product design now.\n")],
    ),
    srow(
        &[ask(
            "the gym membership: cancel before February, by Jan 31",
            &[Calls(
                "update_entry",
                r#"{"path": "the gym membership", "updates": {"due_date": "2027-01-31"}, "body": {"mode": "find_replace", "find": "January", "content": "February"}}"#,
            )],
            &[&[
                Done,
                Resolved("admin/gym-membership.md", "name"),
                At("/data/updatedFields", r#"["due_date","content"]"#),
            ]],
        )],
        &["admin/gym-membership.md"],
        &[
            Field("admin/gym-membership.md", "due_date", "2027-01-31"),
            Notes("admin/gym-membership.md", "\nCancel before February.\n"),
        ],
    ),
    srow(
        &[ask(
            "in the tea club notes change coffee to tea",
            &[Calls(
                "update_entry",
                r#"{"path": "tea club", "body": {"mode": "find_replace", "find": "coffee", "content": "tea"}}"#,
            )],
            &[&[Refused("0 times")]],
        )],
        NOTHING,
        &[],
    ),
    // Captures about someone (or something) already there are added to it.
    srow(
        &[ask(
            "Priya is moving to MIT",
            &[
                Calls("classify_and_capture", r#"{"text": "Priya is moving to MIT"}"#),
                Classifies("people", 0.9, "Priya"),
            ],
            &[&[Done, MergedInto("people/priya-raman.md"), At("/data/name", "Priya Raman")]],
        )],
        &["people/priya-raman.md"],
        &[
            Log("people/priya-raman.md", "Priya is moving to MIT"),
            Notes("people/priya-raman.md", "Met at the robotics meetup.\n"),
        ],
    ),
    srow(
        &[ask(
            "Had coffee with José, he is learning the guitar",
            &[
                Calls(
                    "classify_and_capture",
                    r#"{"text": "Had coffee with José, he is learning the guitar"}"#,
                ),
                Classifies("people", 0.9, "Jose"),
            ],
            &[&[Done, MergedInto("people/jose-alvarez.md")]],
        )],
        &["people/jose-alvarez.md"],
        &[Log("people/jose-alvarez.md", "Had coffee with José, he is learning the guitar")],
    ),
    srow(
        &[ask(
            "MARIA CHEN starts at Globex in May",
            &[
                Calls("classify_and_capture", r#"{"text": "MARIA CHEN starts at Globex in May"}"#),
                Classifies("people", 0.85, "maria chen"),
            ],
            &[&[Done, MergedInto("people/maria-chen.md")]],
        )],
        &["people/maria-chen.md"],
        &[Log("people/maria-chen.md", "MARIA CHEN starts at Globex in May")],
    ),
    srow(
        &[ask(
            "Priya recommended a drone kit",
            &[
                Calls(
                    "classify_and_capture",
                    r#"{"text": "Priya recommended a drone kit", "mergeInto": "priya raman"}"#,
                ),
                Classifies("people", 0.9, "Priya"),
            ],
            &[&[Done, MergedInto("people/priya-raman.md"), Resolved("people/priya-raman.md", "name")]],
        )],
        &["people/priya-raman.md"],
        &[Log("people/priya-raman.md", "Priya recommended a drone kit")],
    ),
    srow(
        &[ask(
            "Garden shed: the timber arrived",
            &[
                Calls("classify_and_capture", r#"{"text": "Garden shed: the timber arrived"}"#),
                Classifies("projects", 0.9, "Garden shed"),
            ],
            &[&[Done, MergedInto("projects/garden-shed.md")]],
        )],
        &["projects/garden-shed.md"],
        &[Log("projects/garden-shed.md", "Garden shed: the timber arrived")],
    ),
    srow(
        &[ask(
            "Met Ines Duarte at the climbing gym",
            &[
                Calls("classify_and_capture", r#"{"text": "Met Ines Duarte at the climbing gym"}"#),
                Classifies("people", 0.9, "Ines Duarte"),
            ],
            &[&[Done, At("/data/path", "people/ines-duarte.md"), At("/data/merged", "null")]],
        )],
        &["people/ines-duarte.md"],
        &[Field("people/ines-duarte.md", "name", "Ines Duarte")],
    ),
    srow(
        &[
            ask(
                "Had lunch with Sam",
                &[
                    Calls("classify_and_capture", r#"{"text": "Had lunch with Sam"}"#),
                    Classifies("people", 0.9, "Sam"),
                ],
                &[&[Refused(""), PossibleDuplicate(SAMS)]],
            ),
            answer(
                "Sam Ortiz",
                &[Classifies("people", 0.9, "Sam")],
                &["classify_and_capture"],
                &[&[Done, MergedInto("people/sam-ortiz.md")]],
            ),
        ],
        &["people/sam-ortiz.md"],
        &[Log("people/sam-ortiz.md", "Had lunch with Sam")],
    ),
    // An unsure capture still goes to the one person its name begins; else to the inbox.
    srow(
        &[ask(
            "priya says hi from Boston",
            &[
                Calls("classify_and_capture", r#"{"text": "priya says hi from Boston"}"#),
                Classifies("people", 0.3, "Priya"),
            ],
            &[&[Done, MergedInto("people/priya-raman.md"), At("/data/clarificationNeeded", "false")]],
        )],
        &["people/priya-raman.md"],
        &[Log("people/priya-raman.md", "priya says hi from Boston")],
    ),
    srow(
        &[ask(
            "gadgets for the shop maybe",
            &[
                Calls("classify_and_capture", r#"{"text": "gadgets for the shop maybe"}"#),
                Classifies("ideas", 0.3, "Gadgets"),
            ],
            &[&[
                Done,
                At("/data/path", "inbox/gadgets.md"),
                At("/data/clarificationNeeded", "true"),
                At("/data/suggestedCategory", "ideas"),
                At("/data/merged", "null"),
            ]],
        )],
        &["inbox/gadgets.md"],
        &[Field("inbox/gadgets.md", "original_text", "gadgets for the shop maybe")],
    ),
    // Moving by name.
    srow(
        &[ask(
            "move the bakery idea to projects",
            &[Calls("move_entry", r#"{"path": "the bakery idea", "targetCategory": "projects"}"#)],
            &[&[Done, Resolved("ideas/bakery.md", "name"), At("/data/newPath", "projects/bakery.md")]],
        )],
        &["ideas/bakery.md", "projects/bakery.md"],
        &[
            Absent("ideas/bakery.md"),
            Field("projects/bakery.md", "name", "Bakery"),
            Field("projects/bakery.md", "status", "active"),
        ],
    ),
    srow(
        &[ask(
            "actually the tea club is a project",
            &[Calls("move_entry", r#"{"path": "Tea Club", "targetCategory": "projects"}"#)],
            &[&[Done, Resolved("ideas/tea-club.md", "name"), At("/data/newPath", "projects/tea-club.md")]],
        )],
        &["ideas/tea-club.md", "projects/tea-club.md"],
        &[Absent("ideas/tea-club.md"), Exists("projects/tea-club.md")],
    ),
    srow(
        &[ask(
            "the widgets thing is an idea",
            &[Calls("move_entry", r#"{"path": "the widgets thing", "targetCategory": "ideas"}"#)],
            &[&[Done, Resolved("inbox/widgets.md", "name"), At("/data/newPath", "ideas/widgets.md")]],
        )],
        &["ideas/widgets.md", "inbox/widgets.md"],
        &[Absent("inbox/widgets.md"), Notes("ideas/widgets.md", "widgets for the shop")],
    ),
    srow(
        &[ask(
            "the kite thing belongs in projects",
            &[Calls("move_entry", r#"{"path": "the kite thing", "targetCategory": "projects"}"#)],
            &[&[
                Done,
                Resolved("ideas/kite-festival.md", "partial name"),
                At("/data/newPath", "projects/kite-festival.md"),
            ]],
        )],
        &["ideas/kite-festival.md", "projects/kite-festival.md"],
        &[Field("projects/kite-festival.md", "name", "Kite festival")],
    ),
    srow(
        &[ask(
            "the zine is an idea",
            &[Calls("move_entry", r#"{"path": "zine", "targetCategory": "ideas"}"#)],
            &[&[Refused("already in ideas")]],
        )],
        NOTHING,
        &[Exists("ideas/zine.md")],
    ),
    srow(
        &[ask(
            "move ideas/book-swap.md to projects",
            &[Calls("move_entry", r#"{"path": "ideas/book-swap.md", "targetCategory": "projects"}"#)],
            &[&[Done, AsPath, At("/data/newPath", "projects/book-swap.md")]],
        )],
        &["ideas/book-swap.md", "projects/book-swap.md"],
        &[Absent("ideas/book-swap.md")],
    ),
    // Deleting by name: proposed first; the yes deletes, a no keeps it.
    srow(
        &[
            ask(
                "delete the old site",
                &[Calls("delete_entry", r#"{"path": "the old site"}"#)],
                &[&[
                    Done,
                    Proposes("Delete Old site (projects/old-site.md)?"),
                    Resolved("projects/old-site.md", "name"),
                    At("/data/deleted", "false"),
                ]],
            ),
            answer(
                "yes",
                &[],
                &["delete_entry"],
                &[&[Done, At("/data/deleted", "true"), At("/data/path", "projects/old-site.md")]],
            ),
        ],
        &["projects/old-site.md"],
        &[Absent("projects/old-site.md")],
    ),
    srow(
        &[
            ask(
                "remove the gym membership entry",
                &[Calls("delete_entry", r#"{"path": "the gym membership entry"}"#)],
                &[&[Proposes("Delete Gym membership (admin/gym-membership.md)?")]],
            ),
            answer("no", &[], &[], &[]),
        ],
        NOTHING,
        &[Exists("admin/gym-membership.md")],
    ),
    srow(
        &[ask(
            "delete Maria",
            &[Calls("delete_entry", r#"{"path": "Maria"}"#)],
            &[&[
                Proposes("Delete Maria Chen (people/maria-chen.md)?"),
                Resolved("people/maria-chen.md", "partial name"),
            ]],
        )],
        NOTHING,
        &[Exists("people/maria-chen.md")],
    ),
    srow(
        &[ask("delete the zeppelin", &[Calls("delete_entry", r#"{"path": "the zeppelin"}"#)], NOT_FOUND)],
        NOTHING,
        &[],
    ),
    srow(
        &[
            ask("delete Sam", &[Calls("delete_entry", r#"{"path": "Sam"}"#)], &[&[Candidates(SAMS)]]),
            answer("Sam Lee", &[], &["delete_entry"], &[&[Proposes("Delete people/sam-lee.md?")]]),
            answer("yes", &[], &["delete_entry"], &[&[Done, At("/data/deleted", "true")]]),
        ],
        &["people/sam-lee.md"],
        &[Absent("people/sam-lee.md"), Exists("people/sam-ortiz.md")],
    ),
];

/// Duplicates and merges by name, over the seed plus a second "Priya".
const SCRIPTED_TIDY: &[ScriptedRow] = &[
    srow(
        &[ask(
            "any duplicates of Priya?",
            &[Calls("find_duplicates", r#"{"name": "priya"}"#)],
            &[&[
                Done,
                At("/data/total", "1"),
                At("/data/groups/0/reason", "one name is the start of the other"),
                At("/data/groups/0/entries/0/path", "people/priya-raman.md"),
                At("/data/groups/0/entries/1/path", "people/priya.md"),
            ]],
        )],
        NOTHING,
        &[],
    ),
    srow(
        &[ask("find duplicates", &[Calls("find_duplicates", "{}")], &[&[Done, At("/data/total", "1")]])],
        NOTHING,
        &[],
    ),
    srow(
        &[ask(
            "show Priya",
            &[Calls("get_entry", r#"{"path": "Priya"}"#)],
            &[&[Done, Resolved("people/priya.md", "name")]],
        )],
        NOTHING,
        &[],
    ),
    srow(
        &[
            ask(
                "merge Priya into Priya Raman",
                &[Calls(
                    "merge_entries",
                    r#"{"targetPath": "Priya Raman", "sourcePaths": ["people/priya.md"]}"#,
                )],
                &[&[
                    Done,
                    Proposes("Merge Priya (people/priya.md) into Priya Raman (people/priya-raman.md)?"),
                    Resolved("people/priya-raman.md", "name"),
                    At("/data/merged", "[]"),
                ]],
            ),
            answer("no", &[], &[], &[]),
        ],
        NOTHING,
        &[Exists("people/priya.md")],
    ),
    srow(
        &[ask(
            "merge the zeppelin into Priya Raman",
            &[Calls("merge_entries", r#"{"targetPath": "Priya Raman", "sourcePaths": ["the zeppelin"]}"#)],
            NOT_FOUND,
        )],
        NOTHING,
        &[],
    ),
    srow(
        &[ask(
            "Sam is the same as Maria Chen",
            &[Calls("merge_entries", r#"{"targetPath": "Maria Chen", "sourcePaths": ["Sam"]}"#)],
            &[&[Refused("could mean several"), Candidates(SAMS)]],
        )],
        NOTHING,
        &[],
    ),
    srow(
        &[
            ask(
                "merge Sam Ortiz into Sam",
                &[Calls("merge_entries", r#"{"targetPath": "Sam", "sourcePaths": ["people/sam-ortiz.md"]}"#)],
                &[&[Candidates(SAMS)]],
            ),
            answer(
                "Sam Lee",
                &[],
                &["merge_entries"],
                &[&[Proposes("Merge Sam Ortiz (people/sam-ortiz.md) into Sam Lee (people/sam-lee.md)?")]],
            ),
            answer("no", &[], &[], &[]),
        ],
        NOTHING,
        &[Exists("people/sam-ortiz.md")],
    ),
    srow(
        &[
            ask(
                "Priya and Priya Raman are the same person",
                &[Calls("merge_entries", r#"{"targetPath": "priya raman", "sourcePaths": ["Priya"]}"#)],
                &[&[
                    Proposes("Merge Priya (people/priya.md) into Priya Raman (people/priya-raman.md)?"),
                    Resolved("people/priya.md", "name"),
                    Resolved("people/priya-raman.md", "name"),
                ]],
            ),
            answer("yes", &[], &["merge_entries"], &[&[Done, At("/data/merged", r#"["people/priya.md"]"#)]]),
        ],
        &["people/priya-raman.md", "people/priya.md"],
        &[
            Absent("people/priya.md"),
            List("people/priya-raman.md", "aliases", &["Priya"]),
            Notes("people/priya-raman.md", "## Merged from Priya ("),
            Notes("people/priya-raman.md", "Likes drones."),
        ],
    ),
    srow(
        &[ask("find duplicates", &[Calls("find_duplicates", "{}")], &[&[Done, At("/data/total", "0")]])],
        NOTHING,
        &[],
    ),
    // The old name now finds the entry it was merged into, as an alias.
    srow(
        &[ask(
            "show Priya",
            &[Calls("get_entry", r#"{"path": "Priya"}"#)],
            &[&[Done, Resolved("people/priya-raman.md", "alias")]],
        )],
        NOTHING,
        &[],
    ),
    srow(
        &[ask(
            "Priya is moving to MIT",
            &[
                Calls("classify_and_capture", r#"{"text": "Priya is moving to MIT"}"#),
                Classifies("people", 0.9, "Priya"),
            ],
            &[&[Done, MergedInto("people/priya-raman.md")]],
        )],
        &["people/priya-raman.md"],
        &[Log("people/priya-raman.md", "Priya is moving to MIT")],
    ),
];

/// A `kb serve` over the seeded vault (plus `extra` files), wired to a fresh scripted model.
async fn scripted_with(extra: &'static [(&'static str, &'static str)]) -> (FakeOpenAi, KbServer) {
    let fake = FakeOpenAi::start().await.unwrap();
    let base = fake.base_url();
    let env = [("OPENAI_API_KEY", "sk-test"), ("OPENAI_BASE_URL", base.as_str()), ("KB_MODEL", "test-model")];
    let kb = KbServer::start_with_vault(&env, |vault| seed(vault, extra)).await;
    (fake, kb)
}

/// The entry paths of a list of candidates or hits; empty when there is no list.
fn paths_of(list: &Value) -> Vec<String> {
    list.as_array().into_iter().flatten().map(|c| c["path"].as_str().unwrap_or("").to_string()).collect()
}

fn check_model_read(result: &Value, model_read: &ModelRead, label: &str) {
    let data = &result["data"];
    match *model_read {
        Done => assert_eq!(result["success"], true, "{label}: {result}"),
        Refused(words) => {
            assert_eq!(result["success"], false, "{label}: {result}");
            let error = result["error"].as_str().unwrap_or("");
            assert!(error.contains(words), "{label}: the error lacks {words:?}: {result}");
        }
        Resolved(path, by) => {
            let resolved = match &data["resolved"] {
                Value::Array(items) => items.clone(),
                one => vec![one.clone()],
            };
            assert!(
                resolved.iter().any(|r| r["path"] == path && r["by"] == by && r["reference"].is_string()),
                "{label}: not resolved to {path} by {by}: {result}"
            );
        }
        AsPath => {
            assert_eq!(result["success"], true, "{label}: {result}");
            assert!(data.get("resolved").is_none(), "{label}: a path was resolved as a name: {result}");
        }
        Candidates(paths) => assert_eq!(paths_of(&result["candidates"]), paths, "{label}: {result}"),
        PossibleDuplicate(paths) => {
            assert_eq!(paths_of(&result["possibleDuplicate"]), paths, "{label}: {result}");
        }
        MergedInto(path) => {
            assert_eq!(data["merged"], true, "{label}: {result}");
            assert_eq!(data["path"], path, "{label}: {result}");
        }
        Proposes(proposal) => {
            assert_eq!(data["confirmationRequired"], true, "{label}: {result}");
            assert_eq!(data["proposal"], proposal, "{label}: {result}");
        }
        At(pointer, want) => {
            let got = result.pointer(pointer).unwrap_or(&Value::Null);
            let same = match got {
                Value::String(text) => text == want,
                other => serde_json::from_str::<Value>(want).is_ok_and(|want| &want == other),
            };
            assert!(same, "{label}: {pointer} is {got}, not {want}: {result}");
        }
        Hits(paths) => assert_eq!(paths_of(&data["entries"]), paths, "{label}: {result}"),
    }
}

/// Runs each row in a conversation of its own: scripts the model for each turn, sends the
/// message, and checks the tools used, what each result the model read said, the files
/// changed and the rest; panics naming the row and the message.
async fn run_scripted_table(fake: &FakeOpenAi, kb: &KbServer, table: &[ScriptedRow]) {
    for (n, row) in table.iter().enumerate() {
        let said: Vec<&str> = row.turns.iter().map(|t| t.say).collect();
        let label = format!("scripted row {n} {said:?}");
        let before = snapshot(kb);
        let mut conversation: Option<String> = None;
        let mut last = Value::Null;
        for turn in row.turns {
            let label = format!("{label}, message {:?}", turn.say);
            let mut called: Vec<String> = Vec::new();
            for (k, step) in turn.script.iter().enumerate() {
                match *step {
                    Calls(tool, arguments) => {
                        let arguments: Value = serde_json::from_str(arguments)
                            .unwrap_or_else(|e| panic!("{label}: {arguments}: {e}"));
                        fake.push(call(&format!("call_{k}"), tool, &arguments));
                        called.push(tool.to_string());
                    }
                    Classifies(category, confidence, name) => {
                        fake.push(FakeReply::classification(category, confidence, name));
                    }
                }
            }
            fake.push(FakeReply::text("Done."));
            let answer = chat(kb, turn.say, conversation.as_deref()).await;
            assert_eq!(content(&answer), "Done.", "{label}: {answer}");
            assert_eq!(fake.pending(), 0, "{label}: the model was not asked as scripted: {answer}");
            conversation = Some(conversation_id(&answer));
            let tools = turn.tools.map_or(called, |tools| tools.iter().map(|t| t.to_string()).collect());
            assert_eq!(tools_used(&answer), tools, "{label}: {answer}");
            let results = results_read(fake);
            assert_eq!(
                results.len(),
                turn.model_read.len(),
                "{label}: the results the model read: {results:?}"
            );
            for (result, model_read) in results.iter().zip(turn.model_read) {
                for t in *model_read {
                    check_model_read(result, t, &label);
                }
            }
            last = answer;
        }
        let after = snapshot(kb);
        assert_eq!(changed(&before, &after), row.changes, "{label}: the files changed; answer: {last}");
        for expect in row.expect {
            check(kb, expect, &last, &label).await;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scripted_routing_table() {
    assert!(SCRIPTED.len() >= 40, "{} rows", SCRIPTED.len());
    let (fake, kb) = scripted_with(&[]).await;
    run_scripted_table(&fake, &kb, SCRIPTED).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scripted_duplicates_and_merges_table() {
    let (fake, kb) = scripted_with(&[PRIYA]).await;
    run_scripted_table(&fake, &kb, SCRIPTED_TIDY).await;
}
