package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"debug/buildinfo"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
	"time"
)

func TestArchivesAreReproducible(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "regionctl")
	if err := os.WriteFile(bin, []byte("binary"), 0o700); err != nil {
		t.Fatal(err)
	}
	chdir(t, "../..") // the docs are read from the repository root
	mtime := time.Unix(1700000000, 0)
	for _, tg := range []target{{"linux", "amd64"}, {"windows", "arm64"}} {
		a, b := filepath.Join(dir, "a-"+tg.goos), filepath.Join(dir, "b-"+tg.goos)
		ext := ".tar.gz"
		if tg.goos == "windows" {
			ext = ".zip"
		}
		if err := writeArchive(a+ext, tg, bin, nil, mtime); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(bin, time.Now(), time.Now()); err != nil {
			t.Fatal(err)
		}
		if err := writeArchive(b+ext, tg, bin, nil, mtime); err != nil {
			t.Fatal(err)
		}
		da, _ := os.ReadFile(a + ext)
		db, _ := os.ReadFile(b + ext)
		if !bytes.Equal(da, db) {
			t.Errorf("%s: two archives of the same files differ", tg)
		}
		files, err := unpack(a + ext)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(bytes.TrimSpace(files["LICENSE"]), []byte("Apache License")) {
			t.Errorf("%s: the archive's LICENSE is not the Apache License (%d bytes)", tg, len(files["LICENSE"]))
		}
		if string(files[tg.exe()]) != "binary" || len(files["README.md"]) == 0 {
			t.Errorf("%s: unpacked %d files, binary %q", tg, len(files), files[tg.exe()])
		}
	}
}

func TestUnpackRefusesWhatAnInstallerMustNotWrite(t *testing.T) {
	for name, hdr := range map[string]tar.Header{
		"parent":   {Name: "../regionctl", Typeflag: tar.TypeReg},
		"absolute": {Name: "/usr/bin/regionctl", Typeflag: tar.TypeReg},
		"link":     {Name: "regionctl", Typeflag: tar.TypeSymlink, Linkname: "/etc/passwd"},
		"unclean":  {Name: "a/../regionctl", Typeflag: tar.TypeReg},
	} {
		t.Run(name, func(t *testing.T) {
			var buf bytes.Buffer
			gz := gzip.NewWriter(&buf)
			tw := tar.NewWriter(gz)
			hdr.Mode = 0o755
			if err := tw.WriteHeader(&hdr); err != nil {
				t.Fatal(err)
			}
			tw.Close()
			gz.Close()
			file := filepath.Join(t.TempDir(), "x.tar.gz")
			os.WriteFile(file, buf.Bytes(), 0o644)
			if _, err := unpack(file); err == nil {
				t.Errorf("unpack took %q", hdr.Name)
			}
		})
	}
}

func TestChecksumsCoverEveryArtifact(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "b.zip"), []byte("b"), 0o644)
	os.WriteFile(filepath.Join(dir, "a.tar.gz"), []byte("a"), 0o644)
	if err := writeChecksums(dir); err != nil {
		t.Fatal(err)
	}
	sums, err := readChecksums(filepath.Join(dir, checksumsFile))
	if err != nil {
		t.Fatal(err)
	}
	// sha256("a"), as sha256sum prints it.
	if sums["a.tar.gz"] != "ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb" || len(sums) != 2 {
		t.Errorf("checksums %v", sums)
	}
	os.WriteFile(filepath.Join(dir, checksumsFile), []byte("abc  ../x\n"), 0o644)
	if _, err := readChecksums(filepath.Join(dir, checksumsFile)); err == nil {
		t.Error("a malformed line was read")
	}
}

// TestSBOMListsWhatIsLinked holds the SBOM writer to the check the release
// runs: every linked module listed, nothing else, replacements by what
// replaced them.
func TestSBOMListsWhatIsLinked(t *testing.T) {
	info := &buildinfo.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/regionctl/regionctl"}}
	info.Deps = []*debug.Module{
		{Path: "cuelang.org/go", Version: "v0.17.1", Sum: "h1:x"},
		{Path: "example.com/old", Version: "v1.0.0", Replace: &debug.Module{Path: "example.com/fork", Version: "v1.0.1"}},
	}
	r := release{version: "1.2.3", src: source{commit: strings.Repeat("a", 40), time: time.Unix(0, 0)}}
	bom := sbomOf(info, r, target{"linux", "arm64"}, strings.Repeat("0", 64))
	listed, err := sbomModules(bom)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"pkg:golang/cuelang.org/go@v0.17.1", "pkg:golang/example.com/fork@v1.0.1", "pkg:golang/stdlib@1.26.8"} {
		if !listed[want] {
			t.Errorf("SBOM lacks %s: %v", want, listed)
		}
	}
	if listed["pkg:golang/example.com/old@v1.0.0"] || len(listed) != 3 {
		t.Errorf("SBOM lists %v", listed)
	}
	if got := bom.Metadata.Component.PackageURL; got != "pkg:golang/github.com/regionctl/regionctl@v1.2.3?goarch=arm64&goos=linux" {
		t.Errorf("purl %s", got)
	}
}

func TestVersionOfARelease(t *testing.T) {
	commit := "0123456789abcdef0123456789abcdef01234567"
	for _, c := range []struct {
		flag string
		src  source
		want string
	}{
		{"", source{commit: commit, tag: "v1.4.0"}, "1.4.0"},
		{"", source{commit: commit, tag: "v1.4.0", dirty: true}, "0.1.0-snapshot.0123456789ab.dirty"},
		{"", source{commit: commit}, "0.1.0-snapshot.0123456789ab"},
		{"v2.0.0-rc.1", source{commit: commit}, "2.0.0-rc.1"},
	} {
		if got, err := resolveVersion(c.flag, c.src); err != nil || got != c.want {
			t.Errorf("resolveVersion(%q, %+v) = %q, %v; want %q", c.flag, c.src, got, err, c.want)
		}
	}
	for _, bad := range []string{"1.2", "1.2.3+build", "latest", "1.2.3; rm -rf /"} {
		if _, err := resolveVersion(bad, source{commit: commit}); err == nil {
			t.Errorf("-version %q accepted", bad)
		}
	}
	if _, err := parseTargets("linux/amd64,plan9/386"); err == nil {
		t.Error("an unknown target was accepted")
	}
}

func chdir(t *testing.T, dir string) {
	t.Helper()
	old, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chdir(old) })
}

// A signed SHA256SUMS verifies with the key's allowed_signers line and
// with no other key, and not once the file changes.
func TestSignatureVerifies(t *testing.T) {
	if _, err := exec.LookPath("ssh-keygen"); err != nil {
		t.Skip("no ssh-keygen (apt-get install openssh-client)")
	}
	dir := t.TempDir()
	keygen := func(name string) (string, string) {
		key := filepath.Join(t.TempDir(), name)
		if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", key).CombinedOutput(); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		pub, err := os.ReadFile(key + ".pub")
		if err != nil {
			t.Fatal(err)
		}
		return key, strings.TrimSpace(string(pub))
	}
	key, pub := keygen("release")
	_, other := keygen("other")
	if err := os.WriteFile(filepath.Join(dir, checksumsFile), []byte(strings.Repeat("a", 64)+"  regionctl_1.2.3_linux_amd64.tar.gz\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := sign(dir, key); err != nil {
		t.Fatal(err)
	}
	if err := verifySignature(dir, AllowedSigners(pub)); err != nil {
		t.Errorf("the release key: %v", err)
	}
	if err := verifySignature(dir, AllowedSigners(other)); err == nil {
		t.Error("another key verifies the signature")
	}
	if err := os.WriteFile(filepath.Join(dir, checksumsFile), []byte(strings.Repeat("b", 64)+"  regionctl_1.2.3_linux_amd64.tar.gz\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := verifySignature(dir, AllowedSigners(pub)); err == nil {
		t.Error("a changed SHA256SUMS verifies")
	}
}
