package awsemu

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation"
	cftypes "github.com/aws/aws-sdk-go-v2/service/cloudformation/types"
	awsiam "github.com/aws/aws-sdk-go-v2/service/iam"
)

// stackSets models what AWS CloudFormation StackSets does with a StackSet
// of service-managed permissions whose automatic deployment is on ("Manage
// automatic deployments for a CloudFormation StackSet that uses
// service-managed permissions", CloudFormation User Guide): when an account
// is moved into an OU the StackSet targets, AWS deploys the StackSet's stack
// into it, in each of the StackSet's regions, through the account's
// StackSets execution role; no principal of the account asks for it. moto
// keeps stack sets and deploys instances into the accounts an OU holds when
// they are created, but deploys nothing automatically afterwards: the gate
// does, as AWS would.
type stackSets struct {
	mu   sync.Mutex
	sets map[string]*stackSet
}

type stackSet struct {
	Name, Template             string
	ServiceManaged, AutoDeploy bool
	// RetainStacks is AutoDeployment.RetainStacksOnAccountRemoval.
	RetainStacks bool
	// Targets are the OUs the StackSet's instances target, with the
	// regions of each.
	Targets map[string][]string
	// deployed are the accounts the gate deployed the stack into, with
	// the region of each; stale says the template changed since.
	deployed map[string]bool
	regions  map[string][]string
	stale    bool
}

// learn records what a relayed (successful) CloudFormation request tells
// of a StackSet.
func (s *stackSets) learn(req *request) {
	name := req.str("StackSetName")
	if name == "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sets == nil {
		s.sets = map[string]*stackSet{}
	}
	set := s.sets[name]
	switch req.Operation {
	case "CreateStackSet":
		set = &stackSet{Name: name, Targets: map[string][]string{}, deployed: map[string]bool{}, regions: map[string][]string{}}
		s.sets[name] = set
		set.Template = req.str("TemplateBody")
		set.ServiceManaged = req.str("PermissionModel") == "SERVICE_MANAGED"
		set.AutoDeploy = strings.EqualFold(req.Form.Get("AutoDeployment.Enabled"), "true")
		set.RetainStacks = strings.EqualFold(req.Form.Get("AutoDeployment.RetainStacksOnAccountRemoval"), "true")
	case "UpdateStackSet":
		if set == nil {
			return
		}
		if t := req.str("TemplateBody"); t != "" && t != set.Template {
			set.Template = t
			set.stale = true
		}
		if v := req.Form.Get("AutoDeployment.Enabled"); v != "" {
			set.AutoDeploy = strings.EqualFold(v, "true")
			set.RetainStacks = strings.EqualFold(req.Form.Get("AutoDeployment.RetainStacksOnAccountRemoval"), "true")
		}
	case "CreateStackInstances":
		if set == nil {
			return
		}
		regions := members(req, "Regions")
		for _, ou := range members(req, "DeploymentTargets.OrganizationalUnitIds") {
			set.Targets[ou] = append(set.Targets[ou], regions...)
		}
	case "DeleteStackInstances":
		if set == nil {
			return
		}
		for _, ou := range members(req, "DeploymentTargets.OrganizationalUnitIds") {
			delete(set.Targets, ou)
		}
	case "DeleteStackSet":
		delete(s.sets, name)
	}
}

// members reads a query-protocol list parameter (Name.member.1, ...).
func members(req *request, name string) []string {
	var out []string
	for i := 1; ; i++ {
		v := req.Form.Get(fmt.Sprintf("%s.member.%d", name, i))
		if v == "" {
			return out
		}
		out = append(out, v)
	}
}

// autoDeploy deploys, into account just moved into ou, the stack of every
// StackSet whose automatic deployment targets ou, as AWS does; each
// deployment is written to the ledger.
func (g *Gate) autoDeploy(ctx context.Context, account, ou string) {
	g.stackSets.mu.Lock()
	type job struct {
		name, template string
		regions        []string
	}
	var jobs []job
	for _, set := range g.stackSets.sets {
		if !set.ServiceManaged || !set.AutoDeploy || set.deployed[account] || len(set.Targets[ou]) == 0 {
			continue
		}
		set.deployed[account] = true
		set.regions[account] = set.Targets[ou]
		jobs = append(jobs, job{set.Name, set.Template, set.Targets[ou]})
	}
	g.stackSets.mu.Unlock()
	sort.Slice(jobs, func(i, j int) bool { return jobs[i].name < jobs[j].name })
	for _, j := range jobs {
		for _, region := range j.regions {
			entry := Entry{Principal: "cloudformation.amazonaws.com (StackSets)", Operation: "cloudformation:CreateStack", Action: "cloudformation:CreateStack",
				Resource: "arn:aws:cloudformation:" + region + ":" + account + ":stack/StackSet-" + j.name + "-" + account + "/*", Region: region,
				Decision: "allow", Reason: "AWS deploys a service-managed StackSet's stack into an account moved into its target OU " + ou + " (automatic deployment)"}
			if err := g.deployStack(ctx, account, region, "StackSet-"+j.name+"-"+account, j.template); err != nil {
				entry.Decision, entry.Reason = "deny", "the automatic deployment failed: "+err.Error()
			}
			g.ledger.add(entry)
		}
	}
	if len(jobs) > 0 {
		g.view.changed()
	}
}

// deployStack creates the stack in account as CloudFormation would.
func (g *Gate) deployStack(ctx context.Context, account, region, name, template string) error {
	cfg, err := g.view.admin(ctx, account)
	if err != nil {
		return err
	}
	cfg.Region = region
	template, err = policiesAsText(template)
	if err != nil {
		return err
	}
	_, err = cloudformation.NewFromConfig(cfg).CreateStack(ctx, &cloudformation.CreateStackInput{StackName: aws.String(name), TemplateBody: aws.String(template),
		Capabilities: []cftypes.Capability{cftypes.CapabilityCapabilityNamedIam}})
	return err
}

// policiesAsText writes the inline policies of a template's roles as JSON
// text, which CloudFormation takes alike: moto keeps a role's inline
// policy given as an object in Python's notation, which no reader of IAM
// takes back (it reads a managed policy's object as JSON, and is left
// that).
func policiesAsText(template string) (string, error) {
	var t map[string]any
	if err := json.Unmarshal([]byte(template), &t); err != nil {
		return "", fmt.Errorf("the StackSet's template: %w", err)
	}
	text := func(m map[string]any, key string) {
		if v, ok := m[key]; ok {
			if _, isString := v.(string); !isString {
				b, _ := json.Marshal(v)
				m[key] = string(b)
			}
		}
	}
	resources, _ := t["Resources"].(map[string]any)
	for _, r := range resources {
		res, _ := r.(map[string]any)
		props, _ := res["Properties"].(map[string]any)
		if props == nil {
			continue
		}
		if policies, ok := props["Policies"].([]any); ok {
			for _, p := range policies {
				if pm, ok := p.(map[string]any); ok {
					text(pm, "PolicyDocument")
				}
			}
		}
	}
	b, err := json.Marshal(t)
	return string(b), err
}

// redeploy brings every stack the gate deployed from a StackSet whose
// template changed up to date, as AWS updates a StackSet's instances.
func (g *Gate) redeploy(ctx context.Context) {
	g.stackSets.mu.Lock()
	type job struct{ name, template, account, region string }
	var jobs []job
	for _, set := range g.stackSets.sets {
		if !set.stale {
			continue
		}
		set.stale = false
		for account := range set.deployed {
			for _, region := range set.regions[account] {
				jobs = append(jobs, job{set.Name, set.Template, account, region})
			}
		}
	}
	g.stackSets.mu.Unlock()
	sort.Slice(jobs, func(i, j int) bool { return jobs[i].account+jobs[i].region < jobs[j].account+jobs[j].region })
	for _, j := range jobs {
		name := "StackSet-" + j.name + "-" + j.account
		entry := Entry{Principal: "cloudformation.amazonaws.com (StackSets)", Operation: "cloudformation:UpdateStack", Action: "cloudformation:UpdateStack",
			Resource: "arn:aws:cloudformation:" + j.region + ":" + j.account + ":stack/" + name + "/*", Region: j.region,
			Decision: "allow", Reason: "AWS updates each instance of a StackSet whose template changed"}
		if err := g.updateStack(ctx, j.account, j.template); err != nil {
			entry.Decision, entry.Reason = "deny", "the update of the StackSet's instance failed: "+err.Error()
		}
		g.ledger.add(entry)
	}
	if len(jobs) > 0 {
		g.view.changed()
	}
}

// updateStack updates, in account, the resources of template as
// CloudFormation's update of them would: a managed policy's new default
// version, a role's trust and inline policies. (moto updates no IAM
// resource from a changed template.) Only the two kinds of resources
// regionctl's StackSets hold are known.
func (g *Gate) updateStack(ctx context.Context, account, template string) error {
	var t struct {
		Resources map[string]struct {
			Type       string
			Properties map[string]any
		}
	}
	if err := json.Unmarshal([]byte(template), &t); err != nil {
		return fmt.Errorf("the StackSet's template: %w", err)
	}
	cfg, err := g.view.admin(ctx, account)
	if err != nil {
		return err
	}
	client := awsiam.NewFromConfig(cfg)
	text := func(v any) string {
		if s, ok := v.(string); ok {
			return s
		}
		b, _ := json.Marshal(v)
		return string(b)
	}
	for name, r := range t.Resources {
		switch r.Type {
		case "AWS::IAM::ManagedPolicy":
			arn := "arn:aws:iam::" + account + ":policy/" + text(r.Properties["ManagedPolicyName"])
			versions, err := client.ListPolicyVersions(ctx, &awsiam.ListPolicyVersionsInput{PolicyArn: aws.String(arn)})
			if err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			if len(versions.Versions) >= 5 {
				for _, v := range versions.Versions {
					if !v.IsDefaultVersion {
						if _, err := client.DeletePolicyVersion(ctx, &awsiam.DeletePolicyVersionInput{PolicyArn: aws.String(arn), VersionId: v.VersionId}); err != nil {
							return fmt.Errorf("%s: %w", name, err)
						}
						break
					}
				}
			}
			if _, err := client.CreatePolicyVersion(ctx, &awsiam.CreatePolicyVersionInput{PolicyArn: aws.String(arn),
				PolicyDocument: aws.String(text(r.Properties["PolicyDocument"])), SetAsDefault: true}); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
		case "AWS::IAM::Role":
			role := aws.String(text(r.Properties["RoleName"]))
			if _, err := client.UpdateAssumeRolePolicy(ctx, &awsiam.UpdateAssumeRolePolicyInput{RoleName: role,
				PolicyDocument: aws.String(text(r.Properties["AssumeRolePolicyDocument"]))}); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			policies, _ := r.Properties["Policies"].([]any)
			for _, p := range policies {
				pm, _ := p.(map[string]any)
				if _, err := client.PutRolePolicy(ctx, &awsiam.PutRolePolicyInput{RoleName: role, PolicyName: aws.String(text(pm["PolicyName"])),
					PolicyDocument: aws.String(text(pm["PolicyDocument"]))}); err != nil {
					return fmt.Errorf("%s: %w", name, err)
				}
			}
		default:
			return fmt.Errorf("%s: the emulator updates no %s of a StackSet", name, r.Type)
		}
	}
	return nil
}

// administration matches the roles moto names in every StackSet it
// describes; AWS names none for a StackSet of service-managed permissions.
var administration = regexp.MustCompile(`<AdministrationRoleARN>[^<]*</AdministrationRoleARN>|<ExecutionRoleName>[^<]*</ExecutionRoleName>`)

// mendDescribe gives moto's description of a StackSet of service-managed
// permissions what AWS's has (its AutoDeployment, which moto drops) and
// not what it lacks (the administration and execution roles of
// self-managed ones), so that a second plan sees no drift.
func (s *stackSets) mendDescribe(req *request, answer []byte) []byte {
	if req.Service != "cloudformation" || req.Operation != "DescribeStackSet" {
		return answer
	}
	s.mu.Lock()
	set := s.sets[req.str("StackSetName")]
	s.mu.Unlock()
	if set == nil || !set.ServiceManaged {
		return answer
	}
	text := administration.ReplaceAllString(string(answer), "")
	auto := fmt.Sprintf("<AutoDeployment><Enabled>%t</Enabled><RetainStacksOnAccountRemoval>%t</RetainStacksOnAccountRemoval></AutoDeployment>", set.AutoDeploy, set.RetainStacks)
	if !strings.Contains(text, "<AutoDeployment>") {
		text = strings.Replace(text, "</StackSet>", auto+"</StackSet>", 1)
	}
	return []byte(text)
}
