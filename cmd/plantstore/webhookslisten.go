package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/plantstore/plantstore/adapters/webhook"
)

// devWebhookSecretPath is where `webhooks listen --dev` keeps its signing
// secret, relative to the working directory; serve signs with it when
// PLANTSTORE_WEBHOOK_SECRET_FILE names it.
const devWebhookSecretPath = ".dev/webhook-secret"

// listen runs a webhook receiver for development: it verifies each
// delivery's signature and prints it as one JSON line, the plant's members
// and, for an event's envelope, the event's type, id, number and commit.
func listen(ctx context.Context, args []string, getenv func(string) (string, bool), stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("webhooks listen", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:8090", "address to listen on")
	secretFile := fs.String("secret-file", "", "file with the whsec_ signing secret")
	dev := fs.Bool("dev", false, "use (and create) the development secret "+devWebhookSecretPath)
	variables := map[string]string{"secret-file": "PLANTSTORE_WEBHOOK_SECRET_FILE"}
	fs.Usage = func() {
		commandUsage(fs.Output(), "webhooks listen", "Receives webhook deliveries for development (new plants, or events in their envelope): verifies each and prints it as one JSON line.", fs, variables)
	}
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	if err := fromVariables(fs, variables, getenv); err != nil {
		return err
	}
	if *dev && *secretFile == "" {
		if err := ensureDevWebhookSecret(); err != nil {
			return err
		}
		*secretFile = devWebhookSecretPath
	}
	if *secretFile == "" {
		return errors.New("webhooks listen: set --secret-file (or PLANTSTORE_WEBHOOK_SECRET_FILE), or use --dev")
	}
	secret, err := webhook.ReadSecretFile(*secretFile)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("webhooks listen: %w", err)
	}
	var mu sync.Mutex
	out := json.NewEncoder(stdout)
	srv := &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: webhook.NewReceiver(secret, func(d webhook.Delivery) {
		// The plant's members as the service renders them, whatever its
		// fields, then what the delivery adds.
		line := map[string]json.RawMessage{}
		if err := json.Unmarshal(d.PlantItem(), &line); err != nil {
			mu.Lock()
			defer mu.Unlock()
			fmt.Fprintf(stderr, "webhooks listen: delivery %s: %v\n", d.ID, err)
			return
		}
		set := func(member string, value any) { line[member], _ = json.Marshal(value) }
		set("webhook_id", d.ID)
		set("sent", d.Sent.UTC().Format(time.RFC3339))
		if d.Type != "" {
			set("type", d.Type)
			set("event", d.EventID)
			set("number", d.Number)
			set("committed", d.Committed.UTC().Format(time.RFC3339Nano))
		}
		mu.Lock()
		defer mu.Unlock()
		_ = out.Encode(line)
	})}
	fmt.Fprintf(stderr, "Receiving webhook deliveries at http://%s/ ; start the service with\n  PLANTSTORE_WEBHOOK_URLS=http://%s/ PLANTSTORE_WEBHOOK_SECRET_FILE=%s\n", ln.Addr(), ln.Addr(), *secretFile)
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// ensureDevWebhookSecret creates the development webhook secret if needed.
func ensureDevWebhookSecret() error {
	if _, err := os.Stat(devWebhookSecretPath); !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(devWebhookSecretPath), 0o700); err != nil {
		return err
	}
	var b [32]byte
	_, _ = rand.Read(b[:])
	return os.WriteFile(devWebhookSecretPath, []byte("whsec_"+base64.StdEncoding.EncodeToString(b[:])+"\n"), 0o600)
}
