package main

import (
	"debug/buildinfo"
	"fmt"
	"os"
	"path"
	"runtime/debug"
	"strings"
	"time"

	cdx "github.com/CycloneDX/cyclonedx-go"
	"github.com/google/uuid"
	packageurl "github.com/package-url/packageurl-go"
)

// writeSBOM writes a CycloneDX SBOM of the binary: the modules the Go
// linker recorded in it (debug/buildinfo), so the list is what was linked,
// not what go.mod allows.
func writeSBOM(file string, r release, t target, bin string) error {
	info, err := buildinfo.ReadFile(bin)
	if err != nil {
		return err
	}
	sum, err := fileSHA256(bin)
	if err != nil {
		return err
	}
	bom := sbomOf(info, r, t, sum)
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	err = cdx.NewBOMEncoder(f, cdx.BOMFileFormatJSON).SetPretty(true).EncodeVersion(bom, cdx.SpecVersion1_6)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func sbomOf(info *buildinfo.BuildInfo, r release, t target, binSHA256 string) *cdx.BOM {
	qualifiers := packageurl.QualifiersFromMap(map[string]string{"goos": t.goos, "goarch": t.goarch})
	main := cdx.Component{
		BOMRef:     "regionctl",
		Type:       cdx.ComponentTypeApplication,
		Name:       "regionctl",
		Version:    r.version,
		PackageURL: goPURL(info.Main.Path, "v"+r.version, qualifiers),
		Hashes:     &[]cdx.Hash{{Algorithm: cdx.HashAlgoSHA256, Value: binSHA256}},
		Licenses:   &cdx.Licenses{{License: &cdx.License{ID: License}}},
		Properties: &[]cdx.Property{
			{Name: "regionctl:commit", Value: r.src.commit},
			{Name: "regionctl:platform", Value: t.String()},
		},
	}
	stdlib := cdx.Component{
		BOMRef:     "stdlib",
		Type:       cdx.ComponentTypeLibrary,
		Name:       "stdlib",
		Version:    info.GoVersion,
		PackageURL: packageurl.NewPackageURL(packageurl.TypeGolang, "", "stdlib", strings.TrimPrefix(info.GoVersion, "go"), nil, "").ToString(),
	}
	components := []cdx.Component{stdlib}
	deps := []string{stdlib.BOMRef}
	for _, m := range info.Deps {
		c := moduleComponent(m)
		components = append(components, c)
		deps = append(deps, c.BOMRef)
	}
	bom := cdx.NewBOM()
	bom.SerialNumber = "urn:uuid:" + uuid.NewSHA1(uuid.NameSpaceURL, []byte(main.PackageURL+"#"+binSHA256)).String()
	bom.Metadata = &cdx.Metadata{
		Timestamp: r.src.time.UTC().Format(time.RFC3339),
		Component: &main,
	}
	bom.Components = &components
	bom.Dependencies = &[]cdx.Dependency{{Ref: main.BOMRef, Dependencies: &deps}}
	return bom
}

// moduleComponent describes one linked module; a replaced module is
// described by what replaced it, which is what the binary holds.
func moduleComponent(m *debug.Module) cdx.Component {
	used := m
	if m.Replace != nil {
		used = m.Replace
	}
	c := cdx.Component{
		BOMRef:     used.Path + "@" + used.Version,
		Type:       cdx.ComponentTypeLibrary,
		Name:       used.Path,
		Version:    used.Version,
		PackageURL: goPURL(used.Path, used.Version, nil),
	}
	var props []cdx.Property
	if used.Sum != "" {
		props = append(props, cdx.Property{Name: "go:sum", Value: used.Sum})
	}
	if m.Replace != nil {
		props = append(props, cdx.Property{Name: "go:replaces", Value: m.Path + "@" + m.Version})
	}
	if len(props) > 0 {
		c.Properties = &props
	}
	return c
}

// goPURL is the package URL of a Go module: namespace and name split at the
// module path's last slash.
func goPURL(modPath, version string, q packageurl.Qualifiers) string {
	ns, name := path.Split(modPath)
	return packageurl.NewPackageURL(packageurl.TypeGolang, strings.TrimSuffix(ns, "/"), name, version, q, "").ToString()
}

// components of an SBOM by package URL, for checking it against a binary.
func sbomModules(bom *cdx.BOM) (map[string]bool, error) {
	if bom.Components == nil {
		return nil, fmt.Errorf("no components")
	}
	out := map[string]bool{}
	for _, c := range *bom.Components {
		out[c.PackageURL] = true
	}
	return out, nil
}
