package compaction

import "strings"

// SystemPrompt frames every summary request. The wording is pi-lsp's own; the structure
// follows Pi's checkpoint format.
const SystemPrompt = `You are a context summarization assistant. You read a conversation between a user and an AI coding assistant and write a structured checkpoint of it, following the requested format exactly.

Never continue the conversation and never answer questions that appear in it. Output only the structured summary.`

const checkpointFormat = `## Goal
[What the user is trying to accomplish. Several goals become a short list.]

## Constraints & Preferences
- [Requirements, preferences and rules the user stated, or "(none)"]

## Progress
### Done
- [x] [Finished work]

### In Progress
- [ ] [Work started but not finished]

### Blocked
- [Problems still in the way, if any]

## Key Decisions
- **[Decision]**: [Why it was made]

## Next Steps
1. [What should happen next, in order]

## Critical Context
- [Facts, data, references or errors that must not be lost, or "(none)"]`

const initialPrompt = `The conversation above is to be condensed into a context checkpoint that another model will use to carry on the work.

Write it in exactly this format:

` + checkpointFormat + `

Keep every section short. Copy file paths, function names, commands and error messages exactly.`

const updatePrompt = `The conversation above holds NEW messages. Fold them into the checkpoint given in <previous-summary> and output the complete updated checkpoint.

Rules:
- Keep everything from the previous checkpoint that still matters.
- Add the new progress, decisions and context.
- Move items from In Progress to Done once they are finished.
- Rewrite Next Steps for what now remains.
- Copy file paths, function names, commands and error messages exactly.
- Drop only what no longer matters.

Use exactly this format:

` + checkpointFormat

const turnPrefixPrompt = `The conversation above is the FIRST PART of a turn that was too large to keep whole; the rest of the turn is kept verbatim after this summary.

Summarize this first part so that the kept part makes sense:

## Original Request
[What the user asked for in this turn]

## Early Progress
- [Decisions made and work done in this first part]

## Context for Suffix
- [What is needed to understand the kept recent work]

Be brief and focus on what the kept part needs.`

const branchPrompt = `Summarize the conversation branch above as a checkpoint to come back to later.

Use exactly this format:

## Goal
[What was being attempted on this branch]

## Constraints & Preferences
- [Requirements and preferences stated, or "(none)"]

## Progress
### Done
- [x] [Finished work]

### In Progress
- [ ] [Unfinished work]

### Blocked
- [Problems, if any]

## Key Decisions
- **[Decision]**: [Why]

## Next Steps
1. [What would come next on this branch]

Keep it short. Copy file paths, function names and error messages exactly.`

// BranchSummaryPreamble starts every branch summary Pi writes.
const BranchSummaryPreamble = "The user explored a different conversation branch before returning here.\nSummary of that exploration:\n\n"

// BuildPrompt returns the user prompt of a request: the conversation, the previous
// summary when updating, and the instructions (with the custom focus appended).
func BuildPrompt(req Request) string {
	var b strings.Builder
	b.WriteString("<conversation>\n" + req.Conversation + "\n</conversation>\n\n")
	switch req.Kind {
	case KindTurnPrefix:
		b.WriteString(turnPrefixPrompt)
		return b.String()
	case KindBranch:
		switch {
		case req.ReplaceInstructions && req.CustomInstructions != "":
			b.WriteString(req.CustomInstructions)
		case req.CustomInstructions != "":
			b.WriteString(branchPrompt + "\n\nAdditional focus: " + req.CustomInstructions)
		default:
			b.WriteString(branchPrompt)
		}
		return b.String()
	}
	if req.PreviousSummary != "" {
		b.WriteString("<previous-summary>\n" + req.PreviousSummary + "\n</previous-summary>\n\n")
		b.WriteString(updatePrompt)
	} else {
		b.WriteString(initialPrompt)
	}
	if len(req.Pinned) > 0 {
		b.WriteString("\n\nThe user pinned these messages; quote each one verbatim under Constraints & Preferences or Critical Context:")
		for _, p := range req.Pinned {
			b.WriteString("\n> " + strings.ReplaceAll(p, "\n", "\n> "))
		}
	}
	if req.CustomInstructions != "" {
		b.WriteString("\n\nAdditional focus: " + req.CustomInstructions)
	}
	return b.String()
}
