package webhooktest_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/plantstore/plantstore/adapters/internal/plantjson"
	"github.com/plantstore/plantstore/adapters/webhook"
	"github.com/plantstore/plantstore/adapters/webhook/webhooktest"
	"github.com/plantstore/plantstore/application"
	"github.com/plantstore/plantstore/domain"
)

// spy is a test that notes its errors instead of failing, so that a test
// can check that the receiver reports a delivery that does not verify.
type spy struct {
	testing.TB
	mu     sync.Mutex
	errors []string
}

func (s *spy) Errorf(format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.errors = append(s.errors, fmt.Sprintf(format, args...))
}

func (s *spy) reported() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.errors...)
}

// send posts plant id as event eventID with the service's own Sender.
func send(t *testing.T, secret, url, eventID string, id int64) error {
	return sendWithin(t, 0, secret, url, eventID, id)
}

// sendWithin is send with an attempt timeout; zero is the Sender's default.
func sendWithin(t *testing.T, timeout time.Duration, secret, url, eventID string, id int64) error {
	t.Helper()
	key, err := webhook.ParseSecret(secret)
	require.NoError(t, err)
	s, err := webhook.NewSender(key, webhook.Config{Timeout: timeout})
	require.NoError(t, err)
	t.Cleanup(s.CloseIdleConnections)
	p, err := domain.RestorePlant(domain.PlantFields{ID: id, Name: "Fern"})
	require.NoError(t, err)
	return s.Send(context.Background(), application.Event{ID: eventID, URL: url + "/hooks", PlantID: p.ID(), Item: plantjson.AppendItem(nil, p)})
}

func TestTheSendersDeliveriesVerifyAndAreRecorded(t *testing.T) {
	_, secret := webhooktest.NewSecretFile(t)
	script, bringUp := webhooktest.DownUntilUp(503, 204)
	r := webhooktest.NewReceiver(t, secret, webhooktest.Answering(script))
	require.Error(t, send(t, secret, r.URL, "msg_1", 7), "the first attempt is answered 503")
	bringUp()
	require.NoError(t, send(t, secret, r.URL, "msg_1", 7))
	require.NoError(t, send(t, secret, r.URL, "msg_1", 7))
	require.NoError(t, send(t, secret, r.URL, "msg_2", 8))
	r.WaitAttempts(t, 4, time.Second)
	got := r.WaitDeliveries(t, 3, time.Second)
	require.Equal(t, webhooktest.Delivery{ID: "msg_1", Body: `{"id":7,"name":"Fern"}`}, got[0])
	require.Equal(t, 1, r.WaitPlants(t, []int64{7, 8}, time.Second), "msg_1 delivered twice")
	perPlant, repeated := r.PerPlant()
	require.Equal(t, map[int64]int{7: 2, 8: 1}, perPlant)
	require.Equal(t, 1, repeated)
}

func TestAForgedDeliveryIsRefusedAndReported(t *testing.T) {
	_, secret := webhooktest.NewSecretFile(t)
	_, other := webhooktest.NewSecretFile(t)
	s := &spy{TB: t}
	r := webhooktest.NewReceiver(s, secret)
	err := send(t, other, r.URL, "msg_forged", 7)
	var de *application.DeliveryError
	require.ErrorAs(t, err, &de)
	require.Contains(t, de.Detail, "400")
	unsigned, err := http.Post(r.URL, "application/json", strings.NewReader(`{"id":7,"name":"Fern"}`))
	require.NoError(t, err)
	_ = unsigned.Body.Close()
	require.Equal(t, http.StatusBadRequest, unsigned.StatusCode)
	require.Len(t, s.reported(), 2, "both refusals reported")
	require.Empty(t, r.Deliveries())
	require.Zero(t, r.Attempts())
}

func TestAHoldingReceiverLetsAttemptsThroughOnlyWhenTold(t *testing.T) {
	_, secret := webhooktest.NewSecretFile(t)
	r := webhooktest.NewReceiver(t, secret, webhooktest.Holding())
	errs := make(chan error, 3)
	for id := range int64(3) {
		go func() { errs <- send(t, secret, r.URL, fmt.Sprint("msg_", id), id) }()
	}
	r.WaitHeld(t, func(n int) bool { return n == 3 }, 5*time.Second, "want three attempts held")
	require.Empty(t, r.Deliveries())
	r.Let(1)
	require.NoError(t, <-errs)
	require.Len(t, r.Deliveries(), 1)
	r.Release()
	require.NoError(t, <-errs)
	require.NoError(t, <-errs)
	r.WaitPlants(t, []int64{0, 1, 2}, time.Second)
}

func TestAHeldAttemptWhoseSenderWentAwayIsDropped(t *testing.T) {
	_, secret := webhooktest.NewSecretFile(t)
	r := webhooktest.NewReceiver(t, secret, webhooktest.Holding())
	require.Error(t, sendWithin(t, 50*time.Millisecond, secret, r.URL, "msg_1", 1), "the attempt times out")
	r.WaitHeld(t, func(n int) bool { return n == 0 }, 5*time.Second, "the attempt should have ended")
	r.Release()
	require.Zero(t, r.Attempts())
	require.Empty(t, r.Deliveries())
}
