package application

import "fmt"

// Payload says which writes are announced to webhook receivers, and what a
// delivery's body is. The operator chooses it (PLANTSTORE_WEBHOOK_PAYLOAD);
// the stores write the outbox by it, in the commit of each write.
type Payload string

const (
	// PlantPayload announces every create that stores a plant, with the
	// plant as the body, in NewPlant's shape: the webhook of v2, which
	// existing receivers know.
	PlantPayload Payload = "plant"
	// EventPayload announces every committed write (a create, a change, a
	// delete), with its event as the feed lists it in the Standard Webhooks
	// envelope: {"type": ..., "timestamp": ..., "data": {...}}.
	EventPayload Payload = "event"
)

// ParsePayload reads a Payload by its name; "" is PlantPayload.
func ParsePayload(name string) (Payload, error) {
	switch p := Payload(name); p {
	case "", PlantPayload:
		return PlantPayload, nil
	case EventPayload:
		return p, nil
	}
	return "", fmt.Errorf("unknown webhook payload %q (plant or event)", name)
}
