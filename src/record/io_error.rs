//! The words for an I/O error writing a file (a recording, an export): what failed and what
//! to do, one rule for every writer.

use std::io;

/// What failed and what to do about it, for an I/O error writing a file: the system's words
/// (without "(os error N)") and the next step.
pub fn describe_io(e: &io::Error) -> String {
    let mut cause = e.to_string();
    // "(os error 28)" means nothing to an operator; the words before it do.
    if let Some(i) = cause.rfind(" (os error ") {
        cause.truncate(i);
    }
    let advice = match e.kind() {
        io::ErrorKind::StorageFull => "free space or choose another disk",
        io::ErrorKind::QuotaExceeded => "free space in your quota or choose another disk",
        io::ErrorKind::ReadOnlyFilesystem => "the disk is read-only: choose another disk",
        io::ErrorKind::PermissionDenied => "choose a folder you can write to",
        io::ErrorKind::NotFound => "the folder does not exist: create it or choose another path",
        io::ErrorKind::IsADirectory => "that is a folder: give a file name",
        _ => "check the disk, or choose another path",
    };
    format!("{cause} — {advice}")
}
