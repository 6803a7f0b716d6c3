package awsemu

import (
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ecs"
)

// ecsChecks are ECS's authorizations, with the resource types and the
// ecs:cluster key its service authorization reference gives, and the
// iam:PassRole AWS checks on the roles a task definition names: when it
// is registered, and again when a task of it is run.
func ecsChecks(e *env) ([]check, error) {
	req := e.req
	arn := func(kind, name string) string {
		if strings.HasPrefix(name, "arn:") {
			return name
		}
		return "arn:" + e.partition() + ":ecs:" + req.Region + ":" + e.p.Account + ":" + kind + "/" + name
	}
	cluster := req.str("cluster")
	if cluster == "" {
		cluster = "default"
	}
	clusterARN := arn("cluster", cluster)
	clusterName := clusterARN[strings.LastIndex(clusterARN, "/")+1:]
	inCluster := e.context(map[string][]string{"ecs:cluster": {clusterARN}})
	pass := func(roles ...string) []check {
		var out []check
		for _, r := range roles {
			if r != "" {
				out = append(out, check{Action: "iam:PassRole", Resource: r, Context: e.context(map[string][]string{"iam:PassedToService": {"ecs-tasks.amazonaws.com"}})})
			}
		}
		return out
	}
	switch req.Operation {
	case "CreateCluster":
		return []check{{Action: "ecs:CreateCluster", Resource: arn("cluster", req.str("clusterName")), Context: e.context(nil)}}, nil
	case "DeleteCluster", "UpdateCluster", "PutClusterCapacityProviders":
		return []check{{Action: "ecs:" + req.Operation, Resource: clusterARN, Context: e.context(nil)}}, nil
	case "DescribeClusters":
		var out []check
		for _, c := range req.strs("clusters") {
			out = append(out, check{Action: "ecs:DescribeClusters", Resource: arn("cluster", c), Context: e.context(nil)})
		}
		if out == nil {
			out = []check{{Action: "ecs:DescribeClusters", Resource: clusterARN, Context: e.context(nil)}}
		}
		return out, nil
	case "RegisterTaskDefinition":
		return append([]check{{Action: "ecs:RegisterTaskDefinition", Resource: "*", Context: e.context(nil)}},
			pass(req.str("taskRoleArn"), req.str("executionRoleArn"))...), nil
	case "RunTask", "StartTask":
		td := req.str("taskDefinition")
		out := []check{{Action: "ecs:" + req.Operation, Resource: arn("task-definition", td), Context: inCluster}}
		// The roles are the task definition's: read them as ECS would.
		cfg, err := e.view.admin(e.ctx, e.p.Account)
		if err != nil {
			return nil, err
		}
		cfg.Region = req.Region
		def, err := ecs.NewFromConfig(cfg).DescribeTaskDefinition(e.ctx, &ecs.DescribeTaskDefinitionInput{TaskDefinition: aws.String(td)})
		if err != nil {
			return nil, fmt.Errorf("reading the task definition %s: %w", td, err)
		}
		return append(out, pass(aws.ToString(def.TaskDefinition.TaskRoleArn), aws.ToString(def.TaskDefinition.ExecutionRoleArn))...), nil
	case "DescribeTasks", "StopTask":
		var out []check
		tasks := req.strs("tasks")
		if t := req.str("task"); t != "" {
			tasks = append(tasks, t)
		}
		for _, t := range tasks {
			if !strings.HasPrefix(t, "arn:") {
				t = arn("task", clusterName+"/"+t)
			}
			out = append(out, check{Action: "ecs:" + req.Operation, Resource: t, Context: inCluster})
		}
		return out, nil
	}
	return []check{{Action: "ecs:" + req.Operation, Resource: "*", Context: e.context(nil)}}, nil
}
