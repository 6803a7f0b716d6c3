package awsemu

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"strings"
	"sync"
)

// mends rewrites the few exchanges with moto that moto gets wrong in a way
// a second Terraform plan would see as drift, so that the emulator holds
// what AWS would. Each mend is named for the AWS behaviour it restores.
type mends struct {
	// eksAccess is each EKS cluster's access configuration as it was
	// created (account/region/name → JSON object): moto drops it, and AWS
	// describes every cluster with one.
	eksAccess sync.Map
	// iotEndpoints is each account's IoT endpoint by region and type, as
	// first answered: AWS gives an account one, moto a new one each call.
	iotEndpoints sync.Map
}

// eksDefaultAccess is the access configuration AWS gives a cluster created
// without one.
var eksDefaultAccess = map[string]any{"authenticationMode": "CONFIG_MAP", "bootstrapClusterCreatorAdminPermissions": true}

// request rewrites a request into what moto understands as AWS understands
// the original, and remembers what moto would drop. AWS makes a hosted
// zone created with a VPC private; moto makes it public unless
// HostedZoneConfig.PrivateZone says otherwise, so that Terraform's next
// plan would try to associate the VPC with a public zone.
func (m *mends) request(account string, req *request, body []byte) []byte {
	switch {
	case req.Service == "eks" && req.Operation == "CreateCluster":
		access, _ := req.JSON["accessConfig"].(map[string]any)
		merged := map[string]any{}
		for k, v := range eksDefaultAccess {
			merged[k] = v
		}
		for k, v := range access {
			merged[k] = v
		}
		name, _ := req.JSON["name"].(string)
		m.eksAccess.Store(account+"/"+req.Region+"/"+name, merged)
	case req.Service == "eks" && req.Operation == "UpdateClusterConfig":
		if access, ok := req.JSON["accessConfig"].(map[string]any); ok {
			key := account + "/" + req.Region + "/" + req.Labels["name"]
			cur, _ := m.eksAccess.LoadOrStore(key, map[string]any{})
			merged := map[string]any{}
			for k, v := range cur.(map[string]any) {
				merged[k] = v
			}
			for k, v := range access {
				merged[k] = v
			}
			m.eksAccess.Store(key, merged)
		}
	case req.Service == "route53" && req.Operation == "CreateHostedZone" && bytes.Contains(body, []byte("<VPC>")) && !bytes.Contains(body, []byte("<PrivateZone>")):
		if bytes.Contains(body, []byte("</HostedZoneConfig>")) {
			return bytes.Replace(body, []byte("</HostedZoneConfig>"), []byte("<PrivateZone>true</PrivateZone></HostedZoneConfig>"), 1)
		}
		return bytes.Replace(body, []byte("<VPC>"), []byte("<HostedZoneConfig><PrivateZone>true</PrivateZone></HostedZoneConfig><VPC>"), 1)
	}
	return body
}

// answer mends moto's successful answer to req:
//   - a node group created without remote access is given moto's default
//     SSH key, which Terraform then sees as drift that forces the group's
//     replacement; the key is removed;
//   - a cluster is described without the access configuration it was
//     created with (AWS always says it), which Terraform would see as drift
//     that forces the cluster's replacement; it is put back.
//   - IoT's endpoint of an account is a new random name on every call;
//     the first one answered is kept;
//   - an API Gateway custom domain is described without the regional
//     endpoint AWS gives it (its target name, hosted zone and status), so
//     that nothing could alias a record to it and Terraform would wait
//     for it forever; a stand-in of AWS's form is put in.
func (m *mends) answer(account string, req *request, answer []byte) []byte {
	if req.Service == "iot" && req.Operation == "DescribeEndpoint" {
		key := account + "/" + req.Region + "/" + req.Query.Get("endpointType")
		first, _ := m.iotEndpoints.LoadOrStore(key, answer)
		return first.([]byte)
	}
	var doc map[string]any
	switch {
	case req.Service == "eks" && (req.Operation == "CreateNodegroup" || req.Operation == "DescribeNodegroup" || req.Operation == "CreateCluster" || req.Operation == "DescribeCluster"):
	case req.Service == "apigateway" && strings.HasPrefix(req.Path, "/v2/domainnames"):
	case req.Service == "ecs" && (req.Operation == "RunTask" || req.Operation == "DescribeTasks" || req.Operation == "StopTask"):
	default:
		return answer
	}
	if json.Unmarshal(answer, &doc) != nil {
		return answer
	}
	changed := false
	domains := []any{doc}
	if items, ok := doc["items"].([]any); ok {
		domains = items
	}
	for _, d := range domains {
		if d, _ := d.(map[string]any); d != nil && req.Service == "apigateway" {
			changed = regionalDomain(req.Region, d) || changed
		}
	}
	if ng, _ := doc["nodegroup"].(map[string]any); ng != nil {
		if ra, _ := ng["remoteAccess"].(map[string]any); len(ra) == 1 && ra["ec2SshKey"] == "eksKeypair" {
			delete(ng, "remoteAccess")
			changed = true
		}
	}
	// moto copies a task's containers' cpu and memory from the task
	// definition as numbers; ECS answers them as strings, and the SDK
	// refuses numbers there.
	tasks, _ := doc["tasks"].([]any)
	if t, ok := doc["task"]; ok {
		tasks = append(tasks, t)
	}
	for _, t := range tasks {
		t, _ := t.(map[string]any)
		cs, _ := t["containers"].([]any)
		for _, c := range cs {
			c, _ := c.(map[string]any)
			for _, k := range []string{"cpu", "memory", "memoryReservation"} {
				switch v := c[k].(type) {
				case float64:
					c[k], changed = strconv.FormatFloat(v, 'f', -1, 64), true
				case nil:
					if _, present := c[k]; present {
						delete(c, k)
						changed = true
					}
				}
			}
		}
	}
	if c, _ := doc["cluster"].(map[string]any); c != nil && c["accessConfig"] == nil {
		name, _ := c["name"].(string)
		access, ok := m.eksAccess.Load(account + "/" + req.Region + "/" + name)
		if !ok {
			access = eksDefaultAccess
		}
		c["accessConfig"] = access
		changed = true
	}
	if !changed {
		return answer
	}
	b, err := json.Marshal(doc)
	if err != nil {
		return answer
	}
	return b
}

// regionalDomain fills in the regional endpoint of an API Gateway custom
// domain's configurations where moto left it out, and drops the empty
// mutual TLS settings moto adds to a domain created without them (AWS says
// none); it reports whether it changed anything.
func regionalDomain(region string, d map[string]any) bool {
	name, _ := d["domainName"].(string)
	confs, _ := d["domainNameConfigurations"].([]any)
	changed := false
	if m, ok := d["mutualTlsAuthentication"].(map[string]any); ok && len(m) == 0 || d["mutualTlsAuthentication"] == nil && hasKey(d, "mutualTlsAuthentication") {
		delete(d, "mutualTlsAuthentication")
		changed = true
	}
	for _, c := range confs {
		c, _ := c.(map[string]any)
		if c == nil || c["apiGatewayDomainName"] != nil {
			continue
		}
		sum := sha256.Sum256([]byte(region + "/" + name))
		c["apiGatewayDomainName"] = "d-" + hex.EncodeToString(sum[:5]) + ".execute-api." + region + ".amazonaws.com"
		c["hostedZoneId"] = "Z" + strings.ToUpper(hex.EncodeToString(sum[5:12]))
		c["domainNameStatus"] = "AVAILABLE"
		changed = true
	}
	return changed
}

func hasKey(m map[string]any, k string) bool {
	_, ok := m[k]
	return ok
}

// deletionTask mends moto's answer to DeleteServiceLinkedRole: moto's
// DeletionTaskId is a bare UUID, AWS's task/<path><name>/<id> (IAM API
// Reference, DeleteServiceLinkedRole), and GetServiceLinkedRoleDeletionStatus
// is authorized on the role that id names.
func deletionTask(answer []byte, role string) []byte {
	_, pathName, ok := strings.Cut(role, ":role/")
	if !ok {
		return answer
	}
	const open = "<DeletionTaskId>"
	i := bytes.Index(answer, []byte(open))
	if i < 0 || bytes.HasPrefix(answer[i+len(open):], []byte("task/")) {
		return answer
	}
	return append(append(append([]byte{}, answer[:i+len(open)]...), "task/"+pathName+"/"...), answer[i+len(open):]...)
}
