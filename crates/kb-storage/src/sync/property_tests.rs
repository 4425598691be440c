//! The property of sync: whatever three devices do to their notes — create, append to the
//! body, add to a log, set a field, move, delete, edit the same note at once — and whenever
//! they sync, after a final round on each every vault is byte for byte the same, and every
//! line any device wrote is in it (in the note, or in a conflict copy beside it), but those
//! of a note a device deleted while they were in it there.
//!
//! Real git and a bare remote on disk: each case costs a few seconds, so the suite runs 24
//! cases unless `KB_SYNC_PROPTEST_CASES` asks for more.

use proptest::prelude::*;

use super::tests::{Device, bare_remote};

/// What one device does, by number (the device and the note are picked among those there).
#[derive(Debug, Clone)]
enum Step {
    /// Makes a new note.
    Create { device: usize },
    /// Adds a line at the end of a note's body.
    Append { device: usize, note: usize },
    /// Adds a dated line to a note's log.
    Log { device: usize, note: usize, day: u8 },
    /// Sets a note's `status`.
    SetStatus { device: usize, note: usize },
    /// Moves a note to another folder.
    Move { device: usize, note: usize },
    /// Deletes a note.
    Delete { device: usize, note: usize },
    /// Syncs a device.
    Sync { device: usize },
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        (0..3usize).prop_map(|device| Step::Create { device }),
        (0..3usize, 0..8usize).prop_map(|(device, note)| Step::Append { device, note }),
        (0..3usize, 0..8usize, 1..28u8).prop_map(|(device, note, day)| Step::Log { device, note, day }),
        (0..3usize, 0..8usize).prop_map(|(device, note)| Step::SetStatus { device, note }),
        (0..3usize, 0..8usize).prop_map(|(device, note)| Step::Move { device, note }),
        (0..3usize, 0..8usize).prop_map(|(device, note)| Step::Delete { device, note }),
        (0..3usize).prop_map(|device| Step::Sync { device }),
        (0..3usize).prop_map(|device| Step::Sync { device }),
    ]
}

/// The notes of a device's vault (not conflict copies), sorted.
fn notes(device: &Device) -> Vec<String> {
    device
        .files()
        .into_iter()
        .map(|(path, _)| path)
        .filter(|p| p.ends_with(".md") && !super::is_conflict_copy(p))
        .collect()
}

fn cases() -> u32 {
    std::env::var("KB_SYNC_PROPTEST_CASES").ok().and_then(|n| n.parse().ok()).unwrap_or(24)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    #[test]
    fn devices_end_identical_and_no_line_is_lost(steps in proptest::collection::vec(step(), 1..40)) {
        let (_remote_dir, remote) = bare_remote();
        let devices: Vec<Device> =
            ["laptop", "desktop", "server"].iter().map(|name| Device::new(&remote, name)).collect();
        // Every line a device wrote, each unique.
        let mut written: Vec<String> = Vec::new();
        let mut counter = 0;
        for step in &steps {
            counter += 1;
            match *step {
                Step::Create { device } => {
                    let line = format!("created line {counter}");
                    let folder = ["ideas", "projects", "people"][counter % 3];
                    let text = format!(
                        "---\nid: 01N{counter:05}\nname: Note {counter}\nstatus: active\n---\n{line}\n\n## Log\n\n- 2026-11-01: made\n"
                    );
                    devices[device].write(&format!("{folder}/note-{counter}.md"), &text);
                    written.push(line);
                }
                Step::Append { device, note } | Step::Log { device, note, .. } => {
                    let here = notes(&devices[device]);
                    let Some(path) = here.get(note % here.len().max(1)) else { continue };
                    let Some(text) = devices[device].read(path) else { continue };
                    let line = match *step {
                        Step::Log { day, .. } => format!("- 2026-11-{day:02}: logged {counter}"),
                        _ => format!("appended line {counter}"),
                    };
                    devices[device].write(path, &format!("{text}{line}\n"));
                    written.push(line);
                }
                Step::SetStatus { device, note } => {
                    let here = notes(&devices[device]);
                    let Some(path) = here.get(note % here.len().max(1)) else { continue };
                    let Some(text) = devices[device].read(path) else { continue };
                    let Some(start) = text.find("status: ") else { continue };
                    let end = start + text[start..].find('\n').unwrap_or(text.len() - start);
                    let changed = format!("{}status: s{counter}{}", &text[..start], &text[end..]);
                    devices[device].write(path, &changed);
                }
                Step::Move { device, note } => {
                    let here = notes(&devices[device]);
                    let Some(path) = here.get(note % here.len().max(1)) else { continue };
                    let name = path.rsplit('/').next().unwrap_or(path);
                    let folder = if path.starts_with("admin/") { "ideas" } else { "admin" };
                    let to = devices[device].root.join(folder);
                    std::fs::create_dir_all(&to).unwrap();
                    if !to.join(name).exists() {
                        std::fs::rename(devices[device].root.join(path), to.join(name)).unwrap();
                    }
                }
                Step::Delete { device, note } => {
                    let here = notes(&devices[device]);
                    let Some(path) = here.get(note % here.len().max(1)) else { continue };
                    let Some(text) = devices[device].read(path) else { continue };
                    // What the note held here goes with it (an edit elsewhere it has not
                    // seen keeps the note, and those lines stay expected).
                    written.retain(|line| !text.lines().any(|l| l == line));
                    std::fs::remove_file(devices[device].root.join(path)).unwrap();
                }
                Step::Sync { device } => {
                    devices[device].round();
                }
            }
        }
        // A final round on each, twice over, brings every device to the remote's last word.
        for _ in 0..2 {
            for device in &devices {
                device.round();
            }
        }
        let first = devices[0].files();
        for device in &devices[1..] {
            prop_assert_eq!(&device.files(), &first);
        }
        let everything: String = first.iter().map(|(_, text)| text.as_str()).collect::<Vec<_>>().join("\n");
        for line in &written {
            prop_assert!(everything.lines().any(|l| l == line), "{} is lost:\n{:#?}", line, first);
        }
    }
}
