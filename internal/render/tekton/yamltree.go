package tekton

import "github.com/regionctl/regionctl/internal/render/encode"

// BuildYAML adds a PipelineRun's members to its YAML tree
// (encode.Document) as its JSON encoding gives them: null for a nil slice
// or map, no timeouts when nil; each mapping's members in the order the
// YAML lists them, which spares the writer its sort. TestTreesMatchJSON
// holds it to the JSON encoding on runs filled at random.
func (r *PipelineRun) BuildYAML(t *encode.Tree) {
	t.Str("apiVersion", r.APIVersion)
	t.Str("kind", r.Kind)
	t.Map("metadata")
	t.Str("generateName", r.Metadata.GenerateName)
	t.StrMap("labels", r.Metadata.Labels)
	t.End()
	t.Map("spec")
	s := &r.Spec
	encode.List(t, "params", s.Params, func(p RunParam) {
		t.Map("")
		t.Str("name", p.Name)
		t.Str("value", p.Value)
		t.End()
	})
	t.Map("pipelineRef")
	t.Str("name", s.PipelineRef.Name)
	t.End()
	t.Map("taskRunTemplate")
	t.Str("serviceAccountName", s.TaskRunTemplate.ServiceAccountName)
	t.End()
	if s.Timeouts != nil {
		t.Map("timeouts")
		t.Str("pipeline", s.Timeouts.Pipeline)
		t.End()
	}
	encode.List(t, "workspaces", s.Workspaces, func(w Workspace) {
		t.Map("")
		t.Str("name", w.Name)
		t.Value("volumeClaimTemplate", w.VolumeClaimTemplate)
		t.End()
	})
	t.End()
}
