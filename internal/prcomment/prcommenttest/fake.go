// Package prcommenttest is a fake of the comment APIs of GitHub and GitLab,
// for tests of what posts review comments.
package prcommenttest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// Host is a pull request's comments as GitHub and GitLab keep them:
// each comment has an author, only the author may edit it, and lists come
// in pages.
type Host struct {
	mu       sync.Mutex
	Comments []Comment
	nextID   int64
	Token    string // the token the poster must present
	User     string // whom the token belongs to
	Writes   int
	// editOthers: the token may edit anyone's comment, as a GitHub token
	// with write access to the repository may.
	EditOthers bool
}

type Comment struct {
	ID           int64
	Author, Body string
}

// Add adds a comment by author.
func (f *Host) Add(author, body string) {
	f.nextID++
	f.Comments = append(f.Comments, Comment{f.nextID, author, body})
}

// Ours lists the comments of the token's user.
func (f *Host) Ours() []Comment {
	var out []Comment
	for _, c := range f.Comments {
		if c.Author == f.User {
			out = append(out, c)
		}
	}
	return out
}

// page returns the page'th slice of per comments and whether more follow.
func (f *Host) page(r *http.Request) ([]Comment, int) {
	per, _ := strconv.Atoi(r.URL.Query().Get("per_page"))
	if per <= 0 || per > 100 {
		per = 30
	}
	page, _ := strconv.Atoi(r.URL.Query().Get("page"))
	if page < 1 {
		page = 1
	}
	start := (page - 1) * per
	if start > len(f.Comments) {
		start = len(f.Comments)
	}
	end := min(start+per, len(f.Comments))
	next := 0
	if end < len(f.Comments) {
		next = page + 1
	}
	return f.Comments[start:end], next
}

func (f *Host) edit(w http.ResponseWriter, id int64, body string, render func(Comment) any) {
	for i, c := range f.Comments {
		if c.ID == id {
			if c.Author != f.User && !f.EditOthers {
				http.Error(w, `{"message":"Forbidden"}`, http.StatusForbidden)
				return
			}
			f.Comments[i].Body = body
			f.Writes++
			json.NewEncoder(w).Encode(render(f.Comments[i]))
			return
		}
	}
	http.NotFound(w, nil)
}

func readBody(r *http.Request) string {
	var in struct{ Body string }
	json.NewDecoder(r.Body).Decode(&in)
	return in.Body
}

// GitHub serves the three calls GitHub's REST API answers, under
// /repos/o/r/issues/7/comments and /repos/o/r/issues/comments/{id}.
func (f *Host) GitHub(t *testing.T) *httptest.Server {
	render := func(c Comment) any {
		return map[string]any{"id": c.ID, "body": c.Body, "user": map[string]any{"login": c.Author}}
	}
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		if r.Header.Get("Authorization") != "Bearer "+f.Token {
			http.Error(w, `{"message":"Bad credentials"}`, http.StatusUnauthorized)
			return
		}
		switch {
		case r.URL.Path == "/repos/o/r/issues/7/comments" && r.Method == http.MethodGet:
			page, next := f.page(r)
			if next > 0 {
				u := *r.URL
				q := u.Query()
				q.Set("page", strconv.Itoa(next))
				u.RawQuery = q.Encode()
				w.Header().Set("Link", fmt.Sprintf(`<http://%s%s>; rel="next"`, r.Host, u.String()))
			}
			out := []any{}
			for _, c := range page {
				out = append(out, render(c))
			}
			json.NewEncoder(w).Encode(out)
		case r.URL.Path == "/repos/o/r/issues/7/comments" && r.Method == http.MethodPost:
			f.Add(f.User, readBody(r))
			f.Writes++
			w.WriteHeader(http.StatusCreated)
			json.NewEncoder(w).Encode(render(f.Comments[len(f.Comments)-1]))
		case strings.HasPrefix(r.URL.Path, "/repos/o/r/issues/comments/") && r.Method == http.MethodPatch:
			id, _ := strconv.ParseInt(strings.TrimPrefix(r.URL.Path, "/repos/o/r/issues/comments/"), 10, 64)
			f.edit(w, id, readBody(r), render)
		default:
			t.Errorf("unexpected call %s %s", r.Method, r.URL)
			http.NotFound(w, r)
		}
	}))
}

// GitLab serves GitLab's notes API for project group/proj, merge request 7.
func (f *Host) GitLab(t *testing.T) *httptest.Server {
	render := func(c Comment) any {
		return map[string]any{"id": c.ID, "body": c.Body, "system": false, "author": map[string]any{"username": c.Author}}
	}
	const notes = "/api/v4/projects/group%2Fproj/merge_requests/7/notes"
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		if r.Header.Get("PRIVATE-TOKEN") != f.Token {
			http.Error(w, `{"message":"401 Unauthorized"}`, http.StatusUnauthorized)
			return
		}
		path := r.URL.EscapedPath()
		switch {
		case path == notes && r.Method == http.MethodGet:
			page, next := f.page(r)
			if next > 0 {
				w.Header().Set("X-Next-Page", strconv.Itoa(next))
			}
			out := []any{map[string]any{"id": 999999, "body": "added 1 commit", "system": true}}
			for _, c := range page {
				out = append(out, render(c))
			}
			json.NewEncoder(w).Encode(out)
		case path == notes && r.Method == http.MethodPost:
			f.Add(f.User, readBody(r))
			f.Writes++
			w.WriteHeader(http.StatusCreated)
			json.NewEncoder(w).Encode(render(f.Comments[len(f.Comments)-1]))
		case strings.HasPrefix(path, notes+"/") && r.Method == http.MethodPut:
			id, _ := strconv.ParseInt(strings.TrimPrefix(path, notes+"/"), 10, 64)
			f.edit(w, id, readBody(r), render)
		default:
			t.Errorf("unexpected call %s %s", r.Method, path)
			http.NotFound(w, r)
		}
	}))
}
