package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/plantstore/plantstore/adapters/webhook"
	"github.com/plantstore/plantstore/application"
	"github.com/plantstore/plantstore/domain"
)

// The receiver takes what the service's own sender signs with the secret
// file it wrote, keeps the first arrival of each plant, and forgets them
// all on reset.
func TestReceiverVerifiesAndCountsThePlantsOnce(t *testing.T) {
	rc, file, err := startReceiver(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer rc.close()
	secret, err := webhook.ReadSecretFile(file)
	if err != nil {
		t.Fatal(err)
	}
	sender, err := webhook.NewSender(secret, webhook.Config{Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	for i, id := range []int64{7, 8, 7} { // 7 twice: at least once
		e := application.Event{ID: "msg_" + strings.Repeat("a", i+1), URL: rc.url, PlantID: domain.ID(id), Item: item(id), CreatedAt: start, RetryFrom: start}
		if err := sender.Send(context.Background(), e); err != nil {
			t.Fatalf("send plant %d: %v", id, err)
		}
	}
	first, _ := rc.arrival(7)
	if n, latest := rc.count(); n != 2 || latest.Before(first) {
		t.Errorf("count %d, latest %v; want 2 plants, the latest not before plant 7's first arrival %v", n, latest, first)
	}
	if n := rc.countIn(window{start, time.Now().Add(time.Second)}); n != 2 {
		t.Errorf("countIn = %d, want 2", n)
	}
	if n := rc.countIn(window{time.Now().Add(time.Second), time.Now().Add(2 * time.Second)}); n != 0 {
		t.Errorf("countIn of a later window = %d, want 0", n)
	}
	bad, _ := webhook.ParseSecret("whsec_" + strings.Repeat("A", 43) + "=")
	forger, _ := webhook.NewSender(bad, webhook.Config{Timeout: 5 * time.Second})
	if err := forger.Send(context.Background(), application.Event{ID: "msg_x", URL: rc.url, PlantID: 9, Item: item(9), CreatedAt: start, RetryFrom: start}); err == nil {
		t.Error("an event signed with another secret was accepted")
	}
	rc.reset()
	if _, ok := rc.arrival(7); ok {
		t.Error("reset kept an arrival")
	}
}

// With the event payload the receiver counts a create's event as its
// plant's arrival, as it does a new plant, and every other event once by
// its number, repeats included once.
func TestReceiverCountsEveryEventOnce(t *testing.T) {
	rc, file, err := startReceiver(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer rc.close()
	secret, err := webhook.ReadSecretFile(file)
	if err != nil {
		t.Fatal(err)
	}
	sender, err := webhook.NewSender(secret, webhook.Config{Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	for i, e := range []struct {
		typ    application.EventType
		number int64
	}{{application.PlantCreated, 1}, {application.PlantChanged, 2}, {application.PlantChanged, 3}, {application.PlantChanged, 3}, {application.PlantDeleted, 4}} {
		ev := application.Event{ID: fmt.Sprintf("msg_%d", i), URL: rc.url, PlantID: 7, Item: item(7), Type: e.typ, Number: e.number, CreatedAt: start, RetryFrom: start}
		if err := sender.Send(context.Background(), ev); err != nil {
			t.Fatalf("send %s: %v", e.typ, err)
		}
	}
	if _, ok := rc.arrival(7); !ok {
		t.Error("the create's event is not the plant's arrival")
	}
	if n, _ := rc.count(); n != 4 {
		t.Errorf("count %d; want the create and three other events", n)
	}
	if n := rc.countIn(window{start, time.Now().Add(time.Second)}); n != 4 {
		t.Errorf("countIn = %d, want 4", n)
	}
}

// create+hook is compared with create's references, which a run adds once
// per store even when create itself is not measured; lag and deliver have
// none, and every webhook cell gets the receiver's settings.
func TestWebhookCellsShareTheCreateReference(t *testing.T) {
	b := &bench{bins: []string{"plantstore"}, rc: &receiver{url: "http://127.0.0.1:1/hook"}, hookSecret: "/tmp/s",
		stores: []*store{{kind: "postgres"}, {kind: "sqlite"}}}
	for _, ops := range [][]string{{"create+hook", "lag", "deliver"}, {"create", "create+hook", "lag", "deliver"}} {
		b.o, _ = parseOptions([]string{"-ops", strings.Join(ops, ","), "-lag-rate", "500", "-lag-duration", "4s"})
		b.cells = b.newCells()
		var lines []string
		for _, c := range b.cells {
			ref := "none"
			if r := b.referenceOf(c); r != nil {
				ref = r.sc.name + " " + r.load
			}
			lines = append(lines, c.store.kind+" "+c.sc.name+" "+c.load+" → "+ref)
			hooked := slices.Contains(c.env, "PLANTSTORE_WEBHOOK_URLS="+b.rc.url) && slices.Contains(c.env, "PLANTSTORE_WEBHOOK_SECRET_FILE=/tmp/s")
			if hooked != (c.bin != "" && c.sc.hook) {
				t.Errorf("%s %s %s: webhook settings %v", c.store.kind, c.sc.name, c.load, hooked)
			}
			if c.sc.name == "lag" && (c.rate != 500 || b.length(c) != 4*time.Second) {
				t.Errorf("lag cell at %d/s for %s, want 500/s for 4s", c.rate, b.length(c))
			}
		}
		want := []string{
			"postgres create pgbench → create pgbench",
			"postgres create service → create pgbench",
			"postgres create+hook service → create pgbench",
			"postgres lag service open 500/s → none",
			"postgres deliver service → none",
			"sqlite create Go loop → create Go loop",
			"sqlite create service → create Go loop",
			"sqlite create+hook service → create Go loop",
			"sqlite lag service open 500/s → none",
			"sqlite deliver service → none",
		}
		if !slices.Contains(ops, "create") {
			want = slices.DeleteFunc(want, func(l string) bool { return strings.Contains(l, "create service") })
		}
		if !slices.Equal(lines, want) {
			t.Errorf("-ops %v:\n%s\nwant\n%s", ops, strings.Join(lines, "\n"), strings.Join(want, "\n"))
		}
	}
}

// item is the body of an event about plant id, as the service renders it.
func item(id int64) []byte { return []byte(fmt.Sprintf(`{"id":%d,"name":"Monstera deliciosa"}`, id)) }

// change+hook and delete+hook are compared with change's and delete's
// references, and each payload's variant is a line of its own with its
// setting besides the receiver's.
func TestHookedWritesShareTheirWritesReferences(t *testing.T) {
	b := &bench{bins: []string{"plantstore"}, rc: &receiver{url: "http://127.0.0.1:1/hook"}, hookSecret: "/tmp/s", stores: []*store{{kind: "postgres"}}}
	var err error
	b.o, err = parseOptions(strings.Fields("-ops change+hook,delete+hook -refs pgbench -variant plant:PLANTSTORE_WEBHOOK_PAYLOAD=plant -variant event:PLANTSTORE_WEBHOOK_PAYLOAD=event"))
	if err != nil {
		t.Fatal(err)
	}
	b.cells = b.newCells()
	var lines []string
	for _, c := range b.cells {
		ref := "none"
		if r := b.referenceOf(c); r != nil {
			ref = r.sc.name + " " + r.load
		}
		lines = append(lines, c.sc.name+" "+c.load+" → "+ref)
		if c.bin != "" {
			payload := "PLANTSTORE_WEBHOOK_PAYLOAD=" + strings.Fields(c.load)[1]
			if !slices.Contains(c.env, payload) || !slices.Contains(c.env, "PLANTSTORE_WEBHOOK_URLS="+b.rc.url) {
				t.Errorf("%s %s: settings %v", c.sc.name, c.load, c.env)
			}
		}
	}
	want := []string{
		"change pgbench → change pgbench",
		"change+hook service plant → change pgbench",
		"change+hook service event → change pgbench",
		"delete pgbench → delete pgbench",
		"delete+hook service plant → delete pgbench",
		"delete+hook service event → delete pgbench",
	}
	if !slices.Equal(lines, want) {
		t.Errorf("cells:\n%s\nwant\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
}
