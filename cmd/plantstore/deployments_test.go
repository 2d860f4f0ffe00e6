package main

// These tests hold the files in deployments/ to the binary they deploy: every
// PLANTSTORE_* variable must be a row of the settings table with a value that
// parses, and ports, probes, commands and shutdown timing must agree with
// what serve and migrate actually do. Nothing here needs Docker or a cluster.

import (
	"cmp"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/plantstore/plantstore/cmd/plantstore/internal/settings"
)

// repoRoot is the repository root, seen from this package's directory.
const repoRoot = "../.."

var (
	kubernetesBase = filepath.Join(repoRoot, "deployments", "kubernetes", "base")
	composeFile    = filepath.Join(repoRoot, "deployments", "compose.yaml")
	dockerfile     = filepath.Join(repoRoot, "deployments", "Dockerfile")
)

// The paths the admin listener must serve to the probes.
const (
	livenessPath  = "/healthz"
	readinessPath = "/readyz"
)

// --- the settings table ---

// settingFor finds the setting an environment variable sets.
func settingFor(env string) (*settings.Setting, bool) {
	return new(config).settings().Lookup(env)
}

// checkVariable fails t unless a PLANTSTORE_* variable is a real setting and,
// when the manifest gives it a literal value, that value parses. Other
// variables (GOMEMLIMIT, POSTGRES_*) are not the binary's business.
func checkVariable(t *testing.T, where, name string, value *string) {
	t.Helper()
	if !strings.HasPrefix(name, "PLANTSTORE_") {
		return
	}
	s, ok := settingFor(name)
	if !ok {
		t.Errorf("%s: %s is not a setting of plantstore serve", where, name)
		return
	}
	if value != nil {
		if err := s.Parse(*value); err != nil {
			t.Errorf("%s: %s=%q is refused by serve: %v", where, name, *value, err)
		}
	}
}

// effective is the value a setting takes given the literal variables of a
// manifest: the manifest's, else the default from the settings table.
func effective(t *testing.T, vars map[string]string, env string) string {
	t.Helper()
	if v, ok := vars[env]; ok {
		return v
	}
	s, ok := settingFor(env)
	if !ok {
		t.Fatalf("%s is not a setting", env)
	}
	return s.Default
}

// effectiveDuration is effective for a duration setting.
func effectiveDuration(t *testing.T, vars map[string]string, env string) time.Duration {
	t.Helper()
	d, err := time.ParseDuration(effective(t, vars, env))
	if err != nil {
		t.Fatalf("%s: %v", env, err)
	}
	return d
}

// migratesAtStart reports whether serve would apply migrations itself.
func migratesAtStart(t *testing.T, vars map[string]string) bool {
	t.Helper()
	v := effective(t, vars, "PLANTSTORE_MIGRATE")
	b, err := strconv.ParseBool(v)
	if err != nil {
		t.Fatalf("PLANTSTORE_MIGRATE=%q: %v", v, err)
	}
	return b
}

// listenPort is the port of a listener address such as ":8080".
func listenPort(t *testing.T, addr string) int {
	t.Helper()
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatalf("address %q: %v", addr, err)
	}
	n, err := strconv.Atoi(port)
	if err != nil {
		t.Fatalf("address %q: %v", addr, err)
	}
	return n
}

// checkReachable fails t when the admin listener would bind only loopback
// inside a container, where neither probes nor Prometheus can reach it.
func checkReachable(t *testing.T, where, addr string) {
	t.Helper()
	host, _, _ := net.SplitHostPort(addr)
	if ip := net.ParseIP(host); host == "localhost" || (ip != nil && ip.IsLoopback()) {
		t.Errorf("%s: admin listener %q is loopback only; set PLANTSTORE_ADMIN_ADDR=:PORT", where, addr)
	}
}

// --- Kubernetes manifests ---

// manifest is one YAML document of deployments/kubernetes/base.
type manifest struct {
	file     string
	doc      *yaml.Node
	Kind     string `yaml:"kind"`
	Metadata struct {
		Name   string            `yaml:"name"`
		Labels map[string]string `yaml:"labels"`
	} `yaml:"metadata"`
}

type labelSelector struct {
	MatchLabels map[string]string `yaml:"matchLabels"`
}

type podTemplate struct {
	Metadata struct {
		Labels      map[string]string `yaml:"labels"`
		Annotations map[string]string `yaml:"annotations"`
	} `yaml:"metadata"`
	Spec struct {
		TerminationGracePeriodSeconds *int64          `yaml:"terminationGracePeriodSeconds"`
		RestartPolicy                 string          `yaml:"restartPolicy"`
		SecurityContext               securityContext `yaml:"securityContext"`
		InitContainers                []container     `yaml:"initContainers"`
		Containers                    []container     `yaml:"containers"`
		Volumes                       []struct {
			Name   string `yaml:"name"`
			Secret *struct {
				SecretName string `yaml:"secretName"`
				Items      []struct {
					Key  string `yaml:"key"`
					Path string `yaml:"path"`
				} `yaml:"items"`
			} `yaml:"secret"`
		} `yaml:"volumes"`
	} `yaml:"spec"`
}

type securityContext struct {
	RunAsNonRoot             *bool  `yaml:"runAsNonRoot"`
	RunAsUser                *int64 `yaml:"runAsUser"`
	ReadOnlyRootFilesystem   *bool  `yaml:"readOnlyRootFilesystem"`
	AllowPrivilegeEscalation *bool  `yaml:"allowPrivilegeEscalation"`
	Capabilities             struct {
		Drop []string `yaml:"drop"`
	} `yaml:"capabilities"`
	SeccompProfile struct {
		Type string `yaml:"type"`
	} `yaml:"seccompProfile"`
}

type container struct {
	Name    string   `yaml:"name"`
	Image   string   `yaml:"image"`
	Command []string `yaml:"command"`
	Args    []string `yaml:"args"`
	Ports   []struct {
		Name          string `yaml:"name"`
		ContainerPort int    `yaml:"containerPort"`
	} `yaml:"ports"`
	Env []struct {
		Name      string  `yaml:"name"`
		Value     *string `yaml:"value"`
		ValueFrom *struct {
			SecretKeyRef *struct {
				Name string `yaml:"name"`
				Key  string `yaml:"key"`
			} `yaml:"secretKeyRef"`
		} `yaml:"valueFrom"`
	} `yaml:"env"`
	StartupProbe   *probe `yaml:"startupProbe"`
	LivenessProbe  *probe `yaml:"livenessProbe"`
	ReadinessProbe *probe `yaml:"readinessProbe"`
	Lifecycle      struct {
		PreStop *struct {
			Sleep *struct {
				Seconds int64 `yaml:"seconds"`
			} `yaml:"sleep"`
		} `yaml:"preStop"`
	} `yaml:"lifecycle"`
	Resources struct {
		Requests map[string]string `yaml:"requests"`
		Limits   map[string]string `yaml:"limits"`
	} `yaml:"resources"`
	SecurityContext securityContext `yaml:"securityContext"`
	VolumeMounts    []struct {
		Name      string `yaml:"name"`
		MountPath string `yaml:"mountPath"`
		ReadOnly  bool   `yaml:"readOnly"`
	} `yaml:"volumeMounts"`
}

type probe struct {
	HTTPGet *struct {
		Path string `yaml:"path"`
		Port string `yaml:"port"` // a number or a port name
	} `yaml:"httpGet"`
}

type deploymentSpec struct {
	Spec struct {
		Replicas int           `yaml:"replicas"`
		Selector labelSelector `yaml:"selector"`
		Template podTemplate   `yaml:"template"`
	} `yaml:"spec"`
}

type jobSpec struct {
	Spec struct {
		BackoffLimit            *int        `yaml:"backoffLimit"`
		TTLSecondsAfterFinished *int        `yaml:"ttlSecondsAfterFinished"`
		Template                podTemplate `yaml:"template"`
	} `yaml:"spec"`
}

type serviceSpec struct {
	Spec struct {
		Selector map[string]string `yaml:"selector"`
		Ports    []struct {
			Name       string `yaml:"name"`
			Port       int    `yaml:"port"`
			TargetPort string `yaml:"targetPort"`
		} `yaml:"ports"`
	} `yaml:"spec"`
}

type disruptionBudgetSpec struct {
	Spec struct {
		MinAvailable *int          `yaml:"minAvailable"`
		Selector     labelSelector `yaml:"selector"`
	} `yaml:"spec"`
}

type autoscalerSpec struct {
	Spec struct {
		ScaleTargetRef struct {
			Kind string `yaml:"kind"`
			Name string `yaml:"name"`
		} `yaml:"scaleTargetRef"`
		MinReplicas int `yaml:"minReplicas"`
		MaxReplicas int `yaml:"maxReplicas"`
	} `yaml:"spec"`
}

type secretSpec struct {
	Data       map[string]string `yaml:"data"`
	StringData map[string]string `yaml:"stringData"`
}

// loadManifests reads every YAML document in the Kubernetes base, the
// example Secret included.
func loadManifests(t *testing.T) []manifest {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(kubernetesBase, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests in %s: %v", kubernetesBase, err)
	}
	var ms []manifest
	for _, file := range files {
		f, err := os.Open(file)
		if err != nil {
			t.Fatal(err)
		}
		dec := yaml.NewDecoder(f)
		for {
			doc := new(yaml.Node)
			err := dec.Decode(doc)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			m := manifest{file: filepath.Base(file), doc: doc}
			if err := doc.Decode(&m); err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			ms = append(ms, m)
		}
		f.Close()
	}
	return ms
}

// only decodes the one manifest of kind into T.
func only[T any](t *testing.T, ms []manifest, kind string) T {
	t.Helper()
	var found []manifest
	for _, m := range ms {
		if m.Kind == kind && m.file != "secret.example.yaml" {
			found = append(found, m)
		}
	}
	if len(found) != 1 {
		t.Fatalf("want exactly one %s in the Kubernetes base, found %d", kind, len(found))
	}
	var v T
	if err := found[0].doc.Decode(&v); err != nil {
		t.Fatalf("%s: %v", found[0].file, err)
	}
	return v
}

// workloads are the pod templates of the Deployment and the migration Job.
func workloads(t *testing.T, ms []manifest) map[string]podTemplate {
	t.Helper()
	return map[string]podTemplate{
		"Deployment": only[deploymentSpec](t, ms, "Deployment").Spec.Template,
		"Job":        only[jobSpec](t, ms, "Job").Spec.Template,
	}
}

// soleContainer is the container that runs plantstore in a pod.
func (p podTemplate) soleContainer(t *testing.T) container {
	t.Helper()
	if len(p.Spec.Containers) != 1 {
		t.Fatalf("want one container in the pod, found %d", len(p.Spec.Containers))
	}
	return p.Spec.Containers[0]
}

// vars are the container's variables with a literal value.
func (c container) vars() map[string]string {
	vars := make(map[string]string)
	for _, e := range c.Env {
		if e.Value != nil {
			vars[e.Name] = *e.Value
		}
	}
	return vars
}

// port resolves a probe's or a Service's port, a number or a port name, to
// a port the container declares.
func (c container) port(ref string) (int, bool) {
	for _, p := range c.Ports {
		if ref == p.Name || ref == strconv.Itoa(p.ContainerPort) {
			return p.ContainerPort, true
		}
	}
	return 0, false
}

// selects reports whether a label selector matches a pod's labels.
func selects(selector, labels map[string]string) bool {
	if len(selector) == 0 {
		return false
	}
	for k, v := range selector {
		if labels[k] != v {
			return false
		}
	}
	return true
}

func TestDeployKubernetesVariablesAreSettings(t *testing.T) {
	ms := loadManifests(t)
	for kind, pod := range workloads(t, ms) {
		for _, c := range slices.Concat(pod.Spec.InitContainers, pod.Spec.Containers) {
			for _, e := range c.Env {
				checkVariable(t, kind+" container "+c.Name, e.Name, e.Value)
			}
		}
	}
}

func TestDeployKubernetesPortsAndProbes(t *testing.T) {
	ms := loadManifests(t)
	pod := only[deploymentSpec](t, ms, "Deployment").Spec.Template
	c := pod.soleContainer(t)
	vars := c.vars()
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
	// The store closes after the drain: leave it a few seconds.
	const closeStore = 5 * time.Second
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
		for k, v := range svc.Environment {
			checkVariable(t, "compose service "+name, k, &v)
		}
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
	if grace <= delay+shutdown {
		t.Errorf("stop_grace_period (%s) must exceed PLANTSTORE_SHUTDOWN_DELAY (%s) plus PLANTSTORE_SHUTDOWN_TIMEOUT (%s)", grace, delay, shutdown)
	}
}

// --- Dockerfile ---

// instruction is one Dockerfile instruction, continuation lines joined.
type instruction struct {
	cmd  string // upper case: FROM, RUN, COPY, ...
	args string
}

// parseDockerfile splits a Dockerfile into build stages.
func parseDockerfile(t *testing.T, path string) [][]instruction {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var stages [][]instruction
	var line strings.Builder
	for _, raw := range strings.Split(string(data), "\n") {
		text := strings.TrimSpace(raw)
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		if rest, ok := strings.CutSuffix(text, "\\"); ok {
			line.WriteString(rest + " ")
			continue
		}
		line.WriteString(text)
		cmd, args, _ := strings.Cut(line.String(), " ")
		line.Reset()
		in := instruction{cmd: strings.ToUpper(cmd), args: strings.TrimSpace(args)}
		if in.cmd == "FROM" {
			stages = append(stages, nil)
		}
		if len(stages) == 0 {
			t.Fatalf("%s: %s before FROM", path, in.cmd)
		}
		stages[len(stages)-1] = append(stages[len(stages)-1], in)
	}
	if len(stages) < 2 {
		t.Fatalf("%s: want a build stage and a runtime stage", path)
	}
	return stages
}

// execForm decodes a JSON-array instruction such as ENTRYPOINT ["/plantstore"].
func execForm(t *testing.T, in instruction) []string {
	t.Helper()
	var argv []string
	if err := json.Unmarshal([]byte(in.args), &argv); err != nil {
		t.Errorf("%s %s: want the exec form, a JSON array", in.cmd, in.args)
	}
	return argv
}

// copyArgs splits a COPY into its sources and its destination, flags dropped.
func copyArgs(in instruction) (sources []string, dest string) {
	var fields []string
	for _, f := range strings.Fields(in.args) {
		if !strings.HasPrefix(f, "--") {
			fields = append(fields, f)
		}
	}
	if len(fields) < 2 {
		return nil, ""
	}
	return fields[:len(fields)-1], fields[len(fields)-1]
}

// goDirs are the top-level directories holding Go code the binary is built
// from, which the image's build stage must copy.
func goDirs(t *testing.T) []string {
	t.Helper()
	entries, err := os.ReadDir(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		found := errors.New("found")
		err := filepath.WalkDir(filepath.Join(repoRoot, e.Name()), func(path string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go") {
				return found
			}
			return err
		})
		if errors.Is(err, found) {
			dirs = append(dirs, e.Name())
		} else if err != nil {
			t.Fatal(err)
		}
	}
	return dirs
}

func TestDeployDockerfileBuildsStaticBinary(t *testing.T) {
	stages := parseDockerfile(t, dockerfile)
	var run strings.Builder
	copied := map[string]bool{}
	for _, stage := range stages[:len(stages)-1] {
		for _, in := range stage {
			switch in.cmd {
			case "RUN":
				run.WriteString(in.args + "\n")
			case "COPY":
				sources, _ := copyArgs(in)
				for _, s := range sources {
					copied[strings.Trim(s, "/")] = true
				}
			}
		}
	}
	if !strings.Contains(run.String(), "CGO_ENABLED=0") || !strings.Contains(run.String(), "./cmd/plantstore") {
		t.Error("the build stage must build ./cmd/plantstore with CGO_ENABLED=0, for a static binary")
	}
	for _, dir := range goDirs(t) {
		if !copied[dir] {
			t.Errorf("the build stage does not copy %s/, which holds Go code", dir)
		}
	}
}

// runtimeImage is what the Dockerfile's last stage says about the image.
type runtimeImage struct {
	vars            map[string]string
	entrypoint, cmd []string
	user            string
	exposed         []int
	copiedFromBuild map[string]bool // destinations of COPY --from
}

func readRuntimeStage(t *testing.T, stage []instruction) runtimeImage {
	t.Helper()
	img := runtimeImage{vars: map[string]string{}, copiedFromBuild: map[string]bool{}}
	for _, in := range stage {
		switch in.cmd {
		case "ENV":
			for _, kv := range strings.Fields(in.args) {
				k, v, ok := strings.Cut(kv, "=")
				if !ok {
					t.Errorf("ENV %s: want the KEY=value form", in.args)
				}
				img.vars[k] = strings.Trim(v, `"`)
			}
		case "EXPOSE":
			for _, p := range strings.Fields(in.args) {
				n, err := strconv.Atoi(strings.TrimSuffix(p, "/tcp"))
				if err != nil {
					t.Errorf("EXPOSE %s: %v", p, err)
				}
				img.exposed = append(img.exposed, n)
			}
		case "ENTRYPOINT":
			img.entrypoint = execForm(t, in)
		case "CMD":
			img.cmd = execForm(t, in)
		case "USER":
			img.user, _, _ = strings.Cut(in.args, ":")
		case "COPY":
			if strings.Contains(in.args, "--from=") {
				_, dest := copyArgs(in)
				img.copiedFromBuild[dest] = true
			}
		}
	}
	return img
}

func TestDeployDockerfileRuntimeImage(t *testing.T) {
	stages := parseDockerfile(t, dockerfile)
	img := readRuntimeStage(t, stages[len(stages)-1])
	for k, v := range img.vars {
		checkVariable(t, "Dockerfile", k, &v)
	}

	apiPort := listenPort(t, effective(t, img.vars, "PLANTSTORE_ADDR"))
	adminAddr := effective(t, img.vars, "PLANTSTORE_ADMIN_ADDR")
	checkReachable(t, "Dockerfile", adminAddr)
	want := []int{apiPort, listenPort(t, adminAddr)}
	slices.Sort(img.exposed)
	slices.Sort(want)
	if !slices.Equal(img.exposed, want) {
		t.Errorf("EXPOSE %v, want the listeners' ports %v", img.exposed, want)
	}
	if len(img.entrypoint) != 1 || !img.copiedFromBuild[img.entrypoint[0]] {
		t.Errorf("ENTRYPOINT %q, want the binary copied from the build stage alone", img.entrypoint)
	}
	if !slices.Equal(img.cmd, []string{"serve"}) {
		t.Errorf("CMD %q, want [\"serve\"]", img.cmd)
	}
	if img.user == "" || img.user == "root" || img.user == "0" {
		t.Errorf("the runtime stage runs as %q; want a non-root USER", img.user)
	}
}
