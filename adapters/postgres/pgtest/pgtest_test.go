package pgtest

import (
	"net"
	"testing"
)

func TestNewDatabaseIsFreshAndDroppedAfterTheTest(t *testing.T) {
	admin := Admin(t)
	var name string
	t.Run("user", func(t *testing.T) {
		name = DatabaseName(NewDatabase(t))
		var exists bool
		if err := admin.Get(&exists, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name); err != nil || !exists {
			t.Fatalf("database %q exists = %v, %v; want it created", name, exists, err)
		}
	})
	var exists bool
	if err := admin.Get(&exists, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name); err != nil || exists {
		t.Fatalf("database %q exists = %v, %v after its test; want it dropped", name, exists, err)
	}
}

func TestUnreachableServerSkipsOutsideCI(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	t.Setenv(EnvURL, "postgres://postgres@"+addr+"/postgres?sslmode=disable")
	t.Setenv("CI", "")

	reached := false
	t.Run("user", func(t *testing.T) {
		NewDatabase(t)
		reached = true
	})
	if reached {
		t.Fatal("NewDatabase returned although the server is unreachable")
	}
}
