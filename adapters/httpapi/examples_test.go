package httpapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/plantstore/plantstore/adapters/memory"
	"github.com/plantstore/plantstore/application"
	"github.com/plantstore/plantstore/docs"
)

// failingStore is a memory store whose every call fails with err.
func failingStore(err error) *memory.Store {
	s := memory.New()
	s.Inject(func() error { return err })
	return s
}

// Every Error example of the OpenAPI document is what the API answers for a
// request that earns it, byte for byte: a reader of the document sees the
// real messages.
func TestErrorExamplesAreRealAnswers(t *testing.T) {
	doc, err := openapi3.NewLoader().LoadFromData(docs.OpenAPI)
	if err != nil {
		t.Fatal(err)
	}
	// exampleID is the request id of the 50001 example's message.
	const exampleID = "4f9c2a1e-8d7b-4e55-9a0b-3c1d2e3f4a5b"
	s := startServer(t, withMaxBody(65536))
	down := startServer(t, withStore(failingStore(fmt.Errorf("pool: %w", application.ErrUnavailable))))
	broken := startServer(t, withStore(failingStore(errors.New(`pq: relation "plants" does not exist`))))
	s.create(t, `{"id":7,"name":"Monstera deliciosa","tag":"aroid"}`).expect(t, 200, "")

	writer := "Bearer " + s.token(t, nil)
	reader := "Bearer " + s.keys.Scoped(t, "plants:read")
	expired := "Bearer " + s.keys.Expired(t)
	posting := map[string]string{"Authorization": writer, "Content-Type": "application/json"}
	requests := map[string]func() response{
		"Error40001": func() response { return s.do(t, "POST", "/plants", posting, []byte(`{"id": 7, "name": "Monstera",}`)) },
		"Error40002": func() response { return s.do(t, "POST", "/plants", posting, []byte(`{"id": 7, "name": ""}`)) },
		"Error40002Parameter": func() response {
			return s.do(t, "GET", "/plants/07", map[string]string{"Authorization": writer}, nil)
		},
		"Error40101": func() response { return s.do(t, "POST", "/plants", nil, nil) },
		"Error40102": func() response { return s.do(t, "POST", "/plants", map[string]string{"Authorization": expired}, nil) },
		"Error40301": func() response { return s.do(t, "POST", "/plants", map[string]string{"Authorization": reader}, nil) },
		"Error40401": func() response { return s.do(t, "GET", "/nope", nil, nil) },
		"Error40402": func() response { return s.call(t, "GET", "/plants/8") },
		"Error40501": func() response { return s.do(t, "PUT", "/plants", nil, nil) },
		"Error40901": func() response {
			return s.do(t, "POST", "/plants", posting, []byte(`{"id":7,"name":"Monstera deliciosa"}`))
		},
		"Error41001": func() response {
			old := formatCursor(application.FeedPosition{At: time.Now().Add(-200 * time.Hour)})
			return s.call(t, "GET", "/events?after="+old)
		},
		"Error41201": func() response {
			return s.do(t, "PATCH", "/plants/7", map[string]string{"Authorization": writer, "Content-Type": "application/merge-patch+json", "If-Match": `"stale"`},
				[]byte(`{"tag":null}`))
		},
		"Error40002Patch": func() response {
			return s.do(t, "PATCH", "/plants/7", map[string]string{"Authorization": writer, "Content-Type": "application/merge-patch+json"}, []byte(`{"id":8}`))
		},
		"Error41201Malformed": func() response {
			return s.do(t, "DELETE", "/plants/7", map[string]string{"Authorization": writer, "If-Match": `"stale"junk`}, nil)
		},
		"Error41201IfNoneMatch": func() response {
			return s.do(t, "DELETE", "/plants/7", map[string]string{"Authorization": writer, "If-None-Match": "*"}, nil)
		},
		"Error41501Patch": func() response {
			return s.do(t, "PATCH", "/plants/7", map[string]string{"Authorization": writer, "Content-Type": "text/plain"}, []byte(`{}`))
		},
		"Error41301": func() response {
			return s.do(t, "POST", "/plants", posting, []byte(`{"id":1,"name":"`+strings.Repeat("a", 70000)+`"}`))
		},
		"Error41501": func() response {
			return s.do(t, "POST", "/plants", map[string]string{"Authorization": writer, "Content-Type": "text/plain"}, []byte(`{}`))
		},
		"Error50001": func() response {
			return broken.do(t, "POST", "/plants", map[string]string{"Authorization": writer, "Content-Type": "application/json", "X-Request-ID": exampleID},
				[]byte(`{"id":1,"name":"a"}`))
		},
		"Error50301": func() response {
			return down.do(t, "POST", "/plants", posting, []byte(`{"id":1,"name":"a"}`))
		},
	}
	for name, ex := range doc.Components.Examples {
		want, ok := ex.Value.Value.(map[string]any)
		if _, isError := want["error"]; !ok || !isError {
			continue // a plant, not an Error
		}
		send, ok := requests[name]
		if !ok {
			t.Errorf("example %s: no request earns it in this test", name)
			continue
		}
		r := send()
		var got map[string]any
		if err := json.Unmarshal([]byte(r.body), &got); err != nil || got["error"] != want["error"] || got["message"] != want["message"] {
			t.Errorf("example %s is %v; the API answers %d %s", name, want, r.status, r.body)
		}
	}
}
