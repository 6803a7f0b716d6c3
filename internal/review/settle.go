package review

import (
	"sync"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/regionctl/regionctl/internal/render"
	"github.com/regionctl/regionctl/internal/render/tekton"
)

// settler takes the head's files of a whole (--full) review as they are
// rendered, and holds the bytes only of those that differ from what the
// base committed. A file the base's view holds (asCommitted) with the very
// blob the head renders is the same on both sides: it is left out of both,
// and only its hash is kept, for drift. So a whole review holds the files
// that change rather than two fleets' worth.
type settler struct {
	committed map[string]plumbing.Hash   // the base's deploy/
	inBase    func(render.Artifact) bool // whether the base's view holds a committed file

	mu      sync.Mutex
	held    map[string][]byte
	settled map[string]plumbing.Hash
}

// newSettler settles against the base's committed deploy/ (its blob hashes
// and the owners its index.json gives files) and the base's render, as
// asCommitted makes the base's view of them. A head file whose owner the
// base's render left out is one the base renders too: the owner renders the
// same on both sides. (Where the head leaves it out as well, the head has
// no file of it.)
func newSettler(committed map[string]plumbing.Hash, owners map[string]string, base *render.Output) *settler {
	rendered := make(map[string]bool, len(base.Artifacts))
	for _, a := range base.Artifacts {
		rendered[a.Path] = true
	}
	return &settler{
		committed: committed,
		inBase: func(a render.Artifact) bool {
			if rendered[a.Path] || base.Unchanged[a.Owner] {
				return true
			}
			owner, known := owners[a.Path]
			return known && !base.Unchanged[owner]
		},
		held:    map[string][]byte{},
		settled: map[string]plumbing.Hash{},
	}
}

// take is the head render's Sink: it is called from several goroutines.
func (s *settler) take(arts []render.Artifact) error {
	for _, a := range arts {
		h := plumbing.ComputeHash(plumbing.BlobObject, a.Bytes)
		c, ok := s.committed[a.Path]
		// PipelineRuns are always held: the commands that start runs
		// read them from the review's head, changed or not.
		same := ok && c == h && s.inBase(a) && !tekton.IsRunPath(a.Path)
		s.mu.Lock()
		if same {
			s.settled[a.Path] = h
		} else {
			s.held[a.Path] = a.Bytes
		}
		s.mu.Unlock()
	}
	return nil
}

// output is the head's render as the review compares it: the files that
// differ from the base's, with their bytes, and the fleet-wide ones.
func (s *settler) output(out *render.Output) *render.Output {
	arts := make([]render.Artifact, 0, len(s.held)+16)
	for _, a := range out.Artifacts {
		if _, ok := s.settled[a.Path]; ok {
			continue
		}
		if b, ok := s.held[a.Path]; ok {
			a.Bytes = b
		}
		arts = append(arts, a)
	}
	c := *out
	c.Artifacts = arts
	return &c
}
