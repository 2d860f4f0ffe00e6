package main

import (
	"net"
	"strings"
	"testing"
)

// Development mode points at the API reference page next to the token and
// the curl line, on an address a local browser can open.
func TestDevAnnounceNamesTheReferencePage(t *testing.T) {
	var out strings.Builder
	(&devSetup{token: "tok.en.sig"}).announce(&out, &net.TCPAddr{IP: net.IPv6unspecified, Port: 8080})
	for _, want := range []string{
		"\n  tok.en.sig\n",
		"\n  http://localhost:8080/docs\n",
		"curl -sS -X POST http://localhost:8080/plants -H 'Authorization: Bearer tok.en.sig'",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the announcement lacks %q:\n%s", want, out.String())
		}
	}
}
