package awsemu

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/xml"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"github.com/regionctl/regionctl/internal/iamjudge"
	"github.com/regionctl/regionctl/internal/render/iam"
)

// principal is who holds an access key, as the gate learned it.
type principal struct {
	AccessKey, Secret string
	Account           string
	ARN               string // arn:aws:iam::1:root or arn:aws:sts::1:assumed-role/R/s
	RoleARN           string // a session's role
	Root              bool
	SessionTags       map[string]string
	SessionPolicy     *iam.Document
	Anonymous         bool
}

func (p *principal) caller() iamjudge.Caller {
	if p.Anonymous {
		return iamjudge.Anonymous
	}
	return iamjudge.Caller{ARN: p.ARN, RoleARN: p.RoleARN, Account: p.Account}
}

// name is how the ledger names the principal: the role for sessions.
func (p *principal) name() string {
	switch {
	case p.Anonymous:
		return "anonymous"
	case p.RoleARN != "":
		return p.RoleARN
	}
	return p.ARN
}

// principals maps access keys to who holds them.
type principals struct {
	mu   sync.Mutex
	keys map[string]*principal
}

func (ps *principals) add(p *principal) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if ps.keys == nil {
		ps.keys = map[string]*principal{}
	}
	ps.keys[p.AccessKey] = p
}

func (ps *principals) get(key string) *principal {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	return ps.keys[key]
}

// sigv4 is the parsed Authorization of a request.
type sigv4 struct {
	AccessKey, Date, Region, Service string
	SignedHeaders                    []string
	Signature                        string
	Presigned                        bool
}

// parseAuth reads a request's SigV4 Authorization header (or presigned
// query); ok is false for an unsigned request.
func parseAuth(r *http.Request) (sigv4, bool, error) {
	auth := r.Header.Get("Authorization")
	cred, signed, sig := "", "", ""
	presigned := false
	switch {
	case strings.HasPrefix(auth, "AWS4-HMAC-SHA256 "):
		for _, f := range strings.Split(strings.TrimPrefix(auth, "AWS4-HMAC-SHA256 "), ",") {
			k, v, _ := strings.Cut(strings.TrimSpace(f), "=")
			switch k {
			case "Credential":
				cred = v
			case "SignedHeaders":
				signed = v
			case "Signature":
				sig = v
			}
		}
	case r.URL.Query().Get("X-Amz-Algorithm") == "AWS4-HMAC-SHA256":
		q := r.URL.Query()
		cred, signed, sig, presigned = q.Get("X-Amz-Credential"), q.Get("X-Amz-SignedHeaders"), q.Get("X-Amz-Signature"), true
	case auth == "":
		return sigv4{}, false, nil
	default:
		return sigv4{}, false, fmt.Errorf("the gate understands only SigV4 (AWS4-HMAC-SHA256) requests")
	}
	scope := strings.Split(cred, "/")
	if len(scope) != 5 || scope[4] != "aws4_request" {
		return sigv4{}, false, fmt.Errorf("malformed SigV4 credential %q", cred)
	}
	return sigv4{AccessKey: scope[0], Date: scope[1], Region: scope[2], Service: scope[3], SignedHeaders: strings.Split(signed, ";"),
		Signature: sig, Presigned: presigned}, true, nil
}

// verify signs a copy of r with the secret of its access key, at the time
// and in the scope the request claims, and compares the signatures.
func (s sigv4) verify(r *http.Request, body []byte, secret string) error {
	if s.Presigned {
		return s.verifyPresigned(r, secret)
	}
	at, err := time.Parse("20060102T150405Z", r.Header.Get("X-Amz-Date"))
	if err != nil {
		return fmt.Errorf("bad X-Amz-Date: %v", err)
	}
	u := *r.URL
	u.Scheme, u.Host = "http", r.Host
	again, err := http.NewRequestWithContext(context.Background(), r.Method, u.String(), bytes.NewReader(body))
	if err != nil {
		return err
	}
	again.ContentLength = r.ContentLength
	for _, h := range s.SignedHeaders {
		switch h {
		case "host", "x-amz-date", "x-amz-security-token", "content-length":
		default:
			again.Header[http.CanonicalHeaderKey(h)] = r.Header.Values(h)
		}
	}
	if r.ContentLength <= 0 && containsHeader(s.SignedHeaders, "content-length") {
		again.ContentLength = int64(len(body))
	}
	payload := r.Header.Get("X-Amz-Content-Sha256")
	if payload == "" {
		sum := sha256.Sum256(body)
		payload = hex.EncodeToString(sum[:])
	}
	creds := aws.Credentials{AccessKeyID: s.AccessKey, SecretAccessKey: secret, SessionToken: r.Header.Get("X-Amz-Security-Token")}
	signer := v4.NewSigner(func(o *v4.SignerOptions) { o.DisableURIPathEscaping = s.Service == "s3" })
	if err := signer.SignHTTP(context.Background(), creds, again, payload, s.Service, s.Region, at); err != nil {
		return err
	}
	_, got, _ := strings.Cut(again.Header.Get("Authorization"), "Signature=")
	if got != s.Signature {
		return fmt.Errorf("the SigV4 signature does not match")
	}
	return nil
}

// verifyPresigned checks a presigned request (an EKS token is one: a
// presigned sts:GetCallerIdentity): not expired, and its signature the one
// presigning it again at its time gives, over the headers it signed.
func (s sigv4) verifyPresigned(r *http.Request, secret string) error {
	q := r.URL.Query()
	at, err := time.Parse("20060102T150405Z", q.Get("X-Amz-Date"))
	if err != nil {
		return fmt.Errorf("bad X-Amz-Date: %v", err)
	}
	expires, err := strconv.Atoi(q.Get("X-Amz-Expires"))
	if err != nil || expires <= 0 || expires > 7*24*3600 {
		return fmt.Errorf("bad X-Amz-Expires %q", q.Get("X-Amz-Expires"))
	}
	if time.Now().After(at.Add(time.Duration(expires) * time.Second)) {
		return fmt.Errorf("the presigned request expired at %s", at.Add(time.Duration(expires)*time.Second))
	}
	token := q.Get("X-Amz-Security-Token")
	for _, k := range []string{"X-Amz-Algorithm", "X-Amz-Credential", "X-Amz-Date", "X-Amz-SignedHeaders", "X-Amz-Signature", "X-Amz-Security-Token"} {
		q.Del(k)
	}
	u := *r.URL
	u.Scheme, u.Host, u.RawQuery = "http", r.Host, q.Encode()
	for _, payload := range []string{emptySHA256, "UNSIGNED-PAYLOAD"} {
		again, err := http.NewRequestWithContext(context.Background(), r.Method, u.String(), nil)
		if err != nil {
			return err
		}
		for _, h := range s.SignedHeaders {
			if h != "host" {
				again.Header[http.CanonicalHeaderKey(h)] = r.Header.Values(h)
			}
		}
		creds := aws.Credentials{AccessKeyID: s.AccessKey, SecretAccessKey: secret, SessionToken: token}
		signed, _, err := v4.NewSigner().PresignHTTP(context.Background(), creds, again, payload, s.Service, s.Region, at)
		if err != nil {
			return err
		}
		su, err := url.Parse(signed)
		if err != nil {
			return err
		}
		if su.Query().Get("X-Amz-Signature") == s.Signature {
			return nil
		}
	}
	return fmt.Errorf("the SigV4 signature does not match")
}

const emptySHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

func containsHeader(hs []string, h string) bool {
	for _, x := range hs {
		if x == h {
			return true
		}
	}
	return false
}

// stsAnswer is the part of an STS AssumeRole* answer the gate learns from.
type stsAnswer struct {
	Result struct {
		Credentials struct {
			AccessKeyID     string `xml:"AccessKeyId"`
			SecretAccessKey string `xml:"SecretAccessKey"`
		} `xml:"Credentials"`
		AssumedRoleUser struct {
			Arn string `xml:"Arn"`
		} `xml:"AssumedRoleUser"`
	} `xml:",any"`
}

// learnSession registers the credentials of an STS answer as a session of
// role, with the session tags and policy the request asked for.
func learnSession(ps *principals, body []byte, role string, tags map[string]string, policy *iam.Document) error {
	var a stsAnswer
	if err := xml.Unmarshal(body, &a); err != nil {
		return fmt.Errorf("reading the STS answer: %w", err)
	}
	c := a.Result.Credentials
	if c.AccessKeyID == "" {
		return fmt.Errorf("the STS answer holds no credentials")
	}
	account := accountOf(role)
	ps.add(&principal{AccessKey: c.AccessKeyID, Secret: c.SecretAccessKey, Account: account, ARN: a.Result.AssumedRoleUser.Arn,
		RoleARN: role, SessionTags: tags, SessionPolicy: policy})
	return nil
}

// accountOf is the account of an ARN.
func accountOf(arn string) string {
	parts := strings.SplitN(arn, ":", 6)
	if len(parts) < 6 {
		return ""
	}
	return parts[4]
}

// tagsOf reads Tags.member.N.Key/Value (query protocol) from a form.
func tagsOf(form url.Values, prefix string) map[string]string {
	tags := map[string]string{}
	for k, v := range form {
		if strings.HasPrefix(k, prefix+".member.") && strings.HasSuffix(k, ".Key") && len(v) > 0 {
			n := strings.TrimSuffix(strings.TrimPrefix(k, prefix+".member."), ".Key")
			tags[v[0]] = form.Get(prefix + ".member." + n + ".Value")
		}
	}
	return tags
}

// tagContext is aws:RequestTag/* and aws:TagKeys of tags.
func tagContext(tags map[string]string, ctx map[string][]string) {
	if len(tags) == 0 {
		return
	}
	var keys []string
	for k, v := range tags {
		ctx["aws:RequestTag/"+k] = []string{v}
		keys = append(keys, k)
	}
	sort.Strings(keys)
	ctx["aws:TagKeys"] = keys
}
