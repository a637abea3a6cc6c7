// Command archive writes a release archive whose bytes depend only on the files' contents,
// names and executable bits: entries in the order given, every time set to -epoch, owner
// and group 0 without names, modes 0755 (executable) or 0644. A .tar.gz or a .zip, by
// the output's name. scripts/dist.sh uses it:
//
//	go run ./tools/archive -o dist/pi-lsp_0.2.0_linux_amd64.tar.gz -epoch 1764547200 -C stage pi-lsp LICENSE README.md
//
// With -prefix every entry's name starts with it (a Go module zip's "module@version/").
package main

import (
	"archive/tar"
	"archive/zip"
	"compress/flate"
	"compress/gzip"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

func main() {
	out := flag.String("o", "", "the archive to write (.tar.gz or .zip)")
	epoch := flag.Int64("epoch", 0, "the time of every entry, in seconds since 1970 (SOURCE_DATE_EPOCH)")
	dir := flag.String("C", ".", "the directory the files are named from")
	prefix := flag.String("prefix", "", "put before every entry's name")
	flag.Parse()
	if *out == "" || flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: archive -o OUT.tar.gz|OUT.zip [-epoch N] [-C DIR] FILE...")
		os.Exit(2)
	}
	if err := write(*out, time.Unix(*epoch, 0).UTC(), *dir, *prefix, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "archive:", err)
		os.Exit(1)
	}
}

type entry struct {
	name string
	mode int64
	data []byte
}

func write(out string, mtime time.Time, dir, prefix string, names []string) error {
	var entries []entry
	for _, n := range names {
		p := filepath.Join(dir, n)
		st, err := os.Stat(p)
		if err != nil {
			return err
		}
		if !st.Mode().IsRegular() {
			return fmt.Errorf("%s is not a regular file", p)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		mode := int64(0o644)
		if st.Mode()&0o111 != 0 {
			mode = 0o755
		}
		entries = append(entries, entry{prefix + filepath.ToSlash(n), mode, data})
	}
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	switch {
	case strings.HasSuffix(out, ".tar.gz"):
		err = writeTarGz(f, mtime, entries)
	case strings.HasSuffix(out, ".zip"):
		err = writeZip(f, mtime, entries)
	default:
		err = fmt.Errorf("%s: want .tar.gz or .zip", out)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(out)
	}
	return err
}

func writeTarGz(w io.Writer, mtime time.Time, entries []entry) error {
	gz, err := gzip.NewWriterLevel(w, gzip.BestCompression)
	if err != nil {
		return err
	}
	gz.ModTime = mtime
	tw := tar.NewWriter(gz)
	for _, e := range entries {
		h := &tar.Header{Typeflag: tar.TypeReg, Name: e.name, Mode: e.mode, Size: int64(len(e.data)), ModTime: mtime, Format: tar.FormatUSTAR}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if _, err := tw.Write(e.data); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return gz.Close()
}

func writeZip(w io.Writer, mtime time.Time, entries []entry) error {
	zw := zip.NewWriter(w)
	zw.RegisterCompressor(zip.Deflate, func(w io.Writer) (io.WriteCloser, error) {
		return flate.NewWriter(w, flate.BestCompression)
	})
	for _, e := range entries {
		h := &zip.FileHeader{Name: e.name, Method: zip.Deflate, Modified: mtime}
		h.SetMode(os.FileMode(e.mode))
		fw, err := zw.CreateHeader(h)
		if err != nil {
			return err
		}
		if _, err := fw.Write(e.data); err != nil {
			return err
		}
	}
	return zw.Close()
}
