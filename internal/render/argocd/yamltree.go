package argocd

import "github.com/regionctl/regionctl/internal/render/encode"

// The per-cluster documents (PerClusterDocs) build their own YAML trees
// (encode.Document): each method adds the members its type's JSON
// encoding gives, leaving out what omitempty leaves out (an empty
// string, slice or map, a nil pointer) and writing null for a nil slice
// or map that it does not; a struct field without omitempty is always
// written. They add a mapping's members in the order the YAML lists them
// (letters after other characters, then by byte), which spares the
// writer its sort. TestTreesMatchJSON holds every method to the JSON
// encoding, field by field, on documents filled at random.

func (a *Application) BuildYAML(t *encode.Tree) {
	t.Str("apiVersion", a.APIVersion)
	t.Str("kind", a.Kind)
	t.Map("metadata")
	a.Metadata.build(t)
	t.End()
	t.Map("spec")
	a.Spec.build(t)
	t.End()
}

func (m *AppMeta) build(t *encode.Tree) {
	if len(m.Finalizers) > 0 {
		t.Strs("finalizers", m.Finalizers)
	}
	if len(m.Labels) > 0 {
		t.StrMap("labels", m.Labels)
	}
	t.Str("name", m.Name)
	t.Str("namespace", m.Namespace)
}

func (s *AppSpec) build(t *encode.Tree) {
	t.Map("destination")
	s.Destination.build(t)
	t.End()
	t.Str("project", s.Project)
	if s.Source != nil {
		t.Map("source")
		s.Source.build(t)
		t.End()
	}
	if len(s.Sources) > 0 {
		t.Seq("sources")
		for i := range s.Sources {
			t.Map("")
			s.Sources[i].build(t)
			t.End()
		}
		t.End()
	}
	t.Map("syncPolicy")
	s.SyncPolicy.build(t)
	t.End()
}

func (s *Source) build(t *encode.Tree) {
	if s.Chart != "" {
		t.Str("chart", s.Chart)
	}
	if d := s.Directory; d != nil {
		t.Map("directory")
		t.Bool("recurse", d.Recurse)
		t.End()
	}
	if h := s.Helm; h != nil {
		t.Map("helm")
		if h.ReleaseName != "" {
			t.Str("releaseName", h.ReleaseName)
		}
		if len(h.ValueFiles) > 0 {
			t.Strs("valueFiles", h.ValueFiles)
		}
		if len(h.ValuesObject) > 0 {
			t.Value("valuesObject", h.ValuesObject)
		}
		t.End()
	}
	if s.Path != "" {
		t.Str("path", s.Path)
	}
	if s.Ref != "" {
		t.Str("ref", s.Ref)
	}
	t.Str("repoURL", s.RepoURL)
	t.Str("targetRevision", s.TargetRevision)
}

func (d *Destination) build(t *encode.Tree) {
	if d.Name != "" {
		t.Str("name", d.Name)
	}
	t.Str("namespace", d.Namespace)
	if d.Server != "" {
		t.Str("server", d.Server)
	}
}

func (p *SyncPolicy) build(t *encode.Tree) {
	if a := p.Automated; a != nil {
		t.Map("automated")
		t.Bool("prune", a.Prune)
		t.Bool("selfHeal", a.SelfHeal)
		t.End()
	}
	if m := p.ManagedNamespaceMetadata; m != nil {
		t.Map("managedNamespaceMetadata")
		if len(m.Labels) > 0 {
			t.StrMap("labels", m.Labels)
		}
		t.End()
	}
	if r := p.Retry; r != nil {
		t.Map("retry")
		if b := r.Backoff; b != nil {
			t.Map("backoff")
			t.Str("duration", b.Duration)
			t.Int("factor", b.Factor)
			t.Str("maxDuration", b.MaxDuration)
			t.End()
		}
		t.Int("limit", r.Limit)
		t.End()
	}
	if len(p.SyncOptions) > 0 {
		t.Strs("syncOptions", p.SyncOptions)
	}
}

func (p *AppProject) BuildYAML(t *encode.Tree) {
	t.Str("apiVersion", p.APIVersion)
	t.Str("kind", p.Kind)
	t.Map("metadata")
	m := &p.Metadata
	if len(m.Annotations) > 0 {
		t.StrMap("annotations", m.Annotations)
	}
	if len(m.Labels) > 0 {
		t.StrMap("labels", m.Labels)
	}
	t.Str("name", m.Name)
	if m.Namespace != "" {
		t.Str("namespace", m.Namespace)
	}
	t.End()
	t.Map("spec")
	s := &p.Spec
	encode.List(t, "clusterResourceWhitelist", s.ClusterResourceWhitelist, func(gk GroupKind) {
		t.Map("")
		t.Str("group", gk.Group)
		t.Str("kind", gk.Kind)
		t.End()
	})
	t.Str("description", s.Description)
	encode.List(t, "destinations", s.Destinations, func(d Destination) {
		t.Map("")
		d.build(t)
		t.End()
	})
	if o := s.OrphanedResources; o != nil {
		t.Map("orphanedResources")
		t.Bool("warn", o.Warn)
		t.End()
	}
	t.Strs("sourceRepos", s.SourceRepos)
	t.End()
}
