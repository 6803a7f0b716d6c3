package main

import (
	"archive/tar"
	"archive/zip"
	"bufio"
	"bytes"
	"compress/gzip"
	"debug/buildinfo"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"sort"
	"strings"

	cdx "github.com/CycloneDX/cyclonedx-go"
)

// verify checks the artifacts in dir as someone installing the release
// would: the checksums hold, each archive unpacks to a binary of its
// platform stamped with the release, each SBOM lists exactly the modules
// linked into it, and the binary of this machine's platform runs and says
// which release it is.
func verify(dir string, r release) error {
	sums, err := readChecksums(filepath.Join(dir, checksumsFile))
	if err != nil {
		return err
	}
	var want []string
	for _, t := range r.targets {
		want = append(want, r.archive(t), r.sbom(t))
	}
	sort.Strings(want)
	var got []string
	for name := range sums {
		got = append(got, name)
	}
	sort.Strings(got)
	if strings.Join(got, ",") != strings.Join(want, ",") {
		return fmt.Errorf("%s lists %v, want %v", checksumsFile, got, want)
	}
	for name, sum := range sums {
		actual, err := fileSHA256(filepath.Join(dir, name))
		if err != nil {
			return err
		}
		if actual != sum {
			return fmt.Errorf("%s: sha256 %s, %s says %s", name, actual, checksumsFile, sum)
		}
	}
	tmp, err := os.MkdirTemp("", "regionctl-dist-verify-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	for _, t := range r.targets {
		files, err := unpack(filepath.Join(dir, r.archive(t)))
		if err != nil {
			return fmt.Errorf("%s: %w", r.archive(t), err)
		}
		for _, name := range append([]string{t.exe(), "man/regionctl.1", "completions/regionctl.bash", "CHANGELOG.md"}, docs...) {
			if _, ok := files[name]; !ok {
				return fmt.Errorf("%s holds no %s", r.archive(t), name)
			}
		}
		bin := filepath.Join(tmp, t.goos+"_"+t.goarch+"_"+t.exe())
		if err := os.WriteFile(bin, files[t.exe()], 0o755); err != nil {
			return err
		}
		if err := checkBinary(bin, r, t); err != nil {
			return fmt.Errorf("%s: %w", r.archive(t), err)
		}
		if err := checkSBOM(filepath.Join(dir, r.sbom(t)), bin, r); err != nil {
			return fmt.Errorf("%s: %w", r.sbom(t), err)
		}
		if t.goos == runtime.GOOS && t.goarch == runtime.GOARCH {
			if err := checkRuns(bin, r); err != nil {
				return fmt.Errorf("%s: %w", r.archive(t), err)
			}
		}
	}
	return nil
}

func readChecksums(file string) (map[string]string, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		sum, name, ok := strings.Cut(sc.Text(), "  ")
		if !ok || len(sum) != 64 || name == "" || strings.ContainsAny(name, "/\\") {
			return nil, fmt.Errorf("%s:%d: want \"<sha256>  <file>\"", checksumsFile, n)
		}
		out[name] = sum
	}
	return out, sc.Err()
}

// unpack reads an archive into memory, refusing anything but plain files
// with clean relative names.
func unpack(file string) (map[string][]byte, error) {
	out := map[string][]byte{}
	add := func(name string, r io.Reader) error {
		if name != path.Clean(name) || path.IsAbs(name) || strings.HasPrefix(name, "../") || name == ".." {
			return fmt.Errorf("entry %q is not a clean relative path", name)
		}
		if _, dup := out[name]; dup {
			return fmt.Errorf("entry %q twice", name)
		}
		data, err := io.ReadAll(r)
		out[name] = data
		return err
	}
	if strings.HasSuffix(file, ".zip") {
		zr, err := zip.OpenReader(file)
		if err != nil {
			return nil, err
		}
		defer zr.Close()
		for _, f := range zr.File {
			if !f.Mode().IsRegular() {
				return nil, fmt.Errorf("entry %q is not a regular file", f.Name)
			}
			rc, err := f.Open()
			if err != nil {
				return nil, err
			}
			err = add(f.Name, rc)
			rc.Close()
			if err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		return nil, err
	}
	tr := tar.NewReader(gz)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		if hdr.Typeflag != tar.TypeReg {
			return nil, fmt.Errorf("entry %q is not a regular file", hdr.Name)
		}
		if err := add(hdr.Name, tr); err != nil {
			return nil, err
		}
	}
}

// checkBinary reads the build information the Go linker wrote into bin.
func checkBinary(bin string, r release, t target) error {
	info, err := buildinfo.ReadFile(bin)
	if err != nil {
		return err
	}
	settings := map[string]string{}
	for _, s := range info.Settings {
		settings[s.Key] = s.Value
	}
	want := map[string]string{
		"GOOS": t.goos, "GOARCH": t.goarch, "CGO_ENABLED": "0", "-trimpath": "true",
		"vcs.revision": r.src.commit, "vcs.modified": fmt.Sprint(r.src.dirty),
	}
	for k, v := range want {
		if settings[k] != v {
			return fmt.Errorf("built with %s=%q, want %q", k, settings[k], v)
		}
	}
	// -trimpath keeps -ldflags out of the build information; the stamped
	// string is in the binary's data (and checkRuns asks the host's binary).
	data, err := os.ReadFile(bin)
	if err != nil {
		return err
	}
	if !bytes.Contains(data, []byte(r.version)) {
		return fmt.Errorf("the binary holds no version %s", r.version)
	}
	return nil
}

// checkSBOM holds the SBOM to the modules linked into bin, both ways.
func checkSBOM(file, bin string, r release) error {
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
	var bom cdx.BOM
	if err := cdx.NewBOMDecoder(f, cdx.BOMFileFormatJSON).Decode(&bom); err != nil {
		return err
	}
	if bom.Metadata == nil || bom.Metadata.Component == nil || bom.Metadata.Component.Version != r.version {
		return fmt.Errorf("does not describe regionctl %s", r.version)
	}
	listed, err := sbomModules(&bom)
	if err != nil {
		return err
	}
	info, err := buildinfo.ReadFile(bin)
	if err != nil {
		return err
	}
	linked := map[string]bool{}
	for _, m := range info.Deps {
		linked[moduleComponent(m).PackageURL] = true
	}
	for p := range linked {
		if !listed[p] {
			return fmt.Errorf("lacks %s, which the binary links", p)
		}
	}
	for p := range listed {
		if !linked[p] && !strings.HasPrefix(p, "pkg:golang/stdlib@") {
			return fmt.Errorf("lists %s, which the binary does not link", p)
		}
	}
	return nil
}

// checkRuns runs the binary as a user would after unpacking it.
func checkRuns(bin string, r release) error {
	out, err := exec.Command(bin, "version", "-o", "json").Output()
	if err != nil {
		return fmt.Errorf("regionctl version: %w", err)
	}
	var v struct {
		Version, Commit string
	}
	if err := json.Unmarshal(out, &v); err != nil {
		return fmt.Errorf("regionctl version -o json: %w", err)
	}
	if v.Version != r.version || v.Commit != r.src.commit {
		return fmt.Errorf("regionctl version says %s at %s, want %s at %s", v.Version, v.Commit, r.version, r.src.commit)
	}
	return nil
}
