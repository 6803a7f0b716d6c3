package awsemu

import (
	"compress/gzip"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
)

// REST services (S3, EKS, API Gateway, IoT, Route 53) name the operation
// by method and path only. The gate finds it the way the SDKs build it:
// from the AWS service models that botocore ships, which the machine has
// wherever moto (a botocore user) is installed.

// restOp is one REST operation of a service model.
type restOp struct {
	name   string
	method string
	path   []segment
	query  map[string]string // literal query keys of the request URI ("" value: any)
	score  int               // how literal the template is: the most literal match wins
}

type segment struct {
	literal string
	label   string // {label}
	greedy  bool   // {label+}
}

// restModels holds the REST operations of the services the gate routes.
type restModels struct {
	mu  sync.Mutex
	dir string // botocore's data directory
	ops map[string][]restOp
}

// modelDirs are the botocore model directories of each signing name whose
// protocol is REST.
var modelDirs = map[string][]string{
	"s3":         {"s3"},
	"eks":        {"eks"},
	"apigateway": {"apigatewayv2", "apigateway"},
	"iot":        {"iot"},
	"route53":    {"route53"},
	"lambda":     {"lambda"},
}

// botocoreData finds botocore's data directory: REGIONCTL_BOTOCORE_DATA,
// else the one of the python3 that has botocore (moto's interpreter).
func botocoreData() (string, error) {
	if d := os.Getenv("REGIONCTL_BOTOCORE_DATA"); d != "" {
		return d, nil
	}
	out, err := exec.Command("python3", "-c", "import botocore, os; print(os.path.join(os.path.dirname(botocore.__file__), 'data'))").Output()
	if err != nil {
		return "", fmt.Errorf("finding botocore's service models (set REGIONCTL_BOTOCORE_DATA): %w", err)
	}
	return strings.TrimSpace(string(out)), nil
}

// operations returns the REST operations of a signing name, loading its
// models once.
func (m *restModels) operations(service string) ([]restOp, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if ops, ok := m.ops[service]; ok {
		return ops, nil
	}
	var all []restOp
	for _, dir := range modelDirs[service] {
		ops, err := loadModel(filepath.Join(m.dir, dir))
		if err != nil {
			return nil, err
		}
		all = append(all, ops...)
	}
	if m.ops == nil {
		m.ops = map[string][]restOp{}
	}
	m.ops[service] = all
	return all, nil
}

// loadModel reads the newest service-2.json(.gz) of a model directory.
func loadModel(dir string) ([]restOp, error) {
	versions, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("reading the service model %s: %w", dir, err)
	}
	var names []string
	for _, v := range versions {
		if v.IsDir() {
			names = append(names, v.Name())
		}
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("no service model version in %s", dir)
	}
	sort.Strings(names)
	base := filepath.Join(dir, names[len(names)-1], "service-2.json")
	var doc struct {
		Operations map[string]struct {
			HTTP struct {
				Method     string `json:"method"`
				RequestURI string `json:"requestUri"`
			} `json:"http"`
			Input struct {
				Shape string `json:"shape"`
			} `json:"input"`
		} `json:"operations"`
		Shapes map[string]struct {
			Required []string `json:"required"`
			Members  map[string]struct {
				Location     string `json:"location"`
				LocationName string `json:"locationName"`
			} `json:"members"`
		} `json:"shapes"`
	}
	if f, err := os.Open(base + ".gz"); err == nil {
		defer f.Close()
		z, err := gzip.NewReader(f)
		if err != nil {
			return nil, err
		}
		if err := json.NewDecoder(z).Decode(&doc); err != nil {
			return nil, fmt.Errorf("reading %s.gz: %w", base, err)
		}
	} else {
		b, err := os.ReadFile(base)
		if err != nil {
			return nil, err
		}
		if err := json.Unmarshal(b, &doc); err != nil {
			return nil, fmt.Errorf("reading %s: %w", base, err)
		}
	}
	var ops []restOp
	for name, o := range doc.Operations {
		op := parseTemplate(name, o.HTTP.Method, o.HTTP.RequestURI)
		// A required query parameter tells operations of one path apart
		// (DeleteObject and AbortMultipartUpload's uploadId).
		in := doc.Shapes[o.Input.Shape]
		for _, r := range in.Required {
			if m := in.Members[r]; m.Location == "querystring" {
				if _, ok := op.query[m.LocationName]; !ok {
					op.query[m.LocationName] = ""
					op.score += 3
				}
			}
		}
		ops = append(ops, op)
	}
	sort.Slice(ops, func(i, j int) bool { return ops[i].name < ops[j].name })
	return ops, nil
}

func parseTemplate(name, method, uri string) restOp {
	op := restOp{name: name, method: method, query: map[string]string{}}
	p, q, _ := strings.Cut(uri, "?")
	for _, s := range strings.Split(strings.Trim(p, "/"), "/") {
		switch {
		case s == "":
		case strings.HasPrefix(s, "{") && strings.HasSuffix(s, "+}"):
			op.path = append(op.path, segment{label: s[1 : len(s)-2], greedy: true})
		case strings.HasPrefix(s, "{"):
			op.path = append(op.path, segment{label: strings.Trim(s, "{}")})
		default:
			op.path = append(op.path, segment{literal: s})
			op.score += 2
		}
	}
	if q != "" {
		for _, kv := range strings.Split(q, "&") {
			k, v, _ := strings.Cut(kv, "=")
			op.query[k] = v
			op.score += 3
		}
	}
	return op
}

// match finds the operation of a request and its URI labels.
func matchREST(ops []restOp, method, rawPath string, query url.Values) (string, map[string]string, bool) {
	var segs []string
	for _, s := range strings.Split(strings.TrimPrefix(rawPath, "/"), "/") {
		u, err := url.PathUnescape(s)
		if err != nil {
			u = s
		}
		segs = append(segs, u)
	}
	if len(segs) == 1 && segs[0] == "" {
		segs = nil
	}
	best, bestScore := -1, -1
	var bestLabels map[string]string
	for i, op := range ops {
		if op.method != method {
			continue
		}
		labels, ok := matchPath(op.path, segs)
		if !ok {
			continue
		}
		okQuery := true
		for k, v := range op.query {
			if !query.Has(k) || (v != "" && query.Get(k) != v) {
				okQuery = false
				break
			}
		}
		if okQuery && op.score > bestScore {
			best, bestScore, bestLabels = i, op.score, labels
		}
	}
	if best < 0 {
		return "", nil, false
	}
	return ops[best].name, bestLabels, true
}

func matchPath(tpl []segment, segs []string) (map[string]string, bool) {
	labels := map[string]string{}
	for i, s := range tpl {
		switch {
		case s.greedy:
			if i >= len(segs) {
				return nil, false
			}
			labels[s.label] = strings.Join(segs[i:], "/")
			return labels, true
		case i >= len(segs):
			return nil, false
		case s.label != "":
			if segs[i] == "" {
				return nil, false
			}
			labels[s.label] = segs[i]
		case s.literal != segs[i]:
			return nil, false
		}
	}
	return labels, len(tpl) == len(segs)
}
