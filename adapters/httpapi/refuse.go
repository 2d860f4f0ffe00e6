package httpapi

import (
	"errors"
	"io"
	"net"
	"net/http"
	"time"
)

// refuseUnread answers a request whose body was not read to the end, and
// closes the connection after the answer. Left to itself net/http would read
// up to 256 KiB of the unread body before answering, so a refused client that
// announces a body and never sends it would wait until the read timeout.
//
// The answer goes out first; then what the client is still sending is read
// and dropped for a short while. Closing a socket with unread data makes the
// kernel reset the connection, and a client still writing its body would see
// the reset, often instead of the answer already on its way.
func (a *API) refuseUnread(w http.ResponseWriter, r *http.Request, err error) {
	if r.ContentLength == 0 {
		a.writeError(w, r, err)
		return
	}
	rc := http.NewResponseController(w)
	// Without full duplex, net/http would drain the body before the answer.
	_ = rc.EnableFullDuplex()
	w.Header().Set("Connection", "close")
	// The last answer on this connection: its place is free for another
	// client from here.
	answeredLast(r.Context())
	a.writeError(w, r, err)
	if rc.Flush() != nil {
		return
	}
	if info := infoFrom(r.Context()); info != nil {
		info.answered = time.Now()
	}
	if rc.SetReadDeadline(time.Now().Add(lingerTime)) != nil {
		return
	}
	_, _ = io.CopyN(io.Discard, r.Body, lingerBytes)
}

// lingerTime and lingerBytes bound the reading of a refused body after the
// answer: long enough for a client to take in the answer, short enough that
// a client which announced a body and never sends it does not hold the
// connection.
const (
	lingerTime  = 500 * time.Millisecond
	lingerBytes = 256 << 10
)

// answerUnread writes answer to c, whose request was not read, and closes
// it. The answer waits for the request's first bytes (at most lingerTime):
// an HTTP client takes an answer that comes before its request for a
// stray one on an idle connection and fails the request with a transport
// error (Go's "Unsolicited response received on idle HTTP channel"),
// where it should see the 503. Closing a socket with unread data makes
// the kernel reset the connection, and a client still sending its request
// would often see the reset instead of the answer: so the write side is
// shut first, and what the client still sends is read and dropped for a
// short while, as refuseUnread does.
func answerUnread(c net.Conn, answer []byte) {
	var first [512]byte
	if c.SetDeadline(time.Now().Add(lingerTime)) != nil {
		c.Close()
		return
	}
	if _, err := c.Read(first[:]); errors.Is(err, io.EOF) {
		c.Close()
		return // gone before asking: no one to answer
	}
	answerAndClose(c, answer)
}

// answerAndClose writes answer to c and closes it: the write side first,
// then what the client still sends is read and dropped for a short while,
// so that the kernel does not reset the connection over the answer.
func answerAndClose(c net.Conn, answer []byte) {
	defer c.Close()
	if c.SetDeadline(time.Now().Add(lingerTime)) != nil {
		return
	}
	if _, err := c.Write(answer); err != nil {
		return
	}
	if cw, ok := c.(interface{ CloseWrite() error }); ok && cw.CloseWrite() != nil {
		return
	}
	_, _ = io.CopyN(io.Discard, c, lingerBytes)
}
