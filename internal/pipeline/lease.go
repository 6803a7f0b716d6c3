package pipeline

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
)

// lease is the record a run leaves next to a state object while it runs
// Terraform on it, so that another run can name it, and can tell when it
// died: its heartbeat moves Expires forward while it lives.
type lease struct {
	Run       string    `json:"run"` // the unique id of the run holding it
	Process   string    `json:"process,omitempty"`
	RequestID string    `json:"request_id"`
	Pipeline  string    `json:"pipeline"`
	Cluster   string    `json:"cluster"`
	Host      string    `json:"host"`
	PID       int       `json:"pid"`
	Started   time.Time `json:"started"`
	Expires   time.Time `json:"expires"`
	Commit    string    `json:"commit,omitempty"`
}

func (l lease) String() string {
	return fmt.Sprintf("regionctl run %s (%s pipeline, pid %d on %s, since %s)", l.RequestID, l.Pipeline, l.PID, l.Host, l.Started.UTC().Format(time.RFC3339))
}

// LockHeldError says another run holds a cluster's state.
type LockHeldError struct {
	State  string
	Holder string
}

func (e *LockHeldError) Error() string {
	return fmt.Sprintf("the state %s is locked by %s; wait for it to finish, or for its lease to expire if it died", e.State, e.Holder)
}

func leaseOf(state Object) Object {
	state.Key += ".regionctl-run"
	return state
}

func (r *Runner) ttl() time.Duration {
	if r.LeaseTTL > 0 {
		return r.LeaseTTL
	}
	return 10 * time.Minute
}

func (r *Runner) mine(p *Plan, s Step) lease {
	now := r.now()
	return lease{Run: r.runID(), Process: r.Process, RequestID: p.RequestID, Pipeline: p.Pipeline, Cluster: s.Cluster, Host: r.Host, PID: r.PID, Started: now, Expires: now.Add(r.ttl()), Commit: r.Commit}
}

// runID is RunID, made once from 128 random bits when not set.
func (r *Runner) runID() string {
	r.runOnce.Do(func() {
		if r.RunID == "" {
			var b [16]byte
			if _, err := rand.Read(b[:]); err != nil {
				panic(err) // crypto/rand does not fail on supported systems
			}
			r.RunID = hex.EncodeToString(b[:])
		}
	})
	return r.RunID
}

// acquire takes the run lease of a state object. A lease whose heartbeat
// stopped (it expired), or left by a process of this process space (the
// same boot and PID namespace, not merely the same hostname) that is gone,
// is taken over (stale is true), wherever its run ran: a retried pod
// recovers a dead run's lease. The take-over replaces exactly the lease
// that was read (If-Match on its ETag), so of two runs taking over the
// same dead lease one wins and the other waits. A live lease is waited
// for, up to LeaseWait. It returns the ETag of the lease held.
func (r *Runner) acquire(ctx context.Context, p *Plan, s Step, state Object) (stale bool, tag string, err error) {
	obj := leaseOf(state)
	deadline := r.now().Add(r.LeaseWait)
	for {
		mine, _ := json.Marshal(r.mine(p, s))
		err := r.Cloud.PutIfAbsent(ctx, Credentials{}, obj, mine)
		if err == nil {
			if _, tag, err = r.leaseHeld(ctx, p, obj); err != nil {
				return false, "", err
			}
			return stale, tag, nil
		}
		if !errors.Is(err, ErrExists) {
			return false, "", fmt.Errorf("taking the run lease %s: %w", state, err)
		}
		body, tag, err := r.Cloud.GetVersion(ctx, Credentials{}, obj)
		if errors.Is(err, ErrNotFound) {
			continue // released between the two calls
		}
		if err != nil {
			return false, "", fmt.Errorf("reading the run lease of %s: %w", state, err)
		}
		var held lease
		if json.Unmarshal(body, &held) != nil {
			return false, "", &LockHeldError{State: state.String(), Holder: "an unreadable lease " + obj.Key}
		}
		dead := held.Process != "" && held.Process == r.Process && held.Run != r.runID() && r.Alive != nil && !r.Alive(held.PID)
		expired := !held.Expires.IsZero() && r.now().After(held.Expires)
		if dead || expired {
			switch tag, err := r.Cloud.PutIfMatch(ctx, Credentials{}, obj, mine, tag); {
			case err == nil:
				return true, tag, nil
			case errors.Is(err, ErrChanged), errors.Is(err, ErrNotFound):
				continue // another run came first: look again
			default:
				return false, "", fmt.Errorf("taking over the run lease %s: %w", state, err)
			}
		}
		if !r.now().Before(deadline) {
			holder := held.String()
			if !held.Expires.IsZero() {
				holder += ", lease until " + held.Expires.UTC().Format(time.RFC3339)
			}
			return false, "", &LockHeldError{State: state.String(), Holder: holder}
		}
		select {
		case <-ctx.Done():
			return false, "", ctx.Err()
		case <-time.After(min(5*time.Second, r.ttl()/4, time.Until(deadline)+time.Millisecond)):
		}
	}
}

// leaseHeld reads the lease back and checks it is this run's.
func (r *Runner) leaseHeld(ctx context.Context, p *Plan, obj Object) (lease, string, error) {
	body, tag, err := r.Cloud.GetVersion(ctx, Credentials{}, obj)
	if err != nil {
		return lease{}, "", fmt.Errorf("reading back the run lease %s: %w", obj, err)
	}
	var held lease
	if json.Unmarshal(body, &held) != nil || !r.ours(p, held) {
		return lease{}, "", fmt.Errorf("the run lease %s was taken by another run as it was written", obj)
	}
	return held, tag, nil
}

func (r *Runner) ours(p *Plan, l lease) bool {
	return l.Run == r.runID() && l.RequestID == p.RequestID
}

// heartbeat moves the lease's expiry forward while the run lives, every
// third of its TTL, each time replacing exactly the lease it holds. When
// the lease is no longer this run's (it was taken over), or a renewal
// failed and the next could only come after the lease expires, the run is
// fenced: lost is called, which cancels the run's work, so that two runs
// never apply one state and a run never works on past its lease. release
// removes the lease if it is still this run's.
func (r *Runner) heartbeat(ctx context.Context, p *Plan, state Object, tag string, lost func(error)) (release func()) {
	obj := leaseOf(state)
	done, finished := make(chan struct{}), make(chan struct{})
	var mu sync.Mutex
	current := tag
	every := r.ttl() / 3
	go func() {
		defer close(finished)
		tick := time.NewTicker(every)
		defer tick.Stop()
		expires := r.now().Add(r.ttl()) // as acquire wrote it, at the latest
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			mu.Lock()
			// A renewal that hangs must not outlast the lease.
			rctx, cancel := context.WithTimeout(ctx, every)
			next, err := r.renew(rctx, p, obj, &current)
			cancel()
			mu.Unlock()
			switch {
			case err == nil:
				expires = next
			case errors.Is(err, errNotOurs):
				lost(fmt.Errorf("the run lease of %s was taken over by another run: stopping", state))
				return
			case !r.now().Add(every).Before(expires):
				lost(fmt.Errorf("the run lease of %s could not be renewed, and expires at %s, before the next try (%v): stopping", state, expires.UTC().Format(time.RFC3339Nano), err))
				return
			}
		}
	}()
	return func() {
		close(done)
		<-finished
		mu.Lock()
		defer mu.Unlock()
		// Released even when the step failed or was cancelled, but only
		// while it is this run's lease.
		_ = r.Cloud.DeleteIfMatch(context.WithoutCancel(ctx), Credentials{}, obj, current)
	}
}

var errNotOurs = errors.New("the lease is not this run's")

func (r *Runner) renew(ctx context.Context, p *Plan, obj Object, tag *string) (time.Time, error) {
	body, got, err := r.Cloud.GetVersion(ctx, Credentials{}, obj)
	if errors.Is(err, ErrNotFound) {
		return time.Time{}, errNotOurs
	}
	if err != nil {
		return time.Time{}, err
	}
	var held lease
	if json.Unmarshal(body, &held) != nil || !r.ours(p, held) {
		return time.Time{}, errNotOurs
	}
	held.Expires = r.now().Add(r.ttl())
	b, _ := json.Marshal(held)
	now, err := r.Cloud.PutIfMatch(ctx, Credentials{}, obj, b, got)
	switch {
	case err == nil:
		*tag = now
		return held.Expires, nil
	case errors.Is(err, ErrChanged), errors.Is(err, ErrNotFound):
		return time.Time{}, errNotOurs
	}
	return time.Time{}, err
}

// History answers questions about the repository's commits.
type History interface {
	// IsAncestor says whether commit a is an ancestor of commit b; known
	// is false when either is not in the repository.
	IsAncestor(a, b string) (ancestor, known bool, err error)
}

// applied is what a run records next to a state once it applied it, and
// (as <key>.regionctl-destroyed) once it destroyed everything in it.
type applied struct {
	Commit    string    `json:"commit"`
	RequestID string    `json:"request_id"`
	Pipeline  string    `json:"pipeline"`
	At        time.Time `json:"at"`
}

func appliedOf(state Object) Object {
	state.Key += ".regionctl-applied"
	return state
}

// checkOrder refuses to apply a commit older than the one already applied
// to the state (its ancestor): an older run that waited too long must not
// roll a newer change back.
func (r *Runner) checkOrder(ctx context.Context, state Object) error {
	if r.Commit == "" || r.History == nil {
		return nil
	}
	body, err := r.Cloud.Get(ctx, Credentials{}, appliedOf(state))
	if errors.Is(err, ErrNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading which commit %s was applied at: %w", state, err)
	}
	var last applied
	if json.Unmarshal(body, &last) != nil || last.Commit == "" || last.Commit == r.Commit {
		return nil
	}
	older, known, err := r.History.IsAncestor(r.Commit, last.Commit)
	if err != nil {
		return err
	}
	if known && older {
		return fmt.Errorf("refusing to apply %s to %s: its descendant %s was applied by run %s at %s; a run never rolls a newer commit back (push a new commit instead)",
			short12(r.Commit), state, short12(last.Commit), last.RequestID, last.At.UTC().Format(time.RFC3339))
	}
	return nil
}

// recordApplied writes the commit this run applied next to the state.
func (r *Runner) recordApplied(ctx context.Context, p *Plan, state Object) error {
	if r.Commit == "" {
		return nil
	}
	b, _ := json.Marshal(applied{Commit: r.Commit, RequestID: p.RequestID, Pipeline: p.Pipeline, At: r.now()})
	if err := r.Cloud.Put(ctx, Credentials{}, appliedOf(state), b); err != nil {
		return fmt.Errorf("recording the commit applied to %s: %w", state, err)
	}
	return nil
}

// destroyedOf is where a destroy's completion is recorded: the evidence
// delete_pipeline waits for.
func destroyedOf(state Object) Object {
	state.Key += ".regionctl-destroyed"
	return state
}

// recordDestroyed writes the destroy's completion next to the state, or,
// after an apply, removes a record a cluster brought back no longer has.
func (r *Runner) recordDestroyed(ctx context.Context, p *Plan, state Object, destroy bool) error {
	if !destroy {
		if err := r.Cloud.Delete(ctx, Credentials{}, destroyedOf(state)); err != nil && !errors.Is(err, ErrNotFound) {
			return fmt.Errorf("removing the destroy record of %s, which this apply brought back: %w", state, err)
		}
		return nil
	}
	b, _ := json.Marshal(applied{Commit: r.Commit, RequestID: p.RequestID, Pipeline: p.Pipeline, At: r.now()})
	if err := r.Cloud.Put(ctx, Credentials{}, destroyedOf(state), b); err != nil {
		return fmt.Errorf("recording that %s was destroyed: %w", state, err)
	}
	return nil
}

// checkDestroyed refuses a cluster's delete_pipeline until a run recorded
// its completed destroy: removing the pipeline first would orphan the
// cluster's infrastructure, with nothing left that could destroy it.
func (r *Runner) checkDestroyed(ctx context.Context, s Step) (string, error) {
	me, err := r.Cloud.Caller(ctx, Credentials{})
	if err != nil {
		return "", err
	}
	// The management clusters' state bucket is the regional account's:
	// the runner's own.
	state := Object{Bucket: s.Backend["bucket"], Key: s.Backend["key"], Owner: me.Account}
	body, err := r.Cloud.Get(ctx, Credentials{}, destroyedOf(state))
	if errors.Is(err, ErrNotFound) {
		return "", fmt.Errorf("refusing delete_pipeline of %s: no run recorded a completed destroy next to its state (%s); set delete: true without delete_pipeline, let the pipeline destroy the cluster, then set delete_pipeline", s.Cluster, destroyedOf(state))
	}
	if err != nil {
		return "", fmt.Errorf("reading the destroy record of %s: %w", s.Cluster, err)
	}
	var d applied
	if err := json.Unmarshal(body, &d); err != nil || d.RequestID == "" {
		return "", fmt.Errorf("refusing delete_pipeline of %s: the destroy record %s is not one a run wrote", s.Cluster, destroyedOf(state))
	}
	// The record says a destroy completed; the state says what is left
	// now (a run outside regionctl may have applied since).
	left, err := r.stateResources(ctx, state)
	if err != nil {
		return "", fmt.Errorf("refusing delete_pipeline of %s: reading its state %s: %w", s.Cluster, state, err)
	}
	if len(left) > 0 {
		shown := left
		if len(shown) > 5 {
			shown = append(shown[:5:5], fmt.Sprintf("and %d more", len(left)-5))
		}
		return "", fmt.Errorf("refusing delete_pipeline of %s: its state %s still holds %d resources (%s); set delete: true without delete_pipeline and let the pipeline destroy them first",
			s.Cluster, state, len(left), strings.Join(shown, ", "))
	}
	return fmt.Sprintf("destroyed by run %s at %s, its state holds no resource; nothing runs, and the pipeline definition is removed", d.RequestID, d.At.UTC().Format(time.RFC3339)), nil
}

// stateResources lists the managed resource instances a Terraform state
// object holds (none when the object is gone).
func (r *Runner) stateResources(ctx context.Context, state Object) ([]string, error) {
	body, err := r.Cloud.Get(ctx, Credentials{}, state)
	if errors.Is(err, ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var st struct {
		Resources []struct {
			Module    string `json:"module"`
			Mode      string `json:"mode"`
			Type      string `json:"type"`
			Name      string `json:"name"`
			Instances []json.RawMessage
		} `json:"resources"`
	}
	if err := json.Unmarshal(body, &st); err != nil {
		return nil, fmt.Errorf("not a Terraform state: %w", err)
	}
	var out []string
	for _, res := range st.Resources {
		if res.Mode != "managed" {
			continue
		}
		addr := res.Type + "." + res.Name
		if res.Module != "" {
			addr = res.Module + "." + addr
		}
		for range res.Instances {
			out = append(out, addr)
		}
	}
	return out, nil
}

func short12(c string) string {
	if len(c) > 12 {
		return c[:12]
	}
	return c
}
