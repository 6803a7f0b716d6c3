package deploytree

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Inside is root/rel, checked to stay inside root however the repository
// is laid out: no component of rel (which exists) is a symbolic link or
// anything but a directory, so nothing regionctl writes or deletes there
// lands outside the repository through a link someone committed. It
// fails naming the component.
func Inside(root, rel string) (string, error) {
	rel = filepath.Clean(rel)
	if filepath.IsAbs(rel) || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("%s is not a path inside the repository %s", rel, root)
	}
	at := root
	for _, part := range strings.Split(rel, string(filepath.Separator)) {
		if part == "." || part == "" {
			continue
		}
		at = filepath.Join(at, part)
		fi, err := os.Lstat(at)
		if errors.Is(err, fs.ErrNotExist) {
			break // made as a directory of its own, inside
		}
		if err != nil {
			return "", err
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return "", fmt.Errorf("%s is a symbolic link: regionctl writes only inside the repository, and refuses to follow it (remove it; regionctl makes %s itself)", at, rel)
		}
		if !fi.IsDir() {
			return "", fmt.Errorf("%s is not a directory (regionctl keeps its work in %s)", at, rel)
		}
	}
	return filepath.Join(root, rel), nil
}
