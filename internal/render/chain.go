package render

import (
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/regionctl/regionctl/internal/config"
	"github.com/regionctl/regionctl/internal/diag"
	"github.com/regionctl/regionctl/internal/iampolicy"
	"github.com/regionctl/regionctl/internal/render/iam"
	"github.com/regionctl/regionctl/internal/render/tekton"
	"github.com/regionctl/regionctl/internal/render/tfvars"
	"github.com/regionctl/regionctl/terraform"
)

// chainRegion is what the identity chain of one region is made of, read
// from its clusters' effective config.
type chainRegion struct {
	iam.Region
	// ManagementOU is the OU path of the region's management cluster
	// accounts ("" when it has none).
	ManagementOU string
	// EtcdBackupRetention is how many days the DR account keeps a
	// snapshot.
	EtcdBackupRetention any
	// Unchanged says a review left the region's management clusters out
	// (they are the same on both sides): only CentralStateBucket is known,
	// and the region's files are not rendered.
	Unchanged bool `json:"-"`
}

// regionChains builds every region's chain inputs and checks what the
// chain needs of the config: one state bucket and one OU for a region's
// management clusters, neither shared with its regional cluster, and no OU
// of management cluster accounts shared between regions.
func regionChains(f *config.Fleet, skipRegions map[string]bool) (map[string]*chainRegion, diag.Diagnostics) {
	var diags diag.Diagnostics
	byRegion := map[string][]*config.Cluster{}
	for _, c := range f.Clusters {
		if c.Effective != nil {
			byRegion[c.Region.Name] = append(byRegion[c.Region.Name], c)
		}
	}
	// The clusters by account name, for the DR accounts' check: once,
	// not once per region.
	byAccount := map[string][]*config.Cluster{}
	for _, c := range f.Clusters {
		if c.Effective != nil {
			n := str(c, "account", "name")
			byAccount[n] = append(byAccount[n], c)
		}
	}
	out := map[string]*chainRegion{}
	ouOwner := map[string]*config.Cluster{}
	approvers := Approvers(f)
	for _, reg := range f.Regions {
		if reg.Sector == nil {
			continue
		}
		cr := &chainRegion{Region: iam.Region{Name: reg.Name, Environment: reg.Sector.Environment}}
		var regional *config.Cluster
		var first *config.Cluster // the first management cluster, for its bucket and OU
		for _, c := range byRegion[reg.Name] {
			if c.Type == "regional" {
				regional = c
			}
		}
		if regional == nil {
			continue // nothing to bootstrap: the central pipeline refuses such a region
		}
		cr.TektonNamespace = TektonNamespace(f)
		cr.Approvers = approvers
		if len(approvers) == 0 {
			diags = append(diags, unapprovable(reg, byRegion[reg.Name])...)
		}
		cr.CentralStateBucket = str(regional, "state_bucket")
		cr.EtcdBackupBucket = str(regional, "etcd_backup", "bucket")
		cr.HealthBucket = str(regional, "argocd", "health_bucket")
		diags = append(diags, regionWide(regional, byRegion[reg.Name], "argocd", "health_bucket")...)
		diags = append(diags, regionWide(regional, byRegion[reg.Name], "platform_api", "domain")...)
		if v := regional.Effective.Lookup("etcd_backup", "retention_days"); v != nil {
			cr.EtcdBackupRetention = v.Interface()
		}
		if dr := regional.Effective.Lookup("etcd_backup", "account", "name"); dr != nil {
			for _, c := range byAccount[dr.Str] {
				diags = append(diags, diag.Errorf(dr.Origin.Pos, fmt.Sprintf("The central pipeline finds accounts by name; the DR account of %s and the account of %s would be one. Set etcd_backup.account.name, or the cluster's account.name, to another name.", reg.Name, c.ID()),
					"%s: DR account name %s is also the account of %s", regional.ID(), dr.Str, c.ID()))
			}
		}
		first, ds := managementChain(cr, byRegion[reg.Name], skipRegions[reg.Name])
		diags = append(diags, ds...)
		if cr.Unchanged {
			out[reg.Name] = cr
			continue
		}
		if first == nil {
			cr.ManagementStateBucket = iam.StateBucket(reg.Name)
			diags = append(diags, oidcPattern(cr, regional)...)
		} else {
			diags = append(diags, separated(cr, regional, first, ouOwner)...)
		}
		sort.Slice(cr.Clusters, func(i, j int) bool { return cr.Clusters[i].Name < cr.Clusters[j].Name })
		out[reg.Name] = cr
	}
	return out, diags
}

// unapprovable are the errors of the clusters of a region that need an
// approval when nobody may approve (gitops.approvers is empty).
func unapprovable(reg *config.Region, clusters []*config.Cluster) diag.Diagnostics {
	var diags diag.Diagnostics
	for _, c := range clusters {
		if !c.NeedsApproval() {
			continue
		}
		why, at := "its sector has approval: always", reg.Sector.Doc.Value.Get("approval")
		if c.Bool("delete") {
			why, at = "it is being destroyed", c.Effective.Lookup("delete")
		}
		pos := diag.Pos{File: c.Doc.File}
		if at != nil {
			pos = at.Origin.Pos
		}
		diags = append(diags, diag.Errorf(pos, "Its Terraform run waits for an approver to approve its reviewed plan, and nobody may: list the IAM roles that approve in gitops.approvers of config/global.",
			"%s needs an approval (%s), and gitops.approvers is empty", c.ID(), why))
	}
	return diags
}

// regionWide holds every cluster of a region to the regional cluster's
// value at path, for values that name one thing of the region: the health
// bucket the central pipeline makes (a report put anywhere else never
// reaches the gate), and the platform API's domain, in whose zone the
// Maestro broker's name is served (an agent given another would never
// connect).
func regionWide(regional *config.Cluster, clusters []*config.Cluster, path ...string) diag.Diagnostics {
	key := strings.Join(path, ".")
	want := regional.Effective.Lookup(path...)
	if want == nil || want.Kind != config.String {
		return nil
	}
	var diags diag.Diagnostics
	for _, c := range clusters {
		v := c.Effective.Lookup(path...)
		if v == nil || v.Kind != config.String || v.Str == want.Str {
			continue
		}
		diags = append(diags, diag.Errorf(v.Origin.Pos, fmt.Sprintf("A region has one %s, the one its regional cluster %s names (%s); set it in the region's layer instead.", key, regional.ID(), want.Str),
			"%s: %s %s is not its region's %s", c.ID(), key, v.Str, want.Str))
	}
	return diags
}

// managementChain adds a region's management clusters (of clusters) to its
// chain cr, or marks it Unchanged when a review left them out (skip), and
// holds them to one state bucket and one OU; first is the first of them,
// whose bucket and OU the chain takes.
func managementChain(cr *chainRegion, clusters []*config.Cluster, skip bool) (first *config.Cluster, diags diag.Diagnostics) {
	for _, c := range clusters {
		if c.Type != "management" {
			continue
		}
		if skip {
			cr.Unchanged = true
			continue
		}
		cr.Clusters = append(cr.Clusters, iam.ManagementCluster{Name: c.Name, OIDCBucket: str(c, "hypershift", "oidc_bucket")})
		diags = append(diags, oidcPattern(cr, c)...)
		bucket, ou := c.Effective.Lookup("state_bucket"), c.Effective.Lookup("account", "ou")
		if bucket == nil || ou == nil {
			continue // #Cluster sets both; a cluster without them failed its check
		}
		if first == nil {
			first, cr.ManagementStateBucket, cr.ManagementOU = c, bucket.Str, ou.Str
			continue
		}
		if bucket.Str != cr.ManagementStateBucket {
			diags = append(diags, diag.Errorf(bucket.Origin.Pos, fmt.Sprintf("%s uses %s. The state of a region's management clusters lives in one bucket of the regional account, whose policy admits only the region's pipeline; set state_bucket once for the region's management clusters.", first.ID(), cr.ManagementStateBucket),
				"%s: state_bucket %s differs from the other management clusters of %s", c.ID(), bucket.Str, cr.Name))
		}
		if ou.Str != cr.ManagementOU {
			diags = append(diags, diag.Errorf(ou.Origin.Pos, fmt.Sprintf("%s is in %s. The minting role of a region moves accounts into exactly one OU; put every management cluster of the region in the same account.ou.", first.ID(), cr.ManagementOU),
				"%s: account.ou %s differs from the other management clusters of %s", c.ID(), ou.Str, cr.Name))
		}
	}
	return first, diags
}

// separated holds a region's management clusters apart from its regional
// cluster (state bucket, OU, the DR account's OU) and from every other
// region's (ouOwner: the first management cluster of each OU so far).
func separated(cr *chainRegion, regional, first *config.Cluster, ouOwner map[string]*config.Cluster) diag.Diagnostics {
	var diags diag.Diagnostics
	if cr.ManagementStateBucket == cr.CentralStateBucket {
		v := first.Effective.Lookup("state_bucket")
		diags = append(diags, diag.Errorf(v.Origin.Pos, "The regional cluster's state belongs to the central pipeline (management account); the management clusters' to the regional pipeline (regional account). One bucket cannot live in both.",
			"%s: the management clusters of %s share the state bucket %s with the regional cluster", first.ID(), regional.Region.Name, cr.CentralStateBucket))
	}
	if dr := regional.Effective.Lookup("etcd_backup", "account", "ou"); dr != nil && dr.Str == cr.ManagementOU {
		diags = append(diags, diag.Errorf(dr.Origin.Pos, "The minting role of a region may bootstrap new accounts of its management clusters' OU; the DR account, which keeps their snapshots out of their reach, must not be among them. Give it an OU of its own (for example /platform/${environment}/${region}/dr).",
			"%s: the DR account of %s is in the management clusters' OU %s", regional.ID(), regional.Region.Name, dr.Str))
	}
	if rou := str(regional, "account", "ou"); cr.ManagementOU == rou {
		v := first.Effective.Lookup("account", "ou")
		diags = append(diags, diag.Errorf(v.Origin.Pos, "The minting role of a region may bootstrap new accounts of its management clusters' OU; the regional account must not be among them. Give management clusters an OU of their own (for example /platform/${environment}/${region}/${cluster_type}).",
			"%s: the management clusters of %s share the OU %s with the regional cluster", first.ID(), regional.Region.Name, rou))
	}
	if other, ok := ouOwner[cr.ManagementOU]; ok && other.Region != first.Region {
		v := first.Effective.Lookup("account", "ou")
		diags = append(diags, diag.Errorf(v.Origin.Pos, "Each region's minting role moves accounts only into its own region's OU; two regions sharing one would reach each other's accounts.",
			"%s: the OU %s of management cluster accounts is also %s's", first.ID(), cr.ManagementOU, other.ID()))
	} else {
		ouOwner[cr.ManagementOU] = first
	}
	return diags
}

// oidcPattern sets (or holds to) the pattern of cr's OIDC buckets the
// name of c's: its hypershift.oidc_bucket with its cluster name made *.
// The deploy role is one for every management cluster account of a
// region, so each cluster's bucket name must carry its own name where the
// others carry theirs.
func oidcPattern(cr *chainRegion, c *config.Cluster) diag.Diagnostics {
	v := c.Effective.Lookup("hypershift", "oidc_bucket")
	if v == nil || v.Kind != config.String {
		return nil
	}
	i := strings.LastIndex(v.Str, c.Name)
	if i < 0 {
		return diag.Diagnostics{diag.Errorf(v.Origin.Pos, fmt.Sprintf("One deploy role serves every management cluster account of %s and may keep only buckets named like its clusters' (the cluster's name in the place where the others have theirs, as the default hypershift-oidc-${environment}-${region}-${cluster} does). Put ${cluster} in the name.", c.Region.Name),
			"%s: hypershift.oidc_bucket %s does not name the cluster %s", c.ID(), v.Str, c.Name)}
	}
	pattern := v.Str[:i] + "*" + v.Str[i+len(c.Name):]
	if cr.OIDCBuckets == "" || c.Type == "regional" {
		cr.OIDCBuckets = pattern
		return nil
	}
	if pattern != cr.OIDCBuckets {
		return diag.Diagnostics{diag.Errorf(v.Origin.Pos, "One deploy role serves every management cluster account of the region and may keep only buckets of one name pattern; give the region's management clusters the same hypershift.oidc_bucket, with ${cluster} in it.",
			"%s: hypershift.oidc_bucket %s does not follow %s, the pattern of the other management clusters of %s", c.ID(), v.Str, cr.OIDCBuckets, c.Region.Name)}
	}
	return nil
}

// Approvers are the IAM roles of gitops.approvers (config/global).
func Approvers(f *config.Fleet) []string {
	var out []string
	if f == nil {
		return nil
	}
	if v := f.Global.Get("gitops").Get("approvers"); v != nil {
		for _, e := range v.Items {
			if e.Kind == config.String {
				out = append(out, e.Str)
			}
		}
	}
	return out
}

// TektonNamespace is the namespace the pipelines' ServiceAccounts run in
// (gitops.tekton_namespace of config/global, by default
// regionctl-pipelines, as pipelines/overlays install them).
func TektonNamespace(f *config.Fleet) string {
	if f == nil {
		return "regionctl-pipelines"
	}
	if v := f.Global.Get("gitops").Get("tekton_namespace"); v != nil && v.Kind == config.String {
		return v.Str
	}
	return "regionctl-pipelines"
}

func str(c *config.Cluster, keys ...string) string {
	if v := c.Effective.Lookup(keys...); v != nil && v.Kind == config.String {
		return v.Str
	}
	return ""
}

// chainFile is one IAM document of a region and its name under iam/.
type chainFile struct {
	name string
	doc  iam.Document
}

// chainArtifacts renders the IAM documents of a region's identity chain
// and the variables of its bootstrap, after checking the isolation rules.
func (r *renderer) chainArtifacts(reg *config.Region, cr *chainRegion) ([]Artifact, diag.Diagnostics) {
	dir := RegionDir(cr.Environment, cr.Name)
	at := diag.Pos{File: reg.Doc.File}
	docs := iam.RegionDocuments(cr.Region)
	if problems := iam.CheckIsolation(cr.Region, docs); len(problems) > 0 {
		return nil, diag.Diagnostics{diag.Errorf(at, strings.Join(problems, "\n"), "IAM documents of %s break the isolation rules", cr.Name)}
	}
	files := []chainFile{
		{"regional-pipeline-trust.json", docs.PipelineTrust},
		{"regional-pipeline-policy.json", docs.Pipeline},
		{"minting-role-trust.json", docs.MintingTrust},
		{"minting-role-policy.json", docs.Minting},
		{"management-cluster-deploy-role-trust.json", docs.DeployTrust},
		{"management-cluster-deploy-role-policy.json", docs.Deploy},
		{"management-cluster-boundary.json", docs.Boundary},
		{"scp-guardrails.json", docs.GuardrailSCP},
		{"rcp-data-perimeter.json", docs.DataPerimeterRCP},
		{"management-cluster-state-bucket-policy.json", docs.ManagementStateBucketPolicy},
		{"central-state-bucket-policy.json", docs.CentralStateBucketPolicy},
		{"etcd-backup-bucket-policy.json", docs.EtcdBackupBucketPolicy},
		{"health-bucket-policy.json", docs.HealthBucketPolicy},
	}
	if len(cr.Approvers) > 0 {
		files = append(files, chainFile{"approver-trust.json", docs.ApproverTrust}, chainFile{"approver-policy.json", docs.Approver},
			chainFile{"central-approver-policy.json", docs.CentralApprover})
	}
	arts, diags := iamFiles(dir, at, cr.Name, files)
	if diags != nil {
		return nil, diags
	}
	vars := tfvars.Vars{
		"region":                     cr.Name,
		"environment":                cr.Environment,
		"sector":                     reg.Sector.Name,
		"pipeline_role_name":         iam.PipelineRoleName(cr.Name),
		"minting_role_name":          iam.MintingRoleName(cr.Name),
		"deploy_role_stack_set_name": iam.DeployRoleStackSet(cr.Name),
		"guardrail_policy_name":      iam.GuardrailPolicy(cr.Name),
		"data_perimeter_policy_name": iam.DataPerimeterPolicy(cr.Name),
		"state_bucket":               cr.ManagementStateBucket,
		"central_state_bucket":       cr.CentralStateBucket,
		"handoff_parameter":          iam.ParameterName(cr.Name),
		"etcd_backup_bucket":         cr.EtcdBackupBucket,
		"health_bucket":              cr.HealthBucket,
		"etcd_backup_retention_days": cr.EtcdBackupRetention,
		"approver_role_name":         iam.ApproverRoleName(cr.Name),
		"mint_accounts":              len(cr.Clusters) > 0,
		"tags":                       map[string]any{"managed-by": "regionctl", iam.RegionTag: cr.Name, "environment": cr.Environment, "sector": reg.Sector.Name},
	}
	if problems := r.tf.Check(terraform.CentralBootstrap, vars); len(problems) > 0 {
		return nil, diag.Diagnostics{diag.Errorf(at, strings.Join(problems, "\n"), "Terraform variables of the %s bootstrap do not match terraform/%s", cr.Name, terraform.CentralBootstrap)}
	}
	bb, err := tfvars.Encode(vars)
	if err != nil {
		return nil, diag.Diagnostics{diag.Errorf(at, err.Error(), "cannot encode bootstrap variables of %s", cr.Name)}
	}
	arts = append(arts, Artifact{Path: path.Join(dir, "terraform", terraform.CentralBootstrap+".tfvars.json"), Bytes: bb, Owner: cr.Name})
	return arts, nil
}

// iamFiles are the IAM documents of region's chain as files of dir's iam/,
// refused (at the region's file) when a bucket policy is public by S3's
// definition, a document is over AWS's size limits, or one does not
// encode to what Terraform installs as it is.
func iamFiles(dir string, at diag.Pos, region string, files []chainFile) ([]Artifact, diag.Diagnostics) {
	for _, f := range files {
		if !strings.HasSuffix(f.name, "bucket-policy.json") {
			continue
		}
		// Every bucket of the chain has Block Public Access on: S3 would
		// refuse the policy at apply.
		if sid, why := iam.PublicStatement(f.doc); why != "" {
			return nil, diag.Diagnostics{diag.Errorf(at, "Statement "+sid+": "+why+". Its bucket has Block Public Access on, so S3 refuses the policy (the Amazon S3 User Guide, \"The meaning of public\").",
				"%s of %s is public by S3's definition", f.name, region)}
		}
	}
	encoded := make([][]byte, len(files))
	var over []string
	for i, f := range files {
		b, err := tfvars.MarshalJSON(f.doc)
		if err != nil {
			return nil, diag.Diagnostics{diag.Errorf(at, err.Error(), "cannot encode %s of %s", f.name, region)}
		}
		encoded[i] = b
		if _, problem := iam.CheckQuotaEncoded(path.Join("deploy", dir, "iam", f.name), f.doc, b); problem != "" {
			over = append(over, problem)
		}
	}
	if len(over) > 0 {
		return nil, diag.Diagnostics{diag.Errorf(at, strings.Join(over, "\n")+"\nAWS would refuse to install it. Fewer or shorter values where the document grows (gitops.approvers, names) bring it under.",
			"IAM documents of %s are over AWS's size limits", region)}
	}
	var arts []Artifact
	for i, f := range files {
		b := encoded[i]
		// What Parse would say of the file, without reading it back:
		// TestEveryRegionDocumentReadsBack holds the two to each other
		// for every document a region renders.
		if err := iampolicy.Validate(f.doc); err != nil {
			return nil, diag.Diagnostics{diag.Errorf(at, err.Error(), "rendered IAM document %s of %s does not parse", f.name, region)}
		}
		b = iampolicy.EscapeVariables(b)
		if strings.Contains(string(b), "%{") {
			return nil, diag.Diagnostics{diag.Errorf(at, "A template directive would run when Terraform fills in the document's account ids.", "rendered IAM document %s of %s holds %%{", f.name, region)}
		}
		arts = append(arts, Artifact{Path: path.Join(dir, "iam", f.name), Bytes: b, Owner: region})
	}
	return arts, nil
}

// centralArtifacts renders the central pipeline's policy, one per
// partition the fleet's regions are in.
func centralArtifacts(chains map[string]*chainRegion) ([]Artifact, diag.Diagnostics) {
	byPartition := map[string][]iam.Region{}
	for _, cr := range chains {
		byPartition[cr.Partition()] = append(byPartition[cr.Partition()], cr.Region)
	}
	var arts []Artifact
	for _, p := range sortedKeys(byPartition) {
		regions := byPartition[p]
		sort.Slice(regions, func(i, j int) bool { return regions[i].Name < regions[j].Name })
		doc := iam.CentralPipelinePolicy(p, regions)
		if _, problem := iam.CheckQuota(path.Join("deploy", CentralPolicyPath(p)), doc); problem != "" {
			return nil, diag.Diagnostics{diag.Errorf(diag.Pos{File: "config/regions"}, problem+"\nAWS would refuse to install it: the central pipeline's policy grows with each region's central state bucket; give the regions' regional clusters state buckets under one prefix, or fewer regions per partition.",
				"the central pipeline's policy of partition %s is over AWS's size limit", p)}
		}
		b, err := tfvars.MarshalJSON(doc)
		if err != nil {
			return nil, diag.Diagnostics{diag.Errorf(diag.Pos{File: "config"}, err.Error(), "cannot encode the central pipeline policy")}
		}
		arts = append(arts, Artifact{Path: CentralPolicyPath(p), Bytes: b})
	}
	return arts, nil
}

// CentralPolicyPath is where the central pipeline's policy of a partition
// lives in deploy/.
func CentralPolicyPath(partition string) string {
	return path.Join("central", partition, "iam", "central-pipeline-policy.json")
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// installArtifacts renders regionctl's Tekton installation of every cluster
// that runs pipelines: the central cluster of each partition, and each
// region's regional cluster.
func installArtifacts(f *config.Fleet, chains map[string]*chainRegion) ([]Artifact, diag.Diagnostics) {
	g := f.Global.Get("gitops")
	get := func(key, def string) string {
		if v := g.Get(key); v != nil && v.Kind == config.String {
			return v.Str
		}
		return def
	}
	base := tekton.Install{Namespace: TektonNamespace(f), RepoURL: get("repo_url", "https://git.example.com/fleet.git"), Branch: get("revision", "main"),
		Webhook: get("webhook", "github"), RunnerImage: get("runner_image", "")}
	at := diag.Pos{File: "config/global"}
	if base.RunnerImage == "" {
		return nil, diag.Diagnostics{diag.Errorf(at, "Set gitops.runner_image in config/global to the regionctl image the Tasks run (make image prints it), pinned by digest.", "no gitops.runner_image")}
	}
	var arts []Artifact
	add := func(in tekton.Install, owner string) diag.Diagnostics {
		files, err := in.Files()
		if err != nil {
			return diag.Diagnostics{diag.Errorf(at, err.Error(), "cannot render the Tekton installation %s", in.Dir)}
		}
		for p, b := range files {
			arts = append(arts, Artifact{Path: p, Bytes: b, Owner: owner})
		}
		return nil
	}
	partitions := map[string]bool{}
	for _, name := range sortedKeys(chains) {
		cr := chains[name]
		partitions[cr.Partition()] = true
		if cr.Unchanged {
			// Made of the gitops settings and the region's name alone,
			// both the same on the other side of a review that skips it.
			continue
		}
		in := base
		in.Scope, in.Region, in.ServiceAccount = "regional", cr.Name, iam.RegionalServiceAccount
		in.Dir, in.Pipelines = path.Join(RegionDir(cr.Environment, cr.Name), "tekton", "install"), "../../../../../pipelines"
		in.RoleARN = iam.RoleARN(cr.Partition(), "000000000000", iam.PipelineRoleName(cr.Name))
		if ds := add(in, cr.Name); ds.HasErrors() {
			return nil, ds
		}
	}
	for _, p := range sortedKeys(partitions) {
		in := base
		in.Scope, in.ServiceAccount = "central", iam.CentralServiceAccount
		in.Dir, in.Pipelines = path.Join("central", p, "tekton"), "../../../../pipelines"
		in.RoleARN = iam.RoleARN(p, "000000000000", iam.CentralPipelineRole)
		if ds := add(in, ""); ds.HasErrors() {
			return nil, ds
		}
	}
	return arts, nil
}
