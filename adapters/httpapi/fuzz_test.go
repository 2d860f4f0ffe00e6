package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/plantstore/plantstore/application"
	"github.com/plantstore/plantstore/domain"
)

// documentedCodes are the error codes a create may answer once its caller is
// authenticated, by status (docs/errors.md).
var documentedCodes = map[int][]int32{
	http.StatusBadRequest:            {40001, 40002},
	http.StatusConflict:              {40901},
	http.StatusRequestEntityTooLarge: {41301},
	http.StatusUnsupportedMediaType:  {41501},
}

// FuzzServeCreate sends arbitrary bodies and content types through the real
// router and use case: every answer is 200 with a Plant or a documented 4xx
// with an Error whose code fits its status, never a 5xx, and the answer
// agrees with what the decoder makes of the body. An empty content type
// means no Content-Type header.
func FuzzServeCreate(f *testing.F) {
	for _, seed := range []struct{ body, contentType string }{
		{`{"id":7,"name":"Monstera deliciosa","tag":"tropical"}`, "application/json"},
		{`{"id":1,"name":"Aloe"}`, "application/json; charset=utf-8"},
		{`{"id":1,"name":"Other"}`, "application/json"},
		{`{"id":1,"name":"a"}`, "text/plain"},
		{`{"id":1,"name":"a"}`, ""},
		{`{"id":1,"name":"a"}{}`, "application/json"},
	} {
		f.Add([]byte(seed.body), seed.contentType)
	}
	f.Fuzz(func(t *testing.T, body []byte, contentType string) {
		api := newUnverifiedAPI(t, seededStore(t), DefaultMaxBodyBytes)
		req := httptest.NewRequest(http.MethodPost, "/plants", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer any")
		if contentType != "" {
			req.Header.Set("Content-Type", contentType)
		}
		w := httptest.NewRecorder()
		api.ServeHTTP(w, req)

		resp := w.Result()
		out := w.Body.Bytes()
		if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
			t.Fatalf("status %d with Content-Type %q", resp.StatusCode, ct)
		}
		if resp.Header.Get("X-Request-ID") == "" {
			t.Fatalf("status %d without X-Request-ID", resp.StatusCode)
		}
		if cl := resp.Header.Get("Content-Length"); cl != strconv.Itoa(len(out)) {
			t.Fatalf("Content-Length %q for a %d-byte body", cl, len(out))
		}
		if !json.Valid(out) {
			t.Fatalf("status %d with a body that is not JSON: %q", resp.StatusCode, out)
		}
		if resp.StatusCode == http.StatusOK {
			checkPlantAnswer(t, body, out)
			return
		}
		code := checkErrorAnswer(t, resp.StatusCode, out)
		switch code {
		case 40001, 40002, 40901:
			np, err := decodeNewPlant(body)
			switch {
			case code == 40001 && !errors.Is(err, errSyntax):
				t.Fatalf("40001 for a body the decoder takes as %v", err)
			case code == 40002 && !errors.Is(err, domain.ErrInvalid):
				t.Fatalf("40002 for a body the decoder takes as %v", err)
			case code == 40901 && (err != nil || np.ID != 1):
				t.Fatalf("40901 for a body that cannot conflict: %v", err)
			}
		case 41301:
			if len(body) <= DefaultMaxBodyBytes {
				t.Fatalf("413 for a %d-byte body", len(body))
			}
		}
	})
}

// checkPlantAnswer checks a 200: exactly the Plant fields, with what the
// decoder read from the request.
func checkPlantAnswer(t *testing.T, body, out []byte) {
	t.Helper()
	np, err := decodeNewPlant(body)
	if err != nil {
		t.Fatalf("200 for a body the decoder refuses: %v", err)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(out, &fields); err != nil {
		t.Fatalf("200 body %q is not an object: %v", out, err)
	}
	var plant struct {
		Name string  `json:"name"`
		Tag  *string `json:"tag"`
	}
	if err := json.Unmarshal(out, &plant); err != nil {
		t.Fatalf("200 body %q is not a Plant: %v", out, err)
	}
	_, hasTag := fields["tag"]
	if len(fields) != 1+btoi(hasTag) || fields["name"] == nil {
		t.Fatalf("200 body %q has other fields than name and tag", out)
	}
	stored := "Aloe"
	if np.ID != 1 {
		stored = np.Name.String()
	}
	if plant.Name != stored || (plant.Tag != nil) != np.Tag.IsSet() || (plant.Tag != nil && *plant.Tag != np.Tag.String()) {
		t.Fatalf("200 body %q does not answer the plant sent, %q", out, body)
	}
}

// checkErrorAnswer checks an Error body and returns its code.
func checkErrorAnswer(t *testing.T, status int, out []byte) int32 {
	t.Helper()
	codes, ok := documentedCodes[status]
	if !ok {
		t.Fatalf("status %d is not a documented answer to a create: %q", status, out)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(out, &fields); err != nil || len(fields) != 2 || fields["error"] == nil || fields["message"] == nil {
		t.Fatalf("status %d body %q is not an Error with both fields", status, out)
	}
	var e struct {
		Error   int32  `json:"error"`
		Message string `json:"message"`
	}
	if err := json.Unmarshal(out, &e); err != nil || e.Message == "" {
		t.Fatalf("status %d body %q is not an Error: %v", status, out, err)
	}
	for _, c := range codes {
		if c == e.Error {
			return c
		}
	}
	t.Fatalf("status %d with error %d, want one of %v", status, e.Error, codes)
	return 0
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// staticVerifier accepts every token as the same principal.
type staticVerifier struct{ p application.Principal }

func (v staticVerifier) Verify(context.Context, string) (application.Principal, error) {
	return v.p, nil
}
