package awsemu_test

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/regionctl/regionctl/internal/awsemu"
)

func TestStartWarmStop(t *testing.T) {
	e, err := awsemu.Start(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := e.Prewarm(context.Background(), "ec2", "iam", "sts", "eks", "apigateway", "iot", "s3", "organizations"); err != nil {
		t.Error(err)
	}
	t.Logf("prewarm %s", time.Since(start))
	if err := e.Stop(); err != nil {
		t.Fatal(err)
	}
	if syscall.Kill(e.PID, 0) == nil {
		t.Errorf("moto_server (pid %d) still runs after Stop", e.PID)
	}
}
