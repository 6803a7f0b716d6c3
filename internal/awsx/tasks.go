package awsx

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ecs"
	ecstypes "github.com/aws/aws-sdk-go-v2/service/ecs/types"

	"github.com/regionctl/regionctl/internal/pipeline"
)

// RunTask starts one Fargate task of the run's task definition in its
// subnets, with no public address, adding Env to its container.
func (c *Client) RunTask(ctx context.Context, creds pipeline.Credentials, run pipeline.TaskRun) (string, error) {
	var env []ecstypes.KeyValuePair
	for _, k := range slices.Sorted(maps.Keys(run.Env)) {
		env = append(env, ecstypes.KeyValuePair{Name: aws.String(k), Value: aws.String(run.Env[k])})
	}
	out, err := ecs.NewFromConfig(c.Config(creds, run.Region)).RunTask(ctx, &ecs.RunTaskInput{
		Cluster: aws.String(run.Cluster), TaskDefinition: aws.String(run.TaskDefinition), Count: aws.Int32(1),
		LaunchType: ecstypes.LaunchTypeFargate, StartedBy: aws.String(run.StartedBy),
		NetworkConfiguration: &ecstypes.NetworkConfiguration{AwsvpcConfiguration: &ecstypes.AwsVpcConfiguration{
			Subnets: run.Subnets, SecurityGroups: run.SecurityGroups, AssignPublicIp: ecstypes.AssignPublicIpDisabled}},
		Overrides: &ecstypes.TaskOverride{ContainerOverrides: []ecstypes.ContainerOverride{{Name: aws.String(run.Container), Environment: env}}},
	})
	if err != nil {
		return "", denied(err)
	}
	if len(out.Failures) > 0 {
		f := out.Failures[0]
		return "", fmt.Errorf("ECS did not start it: %s %s", aws.ToString(f.Reason), aws.ToString(f.Detail))
	}
	if len(out.Tasks) != 1 {
		return "", fmt.Errorf("ECS started %d tasks, not one", len(out.Tasks))
	}
	return aws.ToString(out.Tasks[0].TaskArn), nil
}

// DescribeTask reads a task's status and, once it stopped, its one
// container's exit code.
func (c *Client) DescribeTask(ctx context.Context, creds pipeline.Credentials, region, cluster, arn string) (pipeline.TaskStatus, error) {
	out, err := ecs.NewFromConfig(c.Config(creds, region)).DescribeTasks(ctx, &ecs.DescribeTasksInput{Cluster: aws.String(cluster), Tasks: []string{arn}})
	if err != nil {
		return pipeline.TaskStatus{}, denied(err)
	}
	if len(out.Tasks) != 1 {
		return pipeline.TaskStatus{}, fmt.Errorf("ECS knows no task %s in %s", arn, cluster)
	}
	t := out.Tasks[0]
	st := pipeline.TaskStatus{LastStatus: aws.ToString(t.LastStatus), Reason: aws.ToString(t.StoppedReason)}
	for _, ct := range t.Containers {
		if aws.ToString(ct.Name) == pipeline.BootstrapContainer || len(t.Containers) == 1 {
			if ct.ExitCode != nil {
				code := int(*ct.ExitCode)
				st.ExitCode = &code
			}
			if r := aws.ToString(ct.Reason); r != "" && st.Reason == "" {
				st.Reason = r
			}
		}
	}
	return st, nil
}
