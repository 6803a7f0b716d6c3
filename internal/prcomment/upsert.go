package prcomment

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// Comment is one comment of a pull or merge request.
type Comment struct {
	ID     int64
	Author string
	Body   string
}

// Thread is the comments of one pull or merge request.
type Thread interface {
	Comments(ctx context.Context) ([]Comment, error)
	Create(ctx context.Context, body string) (Comment, error)
	Update(ctx context.Context, id int64, body string) (Comment, error)
}

// ErrForbidden is what a Thread returns when the host refuses an edit
// (another author's comment).
var ErrForbidden = errors.New("the host refused the edit")

// MaxBody is the longest comment body GitHub accepts (GitLab accepts more).
const MaxBody = 65536

var keyPattern = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,30}[a-z0-9])?$`)

// CheckKey refuses a key that is not a lower-case DNS label: the marker
// holds it inside an HTML comment.
func CheckKey(key string) error {
	if !keyPattern.MatchString(key) {
		return fmt.Errorf("comment key %q: want a lower-case DNS label", key)
	}
	return nil
}

// Marker is the first line of regionctl's comment for key: an HTML
// comment, invisible when rendered.
func Marker(key string) string { return "<!-- regionctl:comment " + key + " -->" }

// Options says which comment is regionctl's.
type Options struct {
	Key    string // several comments may live side by side, one per key
	Author string // when set, only this author's comment is updated
}

// Result says what Upsert did.
type Result struct {
	Comment Comment
	Created bool
}

// Upsert writes body as regionctl's comment: it updates the comment that
// starts with the key's marker (the first one, by the author when one is
// given), or creates it. The body must fit MaxBody with the marker; fit it
// first (view.Fit).
func Upsert(ctx context.Context, t Thread, opts Options, body string) (Result, error) {
	if err := CheckKey(opts.Key); err != nil {
		return Result{}, err
	}
	marker := Marker(opts.Key)
	full := marker + "\n" + body
	if len(full) > MaxBody {
		return Result{}, fmt.Errorf("the comment has %d bytes with its marker, more than the %d a pull request comment holds", len(full), MaxBody)
	}
	comments, err := t.Comments(ctx)
	if err != nil {
		return Result{}, fmt.Errorf("listing comments: %w", err)
	}
	for _, c := range comments {
		if !strings.HasPrefix(c.Body, marker+"\n") && c.Body != marker {
			continue
		}
		if opts.Author != "" && c.Author != opts.Author {
			continue // someone else copied the marker: not ours to edit
		}
		if c.Body == full {
			return Result{Comment: c}, nil
		}
		updated, err := t.Update(ctx, c.ID, full)
		if errors.Is(err, ErrForbidden) {
			continue // not ours after all
		}
		if err != nil {
			return Result{}, fmt.Errorf("updating comment %d: %w", c.ID, err)
		}
		return Result{Comment: updated}, nil
	}
	created, err := t.Create(ctx, full)
	if err != nil {
		return Result{}, fmt.Errorf("creating the comment: %w", err)
	}
	return Result{Comment: created, Created: true}, nil
}
