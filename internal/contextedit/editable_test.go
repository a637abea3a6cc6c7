package contextedit

import "testing"

// Editable marks exactly the entries Validate accepts an edit of: every entry of every
// genuine session, at its leaf, whichever the reason of a refusal (not a message, off the
// branch, summarized away by a compaction).
func TestEditableIsWhatValidateAccepts(t *testing.T) {
	for _, name := range []string{"compact-twice", "full-main", "tree-nav", "misc-messages", "overflow"} {
		ix := load(t, corpusCopy(t, "genuine/"+name+".jsonl"))
		_, proj := ix.ProjectedPath(ix.LeafID())
		editable := Editable(proj, len(ix.Entries()))
		yes, no := 0, 0
		for _, e := range ix.Entries() {
			_, err := Validate(ix, Edit{TargetID: e.ID, Action: Omit})
			if editable[e.Pos()] != (err == nil) {
				t.Errorf("%s: entry %s (%s %s): editable %v, Validate: %v", name, e.ID, e.Type, e.Role(), editable[e.Pos()], err)
			}
			if err == nil {
				yes++
			} else {
				no++
			}
		}
		if yes == 0 || no == 0 {
			t.Errorf("%s: %d editable, %d not: the session does not tell them apart", name, yes, no)
		}
	}
}
