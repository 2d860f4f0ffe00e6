package domain_test

import (
	"errors"
	"math"
	"testing"

	"github.com/plantstore/plantstore/domain"
)

func TestParseIDAcceptsOneSpellingPerID(t *testing.T) {
	for in, want := range map[string]domain.ID{
		"0":                    0,
		"7":                    7,
		"-3":                   -3,
		"-0":                   0, // an optional '-', then the digit 0
		"9223372036854775807":  math.MaxInt64,
		"-9223372036854775808": math.MinInt64,
		"1000":                 1000,
	} {
		got, err := domain.ParseID(in)
		if err != nil || got != want {
			t.Errorf("ParseID(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
}

func TestParseIDRefusesEverythingElse(t *testing.T) {
	for _, in := range []string{
		"", "-", "+7", "07", "-07", "00", " 7", "7 ", "7.0", "7e0", "0x1f", "1_000", "seven",
		"٣",                    // an Arabic-Indic digit
		"９",                    // a full-width digit
		"9223372036854775808",  // one past the largest
		"-9223372036854775809", // one below the smallest
		"99999999999999999999999",
	} {
		_, err := domain.ParseID(in)
		var fe *domain.FieldError
		if !errors.As(err, &fe) || fe.Field != "id" || !errors.Is(err, domain.ErrInvalid) {
			t.Errorf("ParseID(%q) = %v; want a field error for id", in, err)
		}
	}
}

func TestIDStringReadsBack(t *testing.T) {
	for _, id := range []domain.ID{math.MinInt64, -1, 0, 1, math.MaxInt64} {
		if got, err := domain.ParseID(id.String()); err != nil || got != id {
			t.Errorf("ParseID(%q) = %d, %v", id.String(), got, err)
		}
	}
}

func TestNotFoundErrorNamesTheID(t *testing.T) {
	err := error(&domain.NotFoundError{ID: -7})
	if !errors.Is(err, domain.ErrNotFound) || err.Error() != "no plant with id -7" {
		t.Fatalf("got %v", err)
	}
}
