package awsemu

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation"
	cftypes "github.com/aws/aws-sdk-go-v2/service/cloudformation/types"
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
	// Targets are the OUs the StackSet's instances target, with the
	// regions of each.
	Targets map[string][]string
	// deployed are the accounts the gate deployed the stack into.
	deployed map[string]bool
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
		set = &stackSet{Name: name, Targets: map[string][]string{}, deployed: map[string]bool{}}
		s.sets[name] = set
		set.Template = req.str("TemplateBody")
		set.ServiceManaged = req.str("PermissionModel") == "SERVICE_MANAGED"
		set.AutoDeploy = strings.EqualFold(req.Form.Get("AutoDeployment.Enabled"), "true")
	case "UpdateStackSet":
		if set == nil {
			return
		}
		if t := req.str("TemplateBody"); t != "" {
			set.Template = t
		}
		if v := req.Form.Get("AutoDeployment.Enabled"); v != "" {
			set.AutoDeploy = strings.EqualFold(v, "true")
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

// policiesAsText writes the IAM policy documents of a template's roles and
// managed policies as JSON text, which CloudFormation takes alike: moto
// keeps a document given as an object in Python's notation, which no
// reader of IAM takes back.
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
		text(props, "PolicyDocument")
		text(props, "AssumeRolePolicyDocument")
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
