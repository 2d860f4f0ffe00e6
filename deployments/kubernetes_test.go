package deployments_test

import (
	"cmp"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

func TestDeployKubernetesVariablesAreSettings(t *testing.T) {
	ms := loadManifests(t)
	for kind, pod := range workloads(t, ms) {
		for _, c := range slices.Concat(pod.Spec.InitContainers, pod.Spec.Containers) {
			var names []string
			for _, e := range c.Env {
				names = append(names, e.Name)
			}
			checkVariables(t, kind+" container "+c.Name, c.vars(), names)
		}
	}
}

func TestDeployKubernetesPortsAndProbes(t *testing.T) {
	ms := loadManifests(t)
	pod := only[deploymentSpec](t, ms, "Deployment").Spec.Template
	c := pod.soleContainer(t)
	vars := c.vars()
	serveChecks(t, "Deployment", vars)
	apiPort := listenPort(t, effective(t, vars, "PLANTSTORE_ADDR"))
	adminAddr := effective(t, vars, "PLANTSTORE_ADMIN_ADDR")
	adminPort := listenPort(t, adminAddr)
	checkReachable(t, "Deployment", adminAddr)

	for _, want := range []struct {
		name string
		port int
	}{{"api", apiPort}, {"admin", adminPort}} {
		if got, ok := c.port(want.name); !ok || got != want.port {
			t.Errorf("container port %q is %d, want %d (the listener's port)", want.name, got, want.port)
		}
	}

	probes := []struct {
		name     string
		probe    *probe
		path     string
		required bool
	}{
		{"livenessProbe", c.LivenessProbe, livenessPath, true},
		{"readinessProbe", c.ReadinessProbe, readinessPath, true},
		{"startupProbe", c.StartupProbe, livenessPath, false},
	}
	for _, p := range probes {
		if p.probe == nil {
			if p.required {
				t.Errorf("%s is missing", p.name)
			}
			continue
		}
		if p.probe.HTTPGet == nil {
			t.Errorf("%s: want an httpGet probe on the admin listener", p.name)
			continue
		}
		if p.probe.HTTPGet.Path != p.path {
			t.Errorf("%s path is %q, want %q", p.name, p.probe.HTTPGet.Path, p.path)
		}
		if got, ok := c.port(p.probe.HTTPGet.Port); !ok || got != adminPort {
			t.Errorf("%s port %q resolves to %d, want the admin port %d", p.name, p.probe.HTTPGet.Port, got, adminPort)
		}
	}

	if v, ok := pod.Metadata.Annotations["prometheus.io/port"]; ok && v != strconv.Itoa(adminPort) {
		t.Errorf("prometheus.io/port is %s, want the admin port %d", v, adminPort)
	}

	svc := only[serviceSpec](t, ms, "Service")
	if !selects(svc.Spec.Selector, pod.Metadata.Labels) {
		t.Errorf("the Service selector %v does not select the Deployment's pods %v", svc.Spec.Selector, pod.Metadata.Labels)
	}
	targets := map[string]int{}
	for _, p := range svc.Spec.Ports {
		got, ok := c.port(p.TargetPort)
		if !ok {
			t.Errorf("Service port %q targets %q, which the container does not declare", p.Name, p.TargetPort)
		}
		targets[p.Name] = got
	}
	if targets["http"] != apiPort {
		t.Errorf("Service port http targets %d, want the API port %d", targets["http"], apiPort)
	}
	if targets["metrics"] != adminPort {
		t.Errorf("Service port metrics targets %d, want the admin port %d", targets["metrics"], adminPort)
	}
}

func TestDeployKubernetesCommands(t *testing.T) {
	ms := loadManifests(t)
	deploy := only[deploymentSpec](t, ms, "Deployment").Spec.Template
	job := only[jobSpec](t, ms, "Job")

	serve, migrate := deploy.soleContainer(t), job.Spec.Template.soleContainer(t)
	for _, tc := range []struct {
		kind string
		c    container
		args []string
	}{
		{"Deployment", serve, []string{"serve"}},
		{"Job", migrate, []string{"migrate"}},
	} {
		if len(tc.c.Command) != 0 {
			t.Errorf("%s overrides the image's entrypoint with %q", tc.kind, tc.c.Command)
		}
		if !slices.Equal(tc.c.Args, tc.args) {
			t.Errorf("%s runs %q, want %q", tc.kind, tc.c.Args, tc.args)
		}
	}
	if migratesAtStart(t, serve.vars()) {
		t.Error("the Deployment must run with PLANTSTORE_MIGRATE=false; the migration Job owns the schema")
	}
	if serve.Image != migrate.Image {
		t.Errorf("the Job runs image %q and the Deployment %q; migrations must come from the same build", migrate.Image, serve.Image)
	}
	if p := job.Spec.Template.Spec.RestartPolicy; p != "Never" && p != "OnFailure" {
		t.Errorf("the Job's restartPolicy is %q", p)
	}
	if job.Spec.BackoffLimit == nil || job.Spec.TTLSecondsAfterFinished == nil {
		t.Error("the Job needs backoffLimit and ttlSecondsAfterFinished")
	}
	svc := only[serviceSpec](t, ms, "Service")
	if selects(svc.Spec.Selector, job.Spec.Template.Metadata.Labels) {
		t.Error("the Service selects the migration Job's pod; give the pods different component labels")
	}
}

func TestDeployKubernetesShutdownFitsGracePeriod(t *testing.T) {
	pod := only[deploymentSpec](t, loadManifests(t), "Deployment").Spec.Template
	c := pod.soleContainer(t)
	if pod.Spec.TerminationGracePeriodSeconds == nil {
		t.Fatal("terminationGracePeriodSeconds is not set")
	}
	grace := time.Duration(*pod.Spec.TerminationGracePeriodSeconds) * time.Second
	var preStop time.Duration
	if ps := c.Lifecycle.PreStop; ps != nil && ps.Sleep != nil {
		preStop = time.Duration(ps.Sleep.Seconds) * time.Second
	}
	delay := effectiveDuration(t, c.vars(), "PLANTSTORE_SHUTDOWN_DELAY")
	shutdown := effectiveDuration(t, c.vars(), "PLANTSTORE_SHUTDOWN_TIMEOUT")
	// Endpoint removal reaches load balancers a few seconds after SIGTERM;
	// without a delay the listener would close under traffic still routed
	// to the pod.
	if delay < 5*time.Second {
		t.Errorf("PLANTSTORE_SHUTDOWN_DELAY (%s) must outlast the endpoint update, at least 5s", delay)
	}
	// The store closes after the drain: with the store stalled, a batch in
	// flight holds it for up to the query timeout, and the webhook outcomes
	// cut short are written for up to a second.
	closeStore := effectiveDuration(t, c.vars(), "PLANTSTORE_DB_QUERY_TIMEOUT") + time.Second
	if need := preStop + delay + shutdown + closeStore; grace < need {
		t.Errorf("terminationGracePeriodSeconds (%s) must cover the preStop sleep (%s), PLANTSTORE_SHUTDOWN_DELAY (%s), PLANTSTORE_SHUTDOWN_TIMEOUT (%s) and %s to close the store, or in-flight requests are killed",
			grace, preStop, delay, shutdown, closeStore)
	}
}

func TestDeployKubernetesHardening(t *testing.T) {
	for kind, pod := range workloads(t, loadManifests(t)) {
		for _, c := range slices.Concat(pod.Spec.InitContainers, pod.Spec.Containers) {
			where := kind + " container " + c.Name
			podSC, sc := pod.Spec.SecurityContext, c.SecurityContext
			nonRoot := sc.RunAsNonRoot
			if nonRoot == nil {
				nonRoot = podSC.RunAsNonRoot
			}
			user := sc.RunAsUser
			if user == nil {
				user = podSC.RunAsUser
			}
			seccomp := cmp.Or(sc.SeccompProfile.Type, podSC.SeccompProfile.Type)
			for _, check := range []struct {
				what string
				ok   bool
			}{
				{"runAsNonRoot: true", isTrue(nonRoot)},
				{"a runAsUser other than 0", user == nil || *user != 0},
				{"readOnlyRootFilesystem: true", isTrue(sc.ReadOnlyRootFilesystem)},
				{"allowPrivilegeEscalation: false", sc.AllowPrivilegeEscalation != nil && !*sc.AllowPrivilegeEscalation},
				{"capabilities drop ALL", slices.Contains(sc.Capabilities.Drop, "ALL")},
				{"seccompProfile RuntimeDefault", seccomp == "RuntimeDefault"},
			} {
				if !check.ok {
					t.Errorf("%s: want %s", where, check.what)
				}
			}
			for _, r := range []string{"cpu", "memory"} {
				if c.Resources.Requests[r] == "" || c.Resources.Limits[r] == "" {
					t.Errorf("%s: want a %s request and limit", where, r)
				}
			}
		}
	}
}

func isTrue(b *bool) bool { return b != nil && *b }

// exampleSecrets are the keys of each Secret in secret.example.yaml.
func exampleSecrets(t *testing.T, ms []manifest) map[string]map[string]bool {
	t.Helper()
	example := map[string]map[string]bool{}
	for _, m := range ms {
		if m.file != "secret.example.yaml" || m.Kind != "Secret" {
			continue
		}
		var s secretSpec
		if err := m.doc.Decode(&s); err != nil {
			t.Fatal(err)
		}
		keys := map[string]bool{}
		for k := range s.Data {
			keys[k] = true
		}
		for k := range s.StringData {
			keys[k] = true
		}
		example[m.Metadata.Name] = keys
	}
	return example
}

func TestDeployKubernetesSecrets(t *testing.T) {
	ms := loadManifests(t)
	// Every key the workloads read must be in the example, so that it stays
	// a true recipe for the Secrets to create.
	example := exampleSecrets(t, ms)
	for kind, pod := range workloads(t, ms) {
		secretFiles := map[string]string{} // volume name -> secret name
		for _, v := range pod.Spec.Volumes {
			if v.Secret == nil {
				continue
			}
			secretFiles[v.Name] = v.Secret.SecretName
			for _, item := range v.Secret.Items {
				if !example[v.Secret.SecretName][item.Key] {
					t.Errorf("%s: volume %s reads key %q of Secret %q, which secret.example.yaml lacks", kind, v.Name, item.Key, v.Secret.SecretName)
				}
			}
		}
		c := pod.soleContainer(t)
		for _, e := range c.Env {
			if e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil {
				continue
			}
			ref := e.ValueFrom.SecretKeyRef
			if !example[ref.Name][ref.Key] {
				t.Errorf("%s: %s reads key %q of Secret %q, which secret.example.yaml lacks", kind, e.Name, ref.Key, ref.Name)
			}
		}
		file, ok := c.vars()["PLANTSTORE_JWT_SECRET_FILE"]
		if !ok {
			continue
		}
		mounted := false
		for _, vm := range c.VolumeMounts {
			if _, isSecret := secretFiles[vm.Name]; isSecret && vm.ReadOnly && filepath.Dir(file) == vm.MountPath {
				mounted = true
			}
		}
		if !mounted {
			t.Errorf("%s: PLANTSTORE_JWT_SECRET_FILE=%s is not in a read-only Secret volume mount", kind, file)
		}
	}
}

func TestDeployKubernetesScaling(t *testing.T) {
	ms := loadManifests(t)
	deploy := only[deploymentSpec](t, ms, "Deployment")
	hpa := only[autoscalerSpec](t, ms, "HorizontalPodAutoscaler").Spec
	pdb := only[disruptionBudgetSpec](t, ms, "PodDisruptionBudget").Spec
	labels := deploy.Spec.Template.Metadata.Labels

	if ref := hpa.ScaleTargetRef; ref.Kind != "Deployment" || ref.Name != "plantstore" {
		t.Errorf("the autoscaler targets %s %s, want Deployment plantstore", ref.Kind, ref.Name)
	}
	if hpa.MinReplicas < 2 || hpa.MaxReplicas < hpa.MinReplicas {
		t.Errorf("autoscaler bounds %d..%d; want at least 2 replicas", hpa.MinReplicas, hpa.MaxReplicas)
	}
	if !selects(deploy.Spec.Selector.MatchLabels, labels) || !selects(pdb.Selector.MatchLabels, labels) {
		t.Error("the Deployment's and the disruption budget's selectors must select the Deployment's pods")
	}
	if pdb.MinAvailable == nil || *pdb.MinAvailable < 1 || *pdb.MinAvailable >= hpa.MinReplicas {
		t.Errorf("the disruption budget must keep at least one pod and still allow a node drain at %d replicas", hpa.MinReplicas)
	}
}

func TestDeployKustomizationListsEveryManifest(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(kubernetesBase, "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var k struct {
		Resources []string `yaml:"resources"`
	}
	if err := yaml.Unmarshal(data, &k); err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(kubernetesBase, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, f := range files {
		name := filepath.Base(f)
		// Examples hold placeholders and are applied by hand, never by kustomize.
		if name != "kustomization.yaml" && !strings.HasSuffix(name, ".example.yaml") {
			want = append(want, name)
		}
	}
	got := slices.Sorted(slices.Values(k.Resources))
	if !slices.Equal(got, want) {
		t.Errorf("kustomization resources are %q, want every manifest of the base: %q", got, want)
	}
}
