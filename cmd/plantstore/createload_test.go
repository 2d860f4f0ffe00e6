package main

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/plantstore/plantstore/adapters/jwtauth/jwttest"
	"github.com/plantstore/plantstore/docs/openapitest"
)

// The process tests put a service under concurrent creates, interrupt it,
// and then check what became of every create. This file holds what they
// share for that: the creator that sends creates with a signed token, the
// load and its report, and the checks that acknowledged creates are stored
// and that refused or unanswered ones can be sent again.

// newLoadClient is an HTTP client that keeps one connection per worker.
func newLoadClient(workers int) *http.Client {
	return &http.Client{
		Timeout:   30 * time.Second,
		Transport: &http.Transport{MaxIdleConnsPerHost: workers, DisableCompression: true},
	}
}

// creator sends creates to one process with a really signed token and
// checks every complete answer against the OpenAPI document.
type creator struct {
	t        *testing.T
	api      string
	token    string
	client   *http.Client
	contract *openapitest.Contract
}

func newCreator(t *testing.T, p *process, workers int) *creator {
	t.Helper()
	c := &creator{
		t:        t,
		api:      p.api,
		client:   newLoadClient(workers),
		contract: openapitest.Load(t),
	}
	c.token = jwttest.New(t).Token(t, jwt.MapClaims{"sub": "loader", "scope": "plants:write"})
	t.Cleanup(c.client.CloseIdleConnections)
	return c
}

// answer is what one request got.
type answer struct {
	status    int
	header    http.Header
	body      string
	err       error // no complete answer
	truncated bool  // a status line arrived, the whole body did not
	closed    bool  // the answer asked the client to close the connection
}

// post sends one create, with requestID as its X-Request-ID when given. It
// is safe for concurrent use.
func (c *creator) post(body, requestID string) answer {
	req, err := http.NewRequest(http.MethodPost, c.api+"/plants", strings.NewReader(body))
	if err != nil {
		return answer{err: err}
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Content-Type", "application/json")
	if requestID != "" {
		req.Header.Set("X-Request-ID", requestID)
	}
	return exchange(c.t, c.client, c.contract, req)
}

// write sends one change or delete (method) of the plant id, with body as
// a merge patch when it is not empty. It is safe for concurrent use.
func (c *creator) write(method string, id int64, body string) answer {
	req, err := http.NewRequest(method, fmt.Sprintf("%s/plants/%d", c.api, id), strings.NewReader(body))
	if err != nil {
		return answer{err: err}
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	if body != "" {
		req.Header.Set("Content-Type", "application/merge-patch+json")
	}
	return exchange(c.t, c.client, c.contract, req)
}

// exchange sends req with client and reads the whole answer, checked
// against contract when there is one.
func exchange(t *testing.T, client *http.Client, contract *openapitest.Contract, req *http.Request) answer {
	resp, err := client.Do(req)
	if err != nil {
		return answer{err: err}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return answer{status: resp.StatusCode, err: err, truncated: true}
	}
	if contract != nil {
		contract.Check(t, req, resp, b)
	}
	return answer{status: resp.StatusCode, header: resp.Header, body: string(b), closed: resp.Close}
}

// unavailable reports whether a is the 503 a client may retry: error 50301
// with Retry-After.
func (a answer) unavailable() bool {
	return a.err == nil && a.status == http.StatusServiceUnavailable &&
		strings.HasPrefix(a.body, `{"error":50301,`) && a.header.Get("Retry-After") != ""
}

func (a answer) String() string {
	if a.err != nil {
		return fmt.Sprintf("no answer (%v)", a.err)
	}
	return fmt.Sprintf("%d %s", a.status, a.body)
}

// plantFor is the create the load sends for id; a third of the plants have
// no tag.
func plantFor(id int64) string {
	if id%3 == 0 {
		return fmt.Sprintf(`{"id":%d,"name":"Plant %d"}`, id, id)
	}
	return fmt.Sprintf(`{"id":%d,"name":"Plant %d","tag":"kind-%d"}`, id, id, id%5)
}

// changedPlantFor is other content under id.
func changedPlantFor(id int64) string {
	return fmt.Sprintf(`{"id":%d,"name":"Changed %d","tag":"kind-%d"}`, id, id, id%5)
}

// isPlantFor reports whether body is the answer to plantFor(id): the plant
// as sent, less its id.
func isPlantFor(id int64, body string) bool {
	return body == strings.Replace(plantFor(id), fmt.Sprintf(`"id":%d,`, id), "", 1)
}

// heldCreates is the setting under which the load runs: every create waits
// a little for others to share its commit, so that whenever a signal comes
// several creates are inside the service, queued for a batch or committing.
var heldCreates = map[string]string{"PLANTSTORE_BATCH_MAX_WAIT": "10ms"}

// loadReport sorts the creates of a load by what they got.
type loadReport struct {
	mu         sync.Mutex
	acked      map[int64]string // 200, with its body
	ackedAfter int              // of those, answered after the interrupt
	refused    []int64          // 503 50301 after the interrupt
	unanswered []int64          // no complete answer after the interrupt
	truncated  []int64          // of those, the ones whose answer was cut short
	answered   map[int64]int    // the status of every complete answer
}

// runLoad sends concurrent creates of fresh ids through c and runs
// interrupt (a signal) once enough of them have been acknowledged, while
// others are in flight. It stops when its budget is spent or every worker
// has met a service that no longer answers. Before the interrupt every
// create must succeed; after it, a create may also be refused (503 50301)
// or get no answer. Anything else fails the test.
func runLoad(t *testing.T, c *creator, interrupt func()) *loadReport {
	t.Helper()
	const workers, budget, interruptAfter = 8, 5000, 300
	r := &loadReport{acked: make(map[int64]string), answered: make(map[int64]int)}
	var next atomic.Int64
	var interrupted atomic.Bool
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for id := next.Add(1); id <= budget; id = next.Add(1) {
				a := c.post(plantFor(id), loadRequestID(id))
				after := interrupted.Load()
				if ok := a.status == http.StatusOK && isPlantFor(id, a.body) || after && (a.err != nil || a.unavailable()); !ok {
					t.Errorf("create %d answered %s (interrupted: %v)", id, a, after)
				}
				r.mu.Lock()
				switch {
				case a.err != nil:
					r.unanswered = append(r.unanswered, id)
					if a.truncated {
						r.truncated = append(r.truncated, id)
					}
				case a.status == http.StatusOK:
					r.acked[id] = a.body
					if after {
						r.ackedAfter++
					}
				case a.unavailable():
					r.refused = append(r.refused, id)
				}
				if a.err == nil {
					r.answered[id] = a.status
				}
				n := len(r.acked)
				r.mu.Unlock()
				if a.err != nil {
					return // the service has gone away
				}
				if a.status == http.StatusOK && n == interruptAfter {
					interrupted.Store(true)
					interrupt()
				}
			}
		})
	}
	wg.Wait()
	if !interrupted.Load() {
		t.Fatalf("only %d of %d creates were acknowledged; the interrupt never ran", len(r.acked), budget)
	}
	t.Logf("load: %d acknowledged (%d after the interrupt), %d refused, %d unanswered",
		len(r.acked), r.ackedAfter, len(r.refused), len(r.unanswered))
	return r
}

// loadRequestID is the X-Request-ID of the load's create of id, which
// names it in the service's access log.
func loadRequestID(id int64) string { return "load-" + strconv.FormatInt(id, 10) }

// checkAnswersArrived fails the test for every create of the load that the
// service's access log says it answered, but whose answer the client did not
// get as it was given: a create accepted and then lost on the way out.
func (r *loadReport) checkAnswersArrived(t *testing.T, p *process) {
	t.Helper()
	for _, line := range strings.Split(p.stdout.String(), "\n") {
		var entry struct {
			Msg       string `json:"msg"`
			Status    int    `json:"status"`
			RequestID string `json:"request_id"`
		}
		if json.Unmarshal([]byte(line), &entry) != nil || entry.Msg != "request" {
			continue
		}
		digits, ok := strings.CutPrefix(entry.RequestID, "load-")
		id, err := strconv.ParseInt(digits, 10, 64)
		if !ok || err != nil {
			continue
		}
		if got, ok := r.answered[id]; !ok || got != entry.Status {
			t.Errorf("the service answered create %d with %d, the client got %d (0: no answer)", id, entry.Status, got)
		}
	}
}

// checkAcknowledged proves that every acknowledged create is stored: other
// content under its id conflicts, which it would not were the id free, and
// the same content replays the very answer the create got.
func checkAcknowledged(t *testing.T, c *creator, acked map[int64]string) {
	t.Helper()
	forEachID(slices.Collect(maps.Keys(acked)), func(id int64) {
		if a := c.post(changedPlantFor(id), ""); a.err != nil || a.status != http.StatusConflict || !strings.HasPrefix(a.body, `{"error":40901,`) {
			t.Errorf("acknowledged plant %d: other content answered %s, want 409 40901: the plant was lost", id, a)
			return
		}
		if a := c.post(plantFor(id), ""); a.err != nil || a.status != http.StatusOK || a.body != acked[id] {
			t.Errorf("acknowledged plant %d: replay answered %s, want 200 %s", id, a, acked[id])
		}
	})
}

// checkRetries shows that a create that was refused or got no answer can
// simply be sent again: it is stored, once, whichever way it went first.
func checkRetries(t *testing.T, c *creator, ids []int64) {
	t.Helper()
	forEachID(ids, func(id int64) {
		if a := c.post(plantFor(id), ""); a.err != nil || a.status != http.StatusOK || !isPlantFor(id, a.body) {
			t.Errorf("retry of plant %d answered %s, want 200 with the plant", id, a)
			return
		}
		if a := c.post(changedPlantFor(id), ""); a.err != nil || a.status != http.StatusConflict {
			t.Errorf("retried plant %d: other content answered %s, want 409", id, a)
		}
	})
}

// forEachID runs check for every id, a few at a time.
func forEachID(ids []int64, check func(id int64)) {
	var wg sync.WaitGroup
	slots := make(chan struct{}, 8)
	for _, id := range ids {
		slots <- struct{}{}
		wg.Go(func() { check(id); <-slots })
	}
	wg.Wait()
}
