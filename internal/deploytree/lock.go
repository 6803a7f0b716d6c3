package deploytree

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// WorkDir is the directory beside deploy/ where regionctl keeps its lock
// and staging trees; it holds a .gitignore that ignores all of it.
const WorkDir = ".regionctl"

// LockedError says another render holds deploy/.
type LockedError struct {
	Dir    string
	Holder string // pid, host and start time of the render that holds it
}

func (e *LockedError) Error() string {
	return fmt.Sprintf("another render is writing %s (%s); wait for it, or stop it", e.Dir, e.Holder)
}

// workDir makes the work directory beside dir, ignored by git.
func workDir(dir string) (string, error) {
	w, err := Inside(filepath.Dir(filepath.Clean(dir)), WorkDir)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(w, 0o755); err != nil {
		return "", err
	}
	ignore := filepath.Join(w, ".gitignore")
	if _, err := os.Lstat(ignore); errors.Is(err, os.ErrNotExist) {
		if err := os.WriteFile(ignore, []byte("# regionctl's lock and staging trees: never committed.\n*\n"), 0o644); err != nil {
			return "", err
		}
	}
	return w, nil
}

// lock takes the lock of the tree at dir: an operating-system lock on a
// file of the work directory, released when the process ends however it
// ends. While another render holds it, lock waits up to wait, calling
// waiting once with the holder; then it fails with LockedError.
func lock(dir string, wait time.Duration, waiting func(holder string)) (func(), error) {
	w, err := workDir(dir)
	if err != nil {
		return nil, fmt.Errorf("preparing the lock of %s: %w", dir, err)
	}
	f, err := os.OpenFile(filepath.Join(w, "deploy.lock"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening the lock of %s: %w", dir, err)
	}
	deadline := time.Now().Add(wait)
	told := false
	for {
		ok, err := tryLock(f)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("locking %s: %w", dir, err)
		}
		if ok {
			break
		}
		holder := readHolder(f)
		if time.Now().After(deadline) {
			f.Close()
			return nil, &LockedError{Dir: dir, Holder: holder}
		}
		if !told && waiting != nil {
			waiting(holder)
			told = true
		}
		time.Sleep(100 * time.Millisecond)
	}
	host, _ := os.Hostname()
	_ = f.Truncate(0)
	_, _ = f.WriteAt([]byte(fmt.Sprintf("pid %d on %s since %s\n", os.Getpid(), host, time.Now().UTC().Format(time.RFC3339))), 0)
	return func() {
		_ = f.Truncate(0)
		_ = unlock(f)
		f.Close()
	}, nil
}

func readHolder(f *os.File) string {
	b := make([]byte, 256)
	n, _ := f.ReadAt(b, 0)
	if s := strings.TrimSpace(string(b[:n])); s != "" {
		return s
	}
	return "holder unknown"
}

// stagingPattern names the staging trees in the work directory.
const stagingPattern = "staging-"

// removeStale removes the staging trees earlier renders left behind when
// they were killed (the lock is held: none is in use), and those of older
// versions beside dir.
func removeStale(disk Disk, dir, work string) error {
	for _, glob := range []string{filepath.Join(work, stagingPattern+"*"), filepath.Join(filepath.Dir(filepath.Clean(dir)), "."+filepath.Base(dir)+"-staging-*")} {
		stale, _ := filepath.Glob(glob)
		for _, s := range stale {
			if err := disk.RemoveAll(s); err != nil {
				return fmt.Errorf("removing the staging tree %s an earlier render left: %w", s, err)
			}
		}
	}
	return nil
}
