package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/fx"

	"github.com/plantstore/plantstore/adapters/dispatch"
	"github.com/plantstore/plantstore/adapters/webhook"
	"github.com/plantstore/plantstore/application"
)

// webhookSettings are the webhook's. Without receivers and a secret no
// event is kept or sent.
type webhookSettings struct {
	URLs        receiverURLs   `flag:"webhook-urls" secret:"urls" help:"receivers of webhook events: http:// or https:// URLs, comma-separated"`
	SecretFile  string         `flag:"webhook-secret-file" help:"file with the Standard Webhooks signing secret, whsec_ and base64"`
	Payload     webhookPayload `flag:"webhook-payload" default:"plant" help:"what is announced: plant (new plants, the plant as the body) or event (every write, its event in the Standard Webhooks envelope)"`
	MaxAge      time.Duration  `flag:"webhook-max-age" default:"72h" help:"age at which an undelivered event is marked failed, kept and logged"`
	Timeout     time.Duration  `flag:"webhook-timeout" default:"10s" help:"longest a receiver may take to answer one attempt"`
	Concurrency int            `flag:"webhook-concurrency" default:"16" check:"positive" help:"webhook attempts in flight at most, per receiver"`
	YieldAt     yieldThreshold `flag:"webhook-yield-at" default:"auto" help:"API requests in flight at which webhook deliveries slow to a trickle, leaving the cores to clients (auto: eight per core; 0: never)"`
}

// yieldThreshold is a number of API requests in flight, or auto: eight per
// core (GOMAXPROCS), sixteen on the two cores where it was measured. A
// replica with more cores serves as many connections with cores to spare
// for its deliveries, and yields only to a load that could keep them busy.
type yieldThreshold int

func (n *yieldThreshold) UnmarshalText(b []byte) error {
	if string(b) == "auto" {
		*n = yieldThreshold(8 * runtime.GOMAXPROCS(0))
		return nil
	}
	v, err := strconv.Atoi(string(b))
	if err != nil || v < 0 {
		return errors.New("must be auto or a whole number, 0 or more")
	}
	*n = yieldThreshold(v)
	return nil
}

// enabled reports whether events are kept and sent, or an error when only
// one of the two settings it takes is given.
func (s *webhookSettings) enabled() (bool, error) {
	switch {
	case len(s.URLs) > 0 && s.SecretFile == "":
		return false, errors.New("PLANTSTORE_WEBHOOK_URLS is set but PLANTSTORE_WEBHOOK_SECRET_FILE is not: events are signed, so both are needed")
	case len(s.URLs) == 0 && s.SecretFile != "":
		return false, errors.New("PLANTSTORE_WEBHOOK_SECRET_FILE is set but PLANTSTORE_WEBHOOK_URLS is not: there is no receiver to sign for")
	}
	return len(s.URLs) > 0, nil
}

// receivers are the URLs stores announce plants to, none when disabled.
func (s *webhookSettings) receivers() []string {
	if on, _ := s.enabled(); on {
		return s.URLs
	}
	return nil
}

// webhookPayload is which writes are announced, and with what body.
type webhookPayload application.Payload

func (p *webhookPayload) UnmarshalText(b []byte) error {
	if string(b) == "" {
		return errors.New("must be plant or event")
	}
	v, err := application.ParsePayload(string(b))
	if err != nil {
		return errors.New("must be plant or event")
	}
	*p = webhookPayload(v)
	return nil
}

// receiverURLs are the webhook receivers.
type receiverURLs []string

func (r *receiverURLs) UnmarshalText(b []byte) error {
	var urls []string
	for raw := range strings.SplitSeq(string(b), ",") {
		raw = strings.TrimSpace(raw)
		u, err := url.Parse(raw)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
			return errors.New("must be http:// or https:// URLs, comma-separated, without user information")
		}
		// A URL is a receiver's identity: its events, claims and slots.
		if slices.Contains(urls, raw) {
			u.RawQuery = "" // where receivers often take their token
			return fmt.Errorf("lists %s twice", u)
		}
		urls = append(urls, raw)
	}
	*r = urls
	return nil
}

// webhookModule announces new plants when receivers are configured: the
// signing sender, and the delivery worker (adapters/dispatch), which runs from start to stop.
func webhookModule(c *config) fx.Option {
	on, err := c.Webhook.enabled()
	switch {
	case err != nil:
		return fx.Error(err)
	case !on:
		return fx.Options()
	}
	return fx.Module("webhook",
		fx.Provide(fx.Private, newWebhookSender),
		fx.Invoke(runWorker),
	)
}

func newWebhookSender(s *webhookSettings, log *slog.Logger) (*webhook.Sender, error) {
	secret, err := webhook.ReadSecretFile(s.SecretFile)
	if err != nil {
		return nil, fmt.Errorf("PLANTSTORE_WEBHOOK_SECRET_FILE: %w", err)
	}
	return webhook.NewSender(secret, webhook.Config{Timeout: s.Timeout, MaxIdleConnsPerHost: s.Concurrency, Logger: log})
}

// runWorker starts the delivery worker with the service and stops it
// within the grace period, which the API's drain may have used part of:
// attempts still running at its end are cut short and retried after the
// next start.
func runWorker(lc fx.Lifecycle, s *webhookSettings, grace *gracePeriod, source application.EventSource, stats webhook.OutboxStats,
	sender *webhook.Sender, clients dispatch.Demand, reg prometheus.Registerer, log *slog.Logger, tracing optionalTracing) error {
	metrics, err := webhook.NewMetrics(reg, stats)
	if err != nil {
		return err
	}
	w := dispatch.New(dispatch.Config{
		Concurrency: s.Concurrency,
		Timeout:     s.Timeout,
		Retry:       application.RetryPolicy{MaxAge: s.MaxAge},
		YieldAt:     int(s.YieldAt),
	}, dispatch.Deps{Source: source, Sender: sender, Observer: metrics, Clients: clients, Log: log, Tracing: tracing.Provider})
	lc.Append(fx.Hook{
		OnStart: func(context.Context) error {
			w.Start()
			return nil
		},
		OnStop: func(ctx context.Context) error {
			ctx, cancel := grace.within(ctx)
			defer cancel()
			w.Stop(ctx)
			sender.CloseIdleConnections()
			return nil
		},
	})
	return nil
}
