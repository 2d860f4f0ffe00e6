package deployments_test

import (
	"strconv"
	"strings"
	"testing"
)

// Measured per connection busy with a body at the default limit: its body,
// buffers and goroutine (docs/operations.md, "Admission"); and the live
// memory of the service itself.
const (
	busyConnectionBytes = 100_000
	baseLiveBytes       = 4 << 20
)

// The connection cap fits the container's memory limit: with every
// connection busy, live memory stays within 60% of the soft memory limit the
// service sets (3/4 of the container's limit), with room for the store's
// work and for the collector. Past the soft limit nothing holds memory back
// and the container is killed.
func TestDeployKubernetesConnectionCapFitsMemoryLimit(t *testing.T) {
	c := only[deploymentSpec](t, loadManifests(t), "Deployment").Spec.Template.soleContainer(t)
	limit, ok := quantityBytes(c.Resources.Limits["memory"])
	if !ok {
		t.Fatalf("memory limit %q: want a quantity such as 128Mi", c.Resources.Limits["memory"])
	}
	v := effective(t, c.vars(), "PLANTSTORE_MAX_CONNECTIONS")
	conns, err := strconv.Atoi(v)
	if err != nil {
		t.Fatalf("PLANTSTORE_MAX_CONNECTIONS=%q: %v", v, err)
	}
	soft := limit * 3 / 4
	if live := int64(conns)*busyConnectionBytes + baseLiveBytes; live > soft*6/10 {
		t.Errorf("PLANTSTORE_MAX_CONNECTIONS=%d: %d MB live with every connection busy, over 60%% of the %d MiB soft limit of a %s container",
			conns, live/1_000_000, soft>>20, c.Resources.Limits["memory"])
	}
}

// quantityBytes reads a Kubernetes memory quantity in bytes: a number with
// one of the suffixes Ki, Mi, Gi, k, M, G, or none.
func quantityBytes(q string) (int64, bool) {
	for _, u := range []struct {
		suffix string
		bytes  int64
	}{{"Ki", 1 << 10}, {"Mi", 1 << 20}, {"Gi", 1 << 30}, {"k", 1e3}, {"M", 1e6}, {"G", 1e9}, {"", 1}} {
		if n, ok := strings.CutSuffix(q, u.suffix); ok {
			v, err := strconv.ParseInt(n, 10, 64)
			return v * u.bytes, err == nil && v > 0
		}
	}
	return 0, false
}
