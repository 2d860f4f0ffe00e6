package httpapi

import (
	"encoding/base64"
	"encoding/binary"
	"time"

	"github.com/plantstore/plantstore/application"
)

// A feed cursor is a position in the event feed as clients hold it: opaque
// to them, and all the service needs to go on from it, on any replica: the
// base64url (no padding) of a version byte, then the position's
// transaction id, number and the Unix second it was handed out, each as 8
// bytes, big-endian. The time is what the 410 for a cursor older than the
// retention is judged by.
const (
	cursorVersion = 1
	cursorBytes   = 1 + 8 + 8 + 8
)

var cursorEncoding = base64.RawURLEncoding

// formatCursor is the cursor of p.
func formatCursor(p application.FeedPosition) string {
	var b [cursorBytes]byte
	b[0] = cursorVersion
	binary.BigEndian.PutUint64(b[1:], p.Tx)
	binary.BigEndian.PutUint64(b[9:], uint64(p.Number))
	binary.BigEndian.PutUint64(b[17:], uint64(p.At.Unix()))
	return cursorEncoding.EncodeToString(b[:])
}

// parseCursor reads a cursor that formatCursor made; anything else is not
// ok.
func parseCursor(s string) (application.FeedPosition, bool) {
	if cursorEncoding.DecodedLen(len(s)) != cursorBytes {
		return application.FeedPosition{}, false
	}
	var b [cursorBytes]byte
	if n, err := cursorEncoding.Decode(b[:], []byte(s)); err != nil || n != cursorBytes || b[0] != cursorVersion {
		return application.FeedPosition{}, false
	}
	number := int64(binary.BigEndian.Uint64(b[9:]))
	if number < 0 {
		return application.FeedPosition{}, false
	}
	// One spelling per cursor: base64 may end in bits a decoder ignores.
	p := application.FeedPosition{Tx: binary.BigEndian.Uint64(b[1:]), Number: number, At: time.Unix(int64(binary.BigEndian.Uint64(b[17:])), 0)}
	return p, formatCursor(p) == s
}
