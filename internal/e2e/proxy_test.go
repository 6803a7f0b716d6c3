package e2e

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
)

// call is one AWS request the proxy saw.
type call struct {
	Action string     // e.g. CreateAccount, AssumeRole, s3:PUT
	Form   url.Values // the parameters of Query-protocol calls (STS, IAM)
}

// fault answers the nth (1-based) call of an action; forward says whether
// the call still reaches the emulator first (an answer lost on the way back).
type fault func(n int) (status int, body string, forward bool)

// proxy sits between regionctl and moto: it records every call and
// injects faults by action.
type proxy struct {
	*httptest.Server
	mu     sync.Mutex
	calls  []call
	counts map[string]int
	faults map[string]fault
}

func newProxy(t *testing.T, target string) *proxy {
	u, _ := url.Parse(target)
	p := &proxy{counts: map[string]int{}, faults: map[string]fault{}}
	rp := httputil.NewSingleHostReverseProxy(u)
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		c := call{Action: action(r, body)}
		if strings.Contains(r.Header.Get("Content-Type"), "x-www-form-urlencoded") {
			c.Form, _ = url.ParseQuery(string(body))
		}
		p.mu.Lock()
		p.calls = append(p.calls, c)
		p.counts[c.Action]++
		n, f := p.counts[c.Action], p.faults[c.Action]
		p.mu.Unlock()
		if f != nil {
			if status, answer, forward := f(n); status != 0 {
				if forward {
					rec := httptest.NewRecorder()
					rp.ServeHTTP(rec, r)
				}
				w.WriteHeader(status)
				_, _ = io.WriteString(w, answer)
				return
			}
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(p.Close)
	return p
}

func action(r *http.Request, body []byte) string {
	if t := r.Header.Get("X-Amz-Target"); t != "" {
		return t[strings.LastIndex(t, ".")+1:]
	}
	if strings.Contains(r.Header.Get("Content-Type"), "x-www-form-urlencoded") {
		if v, err := url.ParseQuery(string(body)); err == nil && v.Get("Action") != "" {
			return v.Get("Action")
		}
	}
	return "s3:" + r.Method
}

func (p *proxy) inject(action string, f fault) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.faults[action] = f
	p.counts[action] = 0
}

func (p *proxy) clear() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.faults = map[string]fault{}
	p.calls = nil
	p.counts = map[string]int{}
}

func (p *proxy) count(action string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, c := range p.calls {
		if c.Action == action {
			n++
		}
	}
	return n
}

func (p *proxy) assumeRoles() []url.Values {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []url.Values
	for _, c := range p.calls {
		if c.Action == "AssumeRole" {
			out = append(out, c.Form)
		}
	}
	return out
}

// always, once and times are fault schedules.
func always(status int, body string) fault {
	return func(int) (int, string, bool) { return status, body, false }
}

func firstN(n, status int, body string, forward bool) fault {
	return func(i int) (int, string, bool) {
		if i <= n {
			return status, body, forward
		}
		return 0, "", false
	}
}
