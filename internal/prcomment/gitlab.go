package prcomment

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// GitLab is the notes of a merge request, through GitLab's REST API (v4).
// Three calls do not justify GitLab's client library and its dependencies.
type GitLab struct {
	api     *url.URL
	token   string
	project string // numeric id or URL-encoded path
	mr      int
	http    *http.Client
}

// NewGitLab talks to api (CI_API_V4_URL) with a token that may write notes
// (a project or personal access token: CI_JOB_TOKEN may not).
func NewGitLab(api *url.URL, token, project string, mr int) *GitLab {
	return &GitLab{api: api, token: token, project: project, mr: mr, http: &http.Client{Timeout: time.Minute, CheckRedirect: sameOrigin}}
}

// sameOrigin refuses to follow a redirect to another scheme, host or port:
// Go's client carries a request's own headers (the PRIVATE-TOKEN among
// them) to wherever a redirect leads, plain http included.
func sameOrigin(req *http.Request, via []*http.Request) error {
	first := via[0].URL
	if req.URL.Scheme != first.Scheme || req.URL.Host != first.Host {
		return fmt.Errorf("refusing to follow a redirect from %s://%s to %s://%s with the token", first.Scheme, first.Host, req.URL.Scheme, req.URL.Host)
	}
	if len(via) >= 5 {
		return fmt.Errorf("refusing more than %d redirects", len(via))
	}
	return nil
}

type gitlabNote struct {
	ID     int64  `json:"id"`
	Body   string `json:"body"`
	System bool   `json:"system"`
	Author struct {
		Username string `json:"username"`
	} `json:"author"`
}

func (g *GitLab) notesURL(page int, id int64) string {
	u := strings.TrimSuffix(g.api.String(), "/") + "/projects/" + url.PathEscape(g.project) + fmt.Sprintf("/merge_requests/%d/notes", g.mr)
	if id != 0 {
		u += "/" + strconv.FormatInt(id, 10)
	}
	if page > 0 {
		u += "?" + url.Values{"per_page": {"100"}, "page": {strconv.Itoa(page)}, "sort": {"asc"}}.Encode()
	}
	return u
}

func (g *GitLab) do(ctx context.Context, method, target string, body any, out any) (*http.Response, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, target, rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("PRIVATE-TOKEN", g.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := g.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusForbidden || (method == http.MethodPut && resp.StatusCode == http.StatusNotFound) {
		return resp, ErrForbidden
	}
	if resp.StatusCode/100 != 2 {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return resp, fmt.Errorf("%s %s: %s: %s", method, req.URL.Path, resp.Status, bytes.TrimSpace(msg))
	}
	return resp, json.NewDecoder(io.LimitReader(resp.Body, 64<<20)).Decode(out)
}

func (g *GitLab) Comments(ctx context.Context) ([]Comment, error) {
	var out []Comment
	for page := 1; ; {
		var notes []gitlabNote
		resp, err := g.do(ctx, http.MethodGet, g.notesURL(page, 0), nil, &notes)
		if err != nil {
			return nil, err
		}
		for _, n := range notes {
			if !n.System {
				out = append(out, Comment{ID: n.ID, Author: n.Author.Username, Body: n.Body})
			}
		}
		next, err := strconv.Atoi(resp.Header.Get("X-Next-Page"))
		if err != nil || next <= page {
			return out, nil
		}
		page = next
	}
}

func (g *GitLab) Create(ctx context.Context, body string) (Comment, error) {
	var n gitlabNote
	if _, err := g.do(ctx, http.MethodPost, g.notesURL(0, 0), map[string]string{"body": body}, &n); err != nil {
		return Comment{}, err
	}
	return Comment{ID: n.ID, Author: n.Author.Username, Body: n.Body}, nil
}

func (g *GitLab) Update(ctx context.Context, id int64, body string) (Comment, error) {
	var n gitlabNote
	if _, err := g.do(ctx, http.MethodPut, g.notesURL(0, id), map[string]string{"body": body}, &n); err != nil {
		return Comment{}, err
	}
	return Comment{ID: n.ID, Author: n.Author.Username, Body: n.Body}, nil
}
