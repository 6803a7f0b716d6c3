package prcomment

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/google/go-github/v88/github"
)

// GitHub is the comments of a pull request, through GitHub's REST API
// (issue comments: a pull request is an issue).
type GitHub struct {
	client      *github.Client
	owner, repo string
	number      int
}

// NewGitHub talks to api (https://api.github.com, or a GitHub Enterprise
// Server's https://host/api/v3) with token.
func NewGitHub(api *url.URL, token, repository string, number int) (*GitHub, error) {
	base := strings.TrimSuffix(api.String(), "/") + "/"
	c, err := github.NewClient(github.WithAuthToken(token), github.WithURLs(&base, nil), github.WithTimeout(time.Minute))
	if err != nil {
		return nil, err
	}
	owner, repo, _ := strings.Cut(repository, "/")
	return &GitHub{client: c, owner: owner, repo: repo, number: number}, nil
}

func (g *GitHub) Comments(ctx context.Context) ([]Comment, error) {
	opts := &github.IssueListCommentsOptions{ListOptions: github.ListOptions{PerPage: 100}}
	var out []Comment
	for {
		page, resp, err := g.client.Issues.ListComments(ctx, g.owner, g.repo, g.number, opts)
		if err != nil {
			return nil, err
		}
		for _, c := range page {
			out = append(out, Comment{ID: c.GetID(), Author: c.GetUser().GetLogin(), Body: c.GetBody()})
		}
		if resp.NextPage == 0 {
			return out, nil
		}
		opts.Page = resp.NextPage
	}
}

func (g *GitHub) Create(ctx context.Context, body string) (Comment, error) {
	c, _, err := g.client.Issues.CreateComment(ctx, g.owner, g.repo, g.number, &github.IssueComment{Body: &body})
	if err != nil {
		return Comment{}, err
	}
	return Comment{ID: c.GetID(), Author: c.GetUser().GetLogin(), Body: c.GetBody()}, nil
}

func (g *GitHub) Update(ctx context.Context, id int64, body string) (Comment, error) {
	c, _, err := g.client.Issues.EditComment(ctx, g.owner, g.repo, id, &github.IssueComment{Body: &body})
	var rerr *github.ErrorResponse
	if errors.As(err, &rerr) && rerr.Response != nil && (rerr.Response.StatusCode == http.StatusForbidden || rerr.Response.StatusCode == http.StatusNotFound) {
		return Comment{}, ErrForbidden
	}
	if err != nil {
		return Comment{}, err
	}
	return Comment{ID: c.GetID(), Author: c.GetUser().GetLogin(), Body: c.GetBody()}, nil
}
