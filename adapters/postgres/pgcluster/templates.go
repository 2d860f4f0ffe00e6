package pgcluster

import (
	"os"
	"path/filepath"
	"testing"
	"text/template"
)

// The HA cluster's configuration files are deployments/patroni's templates,
// filled here as an operator fills them, so that the deployment that is
// documented is the one that is tested. Each settings type names the
// placeholders of one template.

// patroniSettings fills patroni.yml, one member's configuration.
type patroniSettings struct {
	Name       string
	Host       string // where the member listens and is reached
	APIPort    int    // Patroni's REST API
	PGPort     int    // PostgreSQL
	Etcd       string // host:port of this member's etcd endpoint
	DataDir    string
	BinDir     string // PostgreSQL's server programs
	PgPass     string // the file Patroni writes for pg_basebackup and pg_rewind
	SocketDir  string
	Network    string // the address range pg_hba.conf lets in
	AuthMethod string // pg_hba.conf's method for it
	Fsync      string
}

// haproxySettings fills haproxy.cfg.
type haproxySettings struct {
	Host    string
	Port    int
	Members []patroniSettings // Name, Host, PGPort and APIPort
}

// pgbouncerSettings fills pgbouncer.ini.
type pgbouncerSettings struct {
	Host        string
	Port        int
	HAProxyHost string
	HAProxyPort int
	AuthType    string
	AuthFile    string // userlist.txt, filled with userlistSettings
}

// userlistSettings fills userlist.txt, PgBouncer's users.
type userlistSettings struct {
	Password string
}

// render fills the template deployments/patroni/name with settings and
// writes it to dest, readable by the server user.
func render(t testing.TB, name, dest string, settings any) {
	t.Helper()
	tmpl, err := template.New(name).Option("missingkey=error").ParseFiles(filepath.Join(deploymentDir(t), name))
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(dest, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := tmpl.Execute(f, settings); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

// deploymentDir is deployments/patroni of the repository the test runs in,
// found by walking up from the test's working directory (its package's
// directory), which works for every package's tests, whichever imports this
// one, and for another module nested in the repository (tools/...).
func deploymentDir(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		templates := filepath.Join(dir, "deployments", "patroni")
		if _, err := os.Stat(filepath.Join(templates, "patroni.yml")); err == nil {
			return templates
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no deployments/patroni above the test's directory")
		}
		dir = parent
	}
}
