package deploytree

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// One writer at a time: a render that finds the tree locked waits for the
// holder, saying who it is, and fails naming it when the wait runs out.
func TestWriteWaitsForTheLock(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "deploy")
	release, err := lock(dir, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Write(OS{}, dir, output(v1), Options{})
	var locked *LockedError
	if !errors.As(err, &locked) || !strings.Contains(locked.Holder, "pid ") {
		t.Fatalf("a render while the tree is locked: %v", err)
	}
	if _, statErr := os.Stat(dir); !errors.Is(statErr, os.ErrNotExist) {
		t.Error("the refused render wrote the tree")
	}
	var told []string
	go func() { time.Sleep(300 * time.Millisecond); release() }()
	if _, err := Write(OS{}, dir, output(v1), Options{LockWait: 10 * time.Second, Waiting: func(h string) { told = append(told, h) }}); err != nil {
		t.Fatalf("after the holder let go: %v", err)
	}
	if len(told) != 1 || !strings.Contains(told[0], "pid ") {
		t.Errorf("told of the holder %q", told)
	}
	if b, _ := os.ReadFile(filepath.Join(filepath.Dir(dir), WorkDir, ".gitignore")); !strings.Contains(string(b), "*") {
		t.Errorf("the work directory is not ignored by git: %q", b)
	}
}

// Staging trees a killed render left are removed by the next one, and the
// tree gets the modes files and directories get (not MkdirTemp's 0700).
func TestWriteCleansUpAndKeepsModes(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "deploy")
	for _, stale := range []string{filepath.Join(parent, WorkDir, "staging-123"), filepath.Join(parent, ".deploy-staging-456")} {
		if err := os.MkdirAll(filepath.Join(stale, "production"), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(stale, "production", "x"), []byte("junk"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := Write(OS{}, dir, output(v1), Options{}); err != nil {
		t.Fatal(err)
	}
	for p := range snapshot(t, dir) {
		if strings.HasPrefix(p, "../") && strings.Contains(p, "staging") {
			t.Errorf("left behind: %s", p)
		}
	}
	want := 0o777 &^ umask()
	if st, err := os.Stat(dir); err != nil || st.Mode().Perm() != want.Perm() {
		t.Errorf("deploy/ mode %v, want %v", st.Mode().Perm(), want.Perm())
	}
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if st, _ := os.Stat(p); st.Mode().Perm()&0o044 == 0 && umask()&0o044 == 0 {
				t.Errorf("%s mode %v: not readable by group and others", p, st.Mode().Perm())
			}
		}
		return nil
	})
}

// TestLockHelperProcess holds the lock of $LOCK_DIR until killed (run by
// TestLockDiesWithItsHolder as a child process).
func TestLockHelperProcess(t *testing.T) {
	dir := os.Getenv("REGIONCTL_LOCK_DIR")
	if dir == "" {
		t.Skip("helper process")
	}
	if _, err := lock(dir, 0, nil); err != nil {
		os.Exit(2)
	}
	os.Stdout.WriteString("locked\n")
	time.Sleep(time.Minute)
	os.Exit(0)
}

// A render killed while it holds the lock does not keep it: the operating
// system releases it with the process.
func TestLockDiesWithItsHolder(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "deploy")
	cmd := exec.Command(os.Args[0], "-test.run=^TestLockHelperProcess$")
	cmd.Env = append(os.Environ(), "REGIONCTL_LOCK_DIR="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 7)
	if _, err := io.ReadFull(out, buf); err != nil || string(buf) != "locked\n" {
		t.Fatalf("helper: %q %v", buf, err)
	}
	if _, err := Write(OS{}, dir, output(v1), Options{}); err == nil {
		t.Fatal("wrote while the helper held the lock")
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	if _, err := Write(OS{}, dir, output(v1), Options{}); err != nil {
		t.Fatalf("after the holder was killed: %v", err)
	}
}

// TestWorkDirLinkIsNeverFollowed: a .regionctl committed as a symbolic
// link to a directory outside the repository is refused: the render
// neither deletes the staging trees it would find there nor writes into
// it, and deploy/ is left as it was.
func TestWorkDirLinkIsNeverFollowed(t *testing.T) {
	repo, outside := t.TempDir(), t.TempDir()
	victim := filepath.Join(outside, "staging-precious")
	if err := os.MkdirAll(victim, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(repo, WorkDir)); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(repo, "deploy")
	_, err := Begin(OS{}, dir, Options{})
	if err == nil || !strings.Contains(err.Error(), "is a symbolic link") {
		t.Fatalf("a linked %s: %v", WorkDir, err)
	}
	if _, err := os.Stat(victim); err != nil {
		t.Errorf("the render removed %s outside the repository: %v", victim, err)
	}
	entries, _ := os.ReadDir(outside)
	if len(entries) != 1 {
		t.Errorf("the render wrote outside the repository: %v", entries)
	}
	if _, err := Inside(repo, "deploy"); err != nil {
		t.Errorf("a plain path inside: %v", err)
	}
	if _, err := Inside(repo, "../x"); err == nil {
		t.Error("a path leaving the repository was accepted")
	}
}
