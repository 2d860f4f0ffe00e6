package httpapi

import (
	"encoding/base64"
	"encoding/binary"
	"hash/crc32"
	"time"

	"github.com/plantstore/plantstore/application"
)

// A feed cursor is a position in the event feed as clients hold it: opaque
// to them, and all the service needs to go on from it, on any replica: the
// base64url (no padding) of a version byte, then the position's
// transaction id, number and the Unix microsecond it was handed out, each
// as 8 bytes, big-endian, then the CRC-32C of those 25 bytes. The time is
// what the 410 for a cursor older than the retention is judged by. The
// checksum turns a cursor damaged on its way (a character changed, a copy
// cut short) into a 400 rather than a position that reads on from
// somewhere else, silently skipping events or waiting past the feed's end.
const (
	cursorVersion = 2
	cursorBody    = 1 + 8 + 8 + 8
	cursorBytes   = cursorBody + 4
)

var (
	cursorEncoding = base64.RawURLEncoding
	cursorChecksum = crc32.MakeTable(crc32.Castagnoli)
)

// formatCursor is the cursor of p.
func formatCursor(p application.FeedPosition) string {
	var b [cursorBytes]byte
	b[0] = cursorVersion
	binary.BigEndian.PutUint64(b[1:], p.Tx)
	binary.BigEndian.PutUint64(b[9:], uint64(p.Number))
	binary.BigEndian.PutUint64(b[17:], uint64(p.At.UnixMicro()))
	binary.BigEndian.PutUint32(b[cursorBody:], crc32.Checksum(b[:cursorBody], cursorChecksum))
	return cursorEncoding.EncodeToString(b[:])
}

// parseCursor reads a cursor that formatCursor made; anything else is not
// ok.
func parseCursor(s string) (application.FeedPosition, bool) {
	if cursorEncoding.DecodedLen(len(s)) != cursorBytes {
		return application.FeedPosition{}, false
	}
	var b [cursorBytes]byte
	if n, err := cursorEncoding.Decode(b[:], []byte(s)); err != nil || n != cursorBytes || b[0] != cursorVersion ||
		binary.BigEndian.Uint32(b[cursorBody:]) != crc32.Checksum(b[:cursorBody], cursorChecksum) {
		return application.FeedPosition{}, false
	}
	number := int64(binary.BigEndian.Uint64(b[9:]))
	if number < 0 {
		return application.FeedPosition{}, false
	}
	// One spelling per cursor: base64 may end in bits a decoder ignores.
	p := application.FeedPosition{Tx: binary.BigEndian.Uint64(b[1:]), Number: number, At: time.UnixMicro(int64(binary.BigEndian.Uint64(b[17:])))}
	return p, formatCursor(p) == s
}
