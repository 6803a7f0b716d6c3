package prcomment_test

import (
	"context"
	"net/url"
	"strings"
	"testing"

	. "github.com/regionctl/regionctl/internal/prcomment"
	"github.com/regionctl/regionctl/internal/prcomment/prcommenttest"
)

// hosts runs a test against GitHub's and GitLab's fakes alike.
func hosts(t *testing.T, test func(t *testing.T, f *prcommenttest.Host, thread Thread)) {
	for _, host := range []string{"github", "gitlab"} {
		t.Run(host, func(t *testing.T) {
			f := &prcommenttest.Host{Token: "s3cr3t", User: "regionctl-bot", EditOthers: host == "github"}
			var thread Thread
			if host == "github" {
				srv := f.GitHub(t)
				t.Cleanup(srv.Close)
				u, _ := url.Parse(srv.URL)
				g, err := NewGitHub(u, f.Token, "o/r", 7)
				if err != nil {
					t.Fatal(err)
				}
				thread = g
			} else {
				srv := f.GitLab(t)
				t.Cleanup(srv.Close)
				u, _ := url.Parse(srv.URL + "/api/v4")
				thread = NewGitLab(u, f.Token, "group/proj", 7)
			}
			test(t, f, thread)
		})
	}
}

func TestOneCommentUpdatedInPlace(t *testing.T) {
	hosts(t, func(t *testing.T, f *prcommenttest.Host, thread Thread) {
		ctx := context.Background()
		// 150 comments of reviewers first: regionctl's lands on page 2.
		for i := 0; i < 150; i++ {
			f.Add("reviewer", "looks good")
		}
		opts := Options{Key: "review", Author: "regionctl-bot"}
		r, err := Upsert(ctx, thread, opts, "first push")
		if err != nil || !r.Created {
			t.Fatalf("first push: %+v, %v", r, err)
		}
		for i := 0; i < 60; i++ {
			f.Add("reviewer", "another")
		}
		r, err = Upsert(ctx, thread, opts, "second push")
		if err != nil || r.Created {
			t.Fatalf("second push: %+v, %v", r, err)
		}
		ours := f.Ours()
		if len(ours) != 1 || ours[0].Body != Marker("review")+"\nsecond push" {
			t.Fatalf("regionctl's comments: %+v", ours)
		}
		// The same body again writes nothing.
		writes := f.Writes
		if _, err := Upsert(ctx, thread, opts, "second push"); err != nil || f.Writes != writes {
			t.Errorf("an unchanged body wrote (%d writes, %v)", f.Writes-writes, err)
		}
		// Another key is another comment.
		if r, err := Upsert(ctx, thread, Options{Key: "staging"}, "x"); err != nil || !r.Created {
			t.Errorf("a second key: %+v, %v", r, err)
		}
	})
}

func TestACopiedMarkerIsNotOurs(t *testing.T) {
	hosts(t, func(t *testing.T, f *prcommenttest.Host, thread Thread) {
		ctx := context.Background()
		f.Add("mallory", Marker("review")+"\nI wrote this")
		// With the author known, mallory's comment is passed over (a GitHub
		// token that may write to the repository could edit it). Without
		// it, GitLab refuses the edit and a comment of our own is made.
		cases := []Options{{Key: "review", Author: "regionctl-bot"}}
		if !f.EditOthers {
			cases = append(cases, Options{Key: "review"})
		}
		for _, opts := range cases {
			r, err := Upsert(ctx, thread, opts, "the review")
			if err != nil {
				t.Fatal(err)
			}
			if f.Comments[0].Body != Marker("review")+"\nI wrote this" {
				t.Fatalf("mallory's comment was changed")
			}
			if len(f.Ours()) != 1 || r.Comment.Author != "regionctl-bot" {
				t.Fatalf("regionctl's comments: %+v", f.Ours())
			}
		}
	})
}

func TestRefusals(t *testing.T) {
	hosts(t, func(t *testing.T, f *prcommenttest.Host, thread Thread) {
		ctx := context.Background()
		if _, err := Upsert(ctx, thread, Options{Key: "review"}, strings.Repeat("x", MaxBody)); err == nil {
			t.Error("a body over the limit was posted")
		}
		if _, err := Upsert(ctx, thread, Options{Key: "Review --!>"}, "x"); err == nil {
			t.Error("a key that could end the marker was taken")
		}
		f.Token = "rotated"
		if _, err := Upsert(ctx, thread, Options{Key: "review"}, "x"); err == nil || !strings.Contains(err.Error(), "401") {
			t.Errorf("a refused token: %v", err)
		}
		if len(f.Comments) != 0 {
			t.Errorf("comments written: %+v", f.Comments)
		}
	})
}
