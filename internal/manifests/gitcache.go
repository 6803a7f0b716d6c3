package manifests

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path"
	"regexp"
	"strings"
	"testing/fstest"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	gitobject "github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/filesystem"
	"helm.sh/helm/v3/pkg/chart/loader"
)

// GitSource is a chart in a directory of another project's git repository
// at a tag, as an Application names it (repoURL, path, targetRevision), or,
// with Kustomize, a kustomization there: then the whole tree of the path's
// first directory is kept, which holds the bases it names beside it.
type GitSource struct {
	URL, Path, Revision string
	Kustomize           bool
}

// root is the directory of the repository the cache keeps for s.
func (s GitSource) root() string {
	if s.Kustomize {
		first, _, _ := strings.Cut(s.Path, "/")
		return first
	}
	return s.Path
}

func (s GitSource) String() string { return s.Path + " at " + s.Revision + " of " + s.URL }

var (
	gitPathPart = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9._-]{0,99}$`)
	gitTag      = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9._+-]{0,99}(/[A-Za-z0-9_][A-Za-z0-9._+-]{0,99}){0,3}$`)
)

// check refuses a source Pull would not fetch: a URL that is not https or
// carries credentials, a query or a fragment; a path that is not a clean
// relative one; a revision that is not a plain tag name.
func (s GitSource) check() error {
	u, err := url.Parse(s.URL)
	if err != nil || u.Scheme != "https" || u.User != nil || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("%s: a chart's git repository is an https URL without credentials, query or fragment", s.URL)
	}
	for _, part := range strings.Split(s.Path, "/") {
		if !gitPathPart.MatchString(part) || part == ".." {
			return fmt.Errorf("%q: not a chart directory of a repository (a clean relative path)", s.Path)
		}
	}
	if !gitTag.MatchString(s.Revision) || strings.Contains(s.Revision, "..") || strings.HasSuffix(s.Revision, ".lock") {
		return fmt.Errorf("%q: not a tag name (a git-sourced chart is cached at a tag)", s.Revision)
	}
	return nil
}

// gitPath is where s is cached: <dir>/<sha256 of the URL, 32 hex>/
// git-<sha256 of path and revision, 32 hex>.tar, beside .sha256 (the
// archive's digest) and .commit (the commit the tag named).
func (c Cache) gitPath(s GitSource) (string, error) {
	if err := s.check(); err != nil {
		return "", err
	}
	id := s.Path + "\x00" + s.Revision
	if s.Kustomize {
		id += "\x00kustomize"
	}
	return c.keyed(s.URL, "git-", id, ".tar"), nil
}

// HasGit says whether the cache holds s.
func (c Cache) HasGit(s GitSource) bool { return c.GitPin(s) != "" }

// GitPin is the commit whose directory the cache holds for s, "" when it
// holds none.
func (c Cache) GitPin(s GitSource) string {
	p, err := c.gitPath(s)
	if err != nil {
		return ""
	}
	return readPin(p+".commit", hexCommit)
}

// GitChart reads s from the cache, with the commit its tag named when it
// was pulled: ErrNotCached when PullGit has not fetched it, an error when
// the archive is not what PullGit wrote.
func (c Cache) GitChart(s GitSource) (*Chart, string, error) {
	b, commit, err := c.gitArchive(s)
	if err != nil {
		return nil, "", err
	}
	ch, err := untarChart(b)
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", s, err)
	}
	return ch, commit, nil
}

// gitArchive is the archive the cache holds for s and its commit.
func (c Cache) gitArchive(s GitSource) ([]byte, string, error) {
	p, err := c.gitPath(s)
	if err != nil {
		return nil, "", err
	}
	return readPinned(p, ".commit", hexCommit)
}

// GitKustomization reads the kustomization s (Kustomize set) from the
// cache, with the commit its tag named when it was pulled.
func (c Cache) GitKustomization(s GitSource) (*Kustomization, string, error) {
	b, commit, err := c.gitArchive(s)
	if err != nil {
		return nil, "", err
	}
	k, err := untarKustomization(b, s)
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", s, err)
	}
	return k, commit, nil
}

// PullGit fetches the commit tag s.Revision of s.URL names, by git's smart
// HTTP protocol (depth 1, that tag alone, at most MaxPack bytes, into a
// directory below the cache it removes after), and caches the
// files of its directory s.Path once they load as a chart (or, for a
// kustomization, of the path's first directory, once the kustomizations
// there name nothing remote): regular files only (a symbolic link or a
// submodule is refused, as LoadChart refuses them), at most MaxArchive
// bytes. caBundle, when not nil, is the only
// certificate authority the fetch trusts. A pin that is not "" is the
// commit the tag must name (what the repository's lock file pins). It
// returns the commit.
func (c Cache) PullGit(ctx context.Context, s GitSource, caBundle []byte, pin string) (string, error) {
	p, err := c.gitPath(s)
	if err != nil {
		return "", err
	}
	tag := plumbing.NewTagReferenceName(s.Revision)
	if err := os.MkdirAll(c.Dir, 0o755); err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(c.Dir, ".clone-*")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	store := boundedStorage{filesystem.NewStorage(osfs.New(tmp), cache.NewObjectLRUDefault()), MaxPack}
	repo, err := git.CloneContext(ctx, store, nil, &git.CloneOptions{
		URL: s.URL, ReferenceName: tag, SingleBranch: true, Depth: 1, Tags: git.NoTags, CABundle: caBundle,
	})
	if err != nil {
		return "", fmt.Errorf("%s: tag %s: %w", s.URL, s.Revision, err)
	}
	commit, err := tagCommit(repo, tag)
	if err != nil {
		return "", fmt.Errorf("%s: tag %s: %w", s.URL, s.Revision, err)
	}
	if pin != "" && commit.Hash.String() != pin {
		return "", &PinMismatch{Chart: Locked{Repo: strings.TrimSuffix(s.URL, "/"), Path: s.Path, Revision: s.Revision, Commit: pin}, Served: commit.Hash.String(), Republish: "the tag moved"}
	}
	archive, err := tarDir(commit, s.root())
	if err == nil && s.Kustomize {
		_, err = untarKustomization(archive, s)
	} else if err == nil {
		var ch *Chart
		if ch, err = untarChart(archive); err == nil {
			err = ch.vendored()
		}
	}
	if err != nil {
		return "", fmt.Errorf("%s at commit %s: %w", s, commit.Hash, err)
	}
	// .commit last: HasGit looks for it.
	if err := writeCached(p, archive, [2]string{".commit", commit.Hash.String()}); err != nil {
		return "", err
	}
	return commit.Hash.String(), nil
}

// MaxPack bounds the packfile PullGit takes from a repository (the tag's
// whole tree, compressed), which it keeps on disk below the cache until
// the chart's directory is read out of it.
var MaxPack int64 = 1 << 30

// boundedStorage is a repository's storage on disk that takes a packfile
// of at most limit bytes: a repository cannot fill the disk or, through
// the index built from the pack, the memory.
type boundedStorage struct {
	*filesystem.Storage
	limit int64
}

func (s boundedStorage) PackfileWriter() (io.WriteCloser, error) {
	w, err := s.Storage.PackfileWriter()
	if err != nil {
		return nil, err
	}
	return &boundedWriter{w: w, left: s.limit}, nil
}

type boundedWriter struct {
	w    io.WriteCloser
	left int64
}

func (b *boundedWriter) Write(p []byte) (int, error) {
	if b.left -= int64(len(p)); b.left < 0 {
		return 0, fmt.Errorf("the repository sent a packfile over %d MiB", MaxPack>>20)
	}
	return b.w.Write(p)
}

func (b *boundedWriter) Close() error { return b.w.Close() }

// tagCommit is the commit tag names, through an annotated tag's object.
func tagCommit(repo *git.Repository, tag plumbing.ReferenceName) (*gitobject.Commit, error) {
	ref, err := repo.Reference(tag, true)
	if err != nil {
		return nil, err
	}
	if t, err := repo.TagObject(ref.Hash()); err == nil {
		return t.Commit()
	}
	return repo.CommitObject(ref.Hash())
}

// tarDir is the files of dir in commit's tree as a tar archive, in the
// tree's order, with their paths below dir and nothing of the commit's
// time or modes: the same directory makes the same bytes.
func tarDir(commit *gitobject.Commit, dir string) ([]byte, error) {
	root, err := commit.Tree()
	if err != nil {
		return nil, err
	}
	tree, err := root.Tree(dir)
	if err != nil {
		return nil, fmt.Errorf("no directory %s: %w", dir, err)
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	walker := gitobject.NewTreeWalker(tree, true, nil)
	defer walker.Close()
	for {
		name, entry, err := walker.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		switch entry.Mode {
		case filemode.Dir:
			continue
		case filemode.Regular, filemode.Executable, filemode.Deprecated:
		case filemode.Symlink:
			return nil, fmt.Errorf("%s is a symbolic link: a chart is read as regular files", path.Join(dir, name))
		case filemode.Submodule:
			return nil, fmt.Errorf("%s is a submodule: a chart is read from its own repository", path.Join(dir, name))
		default:
			return nil, fmt.Errorf("%s is not a regular file (mode %s)", path.Join(dir, name), entry.Mode)
		}
		blob, err := tree.TreeEntryFile(&entry)
		if err != nil {
			return nil, err
		}
		if buf.Len()+int(blob.Size) > MaxArchive {
			return nil, fmt.Errorf("%s is over %d MiB", dir, MaxArchive>>20)
		}
		r, err := blob.Reader()
		if err != nil {
			return nil, err
		}
		err = tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: blob.Size, Typeflag: tar.TypeReg, Format: tar.FormatPAX})
		if err == nil {
			_, err = io.Copy(tw, r)
		}
		r.Close()
		if err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// untarFiles are the files of an archive tarDir wrote, by their paths.
// Anything but a regular file with a clean relative name is refused.
func untarFiles(archive []byte) (map[string][]byte, error) {
	files := map[string][]byte{}
	tr := tar.NewReader(bytes.NewReader(archive))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return files, nil
		}
		if err != nil {
			return nil, err
		}
		if h.Typeflag != tar.TypeReg || !fs.ValidPath(h.Name) || h.Name == "." {
			return nil, fmt.Errorf("%q is not a regular file of the directory", h.Name)
		}
		b, err := io.ReadAll(io.LimitReader(tr, MaxArchive))
		if err != nil {
			return nil, err
		}
		files[h.Name] = b
	}
}

// untarChart loads the chart tarDir wrote, as LoadChart loads a directory
// (.helmignore, the size bound).
func untarChart(archive []byte) (*Chart, error) {
	const root = "chart"
	files, err := untarFiles(archive)
	if err != nil {
		return nil, err
	}
	fsys := fstest.MapFS{}
	for name, b := range files {
		fsys[root+"/"+name] = &fstest.MapFile{Data: b, Mode: 0o644}
	}
	return LoadChart(fsys, root)
}

// vendored refuses a chart whose Chart.yaml names a dependency its charts/
// directory does not hold: Argo CD would fetch it (helm dependency build),
// and the review fetches nothing.
func (c *Chart) vendored() error {
	ch, err := loader.LoadFiles(c.files)
	if err != nil {
		return err
	}
	have := map[string]bool{}
	for _, d := range ch.Dependencies() {
		have[d.Name()] = true
	}
	var missing []string
	for _, d := range ch.Metadata.Dependencies {
		if !have[d.Name] {
			missing = append(missing, d.Name)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("the chart depends on %s, which its charts/ directory does not hold: Argo CD would fetch it (helm dependency build); regionctl renders what the repository holds alone", strings.Join(missing, ", "))
	}
	return nil
}

// untarKustomization is the kustomization s of the tree tarDir wrote of
// s's root.
func untarKustomization(archive []byte, s GitSource) (*Kustomization, error) {
	files, err := untarFiles(archive)
	if err != nil {
		return nil, err
	}
	tree := make(map[string][]byte, len(files))
	for name, b := range files {
		tree[s.root()+"/"+name] = b
	}
	return NewKustomization(tree, s.Path)
}
