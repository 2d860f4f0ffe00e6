package postgres

// traceParents is the text[] of the traceparents of creates, in the order
// of ws, NULL for an untraced create; nil (SQL NULL, and no array in the
// packed outbox row) when none of them is traced, as with tracing off.
func traceParents(ws []write) any {
	var (
		parents []string
		traced  []bool
	)
	for i, w := range ws {
		if w.rec.TraceParent == "" {
			continue
		}
		if parents == nil {
			parents, traced = make([]string, len(ws)), make([]bool, len(ws))
		}
		parents[i], traced[i] = w.rec.TraceParent, true
	}
	if parents == nil {
		return nil
	}
	return textArray(parents, traced)
}

// traceList gathers the traceparents of a statement's writes, one per
// write, for the envelopes of the event payload.
type traceList struct {
	parents []string
	traced  []bool
	any     bool
}

func (l *traceList) add(tp string) {
	l.parents, l.traced = append(l.parents, tp), append(l.traced, tp != "")
	l.any = l.any || tp != ""
}

// array is the text[] of the traceparents, NULL for an untraced write.
func (l *traceList) array() string { return textArray(l.parents, l.traced) }
