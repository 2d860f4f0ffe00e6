package httpapi

// socketState is what a client's socket holds at a moment.
type socketState int

const (
	socketEmpty    socketState = iota // open, nothing to read yet
	socketHasBytes                    // something of an answer
	socketClosed                      // closed, or reset, by the server
)
