package config

import (
	"crypto/sha1"
	"crypto/sha256"
	"fmt"
	"io"
	"io/fs"
	"path"
	"sort"
	"strings"

	"github.com/regionctl/regionctl/internal/diag"
	"github.com/regionctl/regionctl/internal/par"
)

// Document is one parsed layer file.
type Document struct {
	File  string // path as shown to the user, e.g. config/regions/us-east-1.yaml
	Layer Layer
	Name  string // file stem: sector, region or cluster name; "" for global files
	Dir   string // for cluster files: the region directory name
	Value *Value // nil when the file could not be parsed
	Hash  [32]byte
	// Blob is the file's git blob hash (SHA-1 of "blob <size>\x00" and its
	// bytes): a review matches a base file to the head's by it without
	// reading the base's copy (ParseReusing).
	Blob [20]byte
	// Invalid is set when the document failed to parse or failed its layer
	// schema; clusters built on it are marked Partial.
	Invalid bool
	// InvalidPaths are the dotted paths the layer schema already reported,
	// so that later checks do not report the same value twice.
	InvalidPaths map[string]bool
	// decoded are the diagnostics of reading and decoding the file, which
	// a document reused for the same bytes repeats.
	decoded diag.Diagnostics
}

// BlobHasher is a file system that tells a file's git blob hash without
// reading the file (a git tree knows it from its entries).
type BlobHasher interface {
	// BlobHash returns the blob hash of the regular file name, and false
	// when name is not a regular file of the tree.
	BlobHash(name string) ([20]byte, bool)
}

// Documents are the layer files of one fleet, grouped by layer and sorted.
type Documents struct {
	Global   []*Document // lexical order: the merge order
	Sectors  []*Document
	Regions  []*Document
	Clusters []*Document // by region directory, then name
}

// All returns every document in a stable order.
func (d *Documents) All() []*Document {
	out := make([]*Document, 0, len(d.Global)+len(d.Sectors)+len(d.Regions)+len(d.Clusters))
	out = append(out, d.Global...)
	out = append(out, d.Sectors...)
	out = append(out, d.Regions...)
	return append(out, d.Clusters...)
}

// Parse reads the layer files under dir of fsys (dir is usually "config").
// Files that cannot be parsed are kept as invalid documents so that every
// problem of the fleet is reported in one run.
func Parse(fsys fs.FS, dir string) (*Documents, diag.Diagnostics) {
	return ParseWith(fsys, dir, DecodeOptions{})
}

// ParseWith is Parse, decoding each file with opts.
func ParseWith(fsys fs.FS, dir string, opts DecodeOptions) (*Documents, diag.Diagnostics) {
	return parse(fsys, dir, opts, nil)
}

// ParseReusing is ParseWith for the other end of a review: a file that
// other holds with the same path and git blob hash, as fsys tells it
// without reading the file (BlobHasher), is taken from other, decoded
// value and diagnostics alike, instead of being read and decoded again.
// The layer checks' marks (Invalid from a schema, InvalidPaths) are not
// taken: each side is checked on its own. Without a BlobHasher every file
// is read.
func ParseReusing(fsys fs.FS, dir string, opts DecodeOptions, other *Documents) (*Documents, diag.Diagnostics) {
	hasher, ok := fsys.(BlobHasher)
	if !ok || other == nil {
		return parse(fsys, dir, opts, nil)
	}
	byFile := map[string]*Document{}
	for _, d := range other.All() {
		byFile[d.File] = d
	}
	return parse(fsys, dir, opts, func(doc *Document) bool {
		o := byFile[doc.File]
		if o == nil || o.Blob == ([20]byte{}) {
			return false
		}
		h, ok := hasher.BlobHash(doc.File)
		if !ok || h != o.Blob {
			return false
		}
		doc.Value, doc.Hash, doc.Blob, doc.decoded = o.Value, o.Hash, o.Blob, o.decoded
		doc.Invalid = o.Value == nil || o.decoded.HasErrors()
		return true
	})
}

// parse is ParseWith; reuse, when set, fills a document from one already
// decoded and reports whether it did.
func parse(fsys fs.FS, dir string, opts DecodeOptions, reuse func(*Document) bool) (*Documents, diag.Diagnostics) {
	var docs Documents
	var diags diag.Diagnostics
	var pending []*Document
	add := func(p string, layer Layer, name, rdir string) *Document {
		doc := &Document{File: p, Layer: layer, Name: name, Dir: rdir}
		pending = append(pending, doc)
		return doc
	}
	top, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return &docs, diag.Diagnostics{diag.Errorf(diag.Pos{File: dir},
			"regionctl reads the fleet from a config/ directory with global/, sectors/, regions/ and clusters/ inside; run it from the repository root or pass --root.",
			"cannot read the fleet config: %v", err)}
	}
	for _, e := range top {
		p := path.Join(dir, e.Name())
		switch {
		case isLink(e):
			diags = append(diags, linkError(p))
		case e.Name() == "global" && e.IsDir():
			for _, f := range yamlFiles(fsys, p, &diags) {
				docs.Global = append(docs.Global, add(path.Join(p, f), LayerGlobal, "", ""))
			}
		case e.Name() == "sectors" && e.IsDir():
			for _, f := range yamlFiles(fsys, p, &diags) {
				docs.Sectors = append(docs.Sectors, add(path.Join(p, f), LayerSector, stem(f), ""))
			}
		case e.Name() == "regions" && e.IsDir():
			for _, f := range yamlFiles(fsys, p, &diags) {
				docs.Regions = append(docs.Regions, add(path.Join(p, f), LayerRegion, stem(f), ""))
			}
		case e.Name() == "clusters" && e.IsDir():
			regions, err := fs.ReadDir(fsys, p)
			if err != nil {
				diags = append(diags, diag.Errorf(diag.Pos{File: p}, err.Error(), "cannot read cluster directories"))
				continue
			}
			for _, r := range regions {
				rp := path.Join(p, r.Name())
				if isLink(r) {
					diags = append(diags, linkError(rp))
					continue
				}
				if strings.HasPrefix(r.Name(), ".") {
					diags = append(diags, hiddenWarning(rp))
					continue
				}
				if !r.IsDir() {
					diags = append(diags, diag.Errorf(diag.Pos{File: rp},
						"Cluster files live in config/clusters/<region>/<cluster>.yaml; move this file into its region's directory.",
						"cluster file outside a region directory"))
					continue
				}
				for _, f := range yamlFiles(fsys, rp, &diags) {
					docs.Clusters = append(docs.Clusters, add(path.Join(rp, f), LayerCluster, stem(f), r.Name()))
				}
			}
		case strings.HasPrefix(e.Name(), ".") || strings.EqualFold(e.Name(), "README.md"):
		default:
			diags = append(diags, diag.Diagnostic{Severity: diag.Warning, Pos: diag.Pos{File: p},
				Summary: "ignored entry in the config directory",
				Detail:  "Only global/, sectors/, regions/ and clusters/ are read."})
		}
	}
	// Read and decode the files in parallel: reading from git objects or a
	// cold disk dominates on large fleets. Diagnostics keep file order.
	perDoc := make([]diag.Diagnostics, len(pending))
	par.Do(len(pending), func(i int) {
		if reuse != nil && reuse(pending[i]) {
			perDoc[i] = pending[i].decoded
			return
		}
		perDoc[i] = readDoc(fsys, pending[i], opts)
	})
	for _, ds := range perDoc {
		diags = append(diags, ds...)
	}
	return &docs, diags
}

// readDoc reads and decodes one layer file into doc.
func readDoc(fsys fs.FS, doc *Document, opts DecodeOptions) diag.Diagnostics {
	data, err := readLimited(fsys, doc.File)
	if err != nil {
		doc.Invalid = true
		return diag.Diagnostics{diag.Errorf(diag.Pos{File: doc.File}, err.Error(), "cannot read layer file")}
	}
	doc.Hash = sha256.Sum256(data)
	doc.Blob = blobHash(data)
	v, ds := DecodeWith(doc.File, doc.Layer, data, opts)
	doc.Value, doc.decoded = v, ds
	if ds.HasErrors() || v == nil {
		doc.Invalid = true
	}
	return ds
}

// blobHash is git's object id of data as a blob.
func blobHash(data []byte) [20]byte {
	h := sha1.New()
	fmt.Fprintf(h, "blob %d\x00", len(data))
	h.Write(data)
	var out [20]byte
	h.Sum(out[:0])
	return out
}

// yamlFiles lists the .yaml files of dir in lexical order, warning about
// anything else.
func yamlFiles(fsys fs.FS, dir string, diags *diag.Diagnostics) []string {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		*diags = append(*diags, diag.Errorf(diag.Pos{File: dir}, err.Error(), "cannot read directory"))
		return nil
	}
	var out []string
	for _, e := range entries {
		switch {
		case isLink(e):
			*diags = append(*diags, linkError(path.Join(dir, e.Name())))
		case e.Name() == ".gitkeep" || e.Name() == ".keep":
		case strings.HasPrefix(e.Name(), "."):
			*diags = append(*diags, hiddenWarning(path.Join(dir, e.Name())))
		case !e.IsDir() && strings.HasSuffix(e.Name(), ".yaml"):
			out = append(out, e.Name())
		case !e.IsDir() && strings.HasSuffix(e.Name(), ".yml"):
			*diags = append(*diags, diag.Errorf(diag.Pos{File: path.Join(dir, e.Name())},
				"Layer files use the .yaml extension; rename the file.", "layer file with .yml extension"))
		default:
			*diags = append(*diags, diag.Diagnostic{Severity: diag.Warning, Pos: diag.Pos{File: path.Join(dir, e.Name())},
				Summary: "ignored entry", Detail: "Only .yaml files are read here."})
		}
	}
	sort.Strings(out)
	return out
}

func stem(name string) string { return strings.TrimSuffix(name, ".yaml") }

func isLink(e fs.DirEntry) bool { return e.Type()&fs.ModeSymlink != 0 }

// linkError refuses a symbolic link among the layer files: the config is
// what the repository holds, and a link may reach outside it.
func linkError(p string) diag.Diagnostic {
	return diag.Errorf(diag.Pos{File: p},
		"regionctl reads only files inside the repository, and a link may point anywhere: replace the link with the file (or directory) itself.",
		"symbolic link in config/")
}

// hiddenWarning reports a hidden entry in a layer folder, which regionctl
// does not read: an editor's backup, or a layer someone means to apply.
func hiddenWarning(p string) diag.Diagnostic {
	return diag.Diagnostic{Severity: diag.Warning, Pos: diag.Pos{File: p}, Summary: "hidden file ignored",
		Detail: "Files whose names start with a dot are not read. Rename it to take effect, or delete it."}
}

// readLimited reads a file, stopping one byte past MaxFileSize so that an
// oversized file is reported without being read whole.
func readLimited(fsys fs.FS, p string) ([]byte, error) {
	f, err := fsys.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", p, err)
	}
	return data, nil
}
