package deployments_test

import (
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

// --- compose.yaml ---

type composeService struct {
	Image       string            `yaml:"image"`
	Command     []string          `yaml:"command"`
	Environment map[string]string `yaml:"environment"`
	Ports       []string          `yaml:"ports"`
	Secrets     []string          `yaml:"secrets"`
	DependsOn   map[string]struct {
		Condition string `yaml:"condition"`
	} `yaml:"depends_on"`
	Healthcheck struct {
		Test []string `yaml:"test"`
	} `yaml:"healthcheck"`
	StopGracePeriod string `yaml:"stop_grace_period"`
}

type composeProject struct {
	Services map[string]composeService `yaml:"services"`
	Secrets  map[string]struct {
		File string `yaml:"file"`
	} `yaml:"secrets"`
}

// publishedPort splits a compose port mapping, "[IP:]HOST:CONTAINER".
func publishedPort(t *testing.T, mapping string) (hostIP string, target int) {
	t.Helper()
	parts := strings.Split(mapping, ":")
	if len(parts) == 3 {
		hostIP = parts[0]
	}
	target, err := strconv.Atoi(parts[len(parts)-1])
	if err != nil || len(parts) < 2 {
		t.Fatalf("port mapping %q: want [IP:]HOST:CONTAINER", mapping)
	}
	return hostIP, target
}

func TestDeployCompose(t *testing.T) {
	data, err := os.ReadFile(composeFile)
	if err != nil {
		t.Fatal(err)
	}
	var p composeProject
	if err := yaml.Unmarshal(data, &p); err != nil {
		t.Fatalf("compose.yaml: %v", err)
	}
	for name, svc := range p.Services {
		checkVariables(t, "compose service "+name, svc.Environment, slices.Collect(maps.Keys(svc.Environment)))
	}

	db, migrate, serve := p.Services["postgres"], p.Services["migrate"], p.Services["plantstore"]
	if !slices.Contains(db.Healthcheck.Test, "pg_isready") {
		t.Errorf("postgres healthcheck is %q, want pg_isready", db.Healthcheck.Test)
	}
	if !slices.Equal(migrate.Command, []string{"migrate"}) || migrate.DependsOn["postgres"].Condition != "service_healthy" {
		t.Error("the migrate service must run migrate once postgres is healthy")
	}
	if !slices.Equal(serve.Command, []string{"serve"}) || serve.DependsOn["migrate"].Condition != "service_completed_successfully" {
		t.Error("the plantstore service must run serve once migrate completed successfully")
	}
	if serve.Image != migrate.Image {
		t.Errorf("migrate runs %q and plantstore %q; they must be the same image", migrate.Image, serve.Image)
	}
	vars := serve.Environment
	serveChecks(t, "compose service plantstore", vars)
	if migratesAtStart(t, vars) {
		t.Error("the plantstore service must run with PLANTSTORE_MIGRATE=false; the migrate service owns the schema")
	}

	apiPort := listenPort(t, effective(t, vars, "PLANTSTORE_ADDR"))
	adminAddr := effective(t, vars, "PLANTSTORE_ADMIN_ADDR")
	adminPort := listenPort(t, adminAddr)
	checkReachable(t, "compose", adminAddr)
	published := map[int]string{}
	for _, m := range serve.Ports {
		ip, target := publishedPort(t, m)
		published[target] = ip
	}
	if _, ok := published[apiPort]; !ok {
		t.Errorf("the API port %d is not published", apiPort)
	}
	if ip, ok := published[adminPort]; !ok || ip != "127.0.0.1" {
		t.Errorf("the admin port %d must be published on 127.0.0.1 only, got %q", adminPort, ip)
	}

	file := vars["PLANTSTORE_JWT_SECRET_FILE"]
	secret, ok := strings.CutPrefix(file, "/run/secrets/")
	if !ok || !slices.Contains(serve.Secrets, secret) || p.Secrets[secret].File == "" {
		t.Errorf("PLANTSTORE_JWT_SECRET_FILE=%q must be a compose secret file given to the service", file)
	}

	grace, err := time.ParseDuration(serve.StopGracePeriod)
	if err != nil {
		t.Fatalf("stop_grace_period %q: %v", serve.StopGracePeriod, err)
	}
	delay, shutdown := effectiveDuration(t, vars, "PLANTSTORE_SHUTDOWN_DELAY"), effectiveDuration(t, vars, "PLANTSTORE_SHUTDOWN_TIMEOUT")
	// Then the store closes: with it stalled, up to the query timeout for a
	// batch in flight and a second for the webhook outcomes cut short.
	closeStore := effectiveDuration(t, vars, "PLANTSTORE_DB_QUERY_TIMEOUT") + time.Second
	if grace <= delay+shutdown+closeStore {
		t.Errorf("stop_grace_period (%s) must exceed PLANTSTORE_SHUTDOWN_DELAY (%s) plus PLANTSTORE_SHUTDOWN_TIMEOUT (%s) plus %s to close the store", grace, delay, shutdown, closeStore)
	}
}
