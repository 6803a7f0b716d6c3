package rollout

import (
	"strings"
	"testing"
)

func TestSetValueKeepsLayout(t *testing.T) {
	src := "# Sector 1: the first production wave.\norder: 1\nenvironment: production   # prod\n\neks:\n  # pinned while it soaks\n  version: \"1.30\"  # old\n  node_max: 9\n\ntags:\n  team: core\n"
	tests := []struct {
		name string
		path string
		want string
	}{
		{"replace in place", "eks.version", strings.Replace(src, `version: "1.30"  # old`, `version: "1.33"  # old`, 1)},
		{"insert under an existing parent", "eks.extra", strings.Replace(src, "  node_max: 9\n", "  node_max: 9\n  extra: \"1.33\"\n", 1)},
		{"insert a new block at the end", "hypershift.operator_image", src + "hypershift:\n  operator_image: \"1.33\"\n"},
	}
	for _, tt := range tests {
		got, err := SetValue("s.yaml", []byte(src), strings.Split(tt.path, "."), "1.33")
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if string(got) != tt.want {
			t.Errorf("%s:\n%s\nwant:\n%s", tt.name, got, tt.want)
		}
	}
	plain := "eks:\n  version: 1.29 # plain\n"
	if got, err := SetValue("s.yaml", []byte(plain), []string{"eks", "version"}, "1.33"); err != nil || string(got) != "eks:\n  version: \"1.33\" # plain\n" {
		t.Errorf("plain scalar: %q %v", got, err)
	}
	if _, err := SetValue("s.yaml", []byte("eks: {version: \"1.30\", node_max: 3}\n"), []string{"eks", "extra"}, "x"); err == nil || !strings.Contains(err.Error(), "flow style") {
		t.Errorf("flow style: %v", err)
	}
}

func TestRemoveValue(t *testing.T) {
	src := "order: 1\neks:\n  version: \"1.33\" # pin\n  node_max: 9\nhypershift:\n  operator_image: x\n"
	got, err := RemoveValue("s.yaml", []byte(src), []string{"eks", "version"})
	if err != nil || string(got) != "order: 1\neks:\n  node_max: 9\nhypershift:\n  operator_image: x\n" {
		t.Errorf("remove one of two: %q %v", got, err)
	}
	got, err = RemoveValue("s.yaml", []byte(src), []string{"hypershift", "operator_image"})
	if err != nil || string(got) != "order: 1\neks:\n  version: \"1.33\" # pin\n  node_max: 9\n" {
		t.Errorf("remove the only key, and its emptied parent: %q %v", got, err)
	}
}
