package awsemu

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// secretsChecks names the secret a Secrets Manager call acts on by its
// full ARN, as AWS authorizes it: a secret's ARN ends in six random
// characters, so a policy names that ARN (or a pattern), and a caller may
// name the secret by its name alone.
func secretsChecks(e *env) ([]check, error) {
	req := e.req
	res := "*"
	id := req.str("SecretId")
	switch {
	case req.Operation == "CreateSecret":
		res = "arn:" + e.partition() + ":secretsmanager:" + req.Region + ":" + e.p.Account + ":secret:" + req.str("Name")
	case strings.HasPrefix(id, "arn:"):
		res = id
	case id != "":
		arn, err := e.view.secretARN(e.ctx, e.p.Account, req.Region, id)
		if err != nil {
			return nil, err
		}
		if arn == "" {
			// No such secret: AWS says so only to a caller its policies
			// allow on the name's secrets.
			arn = "arn:" + e.partition() + ":secretsmanager:" + req.Region + ":" + e.p.Account + ":secret:" + id
		}
		res = arn
	}
	return []check{{Action: "secretsmanager:" + req.Operation, Resource: res, Context: e.context(nil)}}, nil
}

// secretARN is the ARN of the secret of that name in an account's region
// ("" when there is none), asked of the emulator as the account.
func (v *view) secretARN(ctx context.Context, account, region, name string) (string, error) {
	cfg, err := v.admin(ctx, account)
	if err != nil {
		return "", err
	}
	creds, err := cfg.Credentials.Retrieve(ctx)
	if err != nil {
		return "", err
	}
	body, _ := json.Marshal(map[string]string{"SecretId": name})
	req, err := http.NewRequestWithContext(ctx, "POST", v.emulator+"/", bytes.NewReader(body))
	if err != nil {
		return "", err
	}
	req.Header.Set("X-Amz-Target", "secretsmanager.DescribeSecret")
	req.Header.Set("Content-Type", "application/x-amz-json-1.1")
	if creds.SessionToken != "" {
		req.Header.Set("X-Amz-Security-Token", creds.SessionToken)
	}
	resp, err := send(ctx, req, body, creds, "secretsmanager", region)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var out struct{ ARN string }
	if resp.StatusCode == http.StatusBadRequest {
		return "", nil // ResourceNotFoundException
	}
	if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&out) != nil {
		return "", fmt.Errorf("describing secret %s of %s: HTTP %d", name, account, resp.StatusCode)
	}
	return out.ARN, nil
}
