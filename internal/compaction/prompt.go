package compaction

import "strings"

// The texts of a summary request are Pi 1.6.0's, to the byte: a summary pi-lsp asks for
// is the one Pi would ask for, and the differential test compares the request bodies Pi
// and pi-lsp send for the same preparation (TestSummaryRequestsMatchPi16).

// SystemPrompt frames every summary request (Pi's SUMMARIZATION_SYSTEM_PROMPT).
const SystemPrompt = `You are a context summarization assistant. Your task is to read a conversation between a user and an AI assistant, then produce a structured summary following the exact format specified.

Do NOT continue the conversation. Do NOT respond to any questions in the conversation. ONLY output the structured summary.`

// historyPrompt asks for a first checkpoint (Pi's SUMMARIZATION_PROMPT).
const historyPrompt = `The messages above are a conversation to summarize. Create a structured context checkpoint summary that another LLM will use to continue the work.

Use this EXACT format:

## Goal
[What is the user trying to accomplish? Can be multiple items if the session covers different tasks.]

## Constraints & Preferences
- [Any constraints, preferences, or requirements mentioned by user]
- [Or "(none)" if none were mentioned]

## Progress
### Done
- [x] [Completed tasks/changes]

### In Progress
- [ ] [Current work]

### Blocked
- [Issues preventing progress, if any]

## Key Decisions
- **[Decision]**: [Brief rationale]

## Next Steps
1. [Ordered list of what should happen next]

## Critical Context
- [Any data, examples, or references needed to continue]
- [Or "(none)" if not applicable]

Keep each section concise. Preserve exact file paths, function names, and error messages.`

// updatePrompt folds new messages into the <previous-summary> (Pi's
// UPDATE_SUMMARIZATION_PROMPT).
const updatePrompt = `The messages above are NEW conversation messages to incorporate into the existing summary provided in <previous-summary> tags.

Update the existing structured summary with new information. RULES:
- PRESERVE all existing information from the previous summary
- ADD new progress, decisions, and context from the new messages
- UPDATE the Progress section: move items from "In Progress" to "Done" when completed
- UPDATE "Next Steps" based on what was accomplished
- PRESERVE exact file paths, function names, and error messages
- If something is no longer relevant, you may remove it

Use this EXACT format:

## Goal
[Preserve existing goals, add new ones if the task expanded]

## Constraints & Preferences
- [Preserve existing, add new ones discovered]

## Progress
### Done
- [x] [Include previously done items AND newly completed items]

### In Progress
- [ ] [Current work - update based on progress]

### Blocked
- [Current blockers - remove if resolved]

## Key Decisions
- **[Decision]**: [Brief rationale] (preserve all previous, add new)

## Next Steps
1. [Update based on current state]

## Critical Context
- [Preserve important context, add new if needed]

Keep each section concise. Preserve exact file paths, function names, and error messages.`

// turnPrefixPrompt summarizes the start of a turn too large to keep whole (Pi 1.6.0's
// TURN_PREFIX_SUMMARIZATION_PROMPT, framed by "# Conversation" / "# Instructions").
const turnPrefixPrompt = `The messages above are earlier context from an ongoing conversation. Later messages are stored separately and do not need to be reconstructed.

Create a concise checkpoint of the user's request and the progress shown above. This checkpoint will be placed before the later messages so the conversation can continue with the necessary context.

## Original Request
[What did the user ask for?]

## Progress So Far
- [Key decisions and work completed in these messages]

## Context Needed to Continue
- [Information from these messages needed to understand the later work]

Only summarize information explicitly present above. Do not infer or recreate later messages.`

// branchPrompt summarizes a branch being left (Pi's BRANCH_SUMMARY_PROMPT).
const branchPrompt = `Create a structured summary of this conversation branch for context when returning later.

Use this EXACT format:

## Goal
[What was the user trying to accomplish in this branch?]

## Constraints & Preferences
- [Any constraints, preferences, or requirements mentioned]
- [Or "(none)" if none were mentioned]

## Progress
### Done
- [x] [Completed tasks/changes]

### In Progress
- [ ] [Work that was started but not finished]

### Blocked
- [Issues preventing progress, if any]

## Key Decisions
- **[Decision]**: [Brief rationale]

## Next Steps
1. [What should happen next to continue this work]

Keep each section concise. Preserve exact file paths, function names, and error messages.`

// BranchSummaryPreamble starts every branch summary Pi writes.
const BranchSummaryPreamble = "The user explored a different conversation branch before returning here.\nSummary of that exploration:\n\n"

// BuildPrompt returns the user prompt of a request as Pi 1.6.0 builds it: the conversation
// in <conversation> tags, the previous summary when updating, then the instructions with
// the custom focus appended ("Additional focus: ..."); a turn prefix is framed by
// "# Conversation" and "# Instructions" and carries the focus too (Pi 1.4.0+). Pinned
// messages, pi-lsp's own, come before the focus.
func BuildPrompt(req Request) string {
	var b strings.Builder
	focus := func() {
		if req.CustomInstructions != "" {
			b.WriteString("\n\nAdditional focus: " + req.CustomInstructions)
		}
	}
	switch req.Kind {
	case KindTurnPrefix:
		b.WriteString("# Conversation\n" + req.Conversation + "\n\n# Instructions\n" + turnPrefixPrompt)
		focus()
		return b.String()
	case KindBranch:
		b.WriteString("<conversation>\n" + req.Conversation + "\n</conversation>\n\n")
		if req.ReplaceInstructions && req.CustomInstructions != "" {
			b.WriteString(req.CustomInstructions)
			return b.String()
		}
		b.WriteString(branchPrompt)
		focus()
		return b.String()
	}
	b.WriteString("<conversation>\n" + req.Conversation + "\n</conversation>\n\n")
	if req.PreviousSummary != "" {
		b.WriteString("<previous-summary>\n" + req.PreviousSummary + "\n</previous-summary>\n\n")
		b.WriteString(updatePrompt)
	} else {
		b.WriteString(historyPrompt)
	}
	if len(req.Pinned) > 0 {
		b.WriteString("\n\nThe user pinned these messages; quote each one verbatim under Constraints & Preferences or Critical Context:")
		for _, p := range req.Pinned {
			b.WriteString("\n> " + strings.ReplaceAll(p, "\n", "\n> "))
		}
	}
	focus()
	return b.String()
}
