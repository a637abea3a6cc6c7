// Package branch moves the leaf of a Pi session tree: the common ancestor of two
// positions, the entries of the branch being left (Pi 1.6.0's
// collectEntriesForBranchSummary), their budgeted preparation (prepareBranchEntries), the
// branch summary (generateBranchSummary), navigation (AgentSession.navigateTree), undoing
// a compaction and labels.
//
// Invariant: navigation never deletes or rewrites anything. Every move is computed on a
// session.Snapshot (the file is not read again) and recorded by appending entries (a
// branch_summary, a "pi-lsp/navigate" custom marker, labels) in one append through it;
// a failed or cancelled summary, a cancelling hook, or a file that changed since the
// snapshot writes nothing at all. No walk over parent links can loop.
//
// Deliberate divergences from Pi (design.md §1):
//   - 5: a branch_summary's fromId is the leaf navigated away from (Pi writes the new
//     position, or "root");
//   - 6: the file lists of a summary also accumulate the details of earlier compactions
//     among the summarized entries (Pi merges only branch-summary details); Prepare
//     keeps Pi's exact behaviour and PrepareWith(…, PrepareOptions{
//     AccumulateCompactionDetails: true}) is what Navigate uses for the summary;
//   - 7: the file lists in the summary text are bounded (the details keep them all);
//   - a move without a summary is persisted (a "custom" entry, which never reaches the
//     LLM), so Pi, whose leaf on open is the last entry of the file, honours it.
package branch
