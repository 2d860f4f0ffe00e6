package deployments_test

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"gopkg.in/yaml.v3"
)

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
