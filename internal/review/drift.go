package review

import (
	"fmt"
	"io/fs"
	"path"

	"github.com/regionctl/regionctl/internal/diff"
)

// maxDriftDiffs is how many drift files a review shows as diffs; the rest
// are listed by path (render --check lists every one).
const maxDriftDiffs = 20

// driftDiffs are the first maxDriftDiffs of r.Drift as diffs from what the
// config renders to what the head commits: the render's bytes, else (a
// cluster the review left out) the base's committed bytes, which the head's
// are held to; the committed bytes are headFS's deploy/.
func driftDiffs(r *diff.Report, rendered map[string][]byte, headFS, baseFS fs.FS) []diff.FileDiff {
	out := []diff.FileDiff{}
	for i, p := range r.Drift {
		if i == maxDriftDiffs {
			break
		}
		want, isRendered := rendered[p]
		if !isRendered {
			if b, err := fs.ReadFile(baseFS, path.Join(deployDir, p)); err == nil {
				want, isRendered = b, true
			}
		}
		got, isCommitted := regularFile(headFS, path.Join(deployDir, p))
		out = append(out, diff.DriftDiff(p, want, isRendered, got, isCommitted))
	}
	return out
}

// maxDriftFile is the most of one drift file a review reads.
const maxDriftFile = 1 << 20

// regularFile reads name from fsys when it is a regular file of at most
// maxDriftFile bytes. A symbolic link in a working tree's deploy/ is not
// followed (its target could be any file of the machine, shown in a pull
// request comment): it is shown as the link it is, as git stores it.
func regularFile(fsys fs.FS, name string) ([]byte, bool) {
	st, err := fs.Lstat(fsys, name)
	if err != nil {
		return nil, false
	}
	switch {
	case st.Mode()&fs.ModeSymlink != 0:
		target, err := fs.ReadLink(fsys, name)
		if err != nil {
			return nil, false
		}
		return []byte("symbolic link to " + target + "\n"), true
	case !st.Mode().IsRegular():
		return []byte("not a regular file (" + st.Mode().Type().String() + ")\n"), true
	case st.Size() > maxDriftFile:
		return []byte(fmt.Sprintf("a file of %d bytes, too large to show\n", st.Size())), true
	}
	b, err := fs.ReadFile(fsys, name)
	return b, err == nil
}
