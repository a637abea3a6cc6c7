package rewind

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"time"
)

// Trash takes removed files where the user can get them back.
type Trash interface {
	// Put moves path into the trash: where it now is, and the trash's record of it
	// (its .trashinfo file, "" when the trash keeps none).
	Put(path string) (trashed, info string, err error)
}

// SystemTrash is the platform's trash: the freedesktop.org home trash on Linux and
// the BSDs ($XDG_DATA_HOME/Trash), ~/.Trash on macOS, none elsewhere (nil: the kept
// copies are the only way back).
func SystemTrash() Trash {
	switch runtime.GOOS {
	case "linux", "freebsd", "openbsd", "netbsd", "dragonfly":
		base := os.Getenv("XDG_DATA_HOME")
		if base == "" {
			home, err := os.UserHomeDir()
			if err != nil {
				return nil
			}
			base = filepath.Join(home, ".local", "share")
		}
		return FreedesktopTrash{Dir: filepath.Join(base, "Trash")}
	case "darwin":
		home, err := os.UserHomeDir()
		if err != nil {
			return nil
		}
		return macTrash{dir: filepath.Join(home, ".Trash")}
	}
	return nil
}

// FreedesktopTrash is a trash directory of the freedesktop.org Trash specification:
// files/ holds the file, info/NAME.trashinfo its original path and deletion date.
// Only a file on the trash's own file system can go in (a rename); others are not
// taken.
type FreedesktopTrash struct{ Dir string }

// Put follows the specification: the info file is created first, exclusively, under
// a name no file in the trash has, then the file is renamed into files/.
func (t FreedesktopTrash) Put(path string) (string, string, error) {
	files, infos := filepath.Join(t.Dir, "files"), filepath.Join(t.Dir, "info")
	if err := os.MkdirAll(files, 0o700); err != nil {
		return "", "", err
	}
	if err := os.MkdirAll(infos, 0o700); err != nil {
		return "", "", err
	}
	base := filepath.Base(path)
	for n := 1; n < 1000; n++ {
		name := base
		if n > 1 {
			name = base + "." + strconv.Itoa(n)
		}
		info := filepath.Join(infos, name+".trashinfo")
		f, err := os.OpenFile(info, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, os.ErrExist) {
			continue
		}
		if err != nil {
			return "", "", err
		}
		u := url.URL{Path: path}
		_, err = fmt.Fprintf(f, "[Trash Info]\nPath=%s\nDeletionDate=%s\n", u.EscapedPath(), time.Now().Format("2006-01-02T15:04:05"))
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		dest := filepath.Join(files, name)
		if err == nil {
			if _, serr := os.Lstat(dest); serr == nil {
				_ = os.Remove(info)
				continue
			}
			err = os.Rename(path, dest)
		}
		if err != nil {
			_ = os.Remove(info)
			return "", "", err
		}
		return dest, info, nil
	}
	return "", "", errors.New("trash: no free name")
}

type macTrash struct{ dir string }

func (t macTrash) Put(path string) (string, string, error) {
	base := filepath.Base(path)
	for n := 1; n < 1000; n++ {
		name := base
		if n > 1 {
			name = base + " " + strconv.Itoa(n)
		}
		dest := filepath.Join(t.dir, name)
		if _, err := os.Lstat(dest); err == nil {
			continue
		}
		return dest, "", os.Rename(path, dest)
	}
	return "", "", errors.New("trash: no free name")
}
