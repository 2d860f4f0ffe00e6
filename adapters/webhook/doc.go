// Package webhook is the outbound HTTP adapter of the webhook: it signs and
// posts one event to one receiver per call, and implements
// application.EventSender. Retries, back-off, claims and the age limit belong
// to the delivery worker (adapters/dispatch) and application.RetryPolicy;
// this package makes one attempt and says how it went.
//
// Messages follow the Standard Webhooks specification
// (https://www.standardwebhooks.com), so that its reference libraries verify
// them: a POST whose body is, with the plant payload, the plant in
// NewPlant's shape ({"id":7,"name":"...","tag":"..."}, tag left out when
// there is none), or, with the event payload, the event in the envelope of
// the specification ({"type":"plant.changed","timestamp":"...","data":{...}},
// data the event as GET /events lists it), with the same headers in both:
// webhook-id (unique per event and receiver, the same on every attempt),
// webhook-timestamp (Unix seconds of this attempt) and webhook-signature
// ("v1," and the standard base64 of HMAC-SHA256 over "id.timestamp.body",
// keyed with the secret's bytes). The Standard Webhooks Go library signs
// and compares signatures; this package parses the secret strictly before
// the library sees it, and keeps its own rules on the timestamp. The body is
// rendered by adapters/internal/plantjson, the HTTP API's own transport
// types (Body): the event's Item, which the store kept as plantjson rendered
// it when the event was committed, or the envelope of the event made of the
// fields the store kept with it.
//
// An attempt is delivered when the receiver answers 2xx within the timeout.
// Anything else is an *application.DeliveryError whose Outcome is "status"
// (another answer), "redirect" (a 3xx: redirects are never followed, so a
// signed event cannot be steered to another host), "timeout", "refused" (no
// connection could be made: refused, unknown host, unreachable) or "error".
// Its Detail never carries key material nor the receiver's URL, which may
// itself hold a credential; a receiver's answer is quoted only briefly.
//
// The package also holds the receiving side, Verify and NewReceiver, for
// development tools and tests.
package webhook
