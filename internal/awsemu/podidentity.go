package awsemu

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	ststypes "github.com/aws/aws-sdk-go-v2/service/sts/types"

	"github.com/regionctl/regionctl/internal/iamjudge"
	"github.com/regionctl/regionctl/internal/render/iam"
)

// PodIdentityService is EKS Pod Identity's service principal: the one that
// assumes an association's role for a pod (Amazon EKS User Guide, "Create
// IAM role with trust policy required by EKS Pod Identity"), and the
// iam:PassedToService of the role an association passes.
const PodIdentityService = "pods.eks.amazonaws.com"

// podIdentity is the gate's model of EKS Pod Identity associations, which
// moto does not implement (its EKS has no pod-identity-associations
// routes): the gate answers the association API itself, after deciding it
// like any request, and PodIdentitySession assumes an association's role
// as EKS Auth does.
type podIdentity struct {
	mu    sync.Mutex
	assoc map[string]*association // by ARN
}

type association struct {
	ClusterName    string            `json:"clusterName"`
	Namespace      string            `json:"namespace"`
	ServiceAccount string            `json:"serviceAccount"`
	RoleARN        string            `json:"roleArn"`
	ARN            string            `json:"associationArn"`
	ID             string            `json:"associationId"`
	Tags           map[string]string `json:"tags"`
	CreatedAt      float64           `json:"createdAt"`
	ModifiedAt     float64           `json:"modifiedAt"`
}

// summary is the association as ListPodIdentityAssociations gives it:
// without its role, times and tags (EKS API Reference,
// PodIdentityAssociationSummary).
func (a *association) summary() map[string]string {
	return map[string]string{"clusterName": a.ClusterName, "namespace": a.Namespace, "serviceAccount": a.ServiceAccount,
		"associationArn": a.ARN, "associationId": a.ID}
}

// associationARN is the ARN EKS gives an association: the
// podidentityassociation resource type of the Service Authorization
// Reference.
func associationARN(region, account, cluster, id string) string {
	return "arn:" + iam.Partition(region) + ":eks:" + region + ":" + account + ":podidentityassociation/" + cluster + "/" + id
}

// answer answers the association API and tagging of associations; it
// reports whether it did. The request was decided already.
func (m *podIdentity) answer(ctx context.Context, w http.ResponseWriter, g *Gate, p *principal, req *request) bool {
	switch req.Operation {
	case "CreatePodIdentityAssociation", "ListPodIdentityAssociations":
		cluster := req.Labels["name"]
		exists, err := g.clusterExists(ctx, p.Account, req.Region, cluster)
		switch {
		case err != nil:
			eksError(w, http.StatusInternalServerError, "ServerException", "the IAM gate: "+err.Error())
		case !exists:
			eksError(w, http.StatusNotFound, "ResourceNotFoundException", "No cluster found for name: "+cluster+".")
		case req.Operation == "CreatePodIdentityAssociation":
			m.create(w, p, req)
		default:
			m.list(w, p, req)
		}
	case "DescribePodIdentityAssociation", "UpdatePodIdentityAssociation", "DeletePodIdentityAssociation":
		m.one(w, p, req)
	case "TagResource", "UntagResource", "ListTagsForResource":
		if !strings.Contains(req.Labels["resourceArn"], ":podidentityassociation/") {
			return false
		}
		m.tags(w, p, req)
	default:
		return false
	}
	return true
}

// create makes an association; a ServiceAccount has one at most.
func (m *podIdentity) create(w http.ResponseWriter, p *principal, req *request) {
	cluster := req.Labels["name"]
	ns, sa, role := req.str("namespace"), req.str("serviceAccount"), req.str("roleArn")
	if ns == "" || sa == "" || role == "" {
		eksError(w, http.StatusBadRequest, "InvalidParameterException", "namespace, serviceAccount and roleArn are required")
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.assoc == nil {
		m.assoc = map[string]*association{}
	}
	for _, a := range m.assoc {
		if accountOf(a.ARN) == p.Account && a.ClusterName == cluster && a.Namespace == ns && a.ServiceAccount == sa {
			eksError(w, http.StatusConflict, "ResourceInUseException", "Association already exists: "+a.ID)
			return
		}
	}
	now := float64(time.Now().Unix())
	id := "a-" + randomID(17)
	a := &association{ClusterName: cluster, Namespace: ns, ServiceAccount: sa, RoleARN: role, ID: id,
		ARN: associationARN(req.Region, p.Account, cluster, id), Tags: stringMap(req.JSON["tags"]), CreatedAt: now, ModifiedAt: now}
	m.assoc[a.ARN] = a
	writeJSON(w, map[string]any{"association": a})
}

// list lists a cluster's associations, filtered as the request says.
func (m *podIdentity) list(w http.ResponseWriter, p *principal, req *request) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := []map[string]string{}
	for _, a := range m.assoc {
		if accountOf(a.ARN) == p.Account && strings.Contains(a.ARN, ":"+req.Region+":") && a.ClusterName == req.Labels["name"] &&
			(req.Query.Get("namespace") == "" || req.Query.Get("namespace") == a.Namespace) &&
			(req.Query.Get("serviceAccount") == "" || req.Query.Get("serviceAccount") == a.ServiceAccount) {
			out = append(out, a.summary())
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i]["associationId"] < out[j]["associationId"] })
	writeJSON(w, map[string]any{"associations": out})
}

// one describes, updates (its role) or deletes an association.
func (m *podIdentity) one(w http.ResponseWriter, p *principal, req *request) {
	m.mu.Lock()
	defer m.mu.Unlock()
	a := m.assoc[associationARN(req.Region, p.Account, req.Labels["name"], req.Labels["associationId"])]
	if a == nil {
		eksError(w, http.StatusNotFound, "ResourceNotFoundException", "No Pod Identity Association found with id: "+req.Labels["associationId"])
		return
	}
	switch req.Operation {
	case "UpdatePodIdentityAssociation":
		if role := req.str("roleArn"); role != "" {
			a.RoleARN, a.ModifiedAt = role, float64(time.Now().Unix())
		}
	case "DeletePodIdentityAssociation":
		delete(m.assoc, a.ARN)
	}
	writeJSON(w, map[string]any{"association": a})
}

// tags lists, adds or removes an association's tags.
func (m *podIdentity) tags(w http.ResponseWriter, p *principal, req *request) {
	m.mu.Lock()
	defer m.mu.Unlock()
	a := m.assoc[req.Labels["resourceArn"]]
	if a == nil || accountOf(a.ARN) != p.Account {
		eksError(w, http.StatusNotFound, "NotFoundException", "Resource not found: "+req.Labels["resourceArn"])
		return
	}
	switch req.Operation {
	case "TagResource":
		for k, v := range stringMap(req.JSON["tags"]) {
			a.Tags[k] = v
		}
	case "UntagResource":
		for _, k := range req.Query["tagKeys"] {
			delete(a.Tags, k)
		}
	}
	writeJSON(w, map[string]any{"tags": a.Tags})
}

// find is the association of a ServiceAccount of a cluster of account in
// region, or nil.
func (m *podIdentity) find(account, region, cluster, namespace, sa string) *association {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, a := range m.assoc {
		if accountOf(a.ARN) == account && strings.Contains(a.ARN, ":"+region+":") && a.ClusterName == cluster &&
			a.Namespace == namespace && a.ServiceAccount == sa {
			c := *a
			return &c
		}
	}
	return nil
}

// PodIdentitySession is what EKS Auth's AssumeRoleForPodIdentity gives a pod
// of a ServiceAccount of cluster (in account and region): the role of the
// ServiceAccount's association, assumed by EKS Pod Identity's service
// principal with the session tags it sets (Amazon EKS User Guide, "Grant
// Pods access to AWS resources based on tags": eks-cluster-arn,
// eks-cluster-name, kubernetes-namespace, kubernetes-service-account,
// kubernetes-pod-name, kubernetes-pod-uid). The role's trust decides
// sts:AssumeRole and sts:TagSession, as STS does; both decisions are
// written to the ledger (and asked of the second judge, when the gate has
// one). A ServiceAccount without an association gets nothing, as a pod
// without one gets no credentials from the agent.
func (g *Gate) PodIdentitySession(ctx context.Context, account, region, cluster, namespace, sa, pod string) (aws.Credentials, error) {
	a := g.pods.find(account, region, cluster, namespace, sa)
	who := "EKS Pod Identity for " + namespace + "/" + sa + " of " + cluster
	if a == nil {
		reason := "no Pod Identity association for " + namespace + "/" + sa + " in cluster " + cluster + " of " + account
		g.ledger.add(Entry{Principal: who, Operation: "eks-auth:AssumeRoleForPodIdentity", Action: "eks-auth:AssumeRoleForPodIdentity",
			Resource: "arn:" + iam.Partition(region) + ":eks:" + region + ":" + account + ":cluster/" + cluster, Region: region, Decision: "deny", Reason: reason})
		return aws.Credentials{}, fmt.Errorf("AccessDeniedException: %s", reason)
	}
	role, err := g.view.role(ctx, a.RoleARN)
	if err != nil {
		return aws.Credentials{}, err
	}
	if role == nil {
		g.ledger.add(Entry{Principal: who, Operation: "sts:AssumeRole", Action: "sts:AssumeRole", Resource: a.RoleARN, Region: region, Decision: "deny",
			Reason: "no role " + a.RoleARN + " exists"})
		return aws.Credentials{}, fmt.Errorf("AccessDenied: no role %s exists", a.RoleARN)
	}
	tags := map[string]string{
		"eks-cluster-arn":            "arn:" + iam.Partition(region) + ":eks:" + region + ":" + account + ":cluster/" + cluster,
		"eks-cluster-name":           cluster,
		"kubernetes-namespace":       namespace,
		"kubernetes-service-account": sa,
		"kubernetes-pod-name":        pod,
		"kubernetes-pod-uid":         randomID(8) + "-" + randomID(4) + "-" + randomID(4) + "-" + randomID(4) + "-" + randomID(12),
	}
	keys := map[string][]string{"aws:ResourceAccount": {account}}
	tagContext(tags, keys)
	for _, action := range []string{"sts:AssumeRole", "sts:TagSession"} {
		az := iamjudge.Authorization{Request: iamjudge.Request{Caller: iamjudge.Caller{Service: PodIdentityService, Account: account}, Action: action,
			Resource: a.RoleARN, Context: keys}, ResourcePolicy: role.Trust, ResourceAccount: account, TrustRequired: true}
		v := iamjudge.Authorize(az)
		entry := Entry{Principal: who, Operation: "sts:AssumeRole", Action: action, Resource: a.RoleARN, Region: region, Reason: v.Reason, Decision: "allow"}
		if g.second != nil {
			g.judgeAgain(az, v, &entry)
		}
		if v.Decision != iamjudge.Allow {
			entry.Decision = "deny"
			g.ledger.add(entry)
			return aws.Credentials{}, fmt.Errorf("AccessDenied: %s may not %s %s for %s/%s: %s", PodIdentityService, action, a.RoleARN, namespace, sa, v.Reason)
		}
		g.ledger.add(entry)
	}
	cfg, err := g.view.admin(ctx, account)
	if err != nil {
		return aws.Credentials{}, err
	}
	in := &sts.AssumeRoleInput{RoleArn: aws.String(a.RoleARN), RoleSessionName: aws.String("eks-" + cluster + "-" + pod)}
	for k, v := range tags {
		in.Tags = append(in.Tags, ststypes.Tag{Key: aws.String(k), Value: aws.String(v)})
	}
	if len(*in.RoleSessionName) > 64 {
		in.RoleSessionName = aws.String((*in.RoleSessionName)[:64])
	}
	out, err := sts.NewFromConfig(cfg).AssumeRole(ctx, in)
	if err != nil {
		return aws.Credentials{}, err
	}
	cr := out.Credentials
	g.keys.add(&principal{AccessKey: aws.ToString(cr.AccessKeyId), Secret: aws.ToString(cr.SecretAccessKey), Account: account,
		ARN: aws.ToString(out.AssumedRoleUser.Arn), RoleARN: a.RoleARN, SessionTags: tags})
	return aws.Credentials{AccessKeyID: aws.ToString(cr.AccessKeyId), SecretAccessKey: aws.ToString(cr.SecretAccessKey), SessionToken: aws.ToString(cr.SessionToken)}, nil
}

// clusterExists asks the emulator, as the account's administrator, whether
// the EKS cluster exists.
func (g *Gate) clusterExists(ctx context.Context, account, region, cluster string) (bool, error) {
	cfg, err := g.view.admin(ctx, account)
	if err != nil {
		return false, err
	}
	cfg.Region = region
	_, err = eks.NewFromConfig(cfg).DescribeCluster(ctx, &eks.DescribeClusterInput{Name: aws.String(cluster)})
	if err != nil {
		if strings.Contains(err.Error(), "ResourceNotFoundException") {
			return false, nil
		}
		return false, err
	}
	return true, nil
}

func eksError(w http.ResponseWriter, status int, code, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Amzn-ErrorType", code)
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"message": message})
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func stringMap(v any) map[string]string {
	out := map[string]string{}
	m, _ := v.(map[string]any)
	for k, x := range m {
		if s, ok := x.(string); ok {
			out[k] = s
		}
	}
	return out
}

// randomID is n characters of [a-z0-9].
func randomID(n int) string {
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, n)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b)
}
