package rewind

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"time"
)

// ErrNothingToUndo: no rewind of the session is left to undo (errors.Is).
var ErrNothingToUndo = errors.New("no rewind of this session to undo")

// StateDir is where rewinds keep the bytes they replace: $XDG_STATE_HOME/pi-lsp/rewind
// (~/.local/state/pi-lsp/rewind when unset).
func StateDir() string {
	base := os.Getenv("XDG_STATE_HOME")
	if base == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			home = os.TempDir()
		}
		base = filepath.Join(home, ".local", "state")
	}
	return filepath.Join(base, "pi-lsp", "rewind")
}

// ApplyOptions of Apply and Undo.
type ApplyOptions struct {
	// StateDir is the root of the kept copies ("" for StateDir()).
	StateDir string
	// Pick are the conflicting files (absolute, or relative to the session's cwd) to
	// bring back anyway; Force picks every one.
	Pick  []string
	Force bool
	// Trash moves a removed file to the system trash (nil: the platform's, see
	// SystemTrash); a file it cannot take is removed, its bytes kept.
	Trash Trash
	// Step, when set, is called before each file is written or removed (i from 0); an
	// error stops the rewind there, which then puts back what it did. Progress reports
	// and fault injection use it.
	Step func(ctx context.Context, i, n int, path string) error
}

// Result is what Apply or Undo did.
type Result struct {
	// ID names the rewind (its directory under the state dir, what Undo takes back).
	ID                string
	Restored, Removed []string // as the plan names them
	// Conflicts are the files left alone.
	Conflicts []File
}

// op is one file to set: to content, or removed.
type op struct {
	abs, rel string
	remove   bool
	content  []byte
}

// record is one file of a rewind's manifest: what it held before (Kept names the copy
// of its bytes; none when it did not exist) and what the rewind left.
type record struct {
	Path    string      `json:"path"`
	Rel     string      `json:"rel"`
	Existed bool        `json:"existed"`
	Mode    fs.FileMode `json:"mode,omitempty"`
	Kept    string      `json:"kept,omitempty"`
	Removed bool        `json:"removed,omitempty"`
	// Left is the sha256 of what the rewind wrote ("" when it removed the file).
	Left string `json:"left,omitempty"`
	// Trashed is where the system trash holds the removed file, with its info file.
	Trashed     string `json:"trashed,omitempty"`
	TrashedInfo string `json:"trashedInfo,omitempty"`
}

// manifest is a rewind's record, manifest.json in its directory.
type manifest struct {
	ID      string    `json:"id"`
	Session string    `json:"session"`
	EntryID string    `json:"entryId,omitempty"`
	LeafID  string    `json:"leafId,omitempty"`
	Undoes  string    `json:"undoes,omitempty"`
	Created time.Time `json:"created"`
	// State: "applying" while files change, "done", "undone" once Undo took it back.
	State string   `json:"state"`
	Files []record `json:"files"`
}

// Apply brings back the plan's files: each one not in conflict, and the conflicts
// opt picks. Before a file is overwritten or removed its bytes are kept under the
// state dir; a failure or a cancelled ctx puts back every file already done.
func Apply(ctx context.Context, p *Plan, opt ApplyOptions) (*Result, error) {
	res := &Result{}
	var ops []op
	for _, f := range p.Files {
		if !p.Picked(f, opt.Pick, opt.Force) {
			res.Conflicts = append(res.Conflicts, f)
			continue
		}
		ops = append(ops, op{abs: f.Path, rel: f.Rel, remove: f.Remove(), content: f.Target})
	}
	m := &manifest{Session: p.Session, EntryID: p.EntryID, LeafID: p.LeafID}
	id, err := execute(ctx, m, ops, opt)
	if err != nil {
		return nil, err
	}
	return res.done(id, ops), nil
}

// done is res once rewind id set ops: each file listed as restored or removed.
func (res *Result) done(id string, ops []op) *Result {
	res.ID = id
	for _, o := range ops {
		if o.remove {
			res.Removed = append(res.Removed, o.rel)
		} else {
			res.Restored = append(res.Restored, o.rel)
		}
	}
	return res
}

// Picked reports whether a rewind with these picks brings f back: a file not in
// conflict always, a conflict when force or one of pick (absolute, or relative to the
// session's cwd) names it.
func (p *Plan) Picked(f File, pick []string, force bool) bool {
	if !f.Conflict || force {
		return true
	}
	for _, x := range pick {
		if resolve(x, p.Cwd) == f.Path {
			return true
		}
	}
	return false
}

// Last is the id of the newest rewind of session not undone ("" when none); an undo
// is not one.
func Last(stateDir, session string) (string, error) {
	if stateDir == "" {
		stateDir = StateDir()
	}
	ents, err := os.ReadDir(stateDir)
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	abs, _ := filepath.Abs(session)
	names := make([]string, 0, len(ents))
	for _, e := range ents {
		names = append(names, e.Name())
	}
	sort.Sort(sort.Reverse(sort.StringSlice(names))) // ids sort by time
	for _, n := range names {
		m, err := readManifest(filepath.Join(stateDir, n))
		// An undo's own record keeps what it replaced but is not itself undone by Undo
		// of the session: a second --undo finds nothing.
		if err != nil || m.Session != abs || m.State != "done" || m.Undoes != "" {
			continue
		}
		return m.ID, nil
	}
	return "", nil
}

// Undo puts back the bytes rewind id replaced. A file that no longer holds what the
// rewind left is a conflict, left alone unless opt picks it. Undo is itself a rewind
// (its own kept copies), so nothing it overwrites is lost; Last does not offer it.
func Undo(ctx context.Context, id string, opt ApplyOptions) (*Result, error) {
	root := opt.StateDir
	if root == "" {
		root = StateDir()
	}
	dir := filepath.Join(root, id)
	m, err := readManifest(dir)
	if err != nil {
		return nil, fmt.Errorf("rewind %s: %w", id, err)
	}
	if m.State != "done" {
		return nil, fmt.Errorf("rewind %s is %s: %w", id, m.State, ErrNothingToUndo)
	}
	picked := map[string]bool{}
	for _, f := range opt.Pick {
		picked[f] = true
	}
	res := &Result{}
	var ops []op
	for _, r := range m.Files {
		cur, err := os.ReadFile(r.Path)
		exists := err == nil
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("undo: %w", err)
		}
		leftAsIs := (r.Removed && !exists) || (!r.Removed && exists && digest(cur) == r.Left)
		if !leftAsIs && !opt.Force && !picked[r.Path] && !picked[r.Rel] {
			res.Conflicts = append(res.Conflicts, File{Path: r.Path, Rel: r.Rel, Exists: exists, Current: cur, Conflict: true})
			continue
		}
		o := op{abs: r.Path, rel: r.Rel, remove: !r.Existed}
		if r.Existed {
			if o.content, err = os.ReadFile(filepath.Join(dir, r.Kept)); err != nil {
				return nil, fmt.Errorf("undo: the kept copy of %s: %w", r.Rel, err)
			}
		}
		ops = append(ops, o)
	}
	um := &manifest{Session: m.Session, Undoes: id}
	uid, err := execute(ctx, um, ops, opt)
	if err != nil {
		return nil, err
	}
	m.State = "undone"
	if err := writeManifest(dir, m); err != nil {
		return nil, err
	}
	return res.done(uid, ops), nil
}

// Kept is what rewind id kept of a file before it changed it (ok false: it kept
// nothing of it, or the file did not exist).
func Kept(stateDir, id, path string) ([]byte, bool) {
	if stateDir == "" {
		stateDir = StateDir()
	}
	m, err := readManifest(filepath.Join(stateDir, id))
	if err != nil {
		return nil, false
	}
	for _, r := range m.Files {
		if (r.Path == path || r.Rel == path) && r.Kept != "" {
			b, err := os.ReadFile(filepath.Join(stateDir, id, r.Kept))
			return b, err == nil
		}
	}
	return nil, false
}

func digest(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func newID() string {
	var r [4]byte
	_, _ = rand.Read(r[:])
	return time.Now().UTC().Format("20060102T150405.000000000Z") + "-" + hex.EncodeToString(r[:])
}

func readManifest(dir string) (*manifest, error) {
	b, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		return nil, err
	}
	var m manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	return &m, nil
}

func writeManifest(dir string, m *manifest) error {
	b, err := json.MarshalIndent(m, "", " ")
	if err != nil {
		return err
	}
	return writeFileSync(filepath.Join(dir, "manifest.json"), b, 0o600)
}

// execute keeps the current bytes of every op's file, then sets each, and on an
// error or a cancelled ctx puts back those already set. With no op it does nothing
// (and keeps nothing).
func execute(ctx context.Context, m *manifest, ops []op, opt ApplyOptions) (string, error) {
	if len(ops) == 0 {
		return "", ctx.Err()
	}
	root := opt.StateDir
	if root == "" {
		root = StateDir()
	}
	trash := opt.Trash
	if trash == nil {
		trash = SystemTrash()
	}
	m.ID, m.Created, m.State = newID(), time.Now().UTC(), "applying"
	m.Session, _ = filepath.Abs(m.Session)
	dir := filepath.Join(root, m.ID)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("rewind: the state dir: %w", err)
	}
	// Keep every file's bytes before touching any.
	m.Files = make([]record, len(ops))
	for i, o := range ops {
		r := record{Path: o.abs, Rel: o.rel, Removed: o.remove}
		if !o.remove {
			r.Left = digest(o.content)
		}
		st, err := os.Lstat(o.abs)
		switch {
		case err == nil && !st.Mode().IsRegular():
			_ = os.RemoveAll(dir)
			return "", fmt.Errorf("rewind: %s is not a regular file", o.rel)
		case err == nil:
			b, err := os.ReadFile(o.abs)
			if err != nil {
				_ = os.RemoveAll(dir)
				return "", fmt.Errorf("rewind: %w", err)
			}
			r.Existed, r.Mode, r.Kept = true, st.Mode().Perm(), fmt.Sprintf("%04d", i+1)
			if err := writeFileSync(filepath.Join(dir, r.Kept), b, 0o600); err != nil {
				_ = os.RemoveAll(dir)
				return "", fmt.Errorf("rewind: keeping %s: %w", o.rel, err)
			}
		case !errors.Is(err, os.ErrNotExist):
			_ = os.RemoveAll(dir)
			return "", fmt.Errorf("rewind: %w", err)
		}
		m.Files[i] = r
	}
	if err := writeManifest(dir, m); err != nil {
		_ = os.RemoveAll(dir)
		return "", fmt.Errorf("rewind: %w", err)
	}
	done := 0
	var runErr error
	var madeDirs []string
	for i, o := range ops {
		if runErr = ctx.Err(); runErr != nil {
			break
		}
		if opt.Step != nil {
			if runErr = opt.Step(ctx, i, len(ops), o.rel); runErr != nil {
				break
			}
		}
		r := &m.Files[i]
		if o.remove {
			if r.Existed {
				r.Trashed, r.TrashedInfo, runErr = removeFile(o.abs, trash)
			}
		} else {
			var made []string
			made, runErr = mkParents(o.abs)
			madeDirs = append(madeDirs, made...)
			if runErr == nil {
				mode := r.Mode
				if !r.Existed {
					mode = 0o644
				}
				runErr = replaceFile(o.abs, o.content, mode)
			}
		}
		if runErr != nil {
			runErr = fmt.Errorf("rewind: %s: %w", o.rel, runErr)
			break
		}
		done = i + 1
	}
	if runErr == nil {
		runErr = ctx.Err() // a cancel that came during the last file still takes it all back
	}
	if runErr == nil {
		m.State = "done"
		if err := writeManifest(dir, m); err != nil {
			runErr = fmt.Errorf("rewind: %w", err)
		} else {
			return m.ID, nil
		}
	}
	// Put back, newest first, what was done (and the one that failed half way).
	var backErr error
	for i := min(done, len(ops)-1); i >= 0; i-- {
		if err := putBack(dir, m.Files[i]); err != nil && backErr == nil {
			backErr = err
		}
	}
	for i := len(madeDirs) - 1; i >= 0; i-- {
		_ = os.Remove(madeDirs[i])
	}
	if backErr != nil {
		m.State = "failed"
		_ = writeManifest(dir, m)
		return "", fmt.Errorf("%w; putting the files back failed too (%v): their bytes are kept in %s", runErr, backErr, dir)
	}
	_ = os.RemoveAll(dir)
	return "", runErr
}

// putBack sets a file to what record r says it held before the rewind.
func putBack(dir string, r record) error {
	if !r.Existed {
		if err := os.Remove(r.Path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		return nil
	}
	if r.Trashed != "" {
		if err := os.Rename(r.Trashed, r.Path); err == nil {
			_ = os.Remove(r.TrashedInfo)
			return nil
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, r.Kept))
	if err != nil {
		return err
	}
	cur, err := os.ReadFile(r.Path)
	if err == nil && bytes.Equal(cur, b) {
		return nil
	}
	if _, err := mkParents(r.Path); err != nil {
		return err
	}
	return replaceFile(r.Path, b, r.Mode)
}

// removeFile moves path to the trash, or removes it when the trash cannot take it.
func removeFile(path string, t Trash) (trashed, info string, err error) {
	if t != nil {
		if trashed, info, err := t.Put(path); err == nil {
			return trashed, info, nil
		}
	}
	return "", "", os.Remove(path)
}

// mkParents makes the missing parents of path, returning those it made (outermost
// first).
func mkParents(path string) ([]string, error) {
	var missing []string
	for d := filepath.Dir(path); ; d = filepath.Dir(d) {
		if _, err := os.Stat(d); err == nil {
			break
		}
		missing = append([]string{d}, missing...)
		if filepath.Dir(d) == d {
			break
		}
	}
	if len(missing) == 0 {
		return nil, nil
	}
	return missing, os.MkdirAll(filepath.Dir(path), 0o755)
}

// replaceFile writes b to path through a temporary file in its directory renamed over
// it, so the file is the old bytes or the new ones, never a part.
func replaceFile(path string, b []byte, mode fs.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".pi-lsp-rewind-*")
	if err != nil {
		return err
	}
	name := tmp.Name()
	_, err = tmp.Write(b)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(name, mode)
	}
	if err == nil {
		err = os.Rename(name, path)
	}
	if err != nil {
		_ = os.Remove(name)
	}
	return err
}

func writeFileSync(path string, b []byte, mode fs.FileMode) error {
	return replaceFile(path, b, mode)
}
