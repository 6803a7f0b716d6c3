package kube

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
)

// ErrNotServed says the API server serves no such group, version or kind
// (yet: a CustomResourceDefinition not yet established).
var ErrNotServed = errors.New("not served by the API server")

// Resource is one kind as the API server's discovery names it.
type Resource struct {
	Name       string // the plural, as in the path
	Namespaced bool
}

// discovery caches the API server's answers by group/version.
type discovery struct {
	mu sync.Mutex
	gv map[string]map[string]Resource // group/version → kind → resource
}

// Resource asks the API server's discovery which resource serves kind in
// apiVersion ("v1", "apps/v1"); ErrNotServed when none does.
func (c *Client) Resource(ctx context.Context, apiVersion, kind string) (Resource, error) {
	c.disc.mu.Lock()
	kinds, ok := c.disc.gv[apiVersion]
	c.disc.mu.Unlock()
	if !ok {
		path := "/apis/" + apiVersion
		if !strings.Contains(apiVersion, "/") {
			path = "/api/" + apiVersion
		}
		var list struct {
			Resources []struct {
				Name       string `json:"name"`
				Kind       string `json:"kind"`
				Namespaced bool   `json:"namespaced"`
			} `json:"resources"`
		}
		status, err := c.doStatus(ctx, http.MethodGet, c.Base+path, "", nil, &list)
		if status == http.StatusNotFound {
			return Resource{}, fmt.Errorf("%s: %w", apiVersion, ErrNotServed)
		}
		if err != nil {
			return Resource{}, err
		}
		kinds = map[string]Resource{}
		for _, r := range list.Resources {
			if !strings.Contains(r.Name, "/") { // not a subresource
				kinds[r.Kind] = Resource{Name: r.Name, Namespaced: r.Namespaced}
			}
		}
		c.disc.mu.Lock()
		if c.disc.gv == nil {
			c.disc.gv = map[string]map[string]Resource{}
		}
		c.disc.gv[apiVersion] = kinds
		c.disc.mu.Unlock()
	}
	r, ok := kinds[kind]
	if !ok {
		return Resource{}, fmt.Errorf("%s %s: %w", apiVersion, kind, ErrNotServed)
	}
	return r, nil
}

// Forget drops what discovery learned of apiVersion, so that the next
// Resource asks again (after a CustomResourceDefinition is established).
func (c *Client) Forget(apiVersion string) {
	c.disc.mu.Lock()
	delete(c.disc.gv, apiVersion)
	c.disc.mu.Unlock()
}

// ObjectPath is the API path of an object: its kind's resource, in
// namespace when the kind is namespaced.
func (c *Client) ObjectPath(ctx context.Context, apiVersion, kind, namespace, name string) (string, error) {
	r, err := c.Resource(ctx, apiVersion, kind)
	if err != nil {
		return "", err
	}
	p := "/apis/" + apiVersion
	if !strings.Contains(apiVersion, "/") {
		p = "/api/" + apiVersion
	}
	if r.Namespaced {
		if namespace == "" {
			return "", fmt.Errorf("%s %s is namespaced, and no namespace was given", kind, name)
		}
		p += "/namespaces/" + url.PathEscape(namespace)
	}
	return p + "/" + r.Name + "/" + url.PathEscape(name), nil
}

// Apply server-side applies obj (a decoded manifest: apiVersion, kind,
// metadata.name) as fieldManager, taking over fields other managers hold
// (force), and returns the path it applied to. A namespaced object
// without a namespace goes to namespace.
func (c *Client) Apply(ctx context.Context, obj map[string]any, namespace, fieldManager string) (string, error) {
	apiVersion, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	meta, _ := obj["metadata"].(map[string]any)
	name, _ := meta["name"].(string)
	if apiVersion == "" || kind == "" || name == "" {
		return "", fmt.Errorf("an object without apiVersion, kind or metadata.name")
	}
	r, err := c.Resource(ctx, apiVersion, kind)
	if err != nil {
		return "", err
	}
	if ns, _ := meta["namespace"].(string); ns != "" {
		namespace = ns
	} else if r.Namespaced {
		meta["namespace"] = namespace
	}
	p, err := c.ObjectPath(ctx, apiVersion, kind, namespace, name)
	if err != nil {
		return "", err
	}
	body, err := json.Marshal(obj)
	if err != nil {
		return "", err
	}
	q := url.Values{"fieldManager": {fieldManager}, "force": {"true"}}
	// JSON is YAML: the apply patch type takes it as it is.
	return p, c.do(ctx, http.MethodPatch, c.Base+p+"?"+q.Encode(), "application/apply-patch+yaml", body, nil)
}

// Get reads the object at an API path (from ObjectPath) into into.
func (c *Client) Get(ctx context.Context, path string, into any) error {
	return c.do(ctx, http.MethodGet, c.Base+path, "", nil, into)
}
