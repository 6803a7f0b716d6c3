package awsemu

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
)

// Entry is one decision of the gate: a principal, the IAM action it needed
// for an operation, the resource, and the verdict with AWS's reason.
type Entry struct {
	Seq       int    `json:"seq"`
	Principal string `json:"principal"` // a role (for its sessions), a root, or anonymous
	Operation string `json:"operation"` // service:Operation
	Action    string `json:"action"`
	Resource  string `json:"resource"`
	Region    string `json:"region,omitempty"`
	Decision  string `json:"decision"` // allow or deny
	Reason    string `json:"reason"`
	Expected  bool   `json:"expected,omitempty"` // a denial the test provoked
	// Second is the second judge's verdict on the same request (the IAM
	// simulator's Allowed, ImplicitlyDenied or ExplicitlyDenied, or why it
	// would not decide); empty when the gate has no second judge or the
	// decision is not a policy evaluation. Disagree says the two judges
	// differ on allow or deny, and Settled why that is AWS's documented
	// behaviour, when it is.
	// Context is the request context a denial was decided in.
	Context  map[string][]string `json:"context,omitempty"`
	Second   string              `json:"second,omitempty"`
	Disagree bool                `json:"disagree,omitempty"`
	Settled  string              `json:"settled,omitempty"`
	// Problems are what the second judge found wrong in a policy document
	// the request installs (an action on a resource type it does not
	// authorize on, a condition key none of its actions knows).
	Problems []string `json:"problems,omitempty"`
}

// Ledger is every decision of a gate, in order.
type Ledger struct {
	mu      sync.Mutex
	entries []Entry
	expect  []func(Entry) bool
}

func (l *Ledger) add(e Entry) {
	l.mu.Lock()
	defer l.mu.Unlock()
	e.Seq = len(l.entries) + 1
	for _, f := range l.expect {
		if e.Decision == "deny" && f(e) {
			e.Expected = true
		}
	}
	l.entries = append(l.entries, e)
}

// Expect marks the denials f matches, from now on, as ones a test provokes.
func (l *Ledger) Expect(f func(Entry) bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.expect = append(l.expect, f)
}

// Entries returns a copy of the ledger.
func (l *Ledger) Entries() []Entry {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Entry(nil), l.entries...)
}

// Since returns the entries after the first n.
func (l *Ledger) Since(n int) []Entry {
	es := l.Entries()
	if n > len(es) {
		return nil
	}
	return es[n:]
}

// Len is the number of decisions so far.
func (l *Ledger) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.entries)
}

// Unexpected are the denials no Expect matched.
func (l *Ledger) Unexpected() []Entry {
	var out []Entry
	for _, e := range l.Entries() {
		if e.Decision == "deny" && !e.Expected {
			out = append(out, e)
		}
	}
	return out
}

// Disagreements are the decisions on which the two judges differ with no
// settlement.
func (l *Ledger) Disagreements() []Entry {
	var out []Entry
	for _, e := range l.Entries() {
		if e.Disagree && e.Settled == "" {
			out = append(out, e)
		}
	}
	return out
}

// Invalid are the requests that installed a policy document the second
// judge found grants that AWS would never make.
func (l *Ledger) Invalid() []Entry {
	var out []Entry
	for _, e := range l.Entries() {
		if len(e.Problems) > 0 {
			out = append(out, e)
		}
	}
	return out
}

// Compared counts the decisions both judges made, and those they agreed
// on (settled ones included).
func (l *Ledger) Compared() (compared, agreed int) {
	for _, e := range l.Entries() {
		if e.Second == "" {
			continue
		}
		compared++
		if !e.Disagree || e.Settled != "" {
			agreed++
		}
	}
	return compared, agreed
}

// Reset forgets every entry and expectation.
func (l *Ledger) Reset() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.entries, l.expect = nil, nil
}

// WriteFile writes the ledger as JSON lines.
func (l *Ledger) WriteFile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(f)
	for _, e := range l.Entries() {
		if err := enc.Encode(e); err != nil {
			f.Close()
			return err
		}
	}
	return f.Close()
}

// Summary counts decisions per principal: "principal: N allowed, M denied".
func Summary(entries []Entry) string {
	type count struct{ allow, deny int }
	by := map[string]*count{}
	for _, e := range entries {
		c := by[e.Principal]
		if c == nil {
			c = &count{}
			by[e.Principal] = c
		}
		if e.Decision == "allow" {
			c.allow++
		} else {
			c.deny++
		}
	}
	var names []string
	for n := range by {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, n := range names {
		fmt.Fprintf(&b, "%s: %d allowed, %d denied\n", n, by[n].allow, by[n].deny)
	}
	return b.String()
}

// AccountProbe matches the denials the AWS SDKs behind Terraform's aws
// provider provoke on purpose: to learn its account, the provider first
// asks iam:GetUser, which a role is not allowed (nor needs), and on
// AccessDenied asks sts:GetCallerIdentity instead. AWS denies it too.
func AccountProbe(e Entry) bool { return e.Action == "iam:GetUser" && e.Resource == "*" }
