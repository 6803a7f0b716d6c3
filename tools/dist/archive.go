package main

import (
	"archive/tar"
	"archive/zip"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// docs are the files every archive carries beside the binary: the
// licence the binary is distributed under, and the README.
var docs = []string{"LICENSE", "README.md"}

// License is the SPDX identifier of LICENSE.
const License = "Apache-2.0"

// writeArchive packs the binary and the docs into path, reproducibly: fixed
// order, owner root, every timestamp the commit's, no gzip name or time.
func writeArchive(path string, t target, bin string, extras []archived, mtime time.Time) error {
	files := []archived{{name: t.exe(), src: bin, mode: 0o755}}
	for _, d := range docs {
		files = append(files, archived{name: d, src: d, mode: 0o644})
	}
	files = append(files, extras...)
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if strings.HasSuffix(path, ".zip") {
		err = writeZip(f, files, mtime)
	} else {
		err = writeTarGz(f, files, mtime)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

type archived struct {
	name, src string
	mode      os.FileMode
}

func writeTarGz(w io.Writer, files []archived, mtime time.Time) error {
	gz, err := gzip.NewWriterLevel(w, gzip.BestCompression)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(gz)
	for _, f := range files {
		data, err := os.ReadFile(f.src)
		if err != nil {
			return err
		}
		hdr := &tar.Header{
			Name: f.name, Mode: int64(f.mode), Size: int64(len(data)),
			ModTime: mtime, Typeflag: tar.TypeReg, Format: tar.FormatPAX,
			Uname: "root", Gname: "root",
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if _, err := tw.Write(data); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return gz.Close()
}

func writeZip(w io.Writer, files []archived, mtime time.Time) error {
	zw := zip.NewWriter(w)
	for _, f := range files {
		data, err := os.ReadFile(f.src)
		if err != nil {
			return err
		}
		hdr := &zip.FileHeader{Name: f.name, Method: zip.Deflate, Modified: mtime}
		hdr.SetMode(f.mode)
		fw, err := zw.CreateHeader(hdr)
		if err != nil {
			return err
		}
		if _, err := fw.Write(data); err != nil {
			return err
		}
	}
	return zw.Close()
}

// checksumsFile lists every artifact's SHA-256 in the format `sha256sum -c`
// reads.
const checksumsFile = "SHA256SUMS"

func writeChecksums(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	var names []string
	for _, e := range entries {
		if e.Type().IsRegular() && e.Name() != checksumsFile {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	var b strings.Builder
	for _, n := range names {
		sum, err := fileSHA256(filepath.Join(dir, n))
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s  %s\n", sum, n)
	}
	return os.WriteFile(filepath.Join(dir, checksumsFile), []byte(b.String()), 0o644)
}

func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
