package session

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"math"

	"github.com/pi-lsp/pi-lsp/internal/jsjson"
)

// migrate brings v1 and v2 entries to v3 in memory, as Pi's migrateSessionEntries does:
// v1→v2 gives every entry a fresh id and chains parents in file order (resolving a
// compaction's firstKeptEntryIndex, which indexes the raw parsed array with the header at
// 0); v2→v3 renames the hookMessage role to custom. The file itself is never rewritten.
func migrate(f *File) error {
	version := int(f.Header.Version)
	if f.Header.Version == 0 {
		version = 1
	}
	if version >= CurrentVersion {
		return nil
	}
	f.MigratedFrom = version
	if version < 2 {
		// The bytes first: an entry of a loaded file is read again by its old id.
		raws := make([][]byte, len(f.Entries))
		for i, e := range f.Entries {
			raws[i] = e.Raw()
		}
		prev := ""
		for _, e := range f.Entries {
			e.ID = newEntryID(nil)
			e.ParentID = prev
			prev = e.ID
		}
		for i, e := range f.Entries {
			v, err := jsjson.Parse(raws[i])
			if err != nil {
				return fmt.Errorf("migrate line %d: %w", e.Line, err)
			}
			setKey(&v, "id", jsjson.Value{Kind: jsjson.String, Str: e.ID})
			if e.ParentID == "" {
				setKey(&v, "parentId", jsjson.Value{Kind: jsjson.Null})
			} else {
				setKey(&v, "parentId", jsjson.Value{Kind: jsjson.String, Str: e.ParentID})
			}
			if e.Type == TypeCompaction {
				if idx, ok := v.Get("firstKeptEntryIndex"); ok && idx.Kind == jsjson.Number {
					// The parsed array holds the header at index 0, so entry k sits at k+1.
					// Pi assigns ids while walking, so a forward reference still sees the
					// entry's old (v1: absent) id and resolves to nothing.
					// The header (index 0), a fraction or an index past the end names nothing.
					n := idx.Num
					if n == math.Trunc(n) && n >= 1 && n <= float64(len(f.Entries)) {
						k := int(n) - 1
						if k <= i {
							setKey(&v, "firstKeptEntryId", jsjson.Value{Kind: jsjson.String, Str: f.Entries[k].ID})
						} else if old, err := jsjson.Parse(raws[k]); err == nil {
							// A forward target still has its v1 id: whatever its "id" held,
							// or undefined, which drops firstKeptEntryId from the entry.
							if id, ok := old.Get("id"); ok {
								setKey(&v, "firstKeptEntryId", *id)
							} else {
								deleteKey(&v, "firstKeptEntryId")
							}
						}
					}
					deleteKey(&v, "firstKeptEntryIndex")
				}
			}
			f.Entries[i].setRaw([]byte(jsjson.Stringify(v)))
		}
	}
	if version < 3 {
		for _, e := range f.Entries {
			if e.Type != TypeMessage || e.Role() != "hookMessage" {
				continue
			}
			v, err := jsjson.Parse(e.Raw())
			if err != nil {
				continue
			}
			msg, ok := v.Get("message")
			if !ok || msg.Kind != jsjson.Object {
				continue
			}
			setKey(msg, "role", jsjson.Value{Kind: jsjson.String, Str: RoleCustom})
			e.setRaw([]byte(jsjson.Stringify(v)))
			e.msg.Store(nil)
		}
	}
	return nil
}

func setKey(v *jsjson.Value, key string, val jsjson.Value) {
	if p, ok := v.Get(key); ok {
		*p = val
		return
	}
	v.Keys = append(v.Keys, key)
	v.Vals = append(v.Vals, val)
}

func deleteKey(v *jsjson.Value, key string) {
	for i, k := range v.Keys {
		if k == key {
			v.Keys = append(v.Keys[:i:i], v.Keys[i+1:]...)
			v.Vals = append(v.Vals[:i:i], v.Vals[i+1:]...)
			return
		}
	}
}

// newEntryID returns 8 lowercase hex characters not in taken, as Pi's generateId does
// (falling back to a longer id after 100 collisions).
func newEntryID(taken map[string]*Entry) string {
	var b [16]byte
	for i := 0; i < 100; i++ {
		_, _ = rand.Read(b[:4])
		id := hex.EncodeToString(b[:4])
		if _, dup := taken[id]; !dup {
			return id
		}
	}
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
