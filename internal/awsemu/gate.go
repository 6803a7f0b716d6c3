package awsemu

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	awsiam "github.com/aws/aws-sdk-go-v2/service/iam"

	"github.com/regionctl/regionctl/internal/iamjudge"
	"github.com/regionctl/regionctl/internal/iamjudge/simulator"
	"github.com/regionctl/regionctl/internal/iampolicy"
	"github.com/regionctl/regionctl/internal/render/iam"
)

// DefaultAccount is the account moto acts in for its default credentials:
// the organisation's management account in the tests and the demo.
const DefaultAccount = "123456789012"

// Gate is the IAM gate in front of moto: moto enforces no IAM, so every
// request passes through the gate first, which attributes it to its
// principal (learned from the STS answers it relays), names the IAM
// actions, resources and context keys AWS would authorize, and decides
// them with iamjudge.Authorize over the caller's identity policies, its
// permissions boundary and session policy, the target role's trust
// policy, bucket policies, and Organizations' management-account rule.
// A denial is answered the way AWS answers it for that protocol, and
// every decision is written to the ledger. docs/iam-gate.md says what the
// gate models and what it does not.
type Gate struct {
	URL    string
	target *url.URL
	srv    *http.Server
	models *restModels
	view   *view
	keys   principals
	ledger *Ledger
	// policies are the bucket policies, kept here rather than in moto:
	// moto applies a bucket policy's Deny statements to object requests
	// while ignoring their conditions, which would refuse what AWS allows.
	policies sync.Map // bucket → []byte
	// mends holds what the gate mends in moto's exchanges (mend.go).
	mends mends
	// iotTags are the tags of IoT resources, which moto does not keep.
	iotTags iotTags
	// pods are the EKS Pod Identity associations, which moto does not
	// implement (podidentity.go).
	pods podIdentity
	// iamMu serializes the IAM requests the gate relays: moto's IAM
	// backend is not safe for concurrent requests (CreateRole iterates an
	// account's roles while another request adds one: "dictionary changed
	// size during iteration", answered as a 500), which Terraform's
	// parallel applies provoke. AWS serves them concurrently; only the
	// order of unrelated requests changes.
	iamMu sync.Mutex
	// stackSets are what the gate knows of CloudFormation StackSets, for
	// their automatic deployment (stacksets.go); features the
	// organisation's features moto does not model (organization.go).
	stackSets stackSets
	features  orgFeatures
	// dns is what public DNS reaches, for ACM's validation (acm.go).
	dns publicDNS
	// second is the second judge (the IAM simulator), asked every
	// question iamjudge is when set (SetSecondJudge).
	second *simulator.Judge
}

// SetSecondJudge makes the gate ask j every question it asks iamjudge,
// and record both verdicts in its ledger.
func (g *Gate) SetSecondJudge(j *simulator.Judge) { g.second = j }

// StartGate starts a gate for the emulator at target on a free 127.0.0.1
// port. The default credentials (AccessKeyID) are the root user of
// DefaultAccount.
func StartGate(target string) (*Gate, error) {
	u, err := url.Parse(target)
	if err != nil || u.Hostname() != "127.0.0.1" {
		return nil, fmt.Errorf("the gate fronts an emulator on 127.0.0.1 only, not %q", target)
	}
	data, err := botocoreData()
	if err != nil {
		return nil, err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	g := &Gate{URL: "http://" + l.Addr().String(), target: u, models: &restModels{dir: data}, view: newView(target), ledger: &Ledger{}}
	g.view.policy = func(bucket string) []byte {
		if b, ok := g.policies.Load(bucket); ok {
			return b.([]byte)
		}
		return nil
	}
	g.keys.add(&principal{AccessKey: AccessKeyID, Secret: SecretAccessKey, Account: DefaultAccount,
		ARN: iam.AccountRoot("aws", DefaultAccount), Root: true})
	g.srv = &http.Server{Handler: g}
	go func() { _ = g.srv.Serve(l) }()
	return g, nil
}

// BucketPolicy is the policy of bucket as the gate holds it (moto keeps
// none), or false when it has none.
func (g *Gate) BucketPolicy(bucket string) ([]byte, bool) {
	b, ok := g.policies.Load(bucket)
	if !ok {
		return nil, false
	}
	return b.([]byte), true
}

// Close stops the gate.
func (g *Gate) Close() error { return g.srv.Close() }

// Ledger is the gate's record of decisions.
func (g *Gate) Ledger() *Ledger { return g.ledger }

// Changed tells the gate that state it reads (IAM, buckets, the
// organisation) changed behind its back, as a test's direct fixture does.
func (g *Gate) Changed() { g.view.changed(); g.view.orgChanged() }

// ServeHTTP decides a request and relays it to the emulator when allowed.
func (g *Gate) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 256<<20))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if strings.HasPrefix(r.URL.Path, "/moto-api") {
		http.Error(w, "the emulator's control API is not reachable through the IAM gate", http.StatusForbidden)
		return
	}
	auth, signed, err := parseAuth(r)
	if err != nil {
		g.refuse(w, "", "IncompleteSignature", err.Error())
		return
	}
	var p *principal
	if !signed {
		// Unsigned: an anonymous S3 request, or AssumeRoleWithWebIdentity
		// (the token is the credential).
		p = &principal{Anonymous: true}
		auth = sigv4{Service: "s3", Region: "us-east-1"}
		if form, err := url.ParseQuery(string(body)); err == nil && form.Get("Action") == "AssumeRoleWithWebIdentity" {
			auth.Service = "sts"
		}
	} else if p = g.keys.get(auth.AccessKey); p == nil {
		g.refuse(w, auth.Service, "InvalidClientTokenId", "The security token included in the request is invalid.")
		return
	} else if err := auth.verify(r, body, p.Secret); err != nil {
		g.refuse(w, auth.Service, "SignatureDoesNotMatch", "The request signature we calculated does not match the signature you provided: "+err.Error())
		return
	}
	req, err := decode(r, body, auth, g.models)
	if err != nil {
		g.refuse(w, auth.Service, "InvalidRequest", err.Error())
		return
	}
	ok, deny, err := g.decide(r.Context(), p, req)
	if err != nil {
		// Answered in the service's protocol, so that the caller's error
		// says why (a bare 500 reads as an unknown error, and is retried).
		d := denial{"InternalFailure", "the IAM gate could not decide: " + err.Error()}
		g.ledger.add(Entry{Principal: p.name(), Operation: req.Service + ":" + req.Operation, Decision: "deny", Reason: d.Message})
		writeDenial(w, req, d)
		return
	}
	if !ok {
		writeDenial(w, req, deny)
		return
	}
	if g.second != nil {
		g.validate(p, req, body)
	}
	if req.Service == "s3" && g.bucketPolicy(r.Context(), w, req, body) {
		return
	}
	if req.Service == "iot" && g.iotTags.answer(w, req) {
		return
	}
	if req.Service == "eks" && g.pods.answer(r.Context(), w, g, p, req) {
		return
	}
	if req.Service == "iam" || req.Service == "cloudformation" || req.Service == "organizations" {
		org, err := g.view.organization(r.Context())
		if err != nil {
			http.Error(w, "the IAM gate: "+err.Error(), http.StatusInternalServerError)
			return
		}
		if g.features.answer(w, org, req) {
			return
		}
	}
	if req.Service == "iam" {
		g.iamMu.Lock()
		defer g.iamMu.Unlock()
	}
	g.relay(w, r, g.mends.request(p.Account, req, body), p, req)
}

// bucketPolicy answers the bucket policy operations from the gate's own
// store (see Gate.policies); it reports whether it answered.
func (g *Gate) bucketPolicy(ctx context.Context, w http.ResponseWriter, req *request, body []byte) bool {
	bucket := req.Labels["Bucket"]
	switch req.Operation {
	case "PutBucketPolicy", "GetBucketPolicy", "DeleteBucketPolicy":
	case "DeleteBucket":
		g.policies.Delete(bucket)
		return false
	default:
		return false
	}
	b, err := g.view.bucket(ctx, bucket, g.accounts(ctx))
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return true
	}
	s3Error := func(status int, code, message string) {
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(status)
		fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?>
<Error><Code>%s</Code><Message>%s</Message><BucketName>%s</BucketName><RequestId>regionctl-iam-gate</RequestId></Error>`, code, message, bucket)
	}
	if b == nil {
		s3Error(http.StatusNotFound, "NoSuchBucket", "The specified bucket does not exist")
		return true
	}
	switch req.Operation {
	case "PutBucketPolicy":
		doc, err := iampolicy.ParseAWS(body)
		if err != nil {
			s3Error(http.StatusBadRequest, "MalformedPolicy", err.Error())
			return true
		}
		// S3 refuses a policy it deems public on a bucket whose public
		// access block sets BlockPublicPolicy ("The meaning of public",
		// S3 User Guide), whoever asks.
		if sid, why := iam.PublicStatement(doc); b.BlockPublicPolicy && sid != "" {
			s3Error(http.StatusForbidden, "AccessDenied", fmt.Sprintf("Access Denied: the bucket blocks public policies (BlockPublicPolicy) and %s is public: %s", sid, why))
			return true
		}
		g.policies.Store(bucket, append([]byte(nil), body...))
		g.view.changed()
		w.WriteHeader(http.StatusNoContent)
	case "DeleteBucketPolicy":
		g.policies.Delete(bucket)
		g.view.changed()
		w.WriteHeader(http.StatusNoContent)
	case "GetBucketPolicy":
		pol, ok := g.policies.Load(bucket)
		if !ok {
			s3Error(http.StatusNotFound, "NoSuchBucketPolicy", "The bucket policy does not exist")
			return true
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(pol.([]byte))
	}
	return true
}

// denial is why a request was refused.
type denial struct {
	Code, Message string
}

// decideOne runs one given check for req.
func (g *Gate) decideOne(ctx context.Context, p *principal, req *request, c check) (bool, denial, error) {
	return g.run(ctx, p, req, func(e *env) ([]check, error) {
		c.Context = e.context(nil)
		return []check{c}, nil
	})
}

// decide runs every check of req; the first that does not allow denies.
func (g *Gate) decide(ctx context.Context, p *principal, req *request) (bool, denial, error) {
	return g.run(ctx, p, req, checks)
}

func (g *Gate) run(ctx context.Context, p *principal, req *request, checks func(*env) ([]check, error)) (bool, denial, error) {
	base := map[string][]string{"aws:RequestedRegion": {req.Region}, "aws:SecureTransport": {"true"}}
	var role *roleView
	if !p.Anonymous {
		base["aws:PrincipalArn"] = []string{p.ARN}
		base["aws:PrincipalAccount"] = []string{p.Account}
		if p.RoleARN != "" {
			base["aws:PrincipalArn"] = []string{p.RoleARN}
			var err error
			if role, err = g.view.role(ctx, p.RoleARN); err != nil {
				return false, denial{}, err
			}
			if role != nil {
				for k, v := range role.Tags {
					base["aws:PrincipalTag/"+k] = []string{v}
				}
			}
		}
		for k, v := range p.SessionTags {
			base["aws:PrincipalTag/"+k] = []string{v}
		}
	}
	org, err := g.view.organization(ctx)
	if err != nil {
		return false, denial{}, err
	}
	members := map[string]bool{}
	if org != nil {
		for _, a := range g.view.orgAccounts(ctx) {
			members[a] = true
		}
		if !p.Anonymous && members[p.Account] {
			base["aws:PrincipalOrgID"] = []string{org.ID}
		}
	}
	e := &env{ctx: ctx, view: g.view, p: p, req: req, base: base, accounts: func() []string { return g.accounts(ctx) }}
	cs, err := checks(e)
	if err != nil {
		return false, denial{}, err
	}
	// The organisation of a resource's account (aws:ResourceOrgID), as
	// AWS sets it for a resource of a member account.
	for i := range cs {
		owner := cs[i].ResourceAccount
		if owner == "" {
			owner = p.Account
		}
		if org != nil && members[owner] && cs[i].Context != nil {
			if _, ok := cs[i].Context["aws:ResourceOrgID"]; !ok {
				cs[i].Context["aws:ResourceOrgID"] = []string{org.ID}
			}
		}
	}
	op := req.Service + ":" + req.Operation
	for _, c := range cs {
		entry := Entry{Principal: p.name(), Operation: op, Action: c.Action, Resource: c.Resource, Region: req.Region}
		switch {
		case c.Free:
			entry.Decision, entry.Reason = "allow", "AWS authorizes it for every signed request"
		case c.Refuse != "":
			entry.Decision, entry.Reason = "deny", c.Refuse
			g.ledger.add(entry)
			return false, denial{c.RefuseCode, c.Refuse}, nil
		default:
			a := iamjudge.Authorization{Request: iamjudge.Request{Caller: p.caller(), Action: c.Action, Resource: c.Resource, Context: c.Context},
				Root: p.Root, ResourcePolicy: c.ResourcePolicy, ResourceAccount: c.ResourceAccount, TrustRequired: c.TrustRequired}
			if c.Caller != nil {
				a.Caller = *c.Caller
			}
			if c.Caller == nil && role != nil {
				a.Identity, a.Boundary = role.Policies, role.Boundary
			}
			if c.Caller == nil && p.SessionPolicy != nil {
				a.Session = []iam.Document{*p.SessionPolicy}
			}
			if err := g.guardrails(ctx, p, c, &a); err != nil {
				return false, denial{}, err
			}
			if p.RoleARN != "" && role == nil && c.Caller == nil {
				entry.Decision, entry.Reason = "deny", "the caller's role "+p.RoleARN+" no longer exists"
				g.ledger.add(entry)
				return false, denial{"AccessDenied", entry.Reason}, nil
			}
			v := iamjudge.Authorize(a)
			entry.Reason = v.Reason
			if g.second != nil {
				g.judgeAgain(a, v, &entry)
			}
			if v.Decision != iamjudge.Allow {
				entry.Decision, entry.Context = "deny", a.Context
				g.ledger.add(entry)
				who := p.ARN
				if c.Caller != nil {
					who = c.Caller.Federated
				}
				return false, denial{"AccessDenied", fmt.Sprintf("User: %s is not authorized to perform: %s on resource: %s because %s", who, c.Action, c.Resource, v.Reason)}, nil
			}
			entry.Decision = "allow"
		}
		g.ledger.add(entry)
	}
	return true, denial{}, nil
}

// accounts are the accounts a bucket may belong to: the default one, the
// organisation's, and every caller's.
func (g *Gate) accounts(ctx context.Context) []string {
	out := []string{DefaultAccount}
	g.keys.mu.Lock()
	for _, p := range g.keys.keys {
		if p.Account != "" && !slices.Contains(out, p.Account) {
			out = append(out, p.Account)
		}
	}
	g.keys.mu.Unlock()
	for _, a := range g.view.orgAccounts(ctx) {
		if !slices.Contains(out, a) {
			out = append(out, a)
		}
	}
	return out
}

// relay sends an allowed request to the emulator and answers with its
// answer, learning from it what the gate needs.
func (g *Gate) relay(w http.ResponseWriter, r *http.Request, body []byte, p *principal, req *request) {
	out, err := http.NewRequestWithContext(r.Context(), r.Method, g.target.String()+r.URL.RequestURI(), bytes.NewReader(body))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	out.Header = r.Header.Clone()
	out.Host = r.Host
	out.ContentLength = int64(len(body))
	out.Header.Del("Transfer-Encoding")
	if q := r.URL.Query(); q.Get("X-Amz-Signature") != "" && !p.Anonymous {
		// A presigned request the gate verified (an EKS token): moto
		// routes by the Authorization header, so it is asked the same
		// thing signed that way.
		if err := presignedAsSigned(r.Context(), out, q, p, req); err != nil {
			http.Error(w, "the IAM gate: "+err.Error(), http.StatusBadGateway)
			return
		}
	}
	if p.Anonymous && req.Service == "s3" {
		// The gate allowed public access; moto, which would judge an
		// unsigned request by ACLs of its own, is asked as the bucket's
		// owner.
		if err := g.asOwner(r.Context(), out, body, req); err != nil {
			http.Error(w, "the IAM gate: "+err.Error(), http.StatusBadGateway)
			return
		}
	}
	resp, err := http.DefaultTransport.RoundTrip(out)
	if err != nil {
		http.Error(w, "the emulator: "+err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(resp.Body)
	if err != nil {
		http.Error(w, "the emulator: "+err.Error(), http.StatusBadGateway)
		return
	}
	if resp.StatusCode < 300 {
		g.learn(r.Context(), req, answer)
		answer = g.mends.answer(p.Account, req, answer)
		if req.Service == "iam" && req.Operation == "DeleteServiceLinkedRole" && req.role != "" {
			answer = deletionTask(answer, req.role)
		}
		answer = g.features.mendAnswer(req, answer)
		answer = g.stackSets.mendDescribe(req, answer)
		answer = g.dns.mendCertificate(req, answer)
		if req.Service == "iot" {
			g.iotTags.learn(p.Account, req, answer)
		}
	}
	for k, v := range resp.Header {
		w.Header()[k] = v
	}
	w.Header().Set("Content-Length", fmt.Sprint(len(answer)))
	w.WriteHeader(resp.StatusCode)
	_, _ = w.Write(answer)
}

// presignedAsSigned turns out, a copy of a presigned request, into the
// same request signed in its Authorization header with the caller's key.
func presignedAsSigned(ctx context.Context, out *http.Request, q url.Values, p *principal, req *request) error {
	token := q.Get("X-Amz-Security-Token")
	for k := range q {
		if strings.HasPrefix(k, "X-Amz-") {
			q.Del(k)
		}
	}
	out.URL.RawQuery = q.Encode()
	if token != "" {
		out.Header.Set("X-Amz-Security-Token", token)
	}
	creds := aws.Credentials{AccessKeyID: p.AccessKey, SecretAccessKey: p.Secret, SessionToken: token}
	return v4.NewSigner().SignHTTP(ctx, creds, out, emptySHA256, req.Service, req.Region, time.Now())
}

// asOwner signs out with the credentials the gate holds for the owner of
// req's bucket.
func (g *Gate) asOwner(ctx context.Context, out *http.Request, body []byte, req *request) error {
	b, err := g.view.bucket(ctx, req.Labels["Bucket"], g.accounts(ctx))
	if err != nil || b == nil {
		return fmt.Errorf("the owner of bucket %q: %v", req.Labels["Bucket"], err)
	}
	cfg, err := g.view.admin(ctx, b.Owner)
	if err != nil {
		return err
	}
	creds, err := cfg.Credentials.Retrieve(ctx)
	if err != nil {
		return err
	}
	sum := sha256.Sum256(body)
	payload := hex.EncodeToString(sum[:])
	out.Header.Set("X-Amz-Content-Sha256", payload)
	signer := v4.NewSigner(func(o *v4.SignerOptions) { o.DisableURIPathEscaping = true })
	return signer.SignHTTP(ctx, creds, out, payload, "s3", req.Region, time.Now())
}

// learn updates what the gate knows after a successful request: new
// session credentials, and that IAM, bucket or organisation state changed.
func (g *Gate) learn(ctx context.Context, req *request, answer []byte) {
	switch req.Service + ":" + req.Operation {
	case "sts:AssumeRole":
		var policy *iam.Document
		if doc := req.str("Policy"); doc != "" {
			if d, err := iampolicy.ParseAWS([]byte(doc)); err == nil {
				policy = &d
			}
		}
		_ = learnSession(&g.keys, answer, req.str("RoleArn"), tagsOf(req.Form, "Tags"), policy)
		return
	case "sts:AssumeRoleWithWebIdentity":
		_ = learnSession(&g.keys, answer, req.str("RoleArn"), nil, nil)
		return
	case "organizations:CreateAccount", "organizations:DescribeCreateAccountStatus":
		g.organizationsMadeAccount(ctx, answer)
	case "organizations:MoveAccount":
		g.view.changed()
		g.autoDeploy(ctx, req.str("AccountId"), req.str("DestinationParentId"))
	}
	if req.Service == "cloudformation" {
		g.stackSets.learn(req)
		if req.Operation == "UpdateStackSet" {
			g.redeploy(ctx)
		}
	}
	op := req.Operation
	read := strings.HasPrefix(op, "Get") || strings.HasPrefix(op, "List") || strings.HasPrefix(op, "Describe") || strings.HasPrefix(op, "Head")
	switch {
	case read:
	case req.Service == "organizations":
		g.view.changed()
		g.view.orgChanged()
	case req.Service == "iam":
		g.view.changed()
	case req.Service == "s3" && (strings.Contains(op, "Policy") || strings.Contains(op, "PublicAccessBlock") || op == "CreateBucket" || op == "DeleteBucket"):
		g.view.changed()
	}
}

// organizationsMadeAccount models what AWS Organizations does for an
// account it creates: its OrganizationAccountAccessRole (which moto makes
// without permissions) holds AdministratorAccess.
func (g *Gate) organizationsMadeAccount(ctx context.Context, answer []byte) {
	var a struct {
		CreateAccountStatus struct {
			State     string
			AccountID string `json:"AccountId"`
		}
	}
	if json.Unmarshal(answer, &a) != nil || a.CreateAccountStatus.State != "SUCCEEDED" || a.CreateAccountStatus.AccountID == "" {
		return
	}
	g.features.created(a.CreateAccountStatus.AccountID)
	cfg, err := g.view.admin(ctx, a.CreateAccountStatus.AccountID)
	if err != nil {
		return
	}
	_, _ = awsiam.NewFromConfig(cfg).AttachRolePolicy(ctx, &awsiam.AttachRolePolicyInput{RoleName: aws.String(iam.AccessRole),
		PolicyArn: aws.String("arn:aws:iam::aws:policy/AdministratorAccess")})
	g.view.changed()
}

// refuse answers a request the gate could not attribute.
func (g *Gate) refuse(w http.ResponseWriter, service, code, message string) {
	g.ledger.add(Entry{Principal: "unknown", Operation: service, Decision: "deny", Reason: code + ": " + message})
	writeDenial(w, &request{Service: service, Protocol: queryServices[service]}, denial{code, message})
}

// API is an API Gateway API with IAM authorization, as the platform API is.
type API struct {
	Region, Account, ID, Stage string
}

// Invoke authorizes a call to api as API Gateway does: the caller's SigV4
// signature (service execute-api), then execute-api:Invoke on the method's
// ARN under the caller's policies. The decision is written to the ledger.
func (g *Gate) Invoke(r *http.Request, body []byte, api API) (caller string, err error) {
	auth, signed, err := parseAuth(r)
	if err != nil || !signed || auth.Service != "execute-api" {
		return "", fmt.Errorf("the request is not SigV4-signed for execute-api")
	}
	p := g.keys.get(auth.AccessKey)
	if p == nil {
		return "", fmt.Errorf("the security token included in the request is invalid")
	}
	if err := auth.verify(r, body, p.Secret); err != nil {
		return "", err
	}
	resource := "arn:" + iam.Partition(api.Region) + ":execute-api:" + api.Region + ":" + api.Account + ":" + api.ID + "/" + api.Stage + "/" + r.Method + r.URL.Path
	req := &request{Service: "execute-api", Region: auth.Region, Operation: "Invoke", Method: r.Method, Path: r.URL.Path}
	ok, d, err := g.decideOne(r.Context(), p, req, check{Action: "execute-api:Invoke", Resource: resource, ResourceAccount: api.Account})
	if err != nil {
		return "", err
	}
	if !ok {
		return "", fmt.Errorf("%s", d.Message)
	}
	return p.name(), nil
}

// SigningRegion is the region a SigV4 request is signed for ("" when it is
// not signed).
func SigningRegion(r *http.Request) string {
	auth, ok, err := parseAuth(r)
	if !ok || err != nil {
		return ""
	}
	return auth.Region
}

// guardrails adds the organisation's SCPs over the caller's account and
// its RCPs over the resource's account to a. SCPs do not bind a web
// identity asking STS for a session (the session does), a service-linked
// role, or the management account; RCPs do not bind a service-linked
// role, or a resource of the management account.
func (g *Gate) guardrails(ctx context.Context, p *principal, c check, a *iamjudge.Authorization) error {
	serviceLinked := strings.Contains(p.RoleARN, ":role/aws-service-role/")
	if c.Caller == nil && !p.Anonymous && !serviceLinked {
		gr, err := g.view.controlPolicies(ctx, p.Account)
		if err != nil {
			return err
		}
		a.SCPs = gr.SCP
	}
	if serviceLinked {
		return nil
	}
	owner := c.ResourceAccount
	if owner == "" {
		owner = p.Account
	}
	gr, err := g.view.controlPolicies(ctx, owner)
	if err != nil {
		return err
	}
	a.RCPs = gr.RCP
	return nil
}

// judgeAgain asks the second judge what iamjudge answered v to, and
// records its verdict in entry.
func (g *Gate) judgeAgain(a iamjudge.Authorization, v iamjudge.Verdict, entry *Entry) {
	vs, err := g.second.CompareVerdict(a, v)
	if err != nil {
		entry.Second, entry.Disagree = "error: "+err.Error(), true
		return
	}
	entry.Second = vs.Theirs.Result
	if r := vs.Theirs.Refused(); r != "" {
		entry.Second = "refused: " + r
	}
	entry.Disagree = !vs.Agree()
	if entry.Disagree {
		entry.Settled = simulator.Settled(a, vs)
	}
}
