package plantjson

import (
	"strings"
	"testing"
	"time"

	"github.com/plantstore/plantstore/domain"
)

// The largest plant the rules allow, and its event, render to exactly
// their bounds; a plant of other characters at the longest name and tag
// stays within them.
func TestTheLargestPlantAndEventFitTheirBounds(t *testing.T) {
	longest := time.Date(2026, 12, 31, 23, 59, 59, 999999999, time.UTC)
	for _, tt := range []struct {
		name    string
		char    string
		largest bool
	}{
		{"four-byte characters", "🌵", true},
		{"quotes", `"`, false},
		{"backslashes", `\`, false},
		{"three-byte characters", "大", false},
		{"ASCII", "a", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := mustPlant(t, -9223372036854775808, strings.Repeat(tt.char, domain.MaxNameLength), ptr(strings.Repeat(tt.char, domain.MaxTagLength)))
			item := AppendItem(nil, p)
			event, err := AppendEvent(nil, "plant.changed", 9223372036854775807, longest, string(item))
			if err != nil {
				t.Fatal(err)
			}
			if len(item) > MaxItemBytes || len(event) > MaxEventBytes {
				t.Fatalf("item %d bytes, event %d; bounds %d and %d", len(item), len(event), MaxItemBytes, MaxEventBytes)
			}
			if tt.largest && (len(item) != MaxItemBytes || len(event) != MaxEventBytes) {
				t.Errorf("the largest item is %d bytes, its event %d; bounds %d and %d, which are not tight", len(item), len(event), MaxItemBytes, MaxEventBytes)
			}
		})
	}
}
