package httpapi

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"testing"

	"github.com/plantstore/plantstore/client"
)

// The typed client generated from docs/openapi.yaml (package client, which
// the project did not write by hand) drives the served API: a change to the
// document that the API does not keep, or that a generated client cannot
// use, fails here. Every exchange is also checked against the document.

// checkedDoer sends the client's requests with the test server's HTTP client
// and checks each answer against the OpenAPI document before the generated
// code decodes it.
type checkedDoer struct {
	t *testing.T
	s *testServer
}

func (d checkedDoer) Do(req *http.Request) (*http.Response, error) {
	resp, err := d.s.client.Do(req)
	if err != nil {
		return nil, err
	}
	b, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if err != nil {
		return nil, err
	}
	d.s.contract.Check(d.t, req, resp, b)
	resp.Body = io.NopCloser(bytes.NewReader(b))
	return resp, nil
}

// apiClient is a generated client of s that sends token ("" sends none).
func (s *testServer) apiClient(t *testing.T, token string) *client.ClientWithResponses {
	t.Helper()
	opts := []client.ClientOption{client.WithHTTPClient(checkedDoer{t: t, s: s})}
	if token != "" {
		opts = append(opts, client.WithBearerToken(token))
	}
	c, err := client.NewClientWithResponses(s.url, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// decoded is what the generated code made of one answer, read through the
// names it gives every operation's response: JSONnnn, the body of status
// nnn where the document declares one, and Headersnnn, its headers.
type decoded struct {
	status   int
	declared bool          // the document declares a JSON body for the status
	errBody  *client.Error // the decoded Error, when declared and sent
	headers  reflect.Value // the parsed headers (a struct)
}

// decode reads r, a *client.XxxResponse, after a call that returned err.
func decode(t *testing.T, r any, err error) decoded {
	t.Helper()
	if err != nil {
		t.Fatalf("the client failed: %v", err)
	}
	status := r.(interface{ StatusCode() int }).StatusCode()
	v := reflect.ValueOf(r).Elem()
	d := decoded{status: status}
	if f := v.FieldByName(fmt.Sprintf("JSON%d", status)); f.IsValid() {
		d.declared = true
		if e, ok := f.Interface().(*client.Error); ok {
			d.errBody = e
		}
	}
	h := v.FieldByName(fmt.Sprintf("Headers%d", status))
	if !h.IsValid() || h.IsNil() {
		t.Fatalf("%T %d: the client parsed no headers", r, status)
	}
	d.headers = h.Elem()
	if id := d.header("XRequestID"); id == "" {
		t.Errorf("%T %d: no X-Request-ID parsed", r, status)
	}
	return d
}

// header is the parsed header field named name ("" when it has none).
func (d decoded) header(name string) string {
	if f := d.headers.FieldByName(name); f.IsValid() && f.Kind() == reflect.String {
		return f.String()
	}
	return ""
}

// expectError checks that the answer is status with the Error code, decoded
// by the client; an answer to HEAD has the status, its headers and no body,
// and the document declares none, so the client decodes nothing.
func (d decoded) expectError(t *testing.T, head bool, status int, code client.ErrorError) {
	t.Helper()
	switch {
	case d.status != status:
		t.Errorf("answered %d, want %d (%d)", d.status, status, code)
	case head && d.declared:
		t.Errorf("HEAD %d: the document declares a body", status)
	case !head && (d.errBody == nil || d.errBody.Error != code || d.errBody.Message == ""):
		t.Errorf("%d: decoded %+v, want the Error %d", status, d.errBody, code)
	}
}

func ptr[T any](v T) *T { return &v }

// deref is *p, or "" for nil.
func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
