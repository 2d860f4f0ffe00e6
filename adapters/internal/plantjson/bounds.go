package plantjson

import "github.com/plantstore/plantstore/domain"

// The most bytes the service writes for one plant or one event, for those
// who bound the memory of a page before it is read (adapters/httpapi): the
// longest id, and a name and a tag of their most code points, each in the
// longest UTF-8 encoding, 4 bytes; the only characters JSON escapes in them,
// the quote and the backslash, take 2, and control characters are refused.
// A field added to the plant adds its member and its most bytes here:
// TestTheLargestPlantAndEventFitTheirBounds renders the largest plant the
// rules allow, every field of domain.PlantFields at its longest, and the
// largest event.
const (
	MaxItemBytes  = len(`{"id":,"name":"","tag":""}`) + len("-9223372036854775808") + 4*domain.MaxNameLength + 4*domain.MaxTagLength
	MaxEventBytes = len(`{"id":"evt_","type":"plant.created","number":,"time":"","plant":}`) + 2*len("9223372036854775807") +
		len("2006-01-02T15:04:05.999999999Z") + MaxItemBytes
)
