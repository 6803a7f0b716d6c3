package awsemu

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"net/http"
	"strings"
)

// writeDenial answers a refused request as AWS answers it in the service's
// protocol, so that the SDKs raise the error AWS would raise and the
// pipeline's error paths are the real ones.
func writeDenial(w http.ResponseWriter, req *request, d denial) {
	esc := func(s string) string {
		var b strings.Builder
		_ = xml.EscapeText(&b, []byte(s))
		return b.String()
	}
	const requestID = "regionctl-iam-gate"
	switch req.Protocol {
	case "json":
		w.Header().Set("Content-Type", "application/x-amz-json-1.1")
		w.Header().Set("X-Amzn-ErrorType", jsonCode(d.Code))
		w.Header().Set("X-Amzn-RequestId", requestID)
		w.WriteHeader(http.StatusBadRequest)
		_ = json.NewEncoder(w).Encode(map[string]string{"__type": jsonCode(d.Code), "Message": d.Message})
	case "rest-json":
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Amzn-ErrorType", jsonCode(d.Code))
		w.Header().Set("X-Amzn-RequestId", requestID)
		w.WriteHeader(http.StatusForbidden)
		_ = json.NewEncoder(w).Encode(map[string]string{"message": d.Message})
	case "ec2":
		code := d.Code
		if code == "AccessDenied" {
			code = "UnauthorizedOperation"
		}
		w.Header().Set("Content-Type", "text/xml")
		w.WriteHeader(http.StatusForbidden)
		fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?>
<Response><Errors><Error><Code>%s</Code><Message>You are not authorized to perform this operation. %s</Message></Error></Errors><RequestID>%s</RequestID></Response>`,
			esc(code), esc(d.Message), requestID)
	case "rest-xml":
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(http.StatusForbidden)
		if req.Service == "route53" {
			fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?>
<ErrorResponse><Error><Type>Sender</Type><Code>%s</Code><Message>%s</Message></Error><RequestId>%s</RequestId></ErrorResponse>`, esc(d.Code), esc(d.Message), requestID)
			return
		}
		fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?>
<Error><Code>%s</Code><Message>%s</Message><RequestId>%s</RequestId><HostId>%s</HostId></Error>`, esc(d.Code), esc(d.Message), requestID, requestID)
	default: // query protocol: IAM, STS, Auto Scaling, ELB, ...
		w.Header().Set("Content-Type", "text/xml")
		w.WriteHeader(http.StatusForbidden)
		fmt.Fprintf(w, `<ErrorResponse><Error><Type>Sender</Type><Code>%s</Code><Message>%s</Message></Error><RequestId>%s</RequestId></ErrorResponse>`,
			esc(d.Code), esc(d.Message), requestID)
	}
}

// jsonCode is the JSON protocols' name of an error code.
func jsonCode(code string) string {
	if code == "AccessDenied" {
		return "AccessDeniedException"
	}
	return code
}
