package awsemu

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// request is one AWS API request, decoded enough to name its operation and
// read its parameters, whatever the service's protocol.
type request struct {
	Service   string // the SigV4 signing name: s3, iam, sts, ec2, ...
	Region    string // the SigV4 scope's region: aws:RequestedRegion
	Protocol  string // query, ec2, json, rest-json, rest-xml
	Operation string
	Form      url.Values        // query protocol parameters
	JSON      map[string]any    // json and rest-json bodies
	Labels    map[string]string // REST URI labels ({Bucket}, {Key}, {name})
	Query     url.Values
	Header    http.Header
	Method    string
	Path      string
	// role is the ARN (with its path) of the existing role an IAM
	// request acts on, as the authorization resolved it.
	role string
}

// protocols of the signing names whose protocol is not REST.
var queryServices = map[string]string{
	"iam": "query", "sts": "query", "ec2": "ec2", "autoscaling": "query", "elasticloadbalancing": "query",
	"rds": "query", "cloudformation": "query", "sns": "query", "sqs": "query", "elasticache": "query",
}

// decode names the operation of r (whose body is body).
func decode(r *http.Request, body []byte, auth sigv4, models *restModels) (*request, error) {
	req := &request{Service: auth.Service, Region: auth.Region, Query: r.URL.Query(), Header: r.Header, Method: r.Method, Path: r.URL.EscapedPath()}
	ctype := r.Header.Get("Content-Type")
	switch {
	case r.Header.Get("X-Amz-Target") != "":
		t := r.Header.Get("X-Amz-Target")
		req.Protocol, req.Operation = "json", t[strings.LastIndex(t, ".")+1:]
		req.JSON = map[string]any{}
		if len(body) > 0 {
			if err := json.Unmarshal(body, &req.JSON); err != nil {
				return nil, fmt.Errorf("reading the JSON body of %s: %w", t, err)
			}
		}
	case queryServices[auth.Service] != "" || strings.HasPrefix(ctype, "application/x-www-form-urlencoded") && auth.Service != "s3":
		req.Protocol = queryServices[auth.Service]
		if req.Protocol == "" {
			req.Protocol = "query"
		}
		form, err := url.ParseQuery(string(body))
		if err != nil {
			return nil, fmt.Errorf("reading the form of a %s request: %w", auth.Service, err)
		}
		for k, v := range req.Query {
			form[k] = append(form[k], v...)
		}
		req.Form, req.Operation = form, form.Get("Action")
	default:
		req.Protocol = "rest-json"
		if auth.Service == "s3" || auth.Service == "route53" {
			req.Protocol = "rest-xml"
		}
		ops, err := models.operations(auth.Service)
		if err != nil {
			return nil, err
		}
		op, labels, ok := matchREST(ops, r.Method, r.URL.EscapedPath(), req.Query)
		if !ok {
			return req, nil // unmapped: the gate denies it
		}
		req.Operation, req.Labels = op, labels
		if req.Protocol == "rest-json" && len(body) > 0 && strings.Contains(ctype, "json") {
			req.JSON = map[string]any{}
			_ = json.Unmarshal(body, &req.JSON)
		}
	}
	if req.Operation == "" {
		return req, nil
	}
	return req, nil
}

// strs is a JSON request's list of strings.
func (r *request) strs(name string) []string {
	var out []string
	if l, ok := r.JSON[name].([]any); ok {
		for _, v := range l {
			if s, ok := v.(string); ok {
				out = append(out, s)
			}
		}
	}
	return out
}

// str reads a top-level string parameter, whatever the protocol.
func (r *request) str(name string) string {
	if r.Form != nil {
		return r.Form.Get(name)
	}
	if v, ok := r.JSON[name].(string); ok {
		return v
	}
	if v, ok := r.JSON[lowerFirst(name)].(string); ok {
		return v
	}
	return r.Labels[name]
}

func lowerFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToLower(s[:1]) + s[1:]
}

// jsonTags reads a JSON Tags parameter: a list of {Key, Value} or a map.
func (r *request) jsonTags(name string) map[string]string {
	tags := map[string]string{}
	switch t := r.JSON[name].(type) {
	case []any:
		for _, e := range t {
			if m, ok := e.(map[string]any); ok {
				k, _ := m["Key"].(string)
				v, _ := m["Value"].(string)
				tags[k] = v
			}
		}
	case map[string]any:
		for k, v := range t {
			s, _ := v.(string)
			tags[k] = s
		}
	}
	return tags
}
