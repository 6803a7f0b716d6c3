// Package demo provisions one region of the example fleet end to end on
// this machine: it starts moto_server on a free loopback port and a local
// platform API, renders a copy of the repository, runs the central and
// regional pipelines with the real Terraform roots, prints what was
// created, and cleans up after itself. `make demo` runs it.
//
// Entry point: Run.
package demo

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/organizations"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/regionctl/regionctl/internal/awsemu"
	"github.com/regionctl/regionctl/internal/iamjudge/simulator"
	"github.com/regionctl/regionctl/internal/par"
	"github.com/regionctl/regionctl/internal/platformapi"
	"github.com/regionctl/regionctl/internal/render"
	regioniam "github.com/regionctl/regionctl/internal/render/iam"
)

// Options say what to provision and where the repository is.
type Options struct {
	Root   string // the repository: config/, charts/, pipelines/, terraform/
	Region string
	Keep   bool // leave the working copy (its .regionctl/ logs) behind
	// Regionctl runs a regionctl command in this process and returns its
	// exit code (the CLI, passed in to keep this package below it).
	Regionctl func(args ...string) int
}

// cleanUp removes the demo's working copy, but for a failed run (its
// logs are what says why) or one asked to keep it. A failed run cannot be
// resumed (its emulator is gone with it), so a step's advice to run the
// same command again does not hold here, and the demo says so.
func cleanUp(work string, err error, keep bool, say func(string, ...any)) {
	switch {
	case err != nil:
		say("the demo failed; kept its working copy %s (Terraform's output in %s, the emulator's in %s). "+
			"A demo starts over on every run: its emulator stopped with it, so nothing above can be resumed; run make demo again", work,
			filepath.Join(work, ".regionctl", "logs"), filepath.Join(work, "moto.log"))
	case keep:
		say("kept the working copy %s", work)
	default:
		os.RemoveAll(work)
	}
}

// Run runs the demo, writing its story to w.
func Run(ctx context.Context, o Options, w io.Writer) (err error) {
	start := time.Now()
	root, err := filepath.Abs(o.Root)
	if err != nil {
		return err
	}
	o.Root = root
	say := func(format string, args ...any) { fmt.Fprintf(w, "==> "+format+"\n", args...) }

	work, err := os.MkdirTemp("", "regionctl-demo-")
	if err != nil {
		return err
	}
	defer func() { cleanUp(work, err, o.Keep, say) }()
	dns, err := prepare(o, work)
	if err != nil {
		return err
	}

	emu, gate, stopAWS, err := startAWS(ctx, o.Root, work, dns, say)
	if err != nil {
		return err
	}
	defer stopAWS()

	// The regional account and the platform API's id, once the central
	// pipeline made them: the local platform API stands for that API.
	var regional, apiID string
	api := &platformapi.Server{Authorize: func(r *http.Request, body []byte) (string, error) {
		return gate.Invoke(r, body, awsemu.API{Region: o.Region, Account: regional, ID: apiID, Stage: "$default"})
	}}
	apiURL, stop, err := serve(api)
	if err != nil {
		return err
	}
	defer stop()
	say("local platform API at %s (verifies SigV4 for execute-api)", apiURL)

	cfg := awsConfig(emu.URL)
	run := runner(o.Regionctl, work, say)
	if err := run("render"); err != nil {
		return err
	}
	platform, as, err := organise(ctx, gate, work, o.Region, say)
	if err != nil {
		return err
	}
	if err := as(platform.CentralRole, platform.CentralIssuer, regioniam.CentralServiceAccount); err != nil {
		return err
	}
	tf := filepath.Join(o.Root, "terraform")
	if err := central(ctx, cfg, o.Region, tf, dns, run, say); err != nil {
		return err
	}
	var issuer string
	regional, issuer, apiID, err = regionalIdentity(ctx, cfg, o.Region)
	if err != nil {
		return err
	}
	if err := as(regioniam.RoleARN(regioniam.Partition(o.Region), regional, regioniam.PipelineRoleName(o.Region)), issuer, regioniam.RegionalServiceAccount); err != nil {
		return err
	}
	if err := run("pipeline", "regional", "--region", o.Region, "--request-id", "demo-regional", "--terraform-dir", tf, "--api-endpoint", apiURL); err != nil {
		return err
	}

	say("what exists now")
	if err := inventory(ctx, cfg, emu, o.Region, api.Registered(), w); err != nil {
		return err
	}
	if err := judged(w, gate, filepath.Join(work, ".regionctl", "iam-ledger.jsonl"), say); err != nil {
		return err
	}
	say("provisioned %s end to end in %s", o.Region, time.Since(start).Round(time.Second))
	return nil
}

// prepare copies the fleet's inputs into work and starts its region as a
// new one does: its platform API's zone not yet delegated by any parent.
func prepare(o Options, work string) (*publicDNS, error) {
	if err := copyInputs(o.Root, work); err != nil {
		return nil, err
	}
	if err := setDelegated(work, o.Region, false); err != nil {
		return nil, err
	}
	return &publicDNS{work: work}, nil
}

// central runs the region's central pipeline twice, in the order AWS
// needs: first with the platform API's zone not delegated, which must
// finish without waiting for the certificate and hand the operator the
// zone's name servers; then, the parent's NS records made (public DNS now
// reaches the zone) and platform_api.zone_delegated set, again, which
// validates the certificate and serves the API.
func central(ctx context.Context, cfg aws.Config, region, tf string, dns *publicDNS, run func(...string) error, say func(string, ...any)) error {
	start := time.Now()
	if err := run("pipeline", "central", "--region", region, "--request-id", "demo-central", "--terraform-dir", tf); err != nil {
		return err
	}
	st, err := readRegionalState(ctx, cfg, region)
	if err != nil {
		return err
	}
	if err := checkUndelegated(st); err != nil {
		return err
	}
	say("the zone %s is not delegated: the regional apply finished in %s without waiting for its certificate and serves no API yet; the parent domain needs NS records %s",
		st.zone, time.Since(start).Round(time.Second), strings.Join(st.nameServers, ", "))
	say("delegating %s (the parent's NS records) and setting platform_api.zone_delegated: true", st.zone)
	if err := setDelegated(dns.work, region, true); err != nil {
		return err
	}
	if err := dns.read(); err != nil {
		return err
	}
	if err := run("render"); err != nil {
		return err
	}
	if err := run("pipeline", "central", "--region", region, "--request-id", "demo-central-delegated", "--terraform-dir", tf); err != nil {
		return err
	}
	if st, err = readRegionalState(ctx, cfg, region); err != nil {
		return err
	}
	if err := checkDelegated(st); err != nil {
		return err
	}
	say("ACM validated the certificate in the delegated zone; the platform API is served at %s", st.endpoint)
	return nil
}

// runner runs regionctl commands on the fleet in work, saying each.
func runner(regionctl func(args ...string) int, work string, say func(string, ...any)) func(args ...string) error {
	base := []string{"--root", work, "--no-cache"}
	return func(args ...string) error {
		say("regionctl %s", strings.Join(args, " "))
		if code := regionctl(append(base, args...)...); code != 0 {
			return fmt.Errorf("regionctl %s exited %d; Terraform's output is in %s", args[0], code, filepath.Join(work, ".regionctl", "logs"))
		}
		return nil
	}
}

// copyInputs copies the fleet's inputs from root into work (deploy/ is
// rendered there).
func copyInputs(root, work string) error {
	for _, dir := range []string{"config", "charts", "pipelines"} {
		if err := os.CopyFS(filepath.Join(work, dir), os.DirFS(filepath.Join(root, dir))); err != nil {
			return fmt.Errorf("copying %s: %w", dir, err)
		}
	}
	return nil
}

// organise makes the organisation, the central pipeline's role holding the
// policy rendered into work's deploy/, and returns as, which makes this
// process a pipeline's ServiceAccount (its web identity token, through the
// gate).
func organise(ctx context.Context, gate *awsemu.Gate, work, region string, say func(string, ...any)) (*awsemu.Platform, func(role, issuer, sa string) error, error) {
	policy, err := os.ReadFile(filepath.Join(work, "deploy", render.CentralPolicyPath(regioniam.Partition(region))))
	if err != nil {
		return nil, nil, err
	}
	platform, err := awsemu.SetupPlatform(ctx, gate, policy, render.TektonNamespace(nil))
	if err != nil {
		return nil, nil, err
	}
	say("organisation made; the central pipeline's role %s holds the rendered policy and trusts the central cluster's Tekton ServiceAccount", platform.CentralRole)
	tokens := filepath.Join(work, ".regionctl", "tokens")
	if err := os.MkdirAll(tokens, 0o700); err != nil {
		return nil, nil, err
	}
	as := func(role, issuer, sa string) error {
		env, err := awsemu.IRSA(tokens, gate.URL, role, issuer, platform.Namespace, sa)
		for k, v := range env {
			os.Setenv(k, v)
		}
		return err
	}
	return platform, as, nil
}

// startAWS starts the emulator, warms its services, and puts the IAM gate
// in front of it with the second judge beside it; the process's AWS
// environment then points at the gate. stop stops all of it.
func startAWS(ctx context.Context, root, work string, dns *publicDNS, say func(string, ...any)) (emu *awsemu.Emulator, gate *awsemu.Gate, stop func(), err error) {
	var stops []func()
	stop = func() {
		for i := len(stops) - 1; i >= 0; i-- {
			stops[i]()
		}
	}
	defer func() {
		if err != nil {
			stop()
		}
	}()
	say("starting the AWS emulator (moto_server on 127.0.0.1)")
	if emu, err = awsemu.Start(ctx, filepath.Join(work, "moto.log")); err != nil {
		return nil, nil, nil, err
	}
	stops = append(stops, func() {
		_ = emu.Stop()
		say("stopped the emulator (pid %d)", emu.PID)
	})
	say("emulator at %s (pid %d); warming its services", emu.URL, emu.PID)
	warmed := par.Go(func() error {
		return emu.Prewarm(ctx, "ec2", "iam", "sts", "eks", "apigateway", "iot", "s3", "organizations", "ssm", "acm", "elasticloadbalancing")
	})
	defer warmed.Wait()
	if gate, err = awsemu.StartGate(emu.URL); err != nil {
		return nil, nil, nil, err
	}
	stops = append(stops, func() { gate.Close() })
	gate.Ledger().Expect(awsemu.AccountProbe)
	say("IAM gate at %s: every request is decided as AWS would (docs/iam-gate.md)", gate.URL)
	if err = dns.model(gate); err != nil {
		return nil, nil, nil, err
	}
	say("public DNS reaches the %d zones config/ says a parent delegates; ACM issues certificates there only", len(*dns.zones.Load()))
	judge, err := simulator.Start(filepath.Join(root, "tools", "iamsim"))
	if err != nil {
		return nil, nil, nil, fmt.Errorf("the second IAM judge, which decides every request beside the gate: %w", err)
	}
	stops = append(stops, func() { judge.Close() })
	gate.SetSecondJudge(judge)
	say("second IAM judge: the IAM simulator (tools/iamsim), asked every question the gate decides")
	for k, v := range emu.Env() {
		os.Setenv(k, v)
	}
	os.Setenv("AWS_ENDPOINT_URL", gate.URL)
	if err = warmed.Wait(); err != nil {
		return nil, nil, nil, err
	}
	return emu, gate, stop, nil
}

// serve serves h on a loopback port until stop, and gives its URL.
func serve(h http.Handler) (url string, stop func(), err error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(l) }()
	return "http://" + l.Addr().String(), func() { srv.Close() }, nil
}

// judged writes the IAM gate's ledger to ledger, says what the gate decided
// and how often the second judge agreed, and fails the demo on a request
// the pipelines made that was denied, a policy AWS would refuse, or a
// request the two judges decided differently.
func judged(w io.Writer, gate *awsemu.Gate, ledger string, say func(string, ...any)) error {
	if err := gate.Ledger().WriteFile(ledger); err != nil {
		return err
	}
	say("the IAM gate's decisions (%s):\n%s", ledger, awsemu.Summary(gate.Ledger().Entries()))
	compared, agreed := gate.Ledger().Compared()
	say("the two IAM judges agreed on %d of %d decisions", agreed, compared)
	if denied := gate.Ledger().Unexpected(); len(denied) > 0 {
		for _, d := range denied {
			fmt.Fprintf(w, "denied: %s %s on %s: %s\n", d.Principal, d.Action, d.Resource, d.Reason)
		}
		return fmt.Errorf("the IAM gate denied %d requests the pipelines made", len(denied))
	}
	if invalid := gate.Ledger().Invalid(); len(invalid) > 0 {
		for _, d := range invalid {
			fmt.Fprintf(w, "%s installed a policy that grants what AWS never would (%s %s): %s\n", d.Principal, d.Operation, d.Resource, strings.Join(d.Problems, "; "))
		}
		return fmt.Errorf("%d policies the roots installed grant what AWS never would", len(invalid))
	}
	if differ := gate.Ledger().Disagreements(); len(differ) > 0 {
		for _, d := range differ {
			fmt.Fprintf(w, "the judges differ: %s %s on %s: the gate %s (%s), the simulator %s\n", d.Principal, d.Action, d.Resource, d.Decision, d.Reason, d.Second)
		}
		return fmt.Errorf("the two IAM judges differ on %d requests (docs/iam-gate.md, The second judge)", len(differ))
	}
	return nil
}

// regionalIdentity finds the regional account, its cluster's OIDC issuer
// and its platform API's id (the regional cluster's Terraform outputs, in
// the central state).
func regionalIdentity(ctx context.Context, cfg aws.Config, region string) (account, issuer, apiID string, err error) {
	out, err := organizations.NewFromConfig(cfg).ListAccounts(ctx, &organizations.ListAccountsInput{})
	if err != nil {
		return "", "", "", err
	}
	for _, a := range out.Accounts {
		if strings.HasSuffix(aws.ToString(a.Name), "-"+region+"-regional") {
			account = aws.ToString(a.Id)
		}
	}
	client := s3.NewFromConfig(cfg, func(o *s3.Options) { o.UsePathStyle, o.DisableLogOutputChecksumValidationSkipped = true, true })
	obj, err := client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("regionctl-tfstate-" + region + "-regional"), Key: aws.String("regional-cluster/" + region + "/regional.tfstate")})
	if err != nil {
		return "", "", "", fmt.Errorf("reading the regional cluster's state: %w", err)
	}
	defer obj.Body.Close()
	var state struct {
		Outputs map[string]struct{ Value any } `json:"outputs"`
	}
	if err := json.NewDecoder(obj.Body).Decode(&state); err != nil {
		return "", "", "", err
	}
	issuer, _ = state.Outputs["oidc_issuer"].Value.(string)
	apiID, _ = state.Outputs["platform_api_id"].Value.(string)
	if account == "" || issuer == "" || apiID == "" {
		return "", "", "", fmt.Errorf("no regional account, OIDC issuer or platform API id for %s", region)
	}
	return account, issuer, apiID, nil
}

func awsConfig(endpoint string) aws.Config {
	cfg, _ := config.LoadDefaultConfig(context.Background(), config.WithRegion("us-east-1"), config.WithBaseEndpoint(endpoint),
		config.WithCredentialsProvider(credentials.NewStaticCredentialsProvider(awsemu.AccessKeyID, awsemu.SecretAccessKey, "")))
	return cfg
}

// inventory prints each account with its OU, roles and buckets, and the
// state objects and EKS clusters in it, then the platform API's
// registrations.
func inventory(ctx context.Context, cfg aws.Config, emu *awsemu.Emulator, region string, registered []platformapi.Registered, w io.Writer) error {
	org := organizations.NewFromConfig(cfg)
	accounts, err := org.ListAccounts(ctx, &organizations.ListAccountsInput{})
	if err != nil {
		return err
	}
	sort.Slice(accounts.Accounts, func(i, j int) bool {
		return aws.ToString(accounts.Accounts[i].Name) < aws.ToString(accounts.Accounts[j].Name)
	})
	for _, a := range accounts.Accounts {
		id := aws.ToString(a.Id)
		ou, err := awsemu.OUPath(ctx, org, id)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "account %s  %s  %s\n", id, aws.ToString(a.Name), ou)
		if aws.ToString(a.Name) == "master" || id == "123456789012" {
			continue
		}
		in, err := awsemu.InAccount(ctx, cfg, id)
		if err != nil {
			return err
		}
		creds, err := in.Credentials.Retrieve(ctx)
		if err != nil {
			return err
		}
		clusters, err := emu.EKSClusters(ctx, creds, region)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "    eks     %v\n", clusters)
		roles, err := iam.NewFromConfig(in).ListRoles(ctx, &iam.ListRolesInput{})
		if err != nil {
			return err
		}
		sort.Slice(roles.Roles, func(i, j int) bool {
			return aws.ToString(roles.Roles[i].RoleName) < aws.ToString(roles.Roles[j].RoleName)
		})
		for _, r := range roles.Roles {
			if name := aws.ToString(r.RoleName); name != "OrganizationAccountAccessRole" {
				fmt.Fprintf(w, "    role    %s\n", name)
			}
		}
		client := s3.NewFromConfig(in, func(o *s3.Options) { o.UsePathStyle, o.DisableLogOutputChecksumValidationSkipped = true, true })
		buckets, err := client.ListBuckets(ctx, &s3.ListBucketsInput{})
		if err != nil {
			return err
		}
		for _, b := range buckets.Buckets {
			objects, _ := client.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: b.Name})
			var keys []string
			if objects != nil {
				for _, o := range objects.Contents {
					keys = append(keys, aws.ToString(o.Key))
				}
			}
			fmt.Fprintf(w, "    bucket  %s %v\n", aws.ToString(b.Name), keys)
		}
	}
	for _, r := range registered {
		fmt.Fprintf(w, "platform API registration  %s  labels %v  request %s  by %s\n", r.Name, r.Labels, r.RequestID, r.Caller)
	}
	return nil
}
