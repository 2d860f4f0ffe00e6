package tracing

import (
	"log/slog"

	"github.com/go-logr/logr"
	"go.opentelemetry.io/otel"
)

// LogTo sends what the OpenTelemetry library reports (a failed export,
// its own warnings) to log, the service's JSON log: by default the library
// prints plain lines with the standard log package, on stderr, which a log
// pipeline that reads JSON lines cannot parse. The library keeps one error
// handler and one logger for the whole process, so the last call wins.
//
// A failure is a warning: spans are lost, but no request is.
func LogTo(log *slog.Logger) {
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
		log.Warn("tracing failed", "error", err.Error())
	}))
	// logr's V(n) becomes slog's level -n: the library's errors are errors;
	// its warnings (V(1)) and informational messages (V(4)) show at the
	// debug log level only, its debug messages (V(8)) never.
	otel.SetLogger(logr.FromSlogHandler(log.Handler()))
}
