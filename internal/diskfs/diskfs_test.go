package diskfs

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"testing/fstest"
)

// tree writes a small tree with what a fleet's working tree may hold:
// files, directories, links to each and a dangling one.
func tree(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for name, data := range map[string]string{
		"config/global/fleet.yaml":      "fleet: test\n",
		"config/sectors/a.yaml":         "",
		"config/clusters/r1/mc01.yaml":  string(make([]byte, 70000)),
		"deploy/index.json":             "{}\n",
		"charts/x/templates/.gitkeep":   "",
		"config/regions/two words.yaml": "name: x\n",
		"config/regions/unicode-é.yaml": "é: 1\n",
	} {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{
		"config/sectors/linked.yaml": "a.yaml",
		"config/linkdir":             "global",
		"config/dangling.yaml":       "nowhere.yaml",
		"config/outside":             "../../",
	} {
		if err := os.Symlink(target, filepath.Join(dir, filepath.FromSlash(link))); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestDiskFSIsOSDirFS holds New to os.DirFS, its judge: the same
// interfaces, and for names valid and not, files, directories, links and
// nothing, the same content, entries, file info and errors (operation,
// path and cause) from each method.
func TestDiskFSIsOSDirFS(t *testing.T) {
	dir := tree(t)
	got, want := New(dir), os.DirFS(dir)
	for _, iface := range []any{(*fs.ReadFileFS)(nil), (*fs.ReadDirFS)(nil), (*fs.StatFS)(nil), (*fs.ReadLinkFS)(nil)} {
		typ := reflect.TypeOf(iface).Elem()
		if reflect.TypeOf(want).Implements(typ) != reflect.TypeOf(got).Implements(typ) {
			t.Errorf("os.DirFS and New differ on %v", typ)
		}
	}
	names := []string{
		".", "config", "config/global/fleet.yaml", "config/sectors/a.yaml", "config/clusters/r1/mc01.yaml",
		"config/regions/two words.yaml", "config/regions/unicode-é.yaml",
		"config/sectors/linked.yaml", "config/linkdir", "config/linkdir/fleet.yaml", "config/dangling.yaml", "config/outside",
		"config/missing.yaml", "config/global/fleet.yaml/x",
		"", "/config", "../config", "config/../config", "config//global", "config/./global", "config/", "a\x00b", `config\global`,
	}
	for _, name := range names {
		compare(t, name+": Open", func(fsys fs.FS) (any, error) {
			f, err := fsys.Open(name)
			if err != nil {
				return nil, err
			}
			defer f.Close()
			st, err := f.Stat()
			if err != nil {
				return nil, err
			}
			if st.IsDir() {
				entries, err := f.(fs.ReadDirFile).ReadDir(-1)
				return []any{info(st), entryNames(entries)}, err
			}
			b, err := io.ReadAll(f)
			return []any{info(st), string(b), f.(*os.File).Name()}, err
		}, got, want)
		compare(t, name+": ReadFile", func(fsys fs.FS) (any, error) {
			b, err := fsys.(fs.ReadFileFS).ReadFile(name)
			return string(b), err
		}, got, want)
		compare(t, name+": ReadDir", func(fsys fs.FS) (any, error) {
			entries, err := fsys.(fs.ReadDirFS).ReadDir(name)
			return entryNames(entries), err
		}, got, want)
		compare(t, name+": Stat", func(fsys fs.FS) (any, error) {
			st, err := fsys.(fs.StatFS).Stat(name)
			return info(st), err
		}, got, want)
		compare(t, name+": Lstat", func(fsys fs.FS) (any, error) {
			st, err := fsys.(fs.ReadLinkFS).Lstat(name)
			return info(st), err
		}, got, want)
		compare(t, name+": ReadLink", func(fsys fs.FS) (any, error) {
			return fsys.(fs.ReadLinkFS).ReadLink(name)
		}, got, want)
	}
	// The standard library's own checks of a file system, on a part of
	// the tree without links (a dangling one fails them in os.DirFS too).
	if err := fstest.TestFS(New(filepath.Join(dir, "config", "clusters")), "r1/mc01.yaml"); err != nil {
		t.Error(err)
	}
}

// compare calls call on got and want and reports where they differ.
func compare(t *testing.T, what string, call func(fs.FS) (any, error), got, want fs.FS) {
	t.Helper()
	g, gerr := call(got)
	w, werr := call(want)
	if !reflect.DeepEqual(g, w) {
		t.Errorf("%s: New gives %v, os.DirFS %v", what, g, w)
	}
	if describe(gerr) != describe(werr) {
		t.Errorf("%s: New fails with %s, os.DirFS with %s", what, describe(gerr), describe(werr))
	}
}

// describe is an error's text and, for a *fs.PathError, its parts.
func describe(err error) string {
	if err == nil {
		return "no error"
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Op + " | " + pe.Path + " | " + pe.Err.Error() + " | " + reflect.TypeOf(pe.Err).String()
	}
	return err.Error()
}

func info(st fs.FileInfo) any {
	if st == nil {
		return nil
	}
	return []any{st.Name(), st.Size(), st.Mode(), st.ModTime(), st.IsDir()}
}

func entryNames(entries []fs.DirEntry) []string {
	var out []string
	for _, e := range entries {
		out = append(out, e.Name()+"|"+e.Type().String())
	}
	return out
}
