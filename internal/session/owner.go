package session

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// OwnerPID finds a running pi process that writes the session at path: a pi process
// with the file open, or one whose working directory is cwd, the session's header cwd
// (pi writes the sessions of the directory it runs in; "" checks open files only). It
// returns 0 when there is none, or when /proc is unavailable.
//
// Such a pi keeps the session's leaf in memory, so an entry another process appends
// becomes a dead branch at pi's next write: the server and the CLI refuse to write a
// session that has an owner unless forced, and never compact one automatically.
func OwnerPID(path, cwd string) int {
	procs, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	self := os.Getpid()
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil || pid == self {
			continue
		}
		base := filepath.Join("/proc", p.Name())
		// Only a pi process counts: other readers (another pi-lsp, an editor) keep
		// session files open to read entries again, and they append safely.
		cmd, err := os.ReadFile(filepath.Join(base, "cmdline"))
		if err != nil || !isPiCmdline(string(cmd)) {
			continue
		}
		if fds, err := os.ReadDir(filepath.Join(base, "fd")); err == nil {
			for _, fd := range fds {
				if target, err := os.Readlink(filepath.Join(base, "fd", fd.Name())); err == nil && target == path {
					return pid
				}
			}
		}
		if cwd == "" {
			continue
		}
		if pcwd, err := os.Readlink(filepath.Join(base, "cwd")); err == nil && pcwd == cwd {
			return pid
		}
	}
	return 0
}

// isPiCmdline reports whether a /proc cmdline (NUL-separated) runs pi: the pi binary,
// or Node running the pi-coding-agent package, within its first three arguments.
func isPiCmdline(cmd string) bool {
	args := strings.Split(cmd, "\x00")
	for i, a := range args {
		if i > 2 {
			break
		}
		if filepath.Base(a) == "pi" || strings.Contains(a, "pi-coding-agent") {
			return true
		}
	}
	return false
}
