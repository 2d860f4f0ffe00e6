// Package webhook is the outbound HTTP adapter of the new-plant webhook: it
// signs and posts one event to one receiver per call, and implements
// application.EventSender. Retries, back-off, claims and the age limit belong
// to the delivery worker (adapters/dispatch) and application.RetryPolicy;
// this package makes one attempt and says how it went.
//
// Messages follow the Standard Webhooks specification
// (https://www.standardwebhooks.com), so that its reference libraries verify
// them: a POST whose body is the plant in NewPlant's shape
// ({"id":7,"name":"...","tag":"..."}, tag left out when there is none), with
// the headers webhook-id (the event's id, the same on every attempt),
// webhook-timestamp (Unix seconds of this attempt) and webhook-signature
// ("v1," and the standard base64 of HMAC-SHA256 over "id.timestamp.body",
// keyed with the secret's bytes). The Standard Webhooks Go library signs
// and compares signatures; this package parses the secret strictly before
// the library sees it, and keeps its own rules on the timestamp. The body is
// the event's Item, which the store kept as adapters/internal/plantjson, the
// HTTP API's own transport type, rendered it when the event was committed.
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
