package domain_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/plantstore/plantstore/domain"
)

func TestParseName(t *testing.T) {
	tests := []struct {
		name, in, problem string
	}{
		{"one character", "a", ""},
		{"200 ASCII", strings.Repeat("a", 200), ""},
		{"200 four-byte code points", strings.Repeat("🌵", 200), ""},
		{"200 combining sequences count per code point", strings.Repeat("e\u0301", 100), ""},
		{"spaces around are kept", "  Aloe  ", ""},
		{"tab inside is a control character", "a\tb", "must not contain control characters"},
		{"201 ASCII", strings.Repeat("a", 201), "must be at most 200 characters"},
		{"201 four-byte code points", strings.Repeat("🌵", 201), "must be at most 200 characters"},
		{"empty", "", "must not be empty"},
		{"only spaces", "   ", "must not be only white space"},
		{"only ideographic space", "\u3000", "must not be only white space"},
		{"only no-break spaces", "\u00a0\u2007", "must not be only white space"},
		{"NUL", "a\x00", "must not contain control characters"},
		{"U+001F", "a\x1f", "must not contain control characters"},
		{"DEL", "a\x7f", "must not contain control characters"},
		{"newline", "a\nb", "must not contain control characters"},
		{"U+0080 is allowed", "a\u0080", ""},
		{"invalid UTF-8", "a\xff", "must be valid UTF-8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, err := domain.ParseName(tt.in)
			if tt.problem == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if n.String() != tt.in {
					t.Fatalf("stored %q, want %q exactly", n, tt.in)
				}
				return
			}
			var fe *domain.FieldError
			if !errors.As(err, &fe) || fe.Field != "name" || fe.Problem != tt.problem || !errors.Is(err, domain.ErrInvalid) {
				t.Fatalf("got %v, want name: %s", err, tt.problem)
			}
		})
	}
}

func TestParseTag(t *testing.T) {
	if _, err := domain.ParseTag(strings.Repeat("🌵", 64)); err != nil {
		t.Fatalf("64 code points: %v", err)
	}
	for in, problem := range map[string]string{
		strings.Repeat("x", 65): "must be at most 64 characters",
		"":                      "must not be empty",
		" ":                     "must not be only white space",
		"a\u0007":               "must not contain control characters",
	} {
		_, err := domain.ParseTag(in)
		var fe *domain.FieldError
		if !errors.As(err, &fe) || fe.Field != "tag" || fe.Problem != problem {
			t.Errorf("ParseTag(%q) = %v, want tag: %s", in, err, problem)
		}
	}
	if domain.NoTag.IsSet() {
		t.Fatal("NoTag must not be set")
	}
}

func TestParseNewPlantReportsEveryField(t *testing.T) {
	empty := ""
	_, err := domain.ParseNewPlant(domain.PlantFields{ID: 1, Name: "", Tag: &empty})
	if err == nil || err.Error() != "name: must not be empty; tag: must not be empty" {
		t.Fatalf("got %v", err)
	}
	var fe *domain.FieldError
	if !errors.As(err, &fe) || fe.Field != "name" || !errors.Is(err, domain.ErrInvalid) {
		t.Fatalf("each problem must be reachable with errors.As: %v", err)
	}
}

func TestSameContent(t *testing.T) {
	tag := "tropical"
	other := "desert"
	base, _ := domain.ParseNewPlant(domain.PlantFields{ID: 1, Name: "Monstera", Tag: &tag})
	stored := domain.PlantFrom(base)
	same, _ := domain.ParseNewPlant(domain.PlantFields{ID: 1, Name: "Monstera", Tag: &tag})
	otherName, _ := domain.ParseNewPlant(domain.PlantFields{ID: 1, Name: "monstera", Tag: &tag})
	otherTag, _ := domain.ParseNewPlant(domain.PlantFields{ID: 1, Name: "Monstera", Tag: &other})
	noTag, _ := domain.ParseNewPlant(domain.PlantFields{ID: 1, Name: "Monstera"})
	nfd, _ := domain.ParseNewPlant(domain.PlantFields{ID: 2, Name: "e\u0301"})
	nfc, _ := domain.ParseNewPlant(domain.PlantFields{ID: 2, Name: "\u00e9"})

	if !stored.SameContent(same) {
		t.Error("identical content must be the same")
	}
	for name, np := range map[string]domain.NewPlant{"case": otherName, "tag": otherTag, "no tag": noTag} {
		if stored.SameContent(np) {
			t.Errorf("%s differs, must not be the same content", name)
		}
	}
	if domain.PlantFrom(nfd).SameContent(nfc) {
		t.Error("NFD and NFC spellings are different content: strings are stored exactly as sent")
	}
}

func TestRestorePlantRefusesRowsThatBreakTheRules(t *testing.T) {
	if _, err := domain.RestorePlant(domain.PlantFields{ID: 1, Name: ""}); !errors.Is(err, domain.ErrInvalid) {
		t.Fatalf("got %v", err)
	}
	tag := "t"
	p, err := domain.RestorePlant(domain.PlantFields{ID: -5, Name: "Aloe", Tag: &tag})
	if err != nil || p.ID() != -5 || p.Name().String() != "Aloe" || p.Tag().String() != "t" {
		t.Fatalf("got %v %v", p, err)
	}
}
