package argohealth

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/organizations"
	orgtypes "github.com/aws/aws-sdk-go-v2/service/organizations/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/aws-sdk-go-v2/service/sts"

	"github.com/regionctl/regionctl/internal/gitbase"
	"github.com/regionctl/regionctl/internal/testrepo"
)

// bucket is an in-memory S3 of a few buckets, each object with the time S3
// stamped it.
type bucket struct {
	objects map[string]map[string][]byte // bucket → key → body
	stamped map[string]time.Time         // bucket/key → LastModified
	now     time.Time
}

func newBuckets(now time.Time) *bucket {
	return &bucket{objects: map[string]map[string][]byte{}, stamped: map[string]time.Time{}, now: now}
}

func (b *bucket) PutObject(_ context.Context, in *s3.PutObjectInput, _ ...func(*s3.Options)) (*s3.PutObjectOutput, error) {
	body, err := io.ReadAll(in.Body)
	if err != nil {
		return nil, err
	}
	b.put(aws.ToString(in.Bucket), aws.ToString(in.Key), body, b.now)
	return &s3.PutObjectOutput{}, nil
}

func (b *bucket) put(bkt, key string, body []byte, at time.Time) {
	if b.objects[bkt] == nil {
		b.objects[bkt] = map[string][]byte{}
	}
	b.objects[bkt][key] = body
	b.stamped[bkt+"/"+key] = at
}

func (b *bucket) ListObjectsV2(_ context.Context, in *s3.ListObjectsV2Input, _ ...func(*s3.Options)) (*s3.ListObjectsV2Output, error) {
	bkt := aws.ToString(in.Bucket)
	var keys []string
	for k := range b.objects[bkt] {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	// One object a page, so that every listing pages.
	start := 0
	if in.ContinuationToken != nil {
		for i, k := range keys {
			if k == *in.ContinuationToken {
				start = i
			}
		}
	}
	out := &s3.ListObjectsV2Output{IsTruncated: aws.Bool(false)}
	if start < len(keys) {
		k := keys[start]
		out.Contents = []s3types.Object{{Key: aws.String(k), LastModified: aws.Time(b.stamped[bkt+"/"+k])}}
		if start+1 < len(keys) {
			out.IsTruncated, out.NextContinuationToken = aws.Bool(true), aws.String(keys[start+1])
		}
	}
	return out, nil
}

func (b *bucket) GetObject(_ context.Context, in *s3.GetObjectInput, _ ...func(*s3.Options)) (*s3.GetObjectOutput, error) {
	body := b.objects[aws.ToString(in.Bucket)][aws.ToString(in.Key)]
	return &s3.GetObjectOutput{Body: io.NopCloser(bytes.NewReader(body))}, nil
}

// tagged answers Organizations' tags of accounts: account → region/cluster.
type tagged map[string]string

func (a tagged) ListTagsForResource(_ context.Context, in *organizations.ListTagsForResourceInput, _ ...func(*organizations.Options)) (*organizations.ListTagsForResourceOutput, error) {
	region, cluster, _ := strings.Cut(a[aws.ToString(in.ResourceId)], "/")
	out := &organizations.ListTagsForResourceOutput{}
	if region != "" {
		out.Tags = []orgtypes.Tag{{Key: aws.String("regionctl:region"), Value: aws.String(region)}, {Key: aws.String("regionctl:cluster"), Value: aws.String(cluster)},
			{Key: aws.String("regionctl:environment"), Value: aws.String("staging")}}
	}
	return out, nil
}

type caller string

func (c caller) GetCallerIdentity(context.Context, *sts.GetCallerIdentityInput, ...func(*sts.Options)) (*sts.GetCallerIdentityOutput, error) {
	return &sts.GetCallerIdentityOutput{Account: aws.String(string(c))}, nil
}

// kube answers the Kubernetes API's list of Applications of namespace
// argocd for one token, a page of one at a time, with the label selector.
func kube(t *testing.T, apps []map[string]any) *httptest.Server {
	return httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/apis/argoproj.io/v1alpha1/namespaces/argocd/applications" || r.Header.Get("Authorization") != "Bearer sa-token" {
			w.WriteHeader(http.StatusForbidden)
			json.NewEncoder(w).Encode(map[string]any{"kind": "Status", "message": "applications.argoproj.io is forbidden"})
			return
		}
		k, v, _ := strings.Cut(r.URL.Query().Get("labelSelector"), "=")
		var items []map[string]any
		for _, a := range apps {
			if a["metadata"].(map[string]any)["labels"].(map[string]string)[k] == v {
				items = append(items, a)
			}
		}
		start := 0
		if c := r.URL.Query().Get("continue"); c != "" {
			start = len(c)
		}
		page := map[string]any{"metadata": map[string]any{}, "items": items[start : start+1]}
		if start+1 < len(items) {
			page["metadata"] = map[string]any{"continue": strings.Repeat("x", start+1)}
		}
		json.NewEncoder(w).Encode(page)
	}))
}

// TestReportCarriesWhatTheGateReads: the reporter lists its own cluster's
// Applications page by page with its ServiceAccount's token, keeps the
// fields the gate reads and no others, and puts them under its account's
// prefix; a refusal of the API server is named.
func TestReportCarriesWhatTheGateReads(t *testing.T) {
	root := clusterApp("root", "stage", "eu-west-1", "mc01", "root", "Healthy", "Synced", strings.Repeat("a", 40))
	root["metadata"].(map[string]any)["labels"].(map[string]string)["team"] = "platform"
	root["spec"] = map[string]any{"source": map[string]any{"repoURL": "https://git.example.com/fleet.git"}}
	srv := kube(t, []map[string]any{
		root,
		clusterApp("hypershift-operator", "stage", "eu-west-1", "mc01", "hypershift-operator", "Healthy", "Synced", "v0.1.59"),
		clusterApp("other", "stage", "eu-west-1", "mc02", "root", "Degraded", "Synced", "x"),
	})
	defer srv.Close()
	k := &Kube{Server: srv.URL, Token: "sa-token", HTTP: srv.Client()}
	now := time.Date(2026, 11, 28, 1, 0, 0, 0, time.UTC)
	r, err := Collect(context.Background(), k, "argocd", "eu-west-1", "mc01", now)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Applications) != 2 || r.Applications[0].Metadata.Name != "root" || r.Applications[1].Metadata.Name != "hypershift-operator" {
		t.Fatalf("report holds %+v, want mc01's two Applications from both pages", r.Applications)
	}
	s3 := newBuckets(now)
	p := &Publisher{S3: s3, STS: caller("111122223333"), Bucket: "health-eu-west-1"}
	where, err := p.Publish(context.Background(), r)
	if err != nil || where != "s3://health-eu-west-1/111122223333/health.json" {
		t.Fatalf("published to %q: %v", where, err)
	}
	body := string(s3.objects["health-eu-west-1"]["111122223333/health.json"])
	for _, leak := range []string{"team", "repoURL", "mc02"} {
		if strings.Contains(body, leak) {
			t.Errorf("the report carries %q, which the gate does not read: %s", leak, body)
		}
	}
	for _, want := range []string{`"cluster":"mc01"`, `"component":"root"`, `"status":"Healthy"`, strings.Repeat("a", 40)} {
		if !strings.Contains(body, want) {
			t.Errorf("the report lacks %s: %s", want, body)
		}
	}
	if _, err := (&Publisher{S3: s3, STS: caller("arn:aws:iam::x"), Bucket: "b"}).Publish(context.Background(), r); err == nil {
		t.Error("an account id that is not 12 digits made a key")
	}
	k.Token = "another"
	if _, err := Collect(context.Background(), k, "argocd", "eu-west-1", "mc01", now); err == nil || !strings.Contains(err.Error(), "403 Forbidden: applications.argoproj.io is forbidden") {
		t.Errorf("a refused list: %v", err)
	}
}

func TestInClusterReadsThePodsServiceAccount(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{"KUBERNETES_SERVICE_HOST": "10.0.0.1", "KUBERNETES_SERVICE_PORT": "443"}
	if _, err := InCluster(func(k string) string { return env[k] }, dir); err == nil || !strings.Contains(err.Error(), "token") {
		t.Errorf("no token: %v", err)
	}
	srv := httptest.NewTLSServer(http.NotFoundHandler())
	defer srv.Close()
	os.WriteFile(filepath.Join(dir, "token"), []byte("sa-token\n"), 0o600)
	os.WriteFile(filepath.Join(dir, "ca.crt"), []byte("not pem"), 0o600)
	if _, err := InCluster(func(k string) string { return env[k] }, dir); err == nil || !strings.Contains(err.Error(), "no PEM") {
		t.Errorf("a CA that is not PEM: %v", err)
	}
	os.WriteFile(filepath.Join(dir, "ca.crt"), pemOf(srv), 0o600)
	k, err := InCluster(func(k string) string { return env[k] }, dir)
	if err != nil || k.Server != "https://10.0.0.1:443" || k.Token != "sa-token" {
		t.Errorf("in cluster: %+v %v", k, err)
	}
	if _, err := InCluster(func(string) string { return "" }, dir); err == nil || !strings.Contains(err.Error(), "not in a Kubernetes pod") {
		t.Errorf("outside a pod: %v", err)
	}
}

func pemOf(srv *httptest.Server) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
}

// TestReportGateJudgesWhatClustersReported: the gate reads each region's
// bucket and passes a sector only when every cluster reported once,
// recently by S3's clock, with its Applications Healthy and Synced at the
// commit or after it; it names each cluster that blocks and why.
func TestReportGateJudgesWhatClustersReported(t *testing.T) {
	r := testrepo.New(t, nil)
	r.Write("a", "1")
	introduced := r.Commit("introduce").String()
	r.Write("a", "2")
	later := r.Commit("later").String()
	repo, err := gitbase.Open(r.Dir)
	if err != nil {
		t.Fatal(err)
	}
	defer repo.Close()
	now := time.Date(2026, 11, 28, 1, 0, 0, 0, time.UTC)
	report := func(region, cluster string, apps ...map[string]any) []byte {
		var list []Application
		b, _ := json.Marshal(apps)
		json.Unmarshal(b, &list)
		out, _ := json.Marshal(Report{Version: ReportVersion, Region: region, Cluster: cluster, ReportedAt: now, Applications: list})
		return out
	}
	healthy := func(region, cluster, rev string) []byte {
		return report(region, cluster,
			clusterApp("root", "stage", region, cluster, "root", "Healthy", "Synced", rev),
			clusterApp("hypershift-operator", "stage", region, cluster, "hypershift-operator", "Healthy", "Synced", "v0.1.59"))
	}
	targets := []ReportTarget{{"eu-west-1", "mc01", "health-eu-west-1"}, {"eu-west-1", "mc02", "health-eu-west-1"}, {"us-west-2", "mc01", "health-us-west-2"}}
	accounts := tagged{"111111111111": "eu-west-1/mc01", "222222222222": "eu-west-1/mc02", "333333333333": "us-west-2/mc01", "444444444444": "eu-west-1/mc02",
		"555555555555": "eu-west-1/mc01", "666666666666": "eu-west-1/mc03"}
	gate := func(s3 *bucket) *ReportGate {
		return &ReportGate{Client: Client{Repo: repo}, S3: s3, Accounts: accounts, MaxAge: 10 * time.Minute, Now: func() time.Time { return now },
			Targets: func(string) ([]ReportTarget, error) { return targets, nil }}
	}
	fresh := now.Add(-2 * time.Minute)
	all := func() *bucket {
		s3 := newBuckets(now)
		s3.put("health-eu-west-1", "111111111111/health.json", healthy("eu-west-1", "mc01", later), fresh)
		s3.put("health-eu-west-1", "222222222222/health.json", healthy("eu-west-1", "mc02", introduced), fresh)
		s3.put("health-us-west-2", "333333333333/health.json", healthy("us-west-2", "mc01", later), fresh)
		s3.put("health-us-west-2", "notes/readme.txt", []byte("not a report"), fresh)
		return s3
	}
	if msg, err := gate(all()).Check("stage", "", introduced); err != nil || !strings.Contains(msg, "6 Applications on 3 clusters") {
		t.Fatalf("every cluster healthy at or after the commit: %q %v", msg, err)
	}
	if msg, err := gate(all()).Check("stage", "hypershift-operator", introduced); err != nil || !strings.Contains(msg, "3 Applications on 3 clusters") {
		t.Fatalf("one component: %q %v", msg, err)
	}
	// A stale report of a cluster's former account is no second claim.
	remade := all()
	remade.put("health-eu-west-1", "444444444444/health.json", healthy("eu-west-1", "mc02", later), now.Add(-time.Hour))
	if msg, err := gate(remade).Check("stage", "", introduced); err != nil {
		t.Errorf("a stale report of a former account beside a fresh one: %q %v", msg, err)
	}
	cases := []struct {
		name  string
		spoil func(*bucket)
		want  string
	}{
		{"a cluster that never reported", func(s *bucket) { delete(s.objects["health-eu-west-1"], "222222222222/health.json") },
			"eu-west-1/mc02: no report in s3://health-eu-west-1"},
		{"a stale report", func(s *bucket) { s.stamped["health-us-west-2/333333333333/health.json"] = now.Add(-11 * time.Minute) },
			"us-west-2/mc01: its last report (s3://health-us-west-2/333333333333/health.json) is 11m0s old, more than 10m0s"},
		{"a degraded Application", func(s *bucket) {
			s.put("health-eu-west-1", "222222222222/health.json", report("eu-west-1", "mc02",
				clusterApp("root", "stage", "eu-west-1", "mc02", "root", "Degraded", "Synced", later)), fresh)
		}, "eu-west-1/mc02: root is Degraded and Synced"},
		{"a root behind the commit", func(s *bucket) {
			s.put("health-eu-west-1", "222222222222/health.json", healthy("eu-west-1", "mc02", strings.Repeat("0", 40)), fresh)
		}, "eu-west-1/mc02: root is synced at 00000000, not at"},
		{"two accounts claim one cluster", func(s *bucket) {
			s.put("health-eu-west-1", "444444444444/health.json", healthy("eu-west-1", "mc02", later), fresh)
		}, "eu-west-1/mc02: reported by more than one account (222222222222/health.json, 444444444444/health.json)"},
		{"a cluster made again reports while its old account's report is stale, and it is degraded", func(s *bucket) {
			s.put("health-eu-west-1", "444444444444/health.json", healthy("eu-west-1", "mc02", later), now.Add(-time.Hour))
			s.put("health-eu-west-1", "222222222222/health.json", report("eu-west-1", "mc02",
				clusterApp("root", "stage", "eu-west-1", "mc02", "root", "Degraded", "Synced", later)), fresh)
		}, "eu-west-1/mc02: root is Degraded and Synced"},
		{"another sector's Applications only", func(s *bucket) {
			s.put("health-eu-west-1", "222222222222/health.json", report("eu-west-1", "mc02",
				clusterApp("root", "sector-1", "eu-west-1", "mc02", "root", "Healthy", "Synced", later)), fresh)
		}, "eu-west-1/mc02: no Application in s3://health-eu-west-1/222222222222/health.json"},
	}
	for _, c := range cases {
		s3 := all()
		c.spoil(s3)
		if _, err := gate(s3).Check("stage", "", introduced); err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "1 of 3 clusters of stage block") {
			t.Errorf("%s: %v\nwant %q", c.name, err, c.want)
		}
	}
	refused := []struct {
		name  string
		spoil func(*bucket)
		want  string
	}{
		{"a report of another region in the bucket", func(s *bucket) {
			s.put("health-us-west-2", "555555555555/health.json", healthy("eu-west-1", "mc01", later), fresh)
		}, "s3://health-us-west-2/555555555555/health.json reports cluster mc01 of region eu-west-1 into the bucket of us-west-2"},
		{"a report with a field this regionctl does not know", func(s *bucket) {
			s.put("health-us-west-2", "333333333333/health.json", []byte(`{"version":1,"region":"us-west-2","cluster":"mc01","verdict":"pass"}`), fresh)
		}, `unknown field "verdict"`},
		{"a report of another version", func(s *bucket) {
			s.put("health-us-west-2", "333333333333/health.json", []byte(`{"version":2,"region":"us-west-2","cluster":"mc01"}`), fresh)
		}, "a report of version 2"},
		{"an account vouching for a sibling that has not reported", func(s *bucket) {
			delete(s.objects["health-eu-west-1"], "222222222222/health.json")
			s.put("health-eu-west-1", "666666666666/health.json", healthy("eu-west-1", "mc02", later), fresh)
		}, "s3://health-eu-west-1/666666666666/health.json: reports cluster eu-west-1/mc02, but account 666666666666 is tagged as eu-west-1/mc03's"},
		{"an account Organizations does not tag", func(s *bucket) {
			s.put("health-eu-west-1", "777777777777/health.json", healthy("eu-west-1", "mc03", later), fresh)
		}, "account 777777777777 is tagged as (none)/(none)'s"},
		{"an oversized report", func(s *bucket) {
			s.put("health-us-west-2", "333333333333/health.json", bytes.Repeat([]byte(" "), maxReport+1), fresh)
		}, "is over 1048576 bytes"},
	}
	for _, c := range refused {
		s3 := all()
		c.spoil(s3)
		if _, err := gate(s3).Check("stage", "", introduced); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v\nwant %q", c.name, err, c.want)
		}
	}
}
