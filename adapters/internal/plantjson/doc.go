// Package plantjson is the plant's JSON as the service writes it: the
// transport types of the OpenAPI document's Plant and PlantItem schemas,
// encoded with github.com/go-json-experiment/json. The HTTP API answers with
// them and the webhook sends them as its body, so that a receiver gets the
// bytes a read of the plant would give: the plant itself (the plant
// payload), or its event in the Standard Webhooks envelope, the event as the
// feed lists it (the event payload).
//
// The JSON tags live here, on the transport types, never on the domain's.
package plantjson
