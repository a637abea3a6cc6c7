package session

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/pi-lsp/pi-lsp/internal/benchgen"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/testfile"
)

// A mapped file that shrinks under a load faults when read past its new end; guard
// turns the fault into errMapFault (and Load then reads the file instead).
func TestGuardTurnsAShrunkMappingIntoAnError(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("files are mapped on Linux only")
	}
	path := testfile.Temp(t, "s.jsonl", strings.Repeat("x", 3*os.Getpagesize()))
	fd, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fd.Close()
	m := mapFile(fd, 3*int64(os.Getpagesize()))
	if m == nil {
		t.Fatal("not mapped")
	}
	defer m.unmap()
	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	in := lineSource{mem: m.data, mapped: true}
	var b byte
	err = in.guard(func() error { b = in.mem[2*os.Getpagesize()]; return nil })
	if !errors.Is(err, errMapFault) {
		t.Fatalf("read past the end of a shrunk mapping: err %v (byte %q)", err, b)
	}
	if err := in.guard(func() error { return errInvalidJSON }); err != errInvalidJSON {
		t.Fatalf("an error of the guarded function is its own: %v", err)
	}
}

// A load through the mapping and one through reads find the same entries, lines and
// skipped lines.
func TestMappedAndReadLoadsAgree(t *testing.T) {
	var b strings.Builder
	if err := benchgen.Write(&b, benchgen.Options{Entries: 3000, Seed: 11, BranchEvery: 30, CompactEvery: 500}); err != nil {
		t.Fatal(err)
	}
	b.WriteString("not json\n")
	path := testfile.Temp(t, "s.jsonl", b.String())
	mappedFile, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	src, fd, err := openSource(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fd.Close()
	read, err := parse(lineSource{r: fd, size: int64(b.Len()), src: src})
	if err != nil {
		t.Fatal(err)
	}
	if len(mappedFile.Entries) != len(read.Entries) || len(read.Entries) < 3000 {
		t.Fatalf("entries: mapped %d, read %d", len(mappedFile.Entries), len(read.Entries))
	}
	if fmt.Sprint(mappedFile.Skipped) != fmt.Sprint(read.Skipped) || mappedFile.SkippedLines != 1 {
		t.Fatalf("skipped: mapped %v, read %v", mappedFile.Skipped, read.Skipped)
	}
	for i, me := range mappedFile.Entries {
		re := read.Entries[i]
		if me.ID != re.ID || me.ParentID != re.ParentID || me.Line != re.Line || me.off != re.off || me.n != re.n || string(me.Raw()) != string(re.Raw()) {
			t.Fatalf("entry %d: mapped %s line %d at %d, read %s line %d at %d", i, me.ID, me.Line, me.off, re.ID, re.Line, re.off)
		}
	}
}
