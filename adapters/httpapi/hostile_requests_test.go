package httpapi

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// corpusDir holds the decoder's seed corpus: hostile request bodies.
const corpusDir = "testdata/fuzz/FuzzDecodeNewPlant"

// loadCorpus reads every body of the decoder's seed corpus.
func loadCorpus(t *testing.T) [][]byte {
	t.Helper()
	entries, err := os.ReadDir(corpusDir)
	if err != nil {
		t.Fatal(err)
	}
	var bodies [][]byte
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(corpusDir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.SplitN(string(b), "\n", 3)
		if len(lines) < 2 || lines[0] != "go test fuzz v1" || !strings.HasPrefix(lines[1], "[]byte(") {
			t.Fatalf("%s is not a corpus file", e.Name())
		}
		body, err := strconv.Unquote(strings.TrimSuffix(strings.TrimPrefix(lines[1], "[]byte("), ")"))
		if err != nil {
			t.Fatalf("%s: %v", e.Name(), err)
		}
		bodies = append(bodies, []byte(body))
	}
	return bodies
}

// hostileSnippets are spliced into bodies by mutate.
var hostileSnippets = []string{
	`\u0000`, "\x00", "\xff", "\xc0\xaf", "\xed\xa0\x80", `\ud800`, "\xef\xbb\xbf", "\u00a0",
	"[", "]", "{", "}", `"`, `\`, ",", ":", "1e400", "-", "null", strings.Repeat("[", 100),
	`"id":1`, `"name":"x"`, `"tag":null`,
}

// mutate returns a copy of b changed in one to three places.
func mutate(rng *rand.Rand, b []byte) []byte {
	out := slices.Clone(b)
	for range 1 + rng.IntN(3) {
		at := 0
		if len(out) > 0 {
			at = rng.IntN(len(out))
		}
		switch rng.IntN(5) {
		case 0: // flip a byte
			if len(out) > 0 {
				out[at] = byte(rng.IntN(256))
			}
		case 1: // splice in a hostile snippet
			out = slices.Insert(out, at, []byte(hostileSnippets[rng.IntN(len(hostileSnippets))])...)
		case 2: // cut a piece out
			out = slices.Delete(out, at, min(len(out), at+1+rng.IntN(8)))
		case 3: // repeat a piece
			end := min(len(out), at+1+rng.IntN(16))
			out = slices.Insert(out, at, slices.Clone(out[at:end])...)
		case 4: // truncate
			out = out[:at]
		}
	}
	return out
}

func randomBytes(rng *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.IntN(256))
	}
	return b
}

// documentedCreateStatuses are the answers POST /plants may give (docs/errors.md).
var documentedCreateStatuses = []int{200, 400, 401, 403, 409, 413, 415}

// TestHostileRequestsGetDocumentedAnswers sends several hundred generated
// hostile requests: the decoder's seed corpus as it is and mutated, random
// bytes, odd content types, tokens, request ids, paths and methods. Every
// answer is one the OpenAPI document allows, none is a 5xx, and the API is
// healthy afterwards.
func TestHostileRequestsGetDocumentedAnswers(t *testing.T) {
	s := startServer(t)
	const seed = 20240601
	rng := rand.New(rand.NewPCG(seed, seed))
	t.Logf("mutations seeded with %d", seed)

	good := s.token(t, nil)
	bearer := "Bearer " + good
	authorizations := []string{bearer, bearer, bearer, bearer, bearer, "", "Basic YTpi", "Bearer", "Bearer not.a.jwt",
		"Bearer " + s.keys.Scoped(t, "plants:read"), bearer + "x", "bearer  " + good}
	contentTypes := []string{"application/json", "application/json", "application/json", "application/json; charset=utf-8",
		"text/plain", "", "application/json; charset=latin1", "application/json; foo=bar", "application/json;;", "*/*"}
	requestIDs := []string{"", "", "sane-id-1", strings.Repeat("x", 200), "a b", `"quoted"`, "ünïcode", "<script>"}

	answers := map[int]int{}
	send := func(method, path string, header map[string]string, body []byte) {
		t.Helper()
		r := s.do(t, method, path, header, body)
		answers[r.status]++
		if r.status >= 500 {
			t.Errorf("%s %s %.80q: %d %s", method, path, body, r.status, r.body)
		}
		if method == "POST" && path == "/plants" && !slices.Contains(documentedCreateStatuses, r.status) {
			t.Errorf("%.80q: undocumented %d %s", body, r.status, r.body)
		}
	}
	header := func() map[string]string {
		h := map[string]string{}
		if a := authorizations[rng.IntN(len(authorizations))]; a != "" {
			h["Authorization"] = a
		}
		if ct := contentTypes[rng.IntN(len(contentTypes))]; ct != "" {
			h["Content-Type"] = ct
		}
		if id := requestIDs[rng.IntN(len(requestIDs))]; id != "" {
			h["X-Request-ID"] = id
		}
		return h
	}

	for _, body := range loadCorpus(t) {
		send("POST", "/plants", map[string]string{"Authorization": bearer, "Content-Type": "application/json"}, body)
		send("POST", "/plants", header(), mutate(rng, body))
	}
	for range 100 {
		body := randomBytes(rng, rng.IntN(2048))
		if rng.IntN(2) == 0 {
			body = append([]byte(`{"id":`), body...)
		}
		send("POST", "/plants", header(), body)
	}
	paths := []string{"/plants/", "//plants", "/PLANTS", "/plants?id=1", "/plants%2F", "/plants;x=1", "/%2e%2e/plants",
		"/plants/../plants", "/openapi.yaml/", "/openapi.yaml?x=%00", "/a%00b", "/" + strings.Repeat("p", 8192), "/"}
	methods := []string{"GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "FOO", "TRACE"}
	for range 60 {
		send(methods[rng.IntN(len(methods))], paths[rng.IntN(len(paths))], header(), []byte(`{"id":1,"name":"a"}`))
	}

	total := 0
	for _, n := range answers {
		total += n
	}
	t.Logf("%d hostile requests, answers by status: %v", total, answers)
	if total < 500 {
		t.Fatalf("only %d hostile requests were sent", total)
	}
	s.expectHealthy(t)
}
