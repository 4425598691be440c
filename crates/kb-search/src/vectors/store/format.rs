//! The vector file's bytes: its header, and the records it holds (see [`super`]), written
//! and read back.

use kb_domain::{EntryPath, Stamp};

use super::{EntryRecord, Key};

/// The first bytes of a vector file.
pub(super) const MAGIC: &[u8; 8] = b"KBVECS02";
/// The header: the magic and the dimension.
pub(super) const HEADER_LEN: u64 = 12;
/// The kind byte of a vector record.
pub(super) const VECTOR: u8 = 1;
/// The kind byte of an entry record.
pub(super) const ENTRY: u8 = 2;
/// The kind byte of a probe record.
pub(super) const PROBE: u8 = 3;
/// The kind byte of the record of queries on nothing in particular (see `calibration`).
pub(super) const UNRELATED: u8 = 4;
/// The longest record read (a bound against a damaged length).
pub(super) const MAX_RECORD: u32 = 16 * 1024 * 1024;

/// Appends a record of `kind` holding `payload` to `bytes`.
pub(super) fn push_record(bytes: &mut Vec<u8>, kind: u8, payload: &[u8]) {
    bytes.extend_from_slice(&u32::try_from(payload.len()).unwrap_or(u32::MAX).to_le_bytes());
    bytes.push(kind);
    bytes.extend_from_slice(payload);
}

/// The record at `at` in `bytes`: its kind, payload and where the next starts; `None`
/// when it is cut short or too long.
pub(super) fn record_at(bytes: &[u8], at: usize) -> Option<(u8, &[u8], usize)> {
    let head = bytes.get(at..at + 5)?;
    let len = u32::from_le_bytes([head[0], head[1], head[2], head[3]]);
    if len > MAX_RECORD {
        return None;
    }
    let end = at + 5 + len as usize;
    Some((head[4], bytes.get(at + 5..end)?, end))
}

/// The payload of an entry record.
pub(super) fn write_entry(entry: &EntryRecord) -> Vec<u8> {
    let path = entry.path.to_string();
    let mut payload = Vec::with_capacity(28 + path.len() + entry.parts.len() * 16);
    payload.extend_from_slice(&entry.stamp.mtime_ns.to_le_bytes());
    payload.extend_from_slice(&entry.stamp.size.to_le_bytes());
    payload.extend_from_slice(&u32::try_from(path.len()).unwrap_or(u32::MAX).to_le_bytes());
    payload.extend_from_slice(path.as_bytes());
    payload.extend_from_slice(&u32::try_from(entry.parts.len()).unwrap_or(u32::MAX).to_le_bytes());
    for key in &entry.parts {
        payload.extend_from_slice(key);
    }
    payload
}

/// An entry record read back.
pub(super) fn read_entry(reader: &mut Reader<'_>) -> Option<EntryRecord> {
    let mtime_ns = i64::from_le_bytes(reader.array()?);
    let size = u64::from_le_bytes(reader.array()?);
    let path_len = u32::from_le_bytes(reader.array()?) as usize;
    let path = std::str::from_utf8(reader.take(path_len)?).ok()?;
    let path = EntryPath::parse(path).ok()?;
    let count = u32::from_le_bytes(reader.array()?) as usize;
    let mut parts = Vec::with_capacity(count.min(1024));
    for _ in 0..count {
        parts.push(reader.key()?);
    }
    reader.0.is_empty().then_some(EntryRecord { path, stamp: Stamp::new(mtime_ns, size), parts })
}

/// Reads a payload from the front.
pub(super) struct Reader<'a>(pub(super) &'a [u8]);

impl<'a> Reader<'a> {
    /// The next `n` bytes.
    pub(super) fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let (taken, rest) = (self.0.get(..n)?, self.0.get(n..)?);
        self.0 = rest;
        Some(taken)
    }

    /// The next `N` bytes as an array.
    pub(super) fn array<const N: usize>(&mut self) -> Option<[u8; N]> {
        self.take(N)?.try_into().ok()
    }

    /// The next key.
    pub(super) fn key(&mut self) -> Option<Key> {
        self.array()
    }

    /// The next little-endian `f32`.
    pub(super) fn f32(&mut self) -> Option<f32> {
        self.array().map(f32::from_le_bytes)
    }
}
