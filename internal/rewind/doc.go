// Package rewind brings the files an agent changed back to what they held at an entry
// of its session, from the session's own tool calls: Pi 1.6.0's `write` calls carry the
// whole content, its `edit` calls their replacements and a patch of each, its full
// `read` results what a file held when read.
//
// Plan computes, for every file a write or edit changed on the path from the entry to
// the leaf (a change counts when its tool result comes after the entry), what the file
// held at the entry, and checks the disk first: a file that no longer holds what the
// session's last change left is a conflict, shown with both sides; a file the session
// cannot reconstruct is not restorable, with the reason; the bash commands run after
// the entry are listed as changes no rewind can undo.
//
// Apply writes a plan. Invariant: before a file is overwritten or removed its current
// bytes are kept in the rewind's own directory under the state dir (a removed file also
// goes to the system trash where the platform has one), so Undo can put every one of
// them back; and a rewind that fails or is cancelled part way puts back what it had
// done, leaving every file as it found it. Nothing here writes a session file.
package rewind
